// A stateful Who is Spy agent behind the arena's agent protocol (docs/agents.md), in Node with its
// standard library only (http).
//
//     node examples/agents/wis_agent.js 9002 &
//     arena run who_is_spy_v0 --players agent:http://127.0.0.1:9002,rule,rule,rule,rule,rule --episodes 12
//
// Per episode (session) it remembers how many clues it gave, so it never repeats one, and every clue it
// heard, and votes for the player whose clues share the fewest words with everyone else's.
const http = require("http");

const CLUES = ["It is part of daily life.", "Most homes have one.", "You can buy it in many shops.",
  "It has a familiar shape.", "Everyone has seen it."];
const memory = new Map(); // session -> {said: number, heard: Map(player -> Set of words)}

function decide(decision) {
  const info = decision.info;
  if (!memory.has(decision.session)) memory.set(decision.session, { said: 0, heard: new Map() });
  const mine = memory.get(decision.session);
  for (const clue of info.descriptions || []) {
    if (!mine.heard.has(clue.speaker)) mine.heard.set(clue.speaker, new Set());
    for (const word of clue.text.toLowerCase().split(/\s+/)) mine.heard.get(clue.speaker).add(word);
  }
  if (info.phase === "describe") {
    mine.said += 1;
    return CLUES[mine.said - 1] || `Hint ${mine.said}: it is familiar.`;
  }
  const candidates = (info.legal_vote_targets || []).length ? info.legal_vote_targets : ["abstain"];
  const fit = (p) => {
    let shared = 0;
    for (const [q, words] of mine.heard) {
      if (q === p) continue;
      for (const word of mine.heard.get(p) || []) if (words.has(word)) shared += 1;
    }
    return shared;
  };
  return candidates.reduce((best, p) => (fit(p) < fit(best) ? p : best));
}

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    let answer = {};
    if (request.method === "GET") {
      answer = { protocol: 1, name: "wis_agent.js", games: ["who_is_spy_v0"] };
    } else {
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (request.url === "/act") answer = { action: decide(message) };
      else memory.delete(message.session); // /start and /end: a fresh memory
    }
    const body = Buffer.from(JSON.stringify(answer));
    response.writeHead(200, { "Content-Type": "application/json", "Content-Length": body.length });
    response.end(body);
  });
});
server.on("connection", (socket) => socket.setNoDelay(true));
server.listen(Number(process.argv[2] || 9002), "127.0.0.1", () => {
  console.log(`listening at http://127.0.0.1:${server.address().port}`);
});
