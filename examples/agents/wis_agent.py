"""A stateful Who is Spy agent behind the arena's agent protocol (docs/agents.md), standard library only.

    python examples/agents/wis_agent.py 9001 &
    arena run who_is_spy_v0 --players agent:http://127.0.0.1:9001,rule,rule,rule,rule,rule --episodes 12

Per episode (session) it remembers the clues it gave, so it never repeats one, and every clue it heard,
and votes for the player whose clues share the fewest words with everyone else's.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CLUES = ["It is something most people know.", "You can find it in everyday life.", "Children like it.",
         "It comes in many sizes.", "People talk about it often."]
MEMORY = {}  # session -> {"said": [my clues], "heard": {player: set of words}}


def decide(decision):
    info, memory = decision["info"], MEMORY.setdefault(decision["session"], {"said": [], "heard": {}})
    for clue in info.get("descriptions", []):
        memory["heard"].setdefault(clue["speaker"], set()).update(clue["text"].lower().split())
    if info.get("phase") == "describe":
        clue = next((c for c in CLUES if c not in memory["said"]), f"Hint {len(memory['said'])}: it is familiar.")
        memory["said"].append(clue)
        return clue
    heard, candidates = memory["heard"], info.get("legal_vote_targets") or ["abstain"]
    fit = {p: sum(len(heard.get(p, set()) & words) for q, words in heard.items() if q != p) for p in candidates}
    return min(candidates, key=lambda p: fit[p])


class Agent(BaseHTTPRequestHandler):
    protocol_version, disable_nagle_algorithm = "HTTP/1.1", True  # keep-alive, no 40 ms delayed answers

    def do_GET(self):
        self.reply({"protocol": 1, "name": "wis_agent.py", "games": ["who_is_spy_v0"]})

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/act":
            return self.reply({"action": decide(message)})
        MEMORY.pop(message["session"], None)  # /start and /end: a fresh memory
        self.reply({})

    def reply(self, data):
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 9001), Agent)
print(f"listening at http://127.0.0.1:{server.server_port}", flush=True)
server.serve_forever()
