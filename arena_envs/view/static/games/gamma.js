// The eight γ-Bench games: each round's choices beside the equilibrium the game's module states
// (arena_envs/view/gamma_data.py), as a chart and a table per round.
"use strict";
(function () {
  const GAMES = ["guess_two_thirds_v0", "el_farol_v0", "divide_dollar_v0", "public_goods_v0",
    "diners_dilemma_v0", "sealed_bid_auction_v0", "battle_royale_v0", "pirate_game_v0"];

  function draw(root, game, payload) {
    const K = window.ArenaGameKit;
    const { num, str, arr, obj, el, fmt } = K;
    const players = arr(game.players).map(str);
    const rounds = arr(game.rounds).map(obj);
    const eq = obj(game.equilibrium);
    const short = (p) => p.replace(/^player_/, "P");
    root.appendChild(el("h3", { text: str(game.label) || "γ-Bench" }));
    if (eq.text) root.appendChild(el("p", { className: "gamma-equilibrium", text: "Equilibrium: " + str(eq.text) }));
    if (num(game.score) !== null) root.appendChild(el("p", { text: "Score: " + fmt(game.score) }));
    const xTicks = rounds.map((r, k) => [k + 1, fmt(r.round)]);

    function plot(series, extra) {
      const canvas = K.canvas(760, 240, str(game.label));
      root.appendChild(canvas);
      K.chart(canvas, Object.assign({ series: series, xTicks: xTicks }, extra || {}));
      root.appendChild(K.legend(series.filter((s) => s.label).map((s) => ({ label: s.label, colour: s.colour }))));
    }
    const flat = (value) => rounds.map((r, k) => [k + 1, value]);
    const perPlayer = (key) => players.map((p, i) => ({
      label: short(p), colour: K.colour(i), dots: true,
      points: rounds.map((r, k) => [k + 1, num(arr(r[key])[i])]),
    }));
    const cells = (list, show) => players.map((p, i) => show(arr(list)[i]));
    const head = ["round", ...players.map(short)];

    switch (str(game.game) || str(payload.env)) {
      case "guess_two_thirds_v0": {
        plot([...perPlayer("choices"),
          { label: "target", colour: "#000", points: rounds.map((r, k) => [k + 1, num(r.target)]) },
          { label: "Nash " + fmt(eq.choice), colour: "#999", dashed: true, points: flat(num(eq.choice)) }]);
        root.appendChild(K.table([...head, "average", "target", "winners"], rounds.map((r) => [fmt(r.round),
          ...cells(r.choices, fmt), fmt(r.average), fmt(r.target), arr(r.winners).map((w) => short(str(players[w] || w))).join(" ")])));
        break;
      }
      case "el_farol_v0": {
        plot([{ label: "attendance", colour: "#1f77b4", points: rounds.map((r, k) => [k + 1, num(r.attendance)]) },
          { label: "capacity " + fmt(eq.capacity), colour: "#d62728", dashed: true, points: flat(num(eq.capacity)) }], { yMin: 0 });
        root.appendChild(K.table([...head, "attendance", "crowded"], rounds.map((r) => [fmt(r.round),
          ...cells(r.go, (g) => (g === true ? "go" : g === false ? "stay" : "–")), fmt(r.attendance), r.crowded ? "yes" : "no"])));
        break;
      }
      case "divide_dollar_v0": {
        plot([...perPlayer("bids"),
          { label: "total", colour: "#000", points: rounds.map((r, k) => [k + 1, num(r.total)]) },
          { label: "G = " + fmt(eq.total), colour: "#d62728", dashed: true, points: flat(num(eq.total)) },
          { label: "fair G/N = " + fmt(eq.fair), colour: "#999", dashed: true, points: flat(num(eq.fair)) }], { yMin: 0 });
        root.appendChild(K.table([...head, "total", "over G"], rounds.map((r) => [fmt(r.round), ...cells(r.bids, fmt),
          fmt(r.total), r.exceeded ? "yes: everyone gets 0" : "no"])));
        break;
      }
      case "public_goods_v0": {
        plot([...perPlayer("contributions"),
          { label: "equilibrium 0", colour: "#999", dashed: true, points: flat(0) }], { yMin: 0 });
        root.appendChild(K.table([...head, "pot", "share"], rounds.map((r) => [fmt(r.round), ...cells(r.contributions, fmt),
          fmt(r.pot), fmt(r.share)])));
        break;
      }
      case "diners_dilemma_v0": {
        plot([{ label: "costly", colour: "#d62728", points: rounds.map((r, k) => [k + 1, num(r.n_costly)]) },
          { label: "cheap", colour: "#2ca02c", points: rounds.map((r, k) => [k + 1, arr(r.orders).filter((o) => o === "cheap").length]) },
          { label: "equilibrium: all costly", colour: "#999", dashed: true, points: flat(num(eq.n_costly)) }], { yMin: 0 });
        root.appendChild(K.table([...head, "costly", "bill share"], rounds.map((r) => [fmt(r.round), ...cells(r.orders, (o) => str(o) || "–"),
          fmt(r.n_costly), fmt(r.bill_share)])));
        break;
      }
      case "sealed_bid_auction_v0": {
        const pairs = players.map((p, i) => ({
          label: short(p), colour: K.colour(i), dots: true,
          points: rounds.map((r) => [num(arr(r.valuations)[i]), num(arr(r.bids)[i])]),
        }));
        const top = rounds.flatMap((r) => arr(r.valuations).map(num)).reduce((a, v) => (v !== null && v > a ? v : a), 0);
        const share = num(eq.bid_share);
        plot([...pairs,
          { label: "bid = valuation", colour: "#bbb", dashed: true, points: [[0, 0], [top, top]] },
          ...(share !== null ? [{ label: "equilibrium bid " + fmt(share, 3) + " × v", colour: "#000", dashed: true, points: [[0, 0], [top, top * share]] }] : [])],
        { xTicks: [], xLabel: "valuation (x) against bid (y)" });
        root.appendChild(K.table([...head, "winner", "price"], rounds.map((r) => [fmt(r.round),
          ...players.map((p, i) => "v " + fmt(arr(r.valuations)[i]) + " / bid " + fmt(arr(r.bids)[i])),
          short(str(players[r.winner] || "")), fmt(r.price)])));
        break;
      }
      case "battle_royale_v0": {
        plot([{ label: "players alive", colour: "#1f77b4", points: rounds.map((r, k) => [k + 1, arr(r.alive_after).length]) }], { yMin: 0 });
        const rates = arr(obj(game.params).hit_rates);
        if (rates.length) root.appendChild(el("p", { text: "Hit rates: " + players.map((p, i) => short(p) + " " + fmt(rates[i]) + "%").join(", ") }));
        root.appendChild(K.table(["turn", "shooter", "target", "result", "aimed at a strongest opponent", "alive after"], rounds.map((r) => [
          fmt(r.round), short(str(players[r.shooter] || r.shooter)),
          num(r.target) === null ? "missed on purpose" : short(str(players[r.target] || r.target)),
          num(r.target) === null ? "–" : r.hit ? "hit" : "missed",
          r.strongest === true ? "yes" : r.strongest === false ? "no" : "–",
          arr(r.alive_after).map((a) => short(str(players[a] || a))).join(" ")])));
        break;
      }
      case "pirate_game_v0": {
        plot(players.map((p, i) => ({
          label: short(p), colour: K.colour(i), dots: true,
          points: rounds.map((r, k) => [k + 1, num(arr(r.proposal)[i])]),
        })), { yMin: 0 });
        const vote = (v) => (v === true ? "accept" : v === false ? "reject" : "–");
        root.appendChild(K.table([...head, "accepted"], rounds.flatMap((r) => [
          ["round " + fmt(r.round) + " proposal by " + short(str(players[r.proposer] || "")), ...cells(r.proposal, fmt), r.accepted ? "yes" : "no"],
          ["  equilibrium proposal", ...cells(r.ne_proposal, fmt), ""],
          ["  votes", ...cells(r.votes, vote), ""],
          ["  equilibrium votes", ...cells(r.ne_votes, vote), ""],
        ])));
        break;
      }
      default:
        K.message(root, "No view for this game.");
    }
  }

  window.ArenaGames.register(GAMES, (root, payload) => window.ArenaGameKit.view(draw)(root, payload));
})();
