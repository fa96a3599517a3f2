"""Who is Spy word pairs and lexicon (spec §5): the packaged datasets keep every authoring rule,
user files and lists load, and every bad input is a one-line error naming what is wrong."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena_envs.who_is_spy.rules import contains_keyword, norm
from arena_envs.who_is_spy.words import (
    DIFFICULTIES,
    WordPair,
    clue_vocabulary,
    load_lexicon,
    load_pairs,
    validate_lexicon,
    validate_pairs,
    word_vocabulary,
)

# spec §5.4: the recommended seed pairs, in order, with their Chinese equivalents
SEEDS = [
    ("tea", "coffee", "drink", "茶", "咖啡"), ("sand", "soil", "nature", "沙子", "土壤"),
    ("butter", "cheese", "food", "黄油", "奶酪"), ("violin", "cello", "instrument", "小提琴", "大提琴"),
    ("pen", "pencil", "stationery", "钢笔", "铅笔"), ("lion", "tiger", "animal", "狮子", "老虎"),
    ("honey", "syrup", "food", "蜂蜜", "糖浆"), ("umbrella", "raincoat", "clothing", "雨伞", "雨衣"),
    ("candle", "lamp", "household", "蜡烛", "台灯"), ("river", "lake", "geography", "河流", "湖泊"),
    ("doctor", "nurse", "profession", "医生", "护士"), ("soccer", "rugby", "sport", "足球", "橄榄球"),
    ("email", "letter", "communication", "电子邮件", "信件"), ("pancake", "waffle", "breakfast", "煎饼", "华夫饼"),
    ("wallet", "purse", "accessory", "钱包", "手提包"), ("snow", "hail", "weather", "雪", "冰雹"),
    ("bee", "wasp", "insect", "蜜蜂", "黄蜂"), ("chess", "checkers", "game", "国际象棋", "跳棋"),
    ("museum", "gallery", "place", "博物馆", "美术馆"), ("shampoo", "soap", "toiletry", "洗发水", "肥皂"),
]
# what the packaged lexicons guarantee per language: attributes per entry, attributes shared with
# the partner word of every pair the word is in
ATTRIBUTES = {"en": (8, 12), "zh": (6, 10)}
SHARED = (2, 4)
MIN_PAIRS = {"en": 300, "zh": 150}


# ---- the packaged datasets -------------------------------------------------------------------------

@pytest.mark.parametrize("language", ["en", "zh"])
def test_packaged_pairs_keep_the_authoring_rules(language: str) -> None:
    pairs = load_pairs(language=language)
    assert len(pairs) >= MIN_PAIRS[language]
    assert [p.id for p in pairs] == [f"{language}-{i:04d}" for i in range(1, len(pairs) + 1)]
    unordered = {frozenset((norm(p.civilian), norm(p.spy))) for p in pairs}
    assert len(unordered) == len(pairs)  # no duplicate pair, in either order
    for p in pairs:
        assert p.language == language and p.category and p.difficulty in DIFFICULTIES
        assert norm(p.civilian) != norm(p.spy)
        assert not contains_keyword(p.civilian, p.spy, language), p
        assert not contains_keyword(p.spy, p.civilian, language), p
        for word in (p.civilian, p.spy):
            assert word == word.strip()
            if language == "en":
                assert word == word.lower() and 1 <= len(re.split(r"[\s-]+", word)) <= 3, word
            else:
                assert 1 <= len(word) <= 6, word


def test_packaged_pairs_are_balanced() -> None:
    pairs = load_pairs()
    categories = {p.category for p in pairs}
    assert len(categories) >= 12
    assert max(sum(p.category == c for p in pairs) for c in categories) <= len(pairs) // 10
    assert all(sum(p.difficulty == d for p in pairs) >= 30 for d in DIFFICULTIES)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_seed_pairs_come_first(language: str) -> None:
    pairs = load_pairs(language=language)
    for i, (civilian, spy, category, zh_civilian, zh_spy) in enumerate(SEEDS):
        expected = (civilian, spy) if language == "en" else (zh_civilian, zh_spy)
        assert (pairs[i].id, pairs[i].civilian, pairs[i].spy) == (f"{language}-{i + 1:04d}", *expected)
        assert pairs[i].category == category
    assert (pairs[0].difficulty, pairs[1].difficulty) == ("easy", "medium")  # the spec's §5.2 example


@pytest.mark.parametrize("language", ["en", "zh"])
def test_packaged_lexicon_covers_every_word(language: str) -> None:
    """Every pair word has an entry of 8-12 (en) / 6-10 (zh) distinct attributes, 2-4 of them
    shared with its partner; no attribute contains its headword or the partner word; the lexicon
    holds no other entries."""
    pairs = load_pairs(language=language)
    lexicon = load_lexicon(language=language)
    assert set(lexicon) == set(word_vocabulary(pairs))
    low, high = ATTRIBUTES[language]
    for p in pairs:
        for word, partner in ((p.civilian, p.spy), (p.spy, p.civilian)):
            attributes = lexicon[word]
            assert low <= len(attributes) <= high, (word, attributes)
            assert len(set(attributes)) == len(attributes), word
            assert SHARED[0] <= len(set(attributes) & set(lexicon[partner])) <= SHARED[1], (word, partner)
            for a in attributes:
                assert a == a.strip() and norm(a), (word, a)
                assert not contains_keyword(a, word, language), (word, a)
                assert not contains_keyword(a, partner, language), (word, partner, a)
                if language == "en":
                    assert a == a.lower() and 1 <= len(a.split()) <= 3, (word, a)
                else:
                    assert len(a) <= 5, (word, a)


def test_seed_lexicon_entries_follow_the_spec_example() -> None:
    lexicon = load_lexicon()
    assert {"hot drink", "cup", "caffeine"} <= set(lexicon["tea"]) & set(lexicon["coffee"])


def test_packaged_loads_are_read_once_and_not_shared_mutably() -> None:
    assert load_pairs() is load_pairs()  # an immutable tuple, read once per process
    first = load_lexicon()
    first["tea"] = ("changed",)
    assert load_lexicon()["tea"] != ("changed",)


def test_vocabularies() -> None:
    pairs = load_pairs([("tea", "coffee"), ("Sand", "soil"), ("coffee", "cocoa")])
    assert word_vocabulary(pairs) == ["Sand", "cocoa", "coffee", "soil", "tea"]
    lexicon = {"tea": ("Hot Drink", "cup"), "coffee": ("hot drink", "beans")}
    assert clue_vocabulary(lexicon) == ["beans", "cup", "hot drink"]
    packaged = clue_vocabulary(load_lexicon())
    assert packaged == sorted(set(packaged)) and all(c == c.casefold() for c in packaged)
    assert word_vocabulary(load_pairs()) == sorted(load_lexicon())


# ---- user data -------------------------------------------------------------------------------------

def test_tuple_lists_get_ids_by_position() -> None:
    pairs = load_pairs([("tea", "coffee"), ("sand", "soil", "nature"), ["river", "lake"]])
    assert pairs == (WordPair("en-0001", "tea", "coffee"), WordPair("en-0002", "sand", "soil", "nature"),
                     WordPair("en-0003", "river", "lake"))
    assert load_pairs([("茶", "咖啡")], language="zh") == (WordPair("zh-0001", "茶", "咖啡", language="zh"),)
    given = WordPair("mine-1", "pen", "pencil", "stationery", "easy")
    assert load_pairs([given]) == (given,)


def test_json_file(tmp_path: Path) -> None:
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps({"version": 1, "language": "zh", "pairs": [
        {"id": "a", "civilian": "饺子", "spy": "馄饨", "category": "food", "difficulty": "hard"},
        {"civilian": "猫", "spy": "狗"}]}, ensure_ascii=False), encoding="utf-8")
    assert load_pairs(path, language="zh") == (WordPair("a", "饺子", "馄饨", "food", "hard", "zh"),
                                               WordPair("zh-0002", "猫", "狗", language="zh"))
    assert load_pairs(str(path), language="zh")[0].id == "a"


def test_csv_file(tmp_path: Path) -> None:
    full = tmp_path / "full.csv"
    full.write_text("\ufeffid,civilian,spy,category,difficulty,language\n"
                    "x-1,tea,coffee,drink,easy,en\nx-2, ice cream ,sorbet,,,\n", encoding="utf-8")
    assert load_pairs(full) == (WordPair("x-1", "tea", "coffee", "drink", "easy"),
                                WordPair("x-2", "ice cream", "sorbet"))
    short = tmp_path / "short.CSV"
    short.write_text("civilian,spy\nlion,tiger\n", encoding="utf-8")
    assert load_pairs(short) == (WordPair("en-0001", "lion", "tiger"),)


def test_lexicon_sources(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.json"
    path.write_text(json.dumps({"version": 1, "language": "en", "entries": {"tea": ["cup", " leaves "]}}))
    assert load_lexicon(path) == {"tea": ("cup", "leaves")}
    assert load_lexicon({"茶": ["热饮"]}, language="zh") == {"茶": ("热饮",)}


# ---- bad input: one line, naming the thing, the rule and what is accepted ----------------------------

def _pairs_json(tmp_path: Path, data: object, name: str = "p.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


BAD_PAIRS = [
    ([("Tea", "tea ")], "en", "'en-0001': the civilian and spy words are the same"),
    ([("apple", "apple pie")], "en", "'apple pie' contains 'apple'; neither word may contain the other"),
    ([("shirt", "T-shirt")], "en", "'T-shirt' contains 'shirt'"),
    ([("berry", "berries")], "en", "'berries' contains 'berry'"),
    ([("胡萝卜", "萝卜")], "zh", "'胡萝卜' contains '萝卜'"),
    ([("tea", "coffee"), ("coffee", "Tea")], "en", "duplicates pair 'en-0001'"),
    ([("big red fire truck", "car")], "en", "has 4 tokens; English words have 1-3 tokens"),
    ([("一二三四五六七", "茶")], "zh", "has 7 characters; Chinese words have 1-6 characters"),
    ([("", "coffee")], "en", "pair 1 lacks a civilian or spy word"),
    ([("...", "coffee")], "en", "civilian word '...' is empty or not a string"),
    ([(1, "coffee")], "en", "civilian is 1; accepted: a string"),
    ([("tea",)], "en", "word pair 1 is ('tea',); accepted: (civilian, spy)"),
    ([("a", "b", "c", "d")], "en", "accepted: (civilian, spy), (civilian, spy, category)"),
    (["tea"], "en", "word pair 1 is 'tea'"),
    ([], "en", "the word pairs are empty"),
    ([WordPair("x", "tea", "coffee"), WordPair("x", "pen", "pencil")], "en", "'x': the id appears twice"),
    ([WordPair("x", "tea", "coffee", difficulty="tricky")], "en", "difficulty 'tricky'; accepted: easy, medium"),
    ([WordPair("x", "tea", "coffee", language="zh")], "en", "language 'zh' in a 'en' dataset"),
    ([WordPair(" ", "tea", "coffee")], "en", "has an empty id"),
    ([("tea", "coffee")], "fr", "language must be one of"),
]


@pytest.mark.parametrize(("rows", "language", "message"), BAD_PAIRS)
def test_bad_pair_lists(rows: list, language: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        load_pairs(rows, language=language)
    assert message in str(err.value) and "\n" not in str(err.value)


BAD_FILES = [
    ("p.txt", "civilian,spy\ntea,coffee\n", "has the suffix '.txt'; accepted: .json, .csv"),
    ("p.csv", "word,spy\ntea,coffee\n", "has the header 'word,spy'; accepted: id,civilian,spy"),
    ("p.csv", "civilian,spy\ntea,coffee,extra\n", "row 2 has more cells than the header"),
    ("p.csv", "civilian,spy\ntea,\n", "pair 1 lacks a civilian or spy word"),
    ("p.json", "{not json", "is not valid JSON"),
    ("p.json", [{"civilian": "tea", "spy": "coffee"}], "is not a word-pairs file; accepted: {\"version\": 1"),
    ("p.json", {"language": "zh", "pairs": [{"civilian": "茶", "spy": "咖啡"}]},
     "declares language 'zh' but 'en' was asked for; pass language='zh'"),
    ("p.json", {"pairs": [{"civilian": "tea", "spy": "coffee", "colour": "brown"}]},
     "pair 1 has unknown keys ['colour']"),
    ("p.json", {"pairs": ["tea"]}, "pair 1 is 'tea'; accepted: an object with civilian and spy"),
    ("p.json", {"pairs": [{"id": "a", "civilian": "tea", "spy": "coffee"},
                          {"id": "a", "civilian": "pen", "spy": "pencil"}]}, "word pair 'a': the id appears twice"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_FILES)
def test_bad_pair_files(tmp_path: Path, name: str, content: object, message: str) -> None:
    with pytest.raises(ValueError) as err:
        load_pairs(_pairs_json(tmp_path, content, name))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no word file"):
        load_pairs(tmp_path / "absent.json")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("civilian,spy\ncafé,thé\n".encode("latin-1"))
    with pytest.raises(ValueError, match="is not UTF-8 text"):
        load_pairs(latin)


BAD_LEXICONS = [
    ({"tea": ["hot drink", "Teas"]}, "en", "entry 'tea': attribute 'Teas' contains the headword"),
    ({"茶": ["热饮", "绿茶"]}, "zh", "entry '茶': attribute '绿茶' contains the headword"),
    ({"tea": ["cup", " "]}, "en", "entry 'tea': attribute '' is empty"),
    ({"tea": ["cup", 3]}, "en", "attribute 3 is empty or not a string"),
    ({"tea": []}, "en", "entry 'tea': () is not a non-empty list of attributes"),
    ({"tea": "hot drink"}, "en", "entry 'tea' is 'hot drink'; accepted: a list of attribute strings"),
    ({"Tea": ["cup"], "tea ": ["mug"]}, "en", "headword 'tea' duplicates 'Tea'"),
    ({"one two three four": ["cup"]}, "en", "lexicon headword 'one two three four' has 4 tokens"),
    ({"": ["cup"]}, "en", "lexicon headword '' is empty"),
    ({3: ["cup"]}, "en", "headword 3 is not a string"),
]


@pytest.mark.parametrize(("entries", "language", "message"), BAD_LEXICONS)
def test_bad_lexicons(entries: dict, language: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        load_lexicon(entries, language=language)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_bad_lexicon_sources(tmp_path: Path) -> None:
    cases = [
        (tmp_path / "lex.csv", "tea,cup", "has the suffix '.csv'; accepted: .json"),
        (tmp_path / "lex.json", '{"tea": ["cup"]}', "is not a lexicon file; accepted: {\"version\": 1"),
        (tmp_path / "zh.json", '{"language": "zh", "entries": {}}', "declares language 'zh' but 'en'"),
    ]
    for path, text, message in cases:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError) as err:
            load_lexicon(path)
        assert message in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="got list"):
        load_lexicon([("tea", "cup")])  # type: ignore[arg-type]


def test_validators_accept_the_packaged_data_directly() -> None:
    for language in ("en", "zh"):
        validate_pairs(load_pairs(language=language), language)
        validate_lexicon(load_lexicon(language=language), language)
