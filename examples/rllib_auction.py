"""RLlib PPO in the auction (``auction_v0``) against two of the paper's rule bidders.

The learner bids in the first seat (a masked PPO module, :mod:`baselines.rllib.train`); its reward
is its profit, in dollars. The value loss is scaled down (``vf_loss_coeff``): unscaled, squared
dollars would dominate the gradient. Ray: a local cluster on 127.0.0.1 started for the run, or
``--address`` of a running one. After the training, the module plays an ``arena run`` against the
rule bidders::

    python examples/rllib_auction.py [--iterations 30] [--out runs/rllib_auction] [--seed 0] [--smoke]
    arena run auction_v0 --players rllib:runs/rllib_auction,rule,rule --episodes 200

``--smoke``: one small iteration and two evaluation episodes (seconds, once Ray has started).
"""
from __future__ import annotations

import argparse
import shutil
import tempfile

import torch

from arena_envs.cli import main as arena
from baselines.rllib.train import RllibConfig, train


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30, help="PPO iterations of 2000 steps (default 30)")
    parser.add_argument("--env-runners", type=int, default=0, help="EnvRunner actors (default 0: sample here)")
    parser.add_argument("--address", help="a running Ray cluster (default: a local one on 127.0.0.1)")
    parser.add_argument("--out", default="runs/rllib_auction", help="training folder, new (default runs/rllib_auction)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run into a temporary folder")
    args = parser.parse_args()
    torch.set_num_threads(1)  # a small network: one thread is faster than several on a shared CPU
    out = tempfile.mkdtemp(prefix="rllib_auction_") if args.smoke else args.out
    config = RllibConfig(env="auction_v0", others=["rule", "rule"], iterations=1 if args.smoke else args.iterations,
                         batch=200 if args.smoke else 2000, minibatch=100 if args.smoke else 256, seed=args.seed,
                         algo_kwargs={"vf_loss_coeff": 1e-6, "entropy_coeff": 0.01},
                         env_runners=args.env_runners, address=args.address)
    summary = train(config, out, progress=True)
    print(f"trained {', '.join(summary.modules)}: {summary.iterations} iterations, {summary.env_steps} steps in "
          f"{summary.seconds:.0f}s; last mean returns {summary.returns}")
    arena(["run", "auction_v0", "--players", f"rllib:{out},rule,rule", "--episodes", "2" if args.smoke else "200",
           "--seed", str(args.seed + 1), "--out", f"{out}/evaluation"])
    if args.smoke:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
