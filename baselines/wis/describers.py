"""The clue givers of the Who is Spy rule players.

* :class:`LexiconDescriber`: the best clue of the game's own ranking
  (:func:`arena_envs.who_is_spy.clues.ranked_clues`, the same ranking as the discrete describe
  actions): one of its word's lexicon attributes, rendered with the round's template, never its
  word, never an earlier clue, the one whose tokens the other players' clues share most.
* :class:`RandomDescriber`: a uniform pick from a pool of vague sentences (at least 20 per
  language) that neither contain its word nor repeat an earlier clue.

Either falls back to :func:`~arena_envs.who_is_spy.clues.last_resort` (unique by round and name)
when nothing is left.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena_envs.who_is_spy.clues import last_resort, ranked_clues
from arena_envs.who_is_spy.rules import contains_keyword, norm
from baselines.wis.seat import Seat

#: The random describer's sentences, per language: true of almost anything, so they say nothing.
GENERIC_CLUES: Mapping[str, tuple[str, ...]] = {
    "en": (
        "Most people have come across it.", "You could find it on an ordinary day.",
        "It comes in more than one form.", "Some people like it more than others.",
        "It has been around for a long time.", "Children usually know what it is.",
        "It can be found in many countries.", "People talk about it now and then.",
        "You might see it in a picture book.", "It has a name everybody can spell.",
        "It is not the strangest thing in the world.", "Some shops have something to do with it.",
        "I would recognise it at once.", "It can be big or small, depending.",
        "There is more than one kind of it.", "It would fit into a story for kids.",
        "My grandparents knew about it too.", "It shows up in everyday conversation.",
        "Plenty of people use it or see it.", "It is easier to show than to explain.",
        "You would not be surprised to meet it.", "It has a place in ordinary life.",
    ),
    "zh": (
        "大多数人都见过它。", "平常的日子里就能碰到。", "它有不止一种样子。", "有人喜欢，有人不太在意。",
        "它已经存在很久了。", "小朋友一般也认识它。", "很多国家都能找到它。", "大家偶尔会聊起它。",
        "在图画书里也许能看到。", "它的名字谁都会念。", "它并不算什么稀奇东西。", "有些店铺跟它有点关系。",
        "我一眼就能认出来。", "它可大可小，要看情况。", "它不止一个种类。", "它可以出现在儿童故事里。",
        "爷爷奶奶那辈人也知道。", "日常聊天里常会提到。", "不少人用过或见过。", "与其解释，不如直接看。",
        "遇见它一点也不奇怪。", "它是寻常生活的一部分。",
    ),
}


class LexiconDescriber:
    """The first of :func:`ranked_clues` for the seat's own word this round."""

    def describe(self, seat: Seat, info: Mapping[str, Any]) -> str:
        word = info["word"]
        memory = seat.memory
        best = ranked_clues(word, seat.lexicon.get(word, ()), memory.said, memory.others, info["round"],
                            seat.language, 1)
        return best[0] if best else last_resort(info["round"], seat.name, seat.language)


class RandomDescriber:
    """A uniform pick among the unused :data:`GENERIC_CLUES` that do not contain the word;
    in the discrete action mode (where only ``info["clue_options"]`` can be said), a uniform option."""

    def describe(self, seat: Seat, info: Mapping[str, Any]) -> str:
        options = info.get("clue_options")
        if options:
            return str(options[int(seat.rng.integers(len(options)))])
        word, said = info["word"], seat.memory.said
        fresh = [clue for clue in GENERIC_CLUES[seat.language]
                 if norm(clue) not in said and not contains_keyword(clue, word, seat.language)]
        if not fresh:
            return last_resort(info["round"], seat.name, seat.language)
        return fresh[int(seat.rng.integers(len(fresh)))]
