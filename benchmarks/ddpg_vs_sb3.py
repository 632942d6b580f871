"""Our DDPG against Stable-Baselines3's, side by side: environment steps per second.

Same task (Pendulum-v1), same sizes (two hidden layers of 256 for actor and
critic, batch 256, one update per environment step after 1,000 random steps),
same hyperparameters (Adam 1e-3, gamma 0.99, tau 0.005, Gaussian noise 0.1 of
the half range), same PyTorch thread count, same core. Each measurement runs in
a fresh process, alternating ours and SB3's (who goes first rotates each round),
so drift in machine speed hits both alike; the ratio of the medians is the
figure to quote.

What is timed: the steps taken while updating once per step, without start-up,
imports, model construction or the 1,000 random steps: ours
``DDPGResult.env_steps_per_s``; SB3 the wall time of
``model.learn(steps, reset_num_timesteps=False)`` after ``model.learn(1000)``.

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/ddpg_vs_sb3.py                 # 3 rounds, ~5 min
    .venv/bin/python benchmarks/ddpg_vs_sb3.py --threads 2 --core none

Writes data/results/bench.ddpg_vs_sb3.json. SB3 is a comparison peer only: the
package and its tests never import it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from importlib import metadata

LEARNING_STARTS = 1_000
HIDDEN = 256
BATCH_SIZE = 256
LEARNING_RATE = 1e-3
NOISE = 0.1


def ours(steps: int, seed: int) -> float:
    """Steps per second of our DDPG while it updates once per step."""
    import torch

    from hetero_tutorial.ddpg import DDPGConfig, train

    config = DDPGConfig(
        total_steps=LEARNING_STARTS + steps + 100,  # + the copy-counted steps, not timed
        learning_starts=LEARNING_STARTS,
        hidden=HIDDEN,
        batch_size=BATCH_SIZE,
        actor_lr=LEARNING_RATE,
        critic_lr=LEARNING_RATE,
        exploration_noise=NOISE,
        threads=torch.get_num_threads(),
        seed=seed,
        eval_episodes=1,
    )
    return train(config).env_steps_per_s


def sb3(steps: int, seed: int) -> float:
    """Steps per second of SB3's DDPG while it updates once per step."""
    import gymnasium as gym
    import numpy as np
    from stable_baselines3 import DDPG
    from stable_baselines3.common.noise import NormalActionNoise

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
    start = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - start)


CONTESTANTS = {"ours": ours, "sb3": sb3}


def measure(name: str, steps: int, seed: int, threads: int, core: str) -> float:
    """One fresh, pinned process running one contestant; its steps per second."""
    command = [sys.executable, __file__, "--worker", name, "--steps", str(steps)]
    command += ["--seed", str(seed), "--threads", str(threads)]
    if core != "none":
        command = ["taskset", "-c", core, *command]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])["steps_per_s"]


def interleaved(steps: int, rounds: int, threads: int, core: str) -> dict[str, list[float]]:
    """Steps per second of each contestant per round; the first to run rotates."""
    rates: dict[str, list[float]] = {name: [] for name in CONTESTANTS}
    names = list(CONTESTANTS)
    for round_index in range(rounds):
        for name in names[round_index % 2 :] + names[: round_index % 2]:
            rates[name].append(measure(name, steps, round_index, threads, core))
            print(f"round {round_index + 1}: {name:4s} {rates[name][-1]:6.1f} steps/s", flush=True)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="timed steps with updates")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each")
    parser.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads, both")
    parser.add_argument("--core", default="1", help="taskset core list for both, or 'none'")
    parser.add_argument("--worker", choices=CONTESTANTS, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        import torch

        torch.set_num_threads(args.threads)
        rate = CONTESTANTS[args.worker](args.steps, args.seed)
        print(json.dumps({"steps_per_s": rate}))
        return
    if args.core != "none" and shutil.which("taskset") is None:
        parser.error("taskset not found: install util-linux or pass --core none")

    from hetero_tutorial import results

    rates = interleaved(args.steps, args.rounds, args.threads, args.core)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    per_round = [o / s for o, s in zip(rates["ours"], rates["sb3"], strict=True)]
    fields = {
        "env_id": "Pendulum-v1",
        "hidden": HIDDEN,
        "batch_size": BATCH_SIZE,
        "threads": args.threads,
        "core": args.core,
        "timed_steps": args.steps,
        "steps_per_s": rates,
        "median_steps_per_s": medians,
        "ratio_ours_over_sb3": medians["ours"] / medians["sb3"],
        "median_round_ratio": statistics.median(per_round),
        "target_ratio": 1.5,
    }
    provenance = results.provenance(command=" ".join(["python", *sys.argv]))
    provenance["peer_versions"] = {"stable-baselines3": metadata.version("stable-baselines3")}
    print(json.dumps({k: v for k, v in fields.items() if k != "steps_per_s"}, indent=2))
    record = results.Record("bench.ddpg_vs_sb3", fields, provenance)
    print(f"record written to {results.save(record)}")


if __name__ == "__main__":
    main()
