#!/usr/bin/env bash
# Every extra installs what its features use. For each extra named (default: llm rl ray render agents view),
# a fresh venv gets `pip install -e ".[EXTRA]"` (that extra alone, over the base dependencies), and
# that extra's features are then run for real, in seconds each:
#   llm     the hf: player (SmolLM2 from scripts/setup_llm.sh's folder) plays a short
#           guess_two_thirds_v0 game with guided answers (every answer parsed, no fallback), its
#           backend decodes regex/json answers under xgrammar (grammar_guided, first-attempt answers
#           to a prompt the model would answer otherwise), and the vllm: HTTP client (openai, httpx)
#           reaches the point of a connection (a closed local port: a one-line ConnectError);
#   rl      `arena train` (MaskablePPO, a few dozen steps, TensorBoard events) and `arena run` with
#           the trained `sb3:PATH` player;
#   ray     `arena run ... --ray` on a local cluster, `arena train-rllib` for one tiny iteration
#           and `arena run` with the trained `rllib:PATH` players;
#   render  `arena run tank_battle_v0` then `arena replay` to an MP4 (through imageio-ffmpeg), and
#           `arena run --record` (MP4s drawn after the run);
#   agents  `arena serve-agent` serving a rule player on a free local port and `arena run` with an
#           `agent:URL` seat in a Who is Spy tournament;
#   view    `arena view --export` of a short run (the index and the episodes' pages written), and
#           `arena view` serving it on a free local port (its index fetched).
# The vllm extra is not checked here: it is the stack of scripts/setup_llm.sh, which the tests use.
# Prints one `ok EXTRA: feature` or `FAILED EXTRA: feature: reason` line per feature (a failure's
# last log lines follow, indented), `note EXTRA: feature: ...` when a passing feature printed a
# traceback, and exits 1 if any feature failed. Everything lives in one `mktemp -d` folder,
# removed at the end (ARENA_CHECK_KEEP=1 keeps it and prints where).
#   bash scripts/check_extras.sh [EXTRA ...]
# Environment: PYTHON (default python3), ARENA_SMOLLM2_DIR (default
# ~/.cache/arena_envs/smollm2-135m-instruct), ARENA_CHECK_TIMEOUT (seconds per command, default 300).
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
MODEL="${ARENA_SMOLLM2_DIR:-${ARENA_CACHE_DIR:-$HOME/.cache/arena_envs}/smollm2-135m-instruct}"
LIMIT="${ARENA_CHECK_TIMEOUT:-300}"
if (($#)); then EXTRAS=("$@"); else EXTRAS=(llm rl ray render agents view); fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/arena-check-extras.XXXXXX")"
cleanup() {
    if [[ "${ARENA_CHECK_KEEP:-0}" == 1 ]]; then
        echo "kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
export SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy PIP_DISABLE_PIP_VERSION_CHECK=1
export RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
unset RAY_ADDRESS

failures=0
extra="" venv="" out="" log=""

# run_logged LOG CMD...: CMD's output appended to LOG, under the per-command time limit
run_logged() {
    local logfile=$1
    shift
    echo "+ $*" >>"$logfile"
    timeout --kill-after=20 "$LIMIT" "$@" >>"$logfile" 2>&1
    local rc=$?
    ((rc == 124)) && echo "timed out after ${LIMIT}s" >>"$logfile"
    return "$rc"
}

# the reason of a failure: the log's last line that says something
reason_of() {
    grep -v '^[[:space:]]*$' "$1" | grep -v '^+ ' | tail -n 1 | cut -c1-400
}

# feature NAME FUNCTION: runs FUNCTION (its commands log into $log), prints the feature's line
feature() {
    local name=$1 fn=$2 start=$SECONDS
    log="$out/$fn.log"
    : >"$log"
    if "$fn"; then
        echo "ok $extra: $name ($((SECONDS - start))s)"
        if grep -q -E '^Traceback|ModuleNotFoundError' "$log"; then
            echo "note $extra: $name: a traceback was printed: $(grep -m1 -E 'ModuleNotFoundError|Error' "$log" | cut -c1-300)"
        fi
    else
        echo "FAILED $extra: $name: $(reason_of "$log") ($((SECONDS - start))s)"
        grep -v '^[[:space:]]*$' "$log" | tail -n 8 | sed 's/^/    | /'
        failures=$((failures + 1))
    fi
}

# fail MESSAGE: a check's own reason, into the log
fail() {
    echo "$*" >>"$log"
    return 1
}

py() { "$venv/bin/python" "$@"; }
arena() { run_logged "$log" "$venv/bin/arena" "$@"; }

# ---------------------------------------------------------------- every extra
pip_check() {
    run_logged "$log" "$venv/bin/python" -m pip check
}

# ---------------------------------------------------------------- llm
GUESS=(guess_two_thirds_v0 --env-arg n_players=2 --env-arg n_rounds=2 --episodes 1 --fixed-seats --no-progress)

llm_hf_game() {
    [[ -d "$MODEL" ]] || fail "no model folder $MODEL (bash scripts/setup_llm.sh makes it)" || return 1
    arena run "${GUESS[@]}" --players "hf:$MODEL,nash" --out "$out/hf-game" || return 1
    # every decision of the hf seat: guided calls, an answer the game parsed, no fallback
    run_logged "$log" "$venv/bin/python" - "$out/hf-game" <<'EOF'
import json, sys
from arena_envs.runner.results import read_steps

steps = [s for s in read_steps(sys.argv[1], 0) if s.get("trace", {}).get("backend", "").startswith("hf:")]
assert steps, "no decision of the hf: seat in the step log"
for s in steps:
    calls = s["trace"]["calls"]
    assert s["invalid_action"] is None and not s["fallback"], f"step {s['step']}: invalid answer {s['action']!r}"
    assert calls and all(c["guided"] for c in calls), f"step {s['step']}: unguided call {calls}"
    json.loads(calls[-1]["text"])
print(f"{len(steps)} hf decisions, all guided and valid: {[s['action'] for s in steps]}")
EOF
}

llm_hf_grammar() {
    [[ -d "$MODEL" ]] || fail "no model folder $MODEL (bash scripts/setup_llm.sh makes it)" || return 1
    run_logged "$log" "$venv/bin/python" - "$MODEL" <<'EOF'
import json, re, sys
from arena_envs.core.answers import AnswerConstraint
from llm_policies.backends.hf_transformers import TransformersBackend
from llm_policies.types import ChatRequest, Sampling

backend = TransformersBackend(sys.argv[1])
assert backend.grammar_guided, "TransformersBackend.grammar_guided is False: xgrammar is not importable"
story = ({"role": "user", "content": "Tell me a short story about a cat."},)
bid = r"I'm out!|I bid \$[1-9][0-9]{0,3}!"
schema = {"type": "object", "properties": {"action": {"enum": ["BUY", "SELL", "HOLD"]}},
          "required": ["action"], "additionalProperties": False}
regex_row, json_row = backend.generate_batch([
    ChatRequest(story, Sampling(max_tokens=12), AnswerConstraint("regex", "a bid", pattern=bid)),
    ChatRequest(story, Sampling(max_tokens=16), AnswerConstraint("json", "an action", schema=schema))])
print("regex:", regex_row.text, regex_row.extra, "json:", json_row.text, json_row.extra)
assert re.fullmatch(bid, regex_row.text) and regex_row.extra["attempts"] == 1 and regex_row.extra["raw"] == regex_row.text
assert json.loads(json_row.text)["action"] in ("BUY", "SELL", "HOLD") and json_row.extra["attempts"] == 1
print("decoded under xgrammar on the first attempt")
EOF
}

llm_vllm_client() {
    run_logged "$log" "$venv/bin/python" -c "import openai, httpx; print('openai', openai.__version__, 'httpx', httpx.__version__)" || return 1
    local port
    port="$(py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    # no server there: the client must get as far as connecting, and say so in one line (exit 1)
    arena run "${GUESS[@]}" --players "vllm:smollm2-135m-instruct@http://127.0.0.1:$port/v1?retries=1,nash" \
        --out "$out/vllm-client"
    local rc=$?
    ((rc == 1)) || fail "expected exit status 1 (server down), got $rc" || return 1
    grep -q "ConnectError" "$log" || fail "no ConnectError line for the closed port $port" || return 1
    ! grep -q -E '^Traceback|ModuleNotFoundError' "$log" || fail "a traceback instead of the one-line error"
}

check_llm() {
    feature "hf: player plays guess_two_thirds_v0 (guided, every answer valid)" llm_hf_game
    feature "hf: guided answers decoded by xgrammar (grammar_guided, first attempt)" llm_hf_grammar
    feature "vllm: HTTP client (import openai, httpx; ConnectError on a closed port)" llm_vllm_client
}

# ---------------------------------------------------------------- rl
rl_train() {
    arena train guess_two_thirds_v0 --algo maskable_ppo --opponents nash --env-arg n_players=2 \
        --env-arg n_rounds=4 --steps 64 --algo-arg n_steps=32 --algo-arg batch_size=32 --eval-episodes 2 \
        --no-progress --out "$out/sb3" || return 1
    compgen -G "$out/sb3/*.zip" >/dev/null || fail "no model .zip in $out/sb3: $(ls "$out/sb3")" || return 1
    [[ -n "$(find "$out/sb3" -name 'events.out.tfevents*' -print -quit)" ]] || fail "no TensorBoard events in $out/sb3"
}

rl_play() {
    [[ -d "$out/sb3" ]] || fail "nothing trained (arena train failed)" || return 1
    arena run guess_two_thirds_v0 --env-arg n_players=2 --env-arg n_rounds=4 --players "sb3:$out/sb3,nash" \
        --episodes 2 --no-progress --out "$out/sb3-run"
}

check_rl() {
    feature "arena train (maskable_ppo, 64 steps, TensorBoard)" rl_train
    feature "arena run with the sb3:PATH player" rl_play
}

# ---------------------------------------------------------------- ray
ray_run() {
    arena run el_farol_v0 --players "contrarian*5,random*5" --episodes 4 --ray --ray-workers 2 --no-progress \
        --out "$out/ray-run" || return 1
    [[ "$(grep -c . "$out/ray-run/episodes.jsonl")" == 4 ]] || fail "episodes.jsonl does not hold 4 episodes"
}

ray_train() {
    arena train-rllib guess_two_thirds_v0 --env-arg n_players=4 --others level_k,best_response_last \
        --iterations 1 --batch 200 --minibatch 100 --epochs 1 --no-progress --out "$out/rllib" || return 1
    [[ -f "$out/rllib/model.json" ]] || fail "no model.json in $out/rllib"
}

ray_play() {
    [[ -f "$out/rllib/model.json" ]] || fail "nothing trained (arena train-rllib failed)" || return 1
    arena run guess_two_thirds_v0 --env-arg n_players=4 --episodes 2 --no-progress --out "$out/rllib-run" \
        --players "rllib:$out/rllib,rllib:$out/rllib,level_k,best_response_last"
}

check_ray() {
    feature "arena run --ray (local cluster, 2 workers, 4 episodes)" ray_run
    feature "arena train-rllib (1 iteration of 200 steps)" ray_train
    feature "arena run with the rllib:PATH players" ray_play
}

# ---------------------------------------------------------------- render
is_mp4() {  # FILE: an MP4 with at least two frames
    [[ -s "$1" ]] || fail "no video at $1" || return 1
    run_logged "$log" "$venv/bin/python" - "$1" <<'EOF'
import sys
import imageio.v2 as imageio

path = sys.argv[1]
with open(path, "rb") as f:
    assert f.read(12)[4:8] == b"ftyp", f"{path} is not an MP4 file"
frames = sum(1 for _ in imageio.get_reader(path))
assert frames >= 2, f"{path}: {frames} frame(s)"
print(f"{path}: MP4, {frames} frames")
EOF
}

render_replay() {
    arena run tank_battle_v0 --players rule,random --episodes 1 --env-arg stage=4 --env-arg max_rounds=8 \
        --no-progress --out "$out/tanks" || return 1
    arena replay "$out/tanks" --episode 0 --fps 4 || return 1
    # the default file is an MP4 only when imageio-ffmpeg is found (a GIF otherwise)
    [[ -f "$out/tanks/replays/episode_0.mp4" ]] ||
        fail "arena replay wrote no replays/episode_0.mp4: $(ls "$out/tanks/replays" 2>&1)" || return 1
    is_mp4 "$out/tanks/replays/episode_0.mp4"
}

render_record() {
    arena run tank_battle_v0 --players rule,random --episodes 1 --env-arg stage=4 --env-arg max_rounds=8 \
        --no-progress --out "$out/tanks-rec" --record "$out/videos" || return 1
    is_mp4 "$out/videos/episode_0.mp4"
}

check_render() {
    feature "arena replay of a tank_battle_v0 episode to MP4" render_replay
    feature "arena run --record (MP4 per episode)" render_record
}

# ---------------------------------------------------------------- agents
agents_tournament() {
    local port server rc
    port="$(py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "$venv/bin/arena" serve-agent who_is_spy_v0 consensus --port "$port" >>"$log" 2>&1 &
    server=$!
    # the run waits for the agent's health answer while it starts
    arena run who_is_spy_v0 --players "agent:http://127.0.0.1:$port,rule,rule,rule,rule,rule" --episodes 2 \
        --no-progress --out "$out/agents-run"
    rc=$?
    kill "$server"
    wait "$server" 2>/dev/null
    ((rc == 0)) || return 1
    [[ "$(grep -c . "$out/agents-run/episodes.jsonl")" == 2 ]] || fail "episodes.jsonl does not hold 2 episodes"
}

check_agents() {
    feature "arena serve-agent and an agent:URL seat (who_is_spy_v0, 2 episodes)" agents_tournament
}

# ---------------------------------------------------------------- view
view_run() {
    [[ -f "$out/view-run/episodes.jsonl" ]] && return 0
    arena run guess_two_thirds_v0 --players "random*10" --episodes 2 --no-progress --out "$out/view-run"
}

view_export() {
    view_run || return 1
    arena view "$out/view-run" --export "$out/site" || return 1
    [[ -f "$out/site/index.html" ]] || fail "no index.html in the export"
    [[ "$(find "$out/site" -name 'episode-*.html' | wc -l)" == 2 ]] || fail "the export does not hold 2 episode pages"
}

view_serve() {
    local port server rc
    view_run || return 1
    port="$(py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "$venv/bin/arena" view "$out/view-run" --port "$port" >>"$log" 2>&1 &
    server=$!
    # the index, asked again for up to 60 s while the server starts
    run_logged "$log" "$venv/bin/python" -c "
import sys, time, urllib.request
deadline = time.monotonic() + 60
while True:
    try:
        page = urllib.request.urlopen('http://127.0.0.1:$port/', timeout=5).read().decode()
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.5)
sys.exit(0 if 'guess_two_thirds_v0' in page else 'the index does not list the run')"
    rc=$?
    kill "$server"
    wait "$server" 2>/dev/null
    return "$rc"
}

check_view() {
    feature "arena view --export of a guess_two_thirds_v0 run" view_export
    feature "arena view serving it on 127.0.0.1" view_serve
}

# ---------------------------------------------------------------- main
total_start=$SECONDS
echo "checking extras: ${EXTRAS[*]} (in $WORK; $("$PYTHON" --version 2>&1))"
for extra in "${EXTRAS[@]}"; do
    if ! declare -F "check_$extra" >/dev/null; then
        echo "FAILED $extra: unknown extra (checked: llm rl ray render agents view)"
        failures=$((failures + 1))
        continue
    fi
    venv="$WORK/venv-$extra"
    out="$WORK/out-$extra"
    mkdir -p "$out"
    log="$out/install.log"
    start=$SECONDS
    if "$PYTHON" -m venv "$venv" >"$log" 2>&1 &&
        run_logged "$log" "$venv/bin/python" -m pip install --quiet --no-compile -e "${REPO}[${extra}]"; then
        echo "install $extra: $((SECONDS - start))s"
    else
        echo "FAILED $extra: install: $(reason_of "$log") ($((SECONDS - start))s)"
        tail -n 8 "$log" | sed 's/^/    | /'
        failures=$((failures + 1))
        continue
    fi
    feature "dependencies consistent (pip check)" pip_check
    "check_$extra"
    [[ "${ARENA_CHECK_KEEP:-0}" == 1 ]] || rm -rf "$venv"  # a few GB each (torch, ray): freed before the next extra
done
echo "total ${EXTRAS[*]}: $((SECONDS - total_start))s, $failures failed"
((failures == 0))
