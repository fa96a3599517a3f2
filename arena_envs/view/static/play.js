// arena play --web: the person's seat. Polls /api/state, shows the open question with its form,
// posts the answer to /api/answer. Every text from the game is set with textContent.
"use strict";

(() => {
  const POLL_MS = 400;
  const $ = (id) => document.getElementById(id);
  let shownVersion = -1;
  let shownQuestion = 0;
  let busy = false;
  let keyOps = null; // the tank's key -> operation while a key question is open
  let shownBoard = 0;

  function el(tag, props = {}, children = []) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (key === "text") node.textContent = value;
      else if (key === "data") for (const [k, v] of Object.entries(value)) node.dataset[k] = v;
      else if (value !== null && value !== undefined) node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  function showError(message) {
    const box = $("page-error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    let reply = {};
    try { reply = await response.json(); } catch (err) { reply = {}; }
    return { ok: response.ok, error: reply.error || `HTTP ${response.status}` };
  }

  async function send(answer) {
    if (busy) return;
    busy = true;
    setDisabled(true);
    const result = await post("/api/answer", { question: shownQuestion, ...answer });
    if (!result.ok) {
      showError(`answer refused: ${result.error}`);
      busy = false;
      setDisabled(false);
      return;
    }
    showError("");
    await poll();
  }

  function setDisabled(disabled) {
    for (const control of $("form").querySelectorAll("input, select, button")) control.disabled = disabled;
  }

  function numberInput(name, min, max, step) {
    return el("input", { type: "number", name, min, max, step: step || "any", "data-field": name });
  }

  function fieldsForm(form, box) {
    const inputs = form.fields.map((field) => {
      let input;
      if (field.type === "enum") {
        input = el("select", { name: field.name, "data-field": field.name },
          field.options.map((option) => el("option", { value: option.value, text: option.label })));
      } else if (field.type === "integer" || field.type === "number") {
        input = numberInput(field.name, field.min, field.max, field.type === "integer" ? "1" : "any");
      } else {
        input = el("input", { type: "text", name: field.name, "data-field": field.name });
      }
      const bounds = field.min !== undefined && field.min !== null ? ` (${field.min}…${field.max})` : "";
      const name = form.outer ? `${form.outer} ${field.name}` : field.name;
      box.append(el("label", {}, [el("span", { text: name + bounds }), input]));
      return input;
    });
    const submit = el("button", { type: "button", id: "submit-fields", class: "primary", text: "Answer" });
    submit.addEventListener("click", () => send({ values: inputs.map((input) => input.value) }));
    for (const input of inputs) {
      input.addEventListener("keydown", (event) => { if (event.key === "Enter") submit.click(); });
    }
    box.append(submit);
  }

  function choiceForm(form, box) {
    for (const choice of form.choices) {
      const button = el("button", { type: "button", text: choice, data: { choice } });
      button.addEventListener("click", () => send({ text: choice }));
      box.append(button);
    }
  }

  function bidForm(form, box) {
    const amount = numberInput("bid", form.min, form.max, "1");
    const bid = el("button", { type: "button", id: "submit-bid", class: "primary", text: "Bid" });
    bid.addEventListener("click", () => send({ text: form.bid.replace("{X}", amount.value.trim()) }));
    const withdraw = el("button", { type: "button", id: "withdraw", text: form.withdraw });
    withdraw.addEventListener("click", () => send({ text: form.withdraw }));
    const bounds = form.min !== null ? ` (${form.min}…${form.max})` : "";
    box.append(el("label", {}, [el("span", { text: "your bid" + bounds }), amount]), bid, withdraw);
  }

  function tradeForm(form, box) {
    const action = el("select", { name: "action", "data-field": "action" },
      form.actions.map((name) => el("option", { value: name, text: name })));
    const size = numberInput("size", form.min, form.max, "0.05");
    const submit = el("button", { type: "button", id: "submit-trade", class: "primary", text: "Decide" });
    submit.addEventListener("click", () => {
      const text = form.decision.replace("{ACTION}", action.value).replace("{SIZE}", size.value.trim()).trim();
      send({ text });
    });
    box.append(el("label", {}, [el("span", { text: "decision" }), action]),
      el("label", {}, [el("span", { text: `size (${form.min}…${form.max}, empty: the default)` }), size]), submit);
  }

  function keysForm(form, box) {
    keyOps = new Map();
    const keys = el("div", { class: "keys" });
    for (const entry of form.ops) {
      const name = entry.key === " " ? "Space" : entry.key;
      const button = el("button", { type: "button", data: { op: entry.op } }, [entry.label, el("kbd", { text: name })]);
      button.addEventListener("click", () => send({ op: entry.op }));
      keys.append(button);
      keyOps.set(entry.key, entry.op);
    }
    box.append(keys);
  }

  function textForm(box, main) {
    const input = el("input", { type: "text", id: "answer-text", maxlength: "4000",
      placeholder: main ? "your answer" : "or type the answer yourself" });
    const submit = el("button", { type: "button", id: "send-text", class: main ? "primary" : null, text: "Send" });
    submit.addEventListener("click", () => send({ text: input.value }));
    input.addEventListener("keydown", (event) => { if (event.key === "Enter") submit.click(); });
    box.append(el("div", { class: "row" }, [input, submit]));
  }

  const FORMS = { fields: fieldsForm, choice: choiceForm, bid: bidForm, trade: tradeForm, keys: keysForm };

  function showQuestion(question) {
    showError("");
    $("question-id").textContent = `(question ${question.id})`;
    const observation = $("observation");
    observation.textContent = question.text;
    observation.scrollTop = observation.scrollHeight;
    $("legal").textContent = question.legal;
    $("legal").hidden = !question.legal;
    const box = $("form");
    box.replaceChildren();
    box.dataset.kind = question.form.kind;
    keyOps = null;
    const build = FORMS[question.form.kind];
    if (build) build(question.form, box);
    if (question.form.kind !== "keys") textForm(box, !build);
    const first = box.querySelector("input, select");
    if (first) first.focus(); // (a key question keeps the focus off its buttons: Space shoots, it clicks nothing)
  }

  function showNotes(notes) {
    $("notes").replaceChildren(...notes.map((note) => el("li", { class: "note", text: note })));
  }

  function showEnd(state) {
    $("end-title").textContent = {
      over: "Game over", abandoned: "Game abandoned: nothing recorded", failed: "The game stopped",
    }[state.status];
    const words = $("last-words");
    words.textContent = state.last_words || "";
    words.hidden = !state.last_words;
    words.scrollTop = words.scrollHeight; // the outcome is at the end
    $("end-error").textContent = state.error || "";
    const rows = Object.entries(state.scores || {}).sort((a, b) => b[1] - a[1]).map(([agent, score]) => {
      const mine = agent === state.me;
      return el("tr", { class: mine ? "me" : null, data: { agent } },
        [el("td", { text: agent }), el("td", { text: score.toFixed(3) }), el("td", { text: mine ? "← you" : "" })]);
    });
    $("scores").querySelector("tbody").replaceChildren(...rows);
    $("scores").hidden = rows.length === 0;
    $("folder").textContent = state.folder;
  }

  function showBoard(state) {
    // the game's picture, drawn by the viewer's script for the game (static/games/*.js)
    shownBoard = state.board_id;
    const box = $("board");
    box.replaceChildren();
    box.dataset.board = String(state.board_id);
    box.classList.toggle("final", Boolean(state.board_final));
    if (state.board_final) $("scores").after(box); // the finished game's view goes below the scores
    box.hidden = !(window.ArenaGames && window.ArenaGames.render(state.env, box, { env: state.env, game: state.board }));
  }

  function render(state) {
    $("status").textContent = state.status;
    document.body.dataset.status = state.status;
    const asking = state.status === "asking" && state.question;
    const ended = ["over", "abandoned", "failed"].includes(state.status);
    $("question").hidden = !asking;
    $("waiting").hidden = asking || ended;
    $("end").hidden = !ended;
    $("leave").hidden = ended;
    if (asking && state.question.id !== shownQuestion) {
      shownQuestion = state.question.id;
      busy = false;
      showQuestion(state.question);
    } else if (asking && busy) {
      busy = false; // the same question again: the answer was not accepted
      setDisabled(false);
    }
    if (!asking) keyOps = null;
    if (state.board && state.board_id !== shownBoard) showBoard(state);
    showNotes(state.notes || []);
    if (ended) showEnd(state);
  }

  async function poll() {
    let state;
    try {
      const response = await fetch("/api/state", { cache: "no-store" });
      state = await response.json();
    } catch (err) {
      $("stopped").hidden = false;
      return false;
    }
    if (state.version !== shownVersion) {
      shownVersion = state.version;
      render(state);
    }
    return true;
  }

  async function loop() {
    if (await poll()) setTimeout(loop, POLL_MS);
  }

  document.addEventListener("keydown", (event) => {
    if (!keyOps || !keyOps.has(event.key) || busy) return;
    event.preventDefault();
    send({ op: keyOps.get(event.key) });
  });

  async function close() {
    await post("/api/close", {});
    $("stopped").hidden = false;
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("leave").addEventListener("click", close);
    $("close").addEventListener("click", close);
    loop();
  });
})();
