"""Train GAIL's expert on HalfCheetah-v5 with the project's own DDPG, once, and record it.

What: DDPG (``DDPGTrainer``, all on the CPU, one thread) for ``--steps`` environment steps
with CleanRL's HalfCheetah settings (learning rates 3e-4, 25,000 random steps first, noise
0.1 of the half range), a greedy evaluation of three episodes every ``--eval-every`` steps,
the best evaluated actor kept; then ``--episodes`` greedy episodes of it from seeds 1000,
1001, ... written with the actor and their provenance to ``data/gail/halfcheetah/``
(``hetero_tutorial.rl.gail.demonstrations``). Outside CI: about half an hour on one core of
the series' CPUs (250,000 steps at about 150 steps a second).

    python benchmarks/halfcheetah_expert.py [--steps 250000] [--seed 0] [--out DIR]
"""

from __future__ import annotations

import argparse
import copy
import platform
import sys
import time
from pathlib import Path

import gymnasium
import mujoco
import numpy as np
import torch

from hetero_tutorial import placement
from hetero_tutorial.core.machine import fingerprint
from hetero_tutorial.core.results import code_commit
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer
from hetero_tutorial.rl.envs.mujoco import HALFCHEETAH, make_halfcheetah
from hetero_tutorial.rl.gail import demonstrations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=250_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--eval-every", type=int, default=25_000)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--out", type=Path, default=demonstrations.EXPERT_DIR)
    args = parser.parse_args()
    evaluation_env = make_halfcheetah()  # a missing MuJoCo stops here, in one line
    config = DDPGConfig(
        env_id=HALFCHEETAH,
        total_steps=args.steps + 200,  # the copy-counted tail lies past the kept actor
        learning_starts=min(25_000, args.steps // 4),
        buffer_capacity=args.steps + 200,
        hidden=args.hidden,
        actor_lr=3e-4,
        critic_lr=3e-4,
    )
    run = DDPGTrainer(config, placement("all-cpu"), args.seed, threads=1)
    began, curve, commit = time.monotonic(), [], code_commit()  # the code that trains
    best, best_return = None, -np.inf
    while run.steps_done < args.steps:
        run.advance(min(args.eval_every, args.steps - run.steps_done))
        returns = [
            float(demonstrations.greedy_episode(run.learner.actor, evaluation_env, 100 + i)[
                "rewards"].sum())
            for i in range(3)
        ]  # fmt: skip
        mean = float(np.mean(returns))
        curve.append({"steps": run.steps_done, "greedy_return": mean,
                      "minutes": round((time.monotonic() - began) / 60, 1)})  # fmt: skip
        print(f"{run.steps_done:>8} steps  greedy return {mean:8.1f}  "
              f"({curve[-1]['minutes']} min)", flush=True)  # fmt: skip
        if mean > best_return:
            best, best_return = copy.deepcopy(run.learner.actor).cpu(), mean
    episodes = [
        demonstrations.greedy_episode(best, evaluation_env, 1000 + i) for i in range(args.episodes)
    ]
    versions = {"mujoco": mujoco.__version__, "gymnasium": gymnasium.__version__,
                "torch": torch.__version__, "python": platform.python_version()}  # fmt: skip
    provenance = {
        "env_id": HALFCHEETAH,
        "command": " ".join(["python", "benchmarks/halfcheetah_expert.py", *sys.argv[1:]]),
        "learner": "DDPG (hetero_tutorial.rl.ddpg), all on the CPU, one thread",
        "seed": args.seed,
        "steps": args.steps,
        "hidden": args.hidden,
        "config": {k: v for k, v in vars(config).items()},
        "episode_seeds": [1000 + i for i in range(args.episodes)],
        "evaluations": curve,
        "kept": "the actor of the best greedy evaluation (3 episodes, seeds 100-102)",
        "minutes": round((time.monotonic() - began) / 60, 1),
        "versions": versions,
        "machine": fingerprint()["cpu_model"],
        "commit": commit,
    }
    folder = demonstrations.save(args.out, episodes, best, args.hidden, provenance)
    returns = [float(e["rewards"].sum()) for e in episodes]
    print(f"expert: {np.mean(returns):.1f} +- {np.std(returns):.1f} over {len(returns)} "
          f"episodes, written to {folder}")  # fmt: skip


if __name__ == "__main__":
    main()
