"""Training callbacks of ``arena train``: progress bar, checkpoints, self-play snapshots, evaluations.

The periodic ones act at the start of the first rollout after the step count (``num_timesteps``,
all environment copies together) crosses a multiple of their period: there the network holds
every update of the steps counted, and nothing collected is pending (a PPO rollout in progress
would be lost by a checkpoint, and a resumed run would then end at another step count). So a
period is rounded up to whole rollouts (PPO: ``n_steps`` x copies; DQN: ``train_freq``).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tqdm.auto import tqdm

from arena_envs.core.extras import needs_extra

with needs_extra("rl", __name__):
    from stable_baselines3.common.callbacks import BaseCallback

from baselines.rl.models import Snapshot


class Periodic(BaseCallback):
    """Calls :meth:`fire` at the first rollout start after ``num_timesteps`` crosses a multiple of ``every``."""

    def __init__(self, every: int):
        super().__init__()
        self.every = every
        self.done = 0  # multiples already handled

    def _on_training_start(self) -> None:
        self.done = self.num_timesteps // self.every  # a resumed run does not repeat its past

    def _on_rollout_start(self) -> None:
        if self.num_timesteps // self.every > self.done:
            self.done = self.num_timesteps // self.every
            self.fire()

    def _on_step(self) -> bool:
        return True

    def fire(self) -> None:
        raise NotImplementedError


class ProgressBar(BaseCallback):
    """A tqdm bar over the training's steps (from the resumed step to ``total``)."""

    def __init__(self, total: int):
        super().__init__()
        self.total = total
        self.bar: tqdm | None = None

    def _on_training_start(self) -> None:
        self.bar = tqdm(total=self.total, initial=self.num_timesteps, desc="train", unit="step", dynamic_ncols=True)

    def _on_step(self) -> bool:
        assert self.bar is not None
        self.bar.update(self.num_timesteps - self.bar.n)
        return True

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


class Checkpoints(Periodic):
    """``folder/step_<N>.zip`` every ``every`` steps; an off-policy model's replay buffer beside the
    latest one (``step_<N>.replay.pkl``; older buffers are removed: they are large)."""

    def __init__(self, every: int, folder: Path):
        super().__init__(every)
        self.folder = folder

    def fire(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        step = self.num_timesteps
        self.model.save(self.folder / f"step_{step}.zip")
        if hasattr(self.model, "replay_buffer") and self.model.replay_buffer is not None:
            for old in self.folder.glob("step_*.replay.pkl"):
                old.unlink()
            self.model.save_replay_buffer(self.folder / f"step_{step}.replay.pkl")  # type: ignore[attr-defined]


class SelfPlaySnapshots(Periodic):
    """Adds a frozen copy of the learner to every environment copy's snapshot pool every ``every``
    steps (the ``self`` opponents draw from the last ten), and one at the start of a resumed run
    (the pool lives in the environments, which a resume builds anew)."""

    def _on_training_start(self) -> None:
        super()._on_training_start()
        if self.num_timesteps > 0:
            self.fire()

    def fire(self) -> None:
        self.training_env.env_method("add_snapshot", Snapshot(self.model))


class Evaluations(Periodic):
    """Runs ``evaluate_now(step)`` every ``every`` steps (the training's evaluation: table, files, TensorBoard)."""

    def __init__(self, every: int, evaluate_now: Callable[[int], None]):
        super().__init__(every)
        self.evaluate_now = evaluate_now

    def fire(self) -> None:
        self.evaluate_now(self.num_timesteps)
