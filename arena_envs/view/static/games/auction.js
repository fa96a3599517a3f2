// The auction (AucArena): the bidders' budgets and profits, a chart of each item's price against its
// true value, and per item its rounds (every bid, "withdraw" for a withdrawal, the round's leader),
// who won it at what price, and every bidder's money left after it. Data: arena_envs/view/game_data.py.
"use strict";
(function () {
  function draw(root, game) {
    const K = window.ArenaGameKit;
    const { num, str, arr, obj, el, fmt, money } = K;
    const bidders = arr(game.bidders).map(str);
    const seats = obj(game.seats), budgets = obj(game.budgets), profit = obj(game.profit);
    const items = arr(game.items).map(obj);
    const won = {};
    for (const item of items) {
      const w = str(obj(item.result).winner);
      if (w) won[w] = (won[w] || 0) + 1;
    }
    const last = items.length ? obj(items[items.length - 1].left) : {};
    root.appendChild(el("h3", { text: "Bidders" }));
    root.appendChild(K.table(["bidder", "player", "budget", "money left", "items won", "profit"],
      bidders.map((b) => [b, str(seats[b]), money(budgets[b]), money(last[b]), fmt(won[b] || 0), money(profit[b])]),
      "auction-bidders"));

    const canvas = K.canvas(720, 240, "price and true value per item");
    root.appendChild(el("h3", { text: "Prices against true values" }));
    root.appendChild(canvas);
    const prices = [], values = [];
    items.forEach((item, k) => {
      const price = num(obj(item.result).price), value = num(item.true_value);
      if (price !== null) prices.push([k + 1, price]);
      if (value !== null) values.push([k + 1, value]);
    });
    K.chart(canvas, {
      series: [{ label: "true value", colour: "#2ca02c", points: values, dashed: true },
        { label: "price paid", colour: "#d62728", points: prices, dots: true }],
      xTicks: items.map((item, k) => [k + 1, str(item.name).slice(0, 14)]), yMin: 0,
    });
    root.appendChild(K.legend([{ label: "true value", colour: "#2ca02c" }, { label: "price paid", colour: "#d62728" }]));

    const budgetCanvas = K.canvas(720, 200, "money left after each item");
    root.appendChild(el("h3", { text: "Money left after each item" }));
    root.appendChild(budgetCanvas);
    const spent = bidders.map((b, i) => ({
      label: b, colour: K.colour(i), step: true,
      points: [[0, num(budgets[b])], ...items.map((item, k) => [k + 1, num(obj(item.left)[b])])],
    }));
    K.chart(budgetCanvas, { series: spent, yMin: 0, xTicks: [[0, "start"], ...items.map((item, k) => [k + 1, String(k + 1)])] });
    root.appendChild(K.legend(spent.map((s) => ({ label: s.label, colour: s.colour }))));

    items.forEach((item, k) => {
      const section = el("section", { className: "auction-item", data: { item: String(k) } });
      section.appendChild(el("h3", { text: "Item " + (k + 1) + ": " + str(item.name) }));
      section.appendChild(el("p", { text: "starting price " + money(item.start_price) + ", minimum raise " + money(item.increment) + ", true value " + money(item.true_value) }));
      const rows = [];
      for (const r of arr(item.rounds).map(obj)) {
        if (num(r.discount) !== null) { rows.push(["discount", ...bidders.map(() => ""), "price now " + money(r.discount)]); continue; }
        const bids = obj(r.bids);
        rows.push([fmt(r.round), ...bidders.map((b) => (!(b in bids) ? "—" : bids[b] === null ? "withdraw" : money(bids[b]))),
          r.leader ? str(r.leader) + " at " + money(r.highest) : "nobody"]);
      }
      section.appendChild(K.table(["round", ...bidders, "leader"], rows, "auction-rounds"));
      const result = obj(item.result);
      const said = result.unsold ? "unsold" : result.winner ? "sold to " + str(result.winner) + " for " + money(result.price) : "not finished";
      section.appendChild(el("p", { className: "auction-result", text: said }));
      const left = obj(item.left);
      if (Object.keys(left).length) section.appendChild(el("p", { className: "auction-left", text: "money left: " + bidders.map((b) => b + " " + money(left[b])).join(", ") }));
      root.appendChild(section);
    });
  }

  window.ArenaGames.register(["auction_v0"], (root, payload) => window.ArenaGameKit.view(draw)(root, payload));
})();
