"""RLlib multi-agent PPO in a γ-Bench game: two learner seats share one network against other players.

Default: Guess 2/3 of the Average (``guess_two_thirds_v0``, 4 players, 20 rounds) with the first
two seats learners (one masked PPO module, :mod:`baselines.rllib.train`) and the last two played
by the γ-Bench rule players ``level_k`` and ``best_response_last``. ``--others`` names other
players, LLM ones included (``vllm:smollm2-135m-instruct@http://127.0.0.1:8000/v1``: a running vLLM server;
``--env-runners K`` then samples K games at once, on K EnvRunner actors, so the server batches
their requests). Ray: a local cluster on 127.0.0.1 started for the run, or ``--address`` of a
running one. After the training, the saved modules play an ``arena run`` against the same players::

    python examples/rllib_gamma.py [--iterations 20] [--out runs/rllib_gamma] [--seed 0] [--smoke]
    arena run guess_two_thirds_v0 --env-arg n_players=4 --players rllib:runs/rllib_gamma,level_k,... --episodes 20

``--smoke``: one small iteration and two evaluation episodes (seconds, once Ray has started).
"""
from __future__ import annotations

import argparse
import shutil
import tempfile

import torch

from arena_envs.cli import main as arena
from arena_envs.runner.policy_specs import split_players
from baselines.rllib.train import RllibConfig, train


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--game", default="guess_two_thirds_v0", help="a γ-Bench game (default guess_two_thirds_v0)")
    parser.add_argument("--players", type=int, default=4, help="n_players (default 4)")
    parser.add_argument("--others", default="level_k,best_response_last",
                        help="policy specs of the last seats, the others being learners "
                        "(default level_k,best_response_last; e.g. vllm:smollm2-135m-instruct@URL*2)")
    parser.add_argument("--iterations", type=int, default=20, help="PPO iterations of 1000 steps (default 20)")
    parser.add_argument("--env-runners", type=int, default=0, help="EnvRunner actors (default 0: sample here)")
    parser.add_argument("--address", help="a running Ray cluster (default: a local one on 127.0.0.1)")
    parser.add_argument("--out", default="runs/rllib_gamma", help="training folder, new (default runs/rllib_gamma)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run into a temporary folder")
    args = parser.parse_args()
    torch.set_num_threads(1)  # a small network: one thread is faster than several on a shared CPU
    others = split_players(args.others)
    out = tempfile.mkdtemp(prefix="rllib_gamma_") if args.smoke else args.out
    config = RllibConfig(env=args.game, env_kwargs={"n_players": args.players}, others=others,
                         iterations=1 if args.smoke else args.iterations, batch=200 if args.smoke else 1000,
                         minibatch=100 if args.smoke else 128, seed=args.seed, env_runners=args.env_runners,
                         address=args.address)
    summary = train(config, out, progress=True)
    modules = ", ".join(f"{module} ({', '.join(seats)})" for module, seats in summary.modules.items())
    print(f"trained {modules}: {summary.iterations} iterations, {summary.env_steps} steps in "
          f"{summary.seconds:.0f}s; last mean returns {summary.returns}")
    players = ",".join([f"rllib:{out}"] * (args.players - len(others)) + others)
    arena(["run", args.game, "--env-arg", f"n_players={args.players}", "--players", players, "--episodes",
           "2" if args.smoke else "20", "--seed", str(args.seed + 1), "--out", f"{out}/evaluation"])
    if args.smoke:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
