// What the game views share (window.ArenaGameKit): safe readers of payload values, elements built
// with createElement and textContent only (every string of a payload comes from a game or a model),
// and a small canvas chart of lines and dots. The views look it up when they draw, so the order in
// which the page loads static/games/*.js does not matter.
"use strict";
window.ArenaGameKit = (function () {
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
    "#17becf", "#bcbd22", "#7f7f7f"];

  function num(v) {
    return typeof v === "number" && Number.isFinite(v) ? v : null;
  }
  function str(v) {
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : "";
  }
  function arr(v) {
    return Array.isArray(v) ? v : [];
  }
  function obj(v) {
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  }
  function fmt(v, digits) {
    const n = num(v);
    if (n === null) return "–";
    if (Number.isInteger(n)) return n.toLocaleString("en-US");
    return n.toLocaleString("en-US", { maximumFractionDigits: digits === undefined ? 2 : digits });
  }
  function money(v) {
    const n = num(v);
    return n === null ? "–" : (n < 0 ? "−$" : "$") + fmt(Math.abs(n));
  }
  function colour(i) {
    return PALETTE[((i % PALETTE.length) + PALETTE.length) % PALETTE.length];
  }

  // el("td", {className: "x", text: "...", data: {agent: "..."}}, [children])
  function el(tag, props, children) {
    const node = document.createElement(tag);
    const p = props || {};
    if (p.className) node.className = p.className;
    if (p.text !== undefined) node.textContent = str(p.text);
    if (p.title !== undefined) node.title = str(p.title);
    for (const [k, v] of Object.entries(obj(p.data))) node.dataset[k] = str(v);
    for (const [k, v] of Object.entries(obj(p.attrs))) node.setAttribute(k, str(v));
    if (p.style) Object.assign(node.style, p.style);
    for (const child of arr(children)) if (child) node.appendChild(child);
    return node;
  }

  function table(headers, rows, className) {
    const head = el("tr", {}, headers.map((h) => el("th", { text: h })));
    const body = rows.map((cells) => el("tr", {}, cells.map((c) => (c instanceof Node ? el("td", {}, [c]) : el("td", { text: c })))));
    return el("table", { className: "game-table " + (className || "") }, [el("thead", {}, [head]), el("tbody", {}, body)]);
  }

  function legend(entries) {
    return el("div", { className: "game-legend" }, entries.map((e) => el("span", { className: "game-legend-item" }, [
      el("span", { text: "■ ", style: { color: e.colour } }), el("span", { text: e.label }),
    ])));
  }

  function message(root, text, className) {
    root.appendChild(el("p", { className: className || "game-note", text: text }));
  }

  // chart(canvas, {series: [{label, colour, points: [[x, y]], dots, dashed}], xLabel, yLabel, xTicks})
  function chart(canvas, spec) {
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    const W = canvas.width, H = canvas.height, L = 56, R = 12, T = 12, B = 34;
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, W, H);
    const series = arr(spec.series).map((s) => ({ ...s, points: arr(s.points).filter((p) => Array.isArray(p) && num(p[0]) !== null && num(p[1]) !== null) }));
    const all = series.flatMap((s) => s.points);
    if (!all.length) {
      ctx.fillStyle = "#555";
      ctx.font = "13px sans-serif";
      ctx.fillText("no data", L, T + 20);
      return;
    }
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const p of all) {  // a loop, not Math.min(...all): a long series would overflow the call stack
      x0 = Math.min(x0, p[0]); x1 = Math.max(x1, p[0]); y0 = Math.min(y0, p[1]); y1 = Math.max(y1, p[1]);
    }
    if (num(spec.yMin) !== null) y0 = Math.min(y0, spec.yMin);
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    if (y1 === y0) { y0 -= 1; y1 += 1; }
    const pad = (y1 - y0) * 0.05;
    if (num(spec.yMin) === null || y0 < spec.yMin) y0 -= pad;  // a floor (0) stays the axis
    y1 += pad;
    const X = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const Y = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
    ctx.strokeStyle = "#888";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(L, T); ctx.lineTo(L, H - B); ctx.lineTo(W - R, H - B);
    ctx.stroke();
    ctx.fillStyle = "#333";
    ctx.font = "11px sans-serif";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (let k = 0; k <= 4; k++) {
      const y = y0 + ((y1 - y0) * k) / 4;
      ctx.fillText(fmt(y, Math.abs(y1 - y0) < 10 ? 2 : 0), L - 4, Y(y));
      ctx.strokeStyle = "#eee";
      ctx.beginPath(); ctx.moveTo(L + 1, Y(y)); ctx.lineTo(W - R, Y(y)); ctx.stroke();
    }
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    const ticks = arr(spec.xTicks);
    if (ticks.length) {
      const every = Math.max(1, Math.ceil(ticks.length / 8));
      ticks.forEach((t, k) => { if (k % every === 0 && num(t[0]) !== null) ctx.fillText(str(t[1]), X(t[0]), H - B + 4); });
    } else {
      for (let k = 0; k <= 4; k++) { const x = x0 + ((x1 - x0) * k) / 4; ctx.fillText(fmt(x, 1), X(x), H - B + 4); }
    }
    if (spec.xLabel) ctx.fillText(str(spec.xLabel), (L + W - R) / 2, H - 14);
    for (const s of series) {
      ctx.strokeStyle = ctx.fillStyle = str(s.colour) || "#000";
      ctx.setLineDash(s.dashed ? [6, 4] : []);
      ctx.lineWidth = s.width || 2;
      if (s.dots) {
        for (const p of s.points) { ctx.beginPath(); ctx.arc(X(p[0]), Y(p[1]), 3.5, 0, 2 * Math.PI); ctx.fill(); }
      } else {
        ctx.beginPath();
        s.points.forEach((p, k) => {
          if (!k) { ctx.moveTo(X(p[0]), Y(p[1])); return; }
          if (s.step) ctx.lineTo(X(p[0]), Y(s.points[k - 1][1]));
          ctx.lineTo(X(p[0]), Y(p[1]));
        });
        ctx.stroke();
      }
    }
    ctx.setLineDash([]);
  }

  function canvas(width, height, label) {
    return el("canvas", { className: "game-chart", attrs: { width: width, height: height, role: "img", "aria-label": label },
      style: { maxWidth: "100%", height: "auto" } });
  }

  // Draw with draw(root, game, payload); a payload without view data, or one the view cannot read,
  // shows one line instead of throwing.
  function view(draw) {
    return function (root, payload) {
      const game = obj(obj(payload).game);
      const box = el("div", { className: "game-box" });
      root.appendChild(box);
      if (game.error) message(box, "The game view is incomplete: " + str(game.error), "game-error-note");
      try {
        draw(box, game, obj(payload));
      } catch (err) {
        message(box, "This view cannot draw this episode: " + str(err && err.message), "game-error");
      }
    };
  }

  return { num, str, arr, obj, fmt, money, colour, el, table, legend, message, chart, canvas, view };
})();
