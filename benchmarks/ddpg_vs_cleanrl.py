"""Our DDPG against CleanRL's ``ddpg_continuous_action.py``, unmodified: env steps per second.

What: Pendulum-v1, two hidden layers of 256 for actor and critic, batch 256, one
critic and one actor update per environment step after 1,000 random steps (CleanRL's
``--policy-frequency 1``), Adam 1e-3 for both, gamma 0.99, tau 0.005, Gaussian noise
0.1 of the half range, a replay buffer of 100,000, all on the CPU.

* ``ours``: the package's DDPG (``DDPGTrainer``, all-CPU placement, tensor buffer):
  ``advance(1000)`` (random steps), ``advance(100)`` (warm-up), then
  ``advance(--steps - 100)`` timed;
* ``cleanrl``: ``ddpg_continuous_action.py`` from the cleanrl 1.2.0 wheel, unmodified,
  configured by its own flags and run as ``__main__`` (``runpy``) in a worker that
  watches its stdout: it prints ``SPS:`` every 100 steps once learning has started,
  and each such line is a mark (env step, wall clock). Its rate is the steps between
  its first and last marks over the seconds between them: the same window as ours,
  with its TensorBoard logging inside it, as CleanRL runs.

Each contestant runs in a fresh process per round, pinned to ``--core`` with
``--threads`` PyTorch threads; rounds rotate who goes first. The script needs
Gymnasium < 1.0 (it reads ``infos["final_observation"]``, which Gymnasium 1.x's vector
envs no longer return) and SB3's ``ReplayBuffer``: its venv has Gymnasium 0.29.1,
stable-baselines3 2.3.2 and NumPy 1.26.4.

    .venv/bin/python benchmarks/ddpg_vs_cleanrl.py --quick       # smoke run: 500 steps
    .venv/bin/python benchmarks/ddpg_vs_cleanrl.py               # 5 rounds of 3,000 steps
    .venv/bin/python benchmarks/ddpg_vs_cleanrl.py --reference   # also data/reference/<machine>/

Writes data/results/bench.ddpg_vs_cleanrl.json.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import peer_venvs
import race

LEARNING_STARTS = 1_000
WARMUP = 100
"""Updating steps before the clock (CleanRL's first mark comes 100 steps after learning starts)."""
HIDDEN, BATCH_SIZE, LEARNING_RATE, NOISE, BUFFER = 256, 256, 1e-3, 0.1, 100_000


def ours(job: dict[str, Any]) -> dict[str, Any]:
    """Our DDPG: random steps, a warm-up, then the timed updating steps."""
    from our_parts import DDPGConfig, DDPGTrainer, placement

    timed = job["steps"] - WARMUP
    config = DDPGConfig(
        total_steps=LEARNING_STARTS + job["steps"] + 100,  # room for the copy-counted steps
        learning_starts=LEARNING_STARTS,
        buffer_capacity=BUFFER,
        hidden=HIDDEN,
        batch_size=BATCH_SIZE,
        actor_lr=LEARNING_RATE,
        critic_lr=LEARNING_RATE,
        exploration_noise=NOISE,
    )
    trainer = DDPGTrainer(config, placement("all-cpu"), job["seed"], threads=job["threads"])
    trainer.advance(LEARNING_STARTS + WARMUP)
    began = time.perf_counter()
    trainer.advance(timed)
    seconds = time.perf_counter() - began
    return {"steps_per_s": timed / seconds, "timed_steps": timed, "seconds": seconds}


def cleanrl_flags(job: dict[str, Any]) -> list[str]:
    """``ddpg_continuous_action.py``'s command line for the race's settings (flags only)."""
    flags = {
        "--env-id": "Pendulum-v1",
        "--seed": job["seed"],
        "--cuda": False,
        "--total-timesteps": LEARNING_STARTS + job["steps"] + 1,  # its last mark: the last 100
        "--learning-rate": LEARNING_RATE,
        "--buffer-size": BUFFER,
        "--gamma": 0.99,
        "--tau": 0.005,
        "--batch-size": BATCH_SIZE,
        "--exploration-noise": NOISE,
        "--learning-starts": LEARNING_STARTS,
        "--policy-frequency": 1,  # an actor update every step, as ours
    }
    return [str(part) for flag, value in flags.items() for part in (flag, value)]


def cleanrl(job: dict[str, Any]) -> dict[str, Any]:
    """CleanRL's script, unmodified, as ``__main__``; its ``SPS:`` lines are the marks."""
    import io
    import runpy

    import torch

    torch.set_num_threads(job["threads"])
    marks = []

    class Tap(io.TextIOBase):
        def write(self, text: str) -> int:
            if text.startswith("SPS:"):  # print("SPS:", n) writes "SPS:" first
                marks.append(time.perf_counter())
            return len(text)

    script = peer_venvs.script("cleanrl-ddpg")
    sys.argv = [str(script), *cleanrl_flags(job)]
    real_stdout, sys.stdout = sys.stdout, Tap()
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.stdout = real_stdout
    timed = 100 * (len(marks) - 1)  # marks every 100 steps
    seconds = marks[-1] - marks[0]
    return {"steps_per_s": timed / seconds, "timed_steps": timed, "seconds": seconds,
            "torch_threads": torch.get_num_threads()}  # fmt: skip


WORKERS = {"ours": ours, "cleanrl": cleanrl}


def plan(args: Any) -> race.Plan:
    point = "Pendulum-v1"
    job = {"steps": args.steps}
    return race.Plan(
        kind="bench.ddpg_vs_cleanrl",
        script=Path(__file__).resolve(),
        entries=[
            race.Entry(point, "ours", "ours", job),
            race.Entry(point, "cleanrl", "cleanrl", job, venv="cleanrl-ddpg"),
        ],
        pairs=[race.Pair(point, "ours", "cleanrl", "steps_per_s")],
        fields={
            "env_id": point,
            "hidden": HIDDEN,
            "batch_size": BATCH_SIZE,
            "learning_rate": LEARNING_RATE,
            "buffer_capacity": BUFFER,
            "learning_starts": LEARNING_STARTS,
            "updating_steps": args.steps,
            "warmup_steps": WARMUP,
        },
        timed={
            "ours": "DDPGTrainer.advance over the updating steps after a 100-step warm-up",
            "cleanrl": "ddpg_continuous_action.py unmodified: its first to last SPS line "
            "(every 100 steps after learning starts; TensorBoard logging included)",
        },
        tag=None if args.threads == 1 else f"{args.threads}-threads",
    )


def arguments(argv: list[str] | None = None) -> Any:
    """The race's options (race.parser's and ``--steps``), ``--quick``'s budget applied."""
    made = race.parser(__doc__.splitlines()[0], rounds=5)
    made.add_argument("--steps", type=int, default=3000, help="updating steps per run")
    args = race.parse(made, argv)
    if args.quick:
        args.steps = 500
    if args.steps < 2 * WARMUP or args.steps % 100:
        made.error(f"--steps must be a multiple of 100, at least {2 * WARMUP}")
    return args


if __name__ == "__main__":
    race.main(arguments, plan, WORKERS)
