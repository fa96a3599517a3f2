"""Play one seeded AucArena auction with random (masked) actions and print the paper's log."""
import numpy as np

from arena_envs import auction_v0

env = auction_v0.env(item_order="descending", render_mode="ansi")
env.reset(seed=0)
rng = np.random.default_rng(0)
for _ in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    if termination or truncation:
        env.step(None)
        continue
    env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
print(env.render())
print(env.unwrapped.episode_metrics()["agents"])
