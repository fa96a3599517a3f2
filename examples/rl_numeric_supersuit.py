"""Every seat of a game trained at once: the numeric view, SuperSuit's vector envs and SB3's PPO.

``parallel_env(obs_mode="numeric")`` becomes a vector environment with one entry per seat
(``pettingzoo_env_to_vec_env_v1``), copied ``--copies`` times (``concat_vec_envs_v1``), and one
PPO network (``MultiInputPolicy``: the features or the tank's grid, and the action mask as an input)
plays every seat: parameter sharing. Then the trained network plays every seat of ``--eval-episodes``
seeded episodes (deterministic actions) beside a random player (masked uniform actions) on the same
seeds, and the game's own figure is printed for both:

* ``public_goods``: γ-Bench's Public Goods Game in the paper's setting (10 players, 20 rounds); the
  figure is the γ-Bench score (100: nobody contributes, the Nash equilibrium; about 50 at random);
* ``tank``: BattleAgentBench stage 4 (two tanks, every tank for itself) with the six ``discrete``
  operations; the figure is the paper's score per tank (hits and kills).

    python examples/rl_numeric_supersuit.py public_goods [--steps 20000] [--copies 2] [--eval-episodes 5]
    python examples/rl_numeric_supersuit.py tank [--steps 8192]
"""
from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import supersuit as ss
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.utils import set_random_seed

from arena_envs import public_goods_v0, tank_battle_v0

#: name -> (entry module, constructor arguments, the figure's name)
GAMES: dict[str, tuple[Any, dict[str, Any], str]] = {
    "public_goods": (public_goods_v0, {}, "γ-Bench score"),
    "tank": (tank_battle_v0, {"stage": 4, "action_mode": "discrete"}, "score per tank"),
}


def figure(name: str, game: Any) -> float:
    """The game's figure for the episode just played."""
    metrics = game.episode_metrics()
    if name == "public_goods":
        return float(metrics["game"]["score"])
    return float(np.mean([entry["score"] for entry in metrics["agents"].values()]))


def evaluate(name: str, model: PPO | None, episodes: int, seed: int) -> float:
    """The mean figure over ``episodes`` seeded episodes, every seat played by ``model`` (None: random)."""
    module, kwargs, _ = GAMES[name]
    env = module.parallel_env(obs_mode="numeric", **kwargs)
    rng = np.random.default_rng(seed)
    figures = []
    for episode in range(episodes):
        observations, _ = env.reset(seed=seed + episode)
        while env.agents:
            seats = env.agents
            if model is None:
                actions = {a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in seats}
            else:
                batch = {key: np.stack([observations[a][key] for a in seats]) for key in observations[seats[0]]}
                chosen, _ = model.predict(batch, deterministic=True)
                actions = dict(zip(seats, chosen.tolist()))
            observations, *_ = env.step(actions)
        figures.append(figure(name, env.unwrapped))
    return float(np.mean(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("game", choices=sorted(GAMES))
    parser.add_argument("--steps", type=int, default=20_000, help="environment steps, all seats together")
    parser.add_argument("--copies", type=int, default=2, help="copies of the game in the vector env (default 2)")
    parser.add_argument("--eval-episodes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)  # one thread: faster than several on a small shared CPU
    module, kwargs, label = GAMES[args.game]
    vec = ss.pettingzoo_env_to_vec_env_v1(module.parallel_env(obs_mode="numeric", **kwargs))
    venv = ss.concat_vec_envs_v1(vec, args.copies, num_cpus=0, base_class="stable_baselines3")
    venv.venv.reset(seed=args.seed)  # SuperSuit's SB3 wrapper takes no seed: seed the games underneath
    set_random_seed(args.seed)
    model = PPO("MultiInputPolicy", venv, n_steps=128, batch_size=256, n_epochs=4, learning_rate=3e-4,
                ent_coef=0.01, device="cpu")
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    seconds = time.perf_counter() - start
    venv.close()
    trained = evaluate(args.game, model, args.eval_episodes, seed=10_000 + args.seed)
    random = evaluate(args.game, None, args.eval_episodes, seed=10_000 + args.seed)
    print(f"{args.game}: {model.num_timesteps} steps in {seconds:.0f} s; {label}: trained {trained:.1f}, "
          f"random {random:.1f} ({args.eval_episodes} episodes)")


if __name__ == "__main__":
    main()
