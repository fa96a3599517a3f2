// The tank battle on a canvas, round by round, as the pygame renderer draws it
// (arena_envs/tank_battle/render.py: the 832 x 576 frame, the 512 x 512 field at (32, 32), the side
// panel). The pictures come from the view data (arena_envs/view/tank_data.py): the static field, then
// per round the tanks, bullets, living bases, the brick pieces that changed and the panel's lines.
// Controls: play, pause, step, back and a seek slider; [data-frame] shows the picture's index and
// [data-tank="ID"] each tank's "x,y" (the game's pixel coordinates, top-left of the tank).
"use strict";
(function () {
  const W = 832, H = 576, FIELD = 512, TILE = 32, PIECE = 8, OX = 32, OY = 32;
  const PANEL_X = 576, PANEL_PAD = 10, LINE = 16, PANEL_CHARS = 31, MAX_MESSAGES = 6;
  const FRAME = "rgb(95,87,79)", BRICK = "rgb(164,74,36)", BRICK_EDGE = "rgb(110,48,22)";
  const STEEL = "rgb(160,160,170)", WATER = "rgb(30,90,200)", GOLD = "rgb(230,200,60)";
  const NPC = [170, 170, 170], SPAWN = "rgb(70,70,70)", FROZEN = "rgba(0,255,255,0.43)";
  const TEAMS = [[0, 128, 255], [255, 0, 0], [0, 200, 0], [255, 255, 0], [255, 140, 0], [170, 80, 255],
    [255, 105, 180], [0, 170, 170]];
  const MONO = '"DejaVu Sans Mono", "Liberation Mono", "Courier New", monospace';
  const FPS = 4;

  const rgb = (c) => "rgb(" + c.join(",") + ")";
  const darker = (c) => c.map((v) => Math.floor((v * 3) / 5));

  function draw(root, game) {
    const K = window.ArenaGameKit;
    const { num, str, arr, obj, el } = K;
    const frames = arr(game.frames).filter((f) => f && typeof f === "object");
    if (!frames.length) {
      K.message(root, "No pictures of this tank battle.");
      return;
    }
    const teams = obj(game.teams);
    const bases = arr(game.bases).map(obj);
    const start = arr(game.bricks).map((row) => str(row));
    const bricksAt = [];  // per frame: Uint8Array(64 * 64), filled on demand

    function brickState(k) {
      if (bricksAt[k]) return bricksAt[k];
      let grid;
      if (k === 0) {
        grid = new Uint8Array(64 * 64);
        start.slice(0, 64).forEach((row, r) => { for (let c = 0; c < Math.min(64, row.length); c++) grid[r * 64 + c] = row[c] === "1" ? 1 : 0; });
      } else {
        grid = brickState(k - 1).slice();
      }
      for (const change of arr(frames[k].bricks)) {
        const r = num(arr(change)[0]), c = num(arr(change)[1]);
        if (r !== null && c !== null && r >= 0 && r < 64 && c >= 0 && c < 64) grid[r * 64 + c] = change[2] ? 1 : 0;
      }
      bricksAt[k] = grid;
      return grid;
    }

    function messagesUpTo(k) {
      const all = [];
      for (let i = 0; i <= k; i++) for (const m of arr(frames[i].messages)) all.push(arr(m));
      return all.slice(-MAX_MESSAGES);
    }

    function wrap(line, width, indent) {
      const words = line.split(/\s+/).filter(Boolean);
      const out = [];
      let cur = "";
      for (const w of words) {
        let word = w;
        while (word.length > width) { if (cur) { out.push(cur); cur = indent; } out.push((out.length ? indent : "") + word.slice(0, width - indent.length)); word = word.slice(width - indent.length); }
        const next = cur.trim() ? cur + " " + word : (out.length ? indent : "") + word;
        if (next.length > width && cur.trim()) { out.push(cur); cur = indent + word; } else cur = next;
      }
      if (cur.trim()) out.push(cur);
      return out.length ? out : [""];
    }

    const canvas = el("canvas", { className: "tank-canvas", attrs: { width: W, height: H, role: "img", "aria-label": "tank battle" },
      style: { maxWidth: "100%", height: "auto" } });
    const ctx = canvas.getContext("2d");

    function paint(k) {
      const f = frames[k];
      ctx.fillStyle = FRAME;
      ctx.fillRect(0, 0, W, H);
      ctx.fillStyle = "#000";
      ctx.fillRect(OX, OY, FIELD, FIELD);
      ctx.fillRect(PANEL_X, OY, W - PANEL_X - 16, FIELD);
      const grid = brickState(k);
      for (let i = 0; i < grid.length; i++) {
        if (!grid[i]) continue;
        const x = OX + (i % 64) * PIECE, y = OY + Math.floor(i / 64) * PIECE;
        ctx.fillStyle = BRICK_EDGE; ctx.fillRect(x, y, PIECE, PIECE);
        ctx.fillStyle = BRICK; ctx.fillRect(x + 1, y + 1, PIECE - 2, PIECE - 2);
      }
      for (const [list, fill] of [[game.steel, STEEL], [game.water, WATER]]) {
        ctx.fillStyle = fill;
        for (const rc of arr(list)) {
          const r = num(arr(rc)[0]), c = num(arr(rc)[1]);
          if (r !== null && c !== null) ctx.fillRect(OX + c * TILE, OY + r * TILE, TILE, TILE);
        }
      }
      ctx.strokeStyle = SPAWN; ctx.lineWidth = 1;
      for (const xy of arr(game.npc_spawns)) {
        const x = num(arr(xy)[0]), y = num(arr(xy)[1]);
        if (x !== null && y !== null) ctx.strokeRect(OX + x + 0.5, OY + y + 0.5, TILE - 1, TILE - 1);
      }
      const alive = new Set(arr(f.bases));
      ctx.textAlign = "center"; ctx.textBaseline = "middle";
      for (const b of bases) {
        const x = num(b.x), y = num(b.y);
        if (x === null || y === null || !alive.has(b.id)) continue;
        const owner = num(b.owner);
        ctx.fillStyle = owner === null ? "rgb(255,255,255)" : rgb(TEAMS[owner % TEAMS.length] || TEAMS[0]);
        ctx.fillRect(OX + x, OY + y, TILE, TILE);
        ctx.fillStyle = GOLD; ctx.fillRect(OX + x + 3, OY + y + 3, TILE - 6, TILE - 6);
        ctx.fillStyle = "#000"; ctx.font = "bold 20px " + MONO;
        ctx.fillText(str(b.letter).slice(0, 1), OX + x + TILE / 2, OY + y + TILE / 2 + 1);
      }
      for (const t of arr(f.tanks).map(obj)) {
        const x = num(t.x), y = num(t.y);
        if (x === null || y === null) continue;
        const team = num(teams[str(t.id)]);
        const body = t.npc ? NPC : TEAMS[((team === null ? 0 : team) % TEAMS.length + TEAMS.length) % TEAMS.length];
        ctx.fillStyle = rgb(body); ctx.fillRect(OX + x, OY + y, TILE, TILE);
        const barrel = { up: [12, 0, 8, 14], down: [12, 18, 8, 14], left: [0, 12, 14, 8], right: [18, 12, 14, 8] }[str(t.dir)];
        if (barrel) { ctx.fillStyle = rgb(darker(body)); ctx.fillRect(OX + x + barrel[0], OY + y + barrel[1], barrel[2], barrel[3]); }
        ctx.fillStyle = t.npc ? "rgb(255,255,0)" : "rgb(255,255,255)";
        ctx.font = "bold 14px " + MONO;
        ctx.fillText(str(t.id), OX + x + TILE / 2, OY + y + TILE / 2 + 1);
        if (t.frozen) { ctx.fillStyle = FROZEN; ctx.fillRect(OX + x, OY + y, TILE, TILE); }
      }
      for (const b of arr(f.bullets)) {
        const x = num(arr(b)[0]), y = num(arr(b)[1]);
        if (x === null || y === null) continue;
        const cx = OX + x + 2, cy = OY + y + 2;
        ctx.fillStyle = "#000"; ctx.fillRect(cx - 5, cy - 5, 10, 10);
        ctx.fillStyle = "#fff"; ctx.fillRect(cx - 4, cy - 4, 8, 8);
      }
      paintPanel(f, k);
    }

    function paintPanel(f, k) {
      const x = PANEL_X + PANEL_PAD;
      let y = OY;
      ctx.textAlign = "left"; ctx.textBaseline = "top";
      ctx.font = "12px " + MONO;
      for (const line of arr(f.panel)) {
        const text = str(arr(line)[0]);
        if (text) { ctx.fillStyle = str(arr(line)[1]) || "#ebebeb"; ctx.fillText(text, x, y); }
        y += LINE;
      }
      if (f.over) {
        const out = obj(f.outcome);
        y += LINE / 2;
        ctx.fillStyle = "rgb(255,0,0)"; ctx.font = "bold 20px " + MONO;
        ctx.fillText("GAME OVER", x, y);
        y += 24;
        ctx.font = "bold 14px " + MONO; ctx.fillStyle = str(out.colour) || "#ebebeb";
        for (const line of arr(out.winner)) { ctx.fillText(str(line), x, y); y += 17; }
        if (out.reason) { ctx.font = "12px " + MONO; ctx.fillStyle = "rgb(180,180,180)"; ctx.fillText(str(out.reason), x, y); }
      }
      const lines = [];
      for (const m of messagesUpTo(k)) lines.push(...wrap(str(m[0]) + " -> " + str(m[1]) + ": " + str(m[2]), PANEL_CHARS, "  "));
      if (lines.length) {
        ctx.font = "12px " + MONO;
        y = H - OY - LINE * (lines.length + 1);
        ctx.fillStyle = "rgb(235,235,235)"; ctx.fillText("Cooperation:", x, y);
        ctx.fillStyle = "rgb(180,180,180)";
        for (const line of lines) { y += LINE; ctx.fillText(line, x, y); }
      }
    }

    const frameLabel = el("span", { className: "tank-frame", data: { frame: "0" }, text: "0" });
    const roundLabel = el("span", { className: "tank-round" });
    const button = (action, label) => el("button", { text: label, data: { action: action }, attrs: { type: "button" } });
    const play = button("play", "▶ play"), pause = button("pause", "❚❚ pause");
    const back = button("back", "◀ back"), step = button("step", "step ▶");
    const seek = el("input", { className: "seek", attrs: { type: "range", min: 0, max: frames.length - 1, value: 0, step: 1, "aria-label": "picture" } });
    const positions = el("ul", { className: "tank-positions" });
    const said = el("ul", { className: "tank-messages" });
    const controls = el("div", { className: "tank-controls" }, [back, play, pause, step, seek,
      el("span", { text: " picture " }), frameLabel, el("span", { text: " / " + (frames.length - 1) + " " }), roundLabel]);
    root.appendChild(controls);
    root.appendChild(canvas);
    root.appendChild(positions);
    root.appendChild(said);
    if (arr(game.mismatch).length) K.message(root, "The re-played game differs from the logged record in rounds " + arr(game.mismatch).map(str).join(", ") + ".", "game-error-note");

    const plain = (v) => (num(v) === null ? "?" : String(v));
    let shown = 0, timer = null;
    function show(k) {
      shown = Math.max(0, Math.min(frames.length - 1, Math.floor(num(k) || 0)));
      if (ctx) paint(shown);
      frameLabel.textContent = String(shown);
      frameLabel.dataset.frame = String(shown);
      seek.value = String(shown);
      roundLabel.textContent = "(round " + K.fmt(frames[shown].round) + ")";
      positions.replaceChildren(...arr(frames[shown].tanks).map(obj).map((t) => el("li", {
        data: { tank: str(t.id) },
        text: (t.npc ? "NPC " : "tank ") + str(t.id) + ": " + plain(t.x) + "," + plain(t.y) + " " + str(t.dir) + " HP" + plain(t.hp) + (t.frozen ? " frozen" : ""),
      })));
      said.replaceChildren(...messagesUpTo(shown).map((m) => el("li", {
        className: "tank-message", text: str(m[0]) + " -> " + str(m[1]) + ": " + str(m[2]),
      })));
    }
    function stop() { if (timer !== null) { clearInterval(timer); timer = null; } }
    play.addEventListener("click", () => {
      stop();
      if (shown >= frames.length - 1) show(0);
      timer = setInterval(() => { if (shown >= frames.length - 1) stop(); else show(shown + 1); }, 1000 / FPS);
    });
    pause.addEventListener("click", stop);
    step.addEventListener("click", () => { stop(); show(shown + 1); });
    back.addEventListener("click", () => { stop(); show(shown - 1); });
    seek.addEventListener("input", () => { stop(); show(Number(seek.value)); });
    show(0);
  }

  window.ArenaGames.register(["tank_battle_v0"], (root, payload) => window.ArenaGameKit.view(draw)(root, payload));
})();
