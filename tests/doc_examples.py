"""The fenced examples of README.md and docs/: found, classified and turned into runnable scripts.

Every fenced block carries a language. ``bash`` and ``python`` blocks are examples and run
(tests/test_doc_examples.py); ``console`` blocks show a session: their ``$ `` lines run, the rest is
output; ``text`` and ``toml`` blocks are shown, not run. What a runnable block may not do on a test
machine is said here, in one place, so that a reader of the test sees every liberty taken:

* the local server: ``127.0.0.1:8000`` is the suite's one SmolLM2 test server (its own port), and
  ``vllm:`` specs without ``@URL`` reach it through ``ARENA_VLLM_URL``; a block that starts a server
  itself (``arena serve ... --port 8000``) gets a free port and a 1 GiB KV cache for that server
  instead (other engines of the suite hold memory beside it), on one core of a small machine
  (``tests.llm_helpers.one_core``), and stops it;
* ``~/.cache/arena_envs/smollm2-135m-instruct`` is the model folder of scripts/setup_llm.sh wherever
  ``ARENA_SMOLLM2_DIR`` puts it, and ``raw_results`` (γ-Bench's published logs, which a user
  downloads) the sample of them in ``$ARENA_REFERENCE_DATA/gamabench``;
* ``.ci/run`` (the test command: CI runs it) is not run inside itself: it must exist;
* a ``console`` block's output lines, except those elided with ``…``, must appear in what it prints;
* a running Ray cluster (``HEAD:6379``, ``10.0.0.1:6379``) is the suite's local test cluster;
* ``pip install -e '.[EXTRAS]'`` is not run (the test environment is that install): the extras it
  names must exist in pyproject.toml and the package must be installed;
* ``SCALED``: a few examples train or play for minutes to hours as written; the test runs them with
  the counts listed there (each replacement must still match its block, so none goes stale);
* ``SYNTAX_ONLY``: commands for several machines or GPUs are checked by ``bash -n`` only;
* the agent services' ports (``9000``-``9099``: ``arena serve-agent``, the example agents) are free
  ports of the test machine, one per documented port, so that two test runs never share one.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
RUN_LANGS = frozenset({"bash", "python", "console"})
SHOWN_LANGS = frozenset({"text", "toml"})
DOCUMENTED_PORT = "8000"
DOCUMENTED_MODEL_DIR = "~/.cache/arena_envs/smollm2-135m-instruct"
RAW_RESULTS = re.compile(r"\braw_results\b")
CI_RUN = "bash .ci/run"
RAY_ADDRESS = re.compile(r"\b(?:HEAD|10\.0\.0\.1):6379\b")

#: An auction of one item: SmolLM2 on two CPU cores needs minutes per item as the AucArena bidder.
ONE_ITEM = """--env-arg 'items=[{"name": "Vase", "start_price": 1000, "true_value": 3000}]'"""
#: Guess 2/3 of two rounds: in the paper's setting the model plays all ten seats of twenty rounds.
SHORT_GUESS = "--env-arg guess_two_thirds_v0.n_rounds=2"
#: The AucArena bidder thinking in 32 tokens instead of 384: SmolLM2 writes about 15 tokens a second here.
SHORT_THOUGHTS = "?agent=aucarena&cot_max_tokens=32"
#: PPO's rollouts of 128 steps instead of 2,048: a documented training then updates twice in 256 steps.
SHORT_ROLLOUTS = "--algo-arg n_steps=128 --algo-arg batch_size=64"
SHORT_SELF_PLAY = f"--steps 256 --snapshot-every 128 --eval-episodes 10 {SHORT_ROLLOUTS}"
# (file, text in one of its blocks, what the test runs instead): counts (of episodes, steps, items,
# rounds), and a served model's engine started eager (no torch.compile: about 45 s to start on two
# cores instead of 125 s; the suite's own server is eager too), never what the command does
SCALED: tuple[tuple[str, str, str], ...] = (
    ("docs/cluster.md", "--episodes 2000", "--episodes 200"),
    ("docs/envs/auction.md", "--episodes 10", f"--episodes 1 {ONE_ITEM}"),
    # one AucArena seat (its belief loop makes many calls per item) beside two rule bidders
    ("docs/envs/auction.md", "vllm:$BASE1?agent=aucarena,vllm:$BASE2?agent=aucarena,vllm:$MODEL?agent=aucarena",
     "rule,rule,vllm:$MODEL?agent=aucarena"),
    ("docs/envs/auction.md", "?agent=aucarena", SHORT_THOUGHTS),
    ("docs/envs/auction.md", "for budget in 20000 40000", "for budget in 20000"),
    ("docs/envs/auction.md", "for order in random ascending descending", "for order in ascending"),
    ("docs/envs/auction.md", "for budget in (20000, 40000)", "for budget in (20000,)"),
    ("docs/envs/auction.md", 'for order in ("random", "ascending", "descending")', 'for order in ("ascending",)'),
    ("docs/envs/tank_battle.md", 'env(stage=4, render_mode="human")',
     'env(stage=4, render_mode="human", max_rounds=4)'),
    ("docs/envs/who_is_spy.md", "--episodes 30", "--episodes 1"),
    ("docs/envs/who_is_spy.md", "--episodes 12", "--episodes 2"),
    ("docs/envs/who_is_spy.md", "--model-url http://127.0.0.1:8000/v1",
     "--model-url http://127.0.0.1:8000/v1 --episodes 2"),
    ("docs/eval.md", "--quick --games guess_two_thirds_v0,who_is_spy_v0",
     f"--quick --games guess_two_thirds_v0,who_is_spy_v0 {SHORT_GUESS}"),
    ("docs/eval.md", "who_is_spy_v0 --episodes 3", f"who_is_spy_v0 --episodes 3 {SHORT_GUESS}"),
    ("docs/eval.md", "instruct                 # all twelve",
     f"instruct --games guess_two_thirds_v0 --episodes 1 {SHORT_GUESS}  # all twelve"),
    ("docs/gamma/index.md", "--runs 5 --seed 0", "--runs 1 --seed 0 --games guess_two_thirds_v0 --env-arg n_rounds=2"),
    ("docs/llm_policies.md", "--episodes 50 --concurrency 32", f"--episodes 2 --concurrency 32 {ONE_ITEM}"),
    ("docs/llm_policies.md", "--episodes 10", f"--episodes 1 {ONE_ITEM}"),
    ("docs/llm_policies.md", "?agent=aucarena", SHORT_THOUGHTS),
    ("docs/llm_policies.md", "--out results/smollm2-auction", f"--out results/smollm2-auction {ONE_ITEM}"),
    ("docs/llm_policies.md", "cot=1&temperature=0.7", "cot=1&temperature=0.7&cot_max_tokens=32"),
    ("docs/llm_policies.md", "--port 8000 --detach", "--port 8000 --detach -- --enforce-eager"),
    ("docs/llm_policies.md", "fixed:value=go*9\" --episodes 5", "fixed:value=go*9\" --episodes 1 --env-arg n_rounds=2"),
    ("docs/rl.md", "--steps 60000", f"--steps 256 --eval-episodes 10 {SHORT_ROLLOUTS}"),
    ("docs/rl.md", "--steps 50000 --snapshot-every 5000", SHORT_SELF_PLAY),
    ("docs/rl.md", '"n_rounds": 5}', '"n_rounds": 2}'),
    ("docs/rl.md", "--env-arg n_rounds=5 --episodes 10", "--env-arg n_rounds=2 --episodes 1"),
    ("docs/rl.md", "steps=256", "steps=16"),
    ("docs/rl.md", "n_envs=4", "n_envs=2"),
    ("docs/rl.md", "eval_episodes=4", "eval_episodes=1"),
    ("docs/rl.md", '"n_steps": 16', '"n_steps": 8'),
    ("docs/rl.md", "python examples/rl_gamma_llm.py ",
     "python examples/rl_gamma_llm.py --steps 16 --n-envs 2 --rounds 2 --eval-episodes 1 "),
    ("docs/rl.md", "python examples/rl_auction_ppo.py ",
     "python examples/rl_auction_ppo.py --steps 2048 --eval-episodes 20 "),
    ("docs/rl.md", "python examples/rl_tank_stage1.py ",
     "python examples/rl_tank_stage1.py --steps 512 --eval-episodes 2 "),
    ("docs/rl.md", "python examples/rl_tank_stage4.py ",
     "python examples/rl_tank_stage4.py --steps 512 --eval-episodes 2 "),
    ("docs/rl_numeric.md", "public_goods --steps 20000", "public_goods --steps 512 --copies 1 --eval-episodes 1"),
    ("docs/rl_numeric.md", "tank --steps 8192", "tank --steps 256 --copies 1 --eval-episodes 1"),
    ("docs/rllib.md", "--iterations 20", "--iterations 1"),
    ("docs/rllib.md", "iterations=20", "iterations=1"),
    ("docs/runner.md", "--episodes 50 --concurrency 16", f"--episodes 2 --concurrency 16 {ONE_ITEM}"),
    ("docs/runner.md", "--steps 20000", f"--steps 256 --eval-episodes 10 {SHORT_ROLLOUTS}"),
    ("docs/runner.md", "--steps 30000 --eval-episodes 20",
     "--steps 32 --eval-episodes 1 --algo-arg n_steps=32 --algo-arg batch_size=32"),
    ("docs/runner.md", "--env-arg max_rounds=30 --opponents rule", "--env-arg max_rounds=5 --opponents rule"),
    ("docs/runner.md", "sb3:runs/tank4,rule --episodes 5", "sb3:runs/tank4,rule --episodes 1"),
    ("docs/runner.md", "steps=20000", 'steps=256, eval_episodes=10, algo_kwargs={"n_steps": 128, "batch_size": 64}'),
    ("docs/runner.md", "--steps 10000 --eval-every 2000",
     f"--steps 256 --eval-every 128 --eval-episodes 10 {SHORT_ROLLOUTS}"),
    ("docs/runner.md", "--steps 50000 --snapshot-every 5000", SHORT_SELF_PLAY),
    ("docs/runner.md", "episodes=200", "episodes=20"),
    ("docs/runner.md", "--episodes 10000", "--episodes 200"),
    ("docs/runner.md", "episodes=2000", "episodes=200"),
    ("docs/runner.md", "--episodes 2000 --ray", "--episodes 200 --ray"),
)

# (file, first line of the block): why it cannot run on one CPU machine
KEYBOARD = "needs a person at the keys of the pygame window (tests/test_play.py plays it with key events)"
SYNTAX_ONLY: tuple[tuple[str, str, str], ...] = (
    ("docs/play.md", "arena play tank_battle_v0 --seed 1", KEYBOARD),
    ("docs/cluster.md", "# on the head node (H is its address on the cluster's network)", "needs several machines"),
    ("docs/cluster.md", "# on every GPU node: one server per GPU, ports 8000-8007", "needs GPU nodes"),
    ("docs/llm_policies.md",
     'arena run auction_v0 --players "vllm:MODEL@http://10.0.0.1:8000/v1@http://10.0.0.2:8000/v1,rule,rule" \\',
     "needs two servers on two machines (tests/test_llm_vllm_servers.py plays on two local ones)"),
    ("docs/rllib.md", "python examples/rllib_gamma.py --others vllm:smollm2-135m-instruct@http://127.0.0.1:8000/v1*2 "
     "--env-runners 4", "RLlib against LLM players: minutes of LLM calls on two cores even as a --smoke run"),
    ("docs/envs/tank_battle.md",
     "arena run tank_battle_v0 --players keyboard,rule --episodes 1 --env-arg stage=4 --out runs/me", KEYBOARD),
)


@dataclass(frozen=True)
class Example:
    path: str          # relative to the repository root
    line: int          # the line of the opening fence
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def needs_llm(self) -> bool:
        code = self.code.lower()
        return bool(re.search(r"arena serve(?!-agent)", code)) or any(
            word in code for word in ("vllm:", "setup_llm", "start_vllm", "smollm2"))

    @property
    def needs_ray(self) -> bool:
        return any(word in self.code for word in ("--ray", "rllib", "RayOptions", "[ray]"))

    @property
    def starts_server(self) -> bool:
        return bool(re.search(r"^\s*(arena serve (?!--stop)|scripts/start_vllm\.sh)", self.code, re.M))

    @property
    def syntax_only(self) -> str | None:
        first = self.code.splitlines()[0] if self.code else ""
        return next((why for path, line, why in SYNTAX_ONLY if path == self.path and first == line), None)


def documentation_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def extract(path: Path) -> list[Example]:
    """The fenced blocks of one Markdown file, in order (a fence without a language is an error)."""
    examples: list[Example] = []
    lines = path.read_text().splitlines()
    opened: tuple[int, str] | None = None
    body: list[str] = []
    for number, text in enumerate(lines, start=1):
        fence = re.match(r"^\s*```(.*)$", text)
        if fence is None:
            if opened is not None:
                body.append(text)
            continue
        if opened is None:
            opened, body = (number, fence.group(1).strip()), []
        else:
            examples.append(Example(str(path.relative_to(ROOT)), opened[0], opened[1], "\n".join(body)))
            opened = None
    if opened is not None:
        raise ValueError(f"{path}:{opened[0]}: a fenced block is never closed")
    return examples


def all_examples() -> list[Example]:
    return [example for path in documentation_files() for example in extract(path)]


def scaled(example: Example) -> str:
    code = example.code
    for path, old, new in SCALED:
        if path == example.path and old in code:
            code = code.replace(old, new)
    return code


def unused_scalings(examples: list[Example]) -> list[tuple[str, str]]:
    return [(path, old) for path, old, _ in SCALED
            if not any(e.path == path and old in e.code for e in examples)]


def console_commands(code: str) -> str:
    return "\n".join(line[2:] for line in code.splitlines() if line.startswith("$ "))


def console_output(code: str) -> list[str]:
    """The shown output lines that are not elided (``…``)."""
    return [line.strip() for line in code.splitlines()
            if line.strip() and not line.startswith("$ ") and "…" not in line]


def installed_extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project.get("optional-dependencies", {}))


PIP_INSTALL = re.compile(r"\bpip install -e (['\"]?)\.(?:\[([\w,]+)\])?\1")


def pip_extras(code: str) -> list[str]:
    """The extras named by the block's ``pip install -e .[EXTRAS]`` commands."""
    return [extra for match in PIP_INSTALL.finditer(code) for extra in (match.group(2) or "").split(",") if extra]


#: A documented agent service's port (docs/agents.md), as a whole number
AGENT_PORT = re.compile(r"(?<![\w.])90\d\d\b")


def localize(code: str, *, server_url: str | None, own_port: int | None, model_dir: str,
             raw_results: str | None, ray_address: str | None,
             free_port: Callable[[], int] | None = None) -> str:
    """The block as it runs here: no pip, no .ci/run, the documented ports, folders and paths mapped
    (``free_port()``: a free port of this machine, for each documented agent port)."""
    code = PIP_INSTALL.sub(":", code).replace(CI_RUN, "test -f .ci/run")
    if free_port is not None:
        ports: dict[str, str] = {}
        code = AGENT_PORT.sub(lambda m: ports.setdefault(m.group(), str(free_port())), code)
    code = code.replace(DOCUMENTED_MODEL_DIR, model_dir)
    if raw_results is not None:
        code = RAW_RESULTS.sub(raw_results, code)
    if ray_address is not None:
        code = RAY_ADDRESS.sub(ray_address, code)
    if own_port is not None:
        code = re.sub(rf"(?<=[:\s]){DOCUMENTED_PORT}\b", str(own_port), code)
    elif server_url is not None:
        code = code.replace(f"http://127.0.0.1:{DOCUMENTED_PORT}/v1", server_url)
    return code
