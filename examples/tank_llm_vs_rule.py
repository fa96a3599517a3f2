"""An LLM tank against the rule tank in stage 4, with the episode's replay saved as a video.

The LLM is any model served by vLLM's OpenAI-compatible server on this machine (answers guided by
the environment's answer constraint). With the project's local stack (scripts/setup_llm.sh):

    arena serve ~/.cache/arena_envs/smollm2-135m-instruct --port 8000 --detach   # or: vllm serve MODEL
    python examples/tank_llm_vs_rule.py --model smollm2-135m-instruct --url http://127.0.0.1:8000

The results folder holds the step log (every prompt's answer, parsed operation and validity) and
the metrics (Score, FAcc, MAcc); ``runs/tank_llm/video/episode_0.mp4`` (``.gif`` without
imageio-ffmpeg) is the game as the pygame renderer drew it.
"""
from __future__ import annotations

import argparse

from arena_envs.runner.replay import record_episodes
from arena_envs.runner.runner import RunConfig, run


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="the served model name")
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the vLLM server")
    parser.add_argument("--out", default="runs/tank_llm", help="results folder")
    parser.add_argument("--layout", type=int, default=1, help="the paper's start layout (1-5)")
    args = parser.parse_args()
    config = RunConfig("tank_battle_v0", (f"vllm:{args.model}@{args.url}", "rule"), episodes=1, seed=0,
                       env_kwargs={"stage": 4, "layout_seed": args.layout})
    summary = run(config, args.out, progress=True)
    (entry,) = summary.episodes
    for agent, label in entry["seats"].items():
        figures = entry["metrics"]["agents"][agent]
        print(f"{label:>30} ({agent}): Score {figures['score']:.0f}, FAcc {figures['facc']:.2f}, "
              f"MAcc {figures['macc']:.2f}")
    for path in record_episodes(args.out, f"{args.out}/video"):
        print(f"replay: {path}")


if __name__ == "__main__":
    main()
