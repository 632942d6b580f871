"""Our DDPG against Stable-Baselines3's, side by side: environment steps per second.

Same task (Pendulum-v1), same sizes (two hidden layers of 256 for actor and
critic, batch 256, one update per environment step after 1,000 random steps),
same hyperparameters (Adam 1e-3, gamma 0.99, tau 0.005, Gaussian noise 0.1 of
the half range), one process, one PyTorch thread, one core.

Shared machines drift in speed over seconds to minutes (other jobs come and go),
which makes one-minute runs in separate processes disagree by 2x. So both
trainers live in one process and take turns: ``--chunk`` steps of ours, then
``--chunk`` steps of SB3's, and so on for ``--rounds`` rounds (who goes first
alternates), each chunk timed on its own. Both then see the same load, and the
median of the per-round ratios is the figure to quote.

What is timed: each chunk of steps with one update per step, after both have
taken their 1,000 random steps: ours ``DDPGTrainer.advance(chunk)``; SB3's
``model.learn(chunk, reset_num_timesteps=False)`` (its per-call set-up, well
under 1% of a chunk, counts against it).

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/ddpg_vs_sb3.py                  # 10 rounds of 200 steps, ~1 min
    .venv/bin/python benchmarks/ddpg_vs_sb3.py --threads 2 --core none
    .venv/bin/python benchmarks/ddpg_vs_sb3.py --reference      # also data/reference/<machine>/

Writes data/results/bench.ddpg_vs_sb3.json. SB3 is a comparison peer only: the
package and its tests never import it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from importlib import metadata

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import DDPG
from stable_baselines3.common.noise import NormalActionNoise

from hetero_tutorial.core import results
from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer

LEARNING_STARTS = 1_000
HIDDEN = 256
BATCH_SIZE = 256
LEARNING_RATE = 1e-3
NOISE = 0.1


def ours(
    total_steps: int, threads: int, seed: int, adapt: Callable[[DDPGTrainer], None] | None = None
) -> Callable[[int], None]:
    """Our DDPG after its random steps; the returned function advances it ``n`` steps.

    ``adapt``, if given, may change the run before its first step (another benchmark
    swaps in a different update this way).
    """
    config = DDPGConfig(
        total_steps=total_steps + 100,  # room for the copy-counted steps, never reached here
        learning_starts=LEARNING_STARTS,
        hidden=HIDDEN,
        batch_size=BATCH_SIZE,
        actor_lr=LEARNING_RATE,
        critic_lr=LEARNING_RATE,
        exploration_noise=NOISE,
    )
    run = DDPGTrainer(config, placement("all-cpu"), seed, threads=threads)
    if adapt is not None:
        adapt(run)
    run.advance(LEARNING_STARTS)
    return run.advance


def sb3(seed: int) -> Callable[[int], None]:
    """SB3's DDPG after its random steps; the returned function advances it ``n`` steps."""
    env = gym.make("Pendulum-v1")
    noise_std = NOISE * (env.action_space.high - env.action_space.low) / 2
    model = DDPG(
        "MlpPolicy",
        env,
        learning_rate=LEARNING_RATE,
        buffer_size=100_000,
        learning_starts=LEARNING_STARTS,
        batch_size=BATCH_SIZE,
        tau=0.005,
        gamma=0.99,
        train_freq=1,
        gradient_steps=1,
        action_noise=NormalActionNoise(np.zeros_like(noise_std), noise_std),
        policy_kwargs={"net_arch": [HIDDEN, HIDDEN]},
        device="cpu",
        seed=seed,
    )
    model.learn(LEARNING_STARTS)
    return lambda steps: model.learn(steps, reset_num_timesteps=False)


def interleaved(
    contestants: dict[str, Callable[[int], None]], chunk: int, rounds: int
) -> dict[str, list[float]]:
    """Steps per second of each contestant's chunk, round by round; who goes first alternates."""
    rates: dict[str, list[float]] = {name: [] for name in contestants}
    names = list(contestants)
    for round_index in range(rounds):
        order = names if round_index % 2 == 0 else names[::-1]
        for name in order:
            start = time.perf_counter()
            contestants[name](chunk)
            rates[name].append(chunk / (time.perf_counter() - start))
        line = ", ".join(f"{name} {rates[name][-1]:6.1f}" for name in names)
        print(f"round {round_index + 1:2d}: {line} steps/s", flush=True)
    return rates


def race_parser(description: str, rounds: int) -> argparse.ArgumentParser:
    """The options of a race against SB3: turn length, rounds, core, seed, --reference."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--chunk", type=int, default=200, help="steps per turn")
    parser.add_argument("--rounds", type=int, default=rounds, help="turns of each")
    parser.add_argument("--core", default="1", help="CPU core to pin the process to, or 'none'")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--reference", action="store_true", help="also write it under data/reference/<machine>/"
    )
    return parser


def settle(core: str, threads: int) -> None:
    """Pin the process to ``core`` (unless 'none') and set PyTorch's CPU threads."""
    if core != "none":
        os.sched_setaffinity(0, {int(core)})
    torch.set_num_threads(threads)


def save(kind: str, fields: dict[str, object], reference: bool, tag: str | None = None) -> None:
    """Write the race's record (SB3's version in its provenance), and a reference copy if asked."""
    provenance = results.provenance(command=" ".join(["python", *sys.argv]))
    provenance["peer_versions"] = {"stable-baselines3": metadata.version("stable-baselines3")}
    record = results.Record(kind, fields, provenance)
    print(f"record written to {results.save(record, tag=tag)}")
    if reference:
        path = results.save(record, directory=results.reference_directory(record), tag=tag)
        print(f"reference written to {path}")


def main() -> None:
    parser = race_parser(__doc__.splitlines()[0], rounds=10)
    parser.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads")
    args = parser.parse_args()
    settle(args.core, args.threads)
    contestants = {
        "ours": ours(LEARNING_STARTS + args.rounds * args.chunk, args.threads, args.seed),
        "sb3": sb3(args.seed),
    }
    rates = interleaved(contestants, args.chunk, args.rounds)
    per_round = [o / s for o, s in zip(rates["ours"], rates["sb3"], strict=True)]
    medians = {name: statistics.median(values) for name, values in rates.items()}
    fields = {
        "env_id": "Pendulum-v1",
        "hidden": HIDDEN,
        "batch_size": BATCH_SIZE,
        "threads": args.threads,
        "core": args.core,
        "chunk_steps": args.chunk,
        "steps_per_s": rates,
        "median_steps_per_s": medians,
        "round_ratios": per_round,
        "median_round_ratio": statistics.median(per_round),
        "ratio_of_medians": medians["ours"] / medians["sb3"],
        "target_ratio": 1.25,
    }
    quoted, needed = fields["median_round_ratio"], fields["target_ratio"]
    print("\n".join(f"{name}: {rate:.0f} steps/s (median)" for name, rate in medians.items()))
    print(
        f"ours/sb3: {quoted:.2f}x (median over {len(per_round)} rounds, rounds "
        f"{min(per_round):.2f}-{max(per_round):.2f}x); target >= {needed:g}x: "
        f"{'met' if quoted >= needed else 'NOT met'}"
    )
    tag = None if args.threads == 1 else f"{args.threads}-threads"  # one record per setting
    save("bench.ddpg_vs_sb3", fields, args.reference, tag)


if __name__ == "__main__":
    main()
