// arena view's pages: the live episode list of a run page, and the episode page's transcript and game view.
// Every string from a folder is set with textContent on elements made with createElement: nothing read
// from a results folder is ever parsed as HTML.
"use strict";
(function () {
  const POLL_MS = 1000;

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== undefined && value !== null) node.setAttribute(key, String(value));
    }
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function shown(value) {
    if (value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  // ------------------------------------------------------------------ run page: live episodes

  function episodeRow(row) {
    if (row.error) {
      const tr = el("tr", { class: "corrupt", "data-line": row.line });
      tr.appendChild(el("td", { colspan: 5 }, row.error));
      return tr;
    }
    const tr = el("tr", { "data-episode": row.episode });
    const first = el("td");
    first.appendChild(el("a", { href: row.href }, row.episode));
    tr.appendChild(first);
    const seats = el("td");
    for (const [agent, label, score] of row.seats) {
      const seat = el("span", { class: "seat" }, agent + ": " + label + " ");
      seat.appendChild(el("b", {}, score));
      seats.appendChild(seat);
      seats.appendChild(document.createTextNode(" "));
    }
    tr.appendChild(seats);
    for (const value of [row.steps, row.invalid, row.fallback]) tr.appendChild(el("td", {}, value));
    return tr;
  }

  function followRun(section) {
    const api = section.dataset.api;
    if (!api || section.dataset.status !== "live") return;
    const body = document.getElementById("episode-rows");
    const lastPage = section.dataset.lastPage === "true";
    let count = Number(section.dataset.count);
    async function poll() {
      let answer;
      try {
        const response = await fetch(api + "?from=" + count, { cache: "no-store" });
        if (!response.ok) throw new Error("HTTP " + response.status);
        answer = await response.json();
      } catch (err) {
        setTimeout(poll, POLL_MS);  // the server restarting: try again
        return;
      }
      if (lastPage) for (const row of answer.rows) body.appendChild(episodeRow(row));
      count += answer.rows.length;
      if (answer.rows.length) {
        const none = document.getElementById("no-episodes");
        if (none) none.remove();
      }
      for (const node of document.querySelectorAll("[data-progress]")) {
        node.textContent = answer.committed + " / " + (answer.planned === null ? "?" : answer.planned);
      }
      for (const node of document.querySelectorAll(".status")) {
        node.textContent = answer.status;
        node.className = "status status-" + answer.status;
        node.dataset.status = answer.status;
      }
      section.dataset.status = answer.status;
      section.dataset.count = String(count);
      if (answer.status === "live" || count < answer.committed) setTimeout(poll, POLL_MS);
    }
    setTimeout(poll, POLL_MS);
  }

  // ------------------------------------------------------------------ episode page: transcript

  function badge(text, kind) {
    return el("span", { class: "badge badge-" + kind }, text);
  }

  function telemetry(trace) {
    if (!trace || typeof trace !== "object") return null;
    const parts = [];
    if (typeof trace.prompt_tokens === "number") parts.push("prompt " + trace.prompt_tokens + " tokens");
    if (typeof trace.cached_tokens === "number") parts.push("cached " + trace.cached_tokens);
    if (typeof trace.completion_tokens === "number") parts.push("completion " + trace.completion_tokens + " tokens");
    if (typeof trace.latency_s === "number") parts.push("latency " + trace.latency_s.toFixed(3) + " s");
    if (Array.isArray(trace.calls)) parts.push(trace.calls.length + (trace.calls.length === 1 ? " call" : " calls"));
    if (typeof trace.backend === "string") parts.push(trace.backend);
    return parts.length ? el("p", { class: "telemetry" }, parts.join(" · ")) : null;
  }

  function rawAnswer(line) {
    const trace = line.trace;
    if (trace && Array.isArray(trace.calls) && trace.calls.length) {
      const texts = trace.calls.map((call) => (call && typeof call.text === "string" ? call.text : shown(call)));
      if (texts.length > 1) return texts.map((text, i) => "[call " + (i + 1) + "] " + text).join("\n");
      return texts[0];
    }
    return shown(line.action);
  }

  function decision(line, index, observation, askedBefore) {
    const invalid = line.invalid_action && typeof line.invalid_action === "object";
    const item = el("li", { class: "decision", "data-agent": shown(line.agent), "data-index": index,
      "data-invalid": invalid ? "true" : "false" });
    const head = el("div", { class: "head" });
    head.appendChild(el("span", { class: "step" }, "#" + shown(line.step)));
    head.appendChild(el("span", { class: "agent" }, shown(line.agent)));
    head.appendChild(el("span", { class: "policy" }, shown(line.policy)));
    if (!invalid) head.appendChild(badge(askedBefore ? "valid after " + askedBefore + " re-ask" +
      (askedBefore > 1 ? "s" : "") : "valid", "valid"));
    else {
      head.appendChild(badge("invalid: " + shown(line.invalid_action.kind), "invalid"));
      head.appendChild(line.fallback ? badge("fallback", "fallback") : badge("re-asked (try " + shown(line.retries) + ")", "retry"));
    }
    item.appendChild(head);
    if (observation !== undefined) {
      const fold = el("details", { class: "observation" });
      fold.appendChild(el("summary", {}, "observation"));
      fold.appendChild(el("pre", {}, observation === null ? "(no text observation)" : observation));
      item.appendChild(fold);
    }
    const answer = el("div", { class: "answer" });
    answer.appendChild(el("span", { class: "label" }, "answer"));
    answer.appendChild(el("pre", { class: "raw" }, rawAnswer(line)));
    item.appendChild(answer);
    const move = el("p", { class: "move" });
    move.appendChild(el("span", { class: "label" }, line.fallback ? "move (fallback)" : "parsed move"));
    move.appendChild(el("code", {}, shown(line.parsed)));
    item.appendChild(move);
    if (invalid && line.invalid_action.reason) item.appendChild(el("p", { class: "reason" }, shown(line.invalid_action.reason)));
    if (line.rewards && typeof line.rewards === "object" && Object.keys(line.rewards).length) {
      item.appendChild(el("p", { class: "rewards" }, "rewards " + JSON.stringify(line.rewards)));
    }
    const info = telemetry(line.trace);
    if (info) item.appendChild(info);
    return item;
  }

  function finishLine(line) {
    const item = el("li", { class: "finish", "data-agent": shown(line.agent) });
    item.appendChild(el("span", { class: "agent" }, shown(line.agent) + " finished"));
    const info = telemetry(line.trace);
    if (info) item.appendChild(info);
    return item;
  }

  function renderTranscript(payload, observations) {
    const list = document.getElementById("transcript");
    const texts = observations && Array.isArray(observations.texts) ? observations.texts : null;
    const asked = new Map();
    const fragment = document.createDocumentFragment();
    let decisions = 0, invalid = 0;
    for (const line of payload.steps) {
      if (line.corrupt) {
        fragment.appendChild(el("li", { class: "corrupt" }, line.corrupt));
        continue;
      }
      if (line.finish) {
        fragment.appendChild(finishLine(line));
        continue;
      }
      const before = asked.get(line.agent) || 0;
      fragment.appendChild(decision(line, decisions, texts ? texts[decisions] : undefined, before));
      const isInvalid = line.invalid_action && typeof line.invalid_action === "object";
      asked.set(line.agent, isInvalid && !line.fallback ? before + 1 : 0);
      decisions += 1;
      if (isInvalid) invalid += 1;
    }
    list.appendChild(fragment);
    document.getElementById("transcript-counts").textContent =
      decisions + " decisions, " + invalid + " invalid";
  }

  function setupControls() {
    const filter = document.getElementById("seat-filter");
    const items = () => Array.from(document.querySelectorAll("#transcript > li"));
    filter.addEventListener("change", () => {
      for (const item of items()) item.hidden = Boolean(filter.value) && item.dataset.agent !== filter.value;
    });
    let current = -1;
    document.getElementById("next-invalid").addEventListener("click", () => {
      const invalid = items().filter((item) => item.dataset.invalid === "true" && !item.hidden);
      if (!invalid.length) return;
      const next = invalid.find((item) => Number(item.dataset.index) > current) || invalid[0];
      for (const item of document.querySelectorAll(".decision.current")) item.classList.remove("current");
      next.classList.add("current");
      current = Number(next.dataset.index);
      next.scrollIntoView({ block: "center" });
    });
  }

  function readJson(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function showEpisode() {
    const payload = readJson("episode-data");
    renderTranscript(payload, readJson("episode-observations"));
    setupControls();
    const root = document.getElementById("game-view");
    const drawn = window.ArenaGames && window.ArenaGames.render(payload.env, root, payload);
    if (!drawn) root.appendChild(el("p", { class: "muted" }, "No drawing for " + payload.env + ": the transcript below shows every decision."));
  }

  document.addEventListener("DOMContentLoaded", () => {
    const section = document.getElementById("episodes");
    if (section) followRun(section);
    if (document.getElementById("episode-data")) showEpisode();
  });
})();
