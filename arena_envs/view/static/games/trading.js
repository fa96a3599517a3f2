// Trading (Agent Market Arena): line charts over the days of each asset's close, each trader's
// equity and each trader's position (exposure after the day's orders, -1 short .. +1 long), and a
// table of the final equity. Data: arena_envs/view/game_data.py (dates[0] is the start).
"use strict";
(function () {
  function draw(root, game) {
    const K = window.ArenaGameKit;
    const { num, str, arr, obj, el, fmt } = K;
    const dates = arr(game.dates).map(str);
    const assets = arr(game.assets).map(str);
    const traders = arr(game.traders).map(str);
    const seats = obj(game.seats), equity = obj(game.equity), exposure = obj(game.exposure), orders = obj(game.orders);
    const phases = arr(game.phases).map(str);
    const evalStart = phases.indexOf("eval");
    const ticks = dates.map((d, k) => [k, d]);
    const note = evalStart >= 0 ? "evaluation from " + str(dates[evalStart]) : "no evaluation days";
    root.appendChild(el("p", { text: dates.length ? dates[0] + " to " + dates[dates.length - 1] + " (" + Math.max(dates.length - 1, 0) + " days); " + note : "no days" }));

    function panel(title, series, extra) {
      root.appendChild(el("h3", { text: title }));
      const canvas = K.canvas(760, 220, title);
      root.appendChild(canvas);
      K.chart(canvas, Object.assign({ series: series, xTicks: ticks }, extra || {}));
      root.appendChild(K.legend(series.filter((s) => s.label).map((s) => ({ label: s.label, colour: s.colour }))));
    }

    const closes = arr(game.closes);
    panel("Prices", assets.map((a, i) => ({
      label: a, colour: K.colour(i + 5),
      points: closes.map((row, k) => [k, num(arr(row)[i])]),
    })));
    panel("Equity", traders.map((t, i) => ({
      label: t + (seats[t] ? " (" + str(seats[t]) + ")" : ""), colour: K.colour(i),
      points: arr(equity[t]).map((v, k) => [k, num(v)]),
    })));
    assets.forEach((a, j) => {
      panel("Position in " + a, traders.map((t, i) => ({
        label: t, colour: K.colour(i), step: true,
        points: arr(exposure[t]).map((row, k) => [k, num(arr(row)[j])]),
      })), { yMin: -1 });
    });
    root.appendChild(K.table(["trader", "player", "final equity", "return", "orders (last 5 days)"], traders.map((t) => {
      const series = arr(equity[t]).map(num).filter((v) => v !== null);
      const first = num(game.initial_capital) || series[0];
      const lastValue = series.length ? series[series.length - 1] : null;
      const ret = first && lastValue !== null ? fmt(((lastValue - first) / first) * 100) + "%" : "–";
      return [t, str(seats[t]), fmt(lastValue), ret, arr(orders[t]).slice(-5).map(str).join(" · ")];
    }), "trading-summary"));
  }

  window.ArenaGames.register(["trading_v0"], (root, payload) => window.ArenaGameKit.view(draw)(root, payload));
})();
