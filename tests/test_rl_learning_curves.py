"""scripts/rl_learning_curves.py draws a training folder's TensorBoard scalars into a results folder
by default, never into the repository's docs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "rl_learning_curves.py"


def write_run(folder: Path) -> None:
    """A training folder as ``arena train`` leaves it: TensorBoard scalars under ``tb/<run>``."""
    tensorboard = pytest.importorskip("torch.utils.tensorboard")
    with tensorboard.SummaryWriter(str(folder / "tb" / "PPO_1")) as writer:
        for step in (100, 200, 300):
            writer.add_scalar("rollout/ep_rew_mean", step / 100, step)
            writer.add_scalar("eval/rule/mean_return", step / 50, step)
            writer.add_scalar("eval/rule/random_mean_return", 1.0, step)


def test_curves_go_to_a_results_folder_by_default_and_to_out_when_given(tmp_path):
    write_run(tmp_path / "runs" / "ppo")
    default = subprocess.run([sys.executable, str(SCRIPT), "ppo=runs/ppo"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120)
    assert default.returncode == 0, default.stderr
    assert (tmp_path / "results" / "learning_curves" / "rl_ppo.png").stat().st_size > 0
    assert not (tmp_path / "docs").exists()
    chosen = subprocess.run([sys.executable, str(SCRIPT), "ppo=runs/ppo", "--out", "figs"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout.strip() == "figs/rl_ppo.png"
