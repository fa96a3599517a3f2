// Who is Spy: the rounds in order, each with its speeches (quoted as said), its votes (who voted for
// whom), the tally and who was eliminated; the spy and both words are revealed at the end with the
// winner and the scores. Data: arena_envs/view/game_data.py.
"use strict";
(function () {
  function draw(root, game) {
    const K = window.ArenaGameKit;
    const { str, arr, obj, el, fmt } = K;
    const seats = obj(game.seats);
    const players = arr(game.players).map(str);
    root.appendChild(el("p", { text: "Players: " + players.map((p) => (seats[p] ? p + " (" + str(seats[p]) + ")" : p)).join(", ") }));
    const rounds = arr(game.rounds).map(obj);
    const canvas = K.canvas(720, 200, "votes received per round");
    for (const r of rounds) {
      const section = el("section", { className: "wis-round", data: { round: str(r.round) } });
      section.appendChild(el("h3", { text: "Round " + str(r.round) }));
      const speeches = el("div", { className: "wis-speeches" });
      for (const s of arr(r.speeches).map(obj)) {
        const quote = el("blockquote", { className: "wis-speech", data: { agent: str(s.speaker) } }, [
          el("q", { text: str(s.text) }),
        ]);
        const line = el("div", { className: "wis-speech-line" }, [el("strong", { text: str(s.speaker) + ": " }), quote]);
        if (s.violation) line.appendChild(el("span", { className: "wis-violation", text: " rule broken: " + str(s.violation) }));
        speeches.appendChild(line);
      }
      section.appendChild(speeches);
      const votes = arr(r.votes).map(obj);
      section.appendChild(el("ul", { className: "wis-votes" }, votes.map((v) => el("li", {
        className: "wis-vote", data: { voter: str(v.voter), target: str(v.target) },
        text: str(v.voter) + " → " + (v.target ? str(v.target) : "abstained"),
      }))));
      const tally = obj(r.tally);
      const counted = Object.entries(tally).sort((a, b) => (K.num(b[1]) || 0) - (K.num(a[1]) || 0));
      if (counted.length) section.appendChild(el("p", { className: "wis-tally", text: "tally: " + counted.map(([p, n]) => p + " " + fmt(n)).join(", ") }));
      const out = [];
      if (r.eliminated) out.push(str(r.eliminated) + " eliminated by vote");
      for (const p of arr(r.violations)) out.push(str(p) + " eliminated for breaking the rules");
      section.appendChild(el("p", { className: "wis-eliminated", text: out.length ? out.join("; ") : "nobody eliminated" }));
      root.appendChild(section);
    }
    // votes received per player and round, as dots
    root.appendChild(el("h3", { text: "Votes received" }));
    root.appendChild(canvas);
    const series = players.map((p, i) => ({
      label: p, colour: K.colour(i), dots: true,
      points: rounds.map((r, k) => [k + 1, K.num(obj(r.tally)[p])]).filter((pt) => pt[1]),  // who got votes
    }));
    K.chart(canvas, { series: series, yMin: 0, xTicks: rounds.map((r, k) => [k + 1, "round " + str(r.round)]) });
    root.appendChild(K.legend(series.map((s) => ({ label: s.label, colour: s.colour }))));

    const end = el("section", { className: "wis-reveal" });
    end.appendChild(el("h3", { text: "The end" }));
    const spies = arr(game.spies).map(str);
    end.appendChild(el("p", { className: "wis-spy", text: (spies.length > 1 ? "The spies were " : "The spy was ") + (spies.join(", ") || "unknown") + "." }));
    end.appendChild(el("p", { text: "Civilians' word: " + str(game.civilian_word) + "; spy's word: " + str(game.spy_word) }));
    end.appendChild(el("p", { className: "wis-winner", text: "Winner: " + (str(game.winner) || "none") + (game.end ? " (" + str(game.end) + ")" : "") }));
    const scores = obj(game.scores);
    end.appendChild(K.table(["player", "role", "score"], players.map((p) => [p, spies.includes(p) ? "spy" : "civilian", fmt(scores[p])])));
    root.appendChild(end);
  }

  window.ArenaGames.register(["who_is_spy_v0"], (root, payload) => window.ArenaGameKit.view(draw)(root, payload));
})();
