"""Our PPO against Stable-Baselines3's PPO and CleanRL's ``ppo.py``: env steps per second.

What: CartPole-v1 PPO, all on the CPU, three implementations side by side at two
settings, each implementation given the same hyperparameters at each setting:

* ``sb3``: SB3's PPO defaults (8 envs x 2048 steps, minibatch 64, 10 epochs,
  lr 3e-4 constant, gamma 0.99, GAE 0.95, no entropy bonus, no value clipping),
  2 rollouts (32,768 env steps) per run;
* ``cleanrl``: CleanRL ``ppo.py``'s defaults (4 envs x 128 steps, 4 minibatches of
  128, 4 epochs, lr 2.5e-4 annealed, entropy 0.01, clipped value loss), 50k steps.

All use two hidden layers of 64 (Tanh) for the actor and the critic.

Why: the speed bar: at SB3's settings ours must run at >= 2x SB3's rate;
at CleanRL's it must beat CleanRL's own. Absolute rates on these shared machines
drift by up to 2x, so every contestant runs in a fresh process, pinned to the
same core with one PyTorch thread, interleaved (round r runs every contestant at
every setting before round r+1, rotating who goes first), and we quote the median of
the per-round ratios (judged against the targets) and their range; the ratio of medians
is recorded beside them. Never single times.

What is timed (each contestant's own training loop, without interpreter
start-up, imports or model construction):

* ours: env steps / the seconds of every iteration (``PPOResult.iteration_seconds``:
  rollout + update, the first iteration included; no evaluation);
* SB3: env steps / wall time of ``model.learn(total_timesteps=N)``;
* CleanRL: the last ``SPS:`` line it prints (global_step / time since just before
  its first ``envs.reset()``, so it includes its TensorBoard logging). Its ppo.py runs
  unmodified as ``__main__`` (``runpy``) in a worker that only watches its stdout.

Two more rates, from marks at iteration boundaries, drop the first iteration
(warm-up): *steady wall* and *steady CPU* (this process's CPU time; on a busy shared
core the wall clock also counts time spent waiting for the core, CPU time does not).

How: ``.venv/bin/python benchmarks/ppo_peers.py`` (add ``--reference`` to also write
the record under data/reference/<machine>/). The first run creates two peer
virtual environments under build/peers/ (a few minutes; PyTorch comes from the
same 2.13.0 CPU wheel as ours) and extracts ``cleanrl/ppo.py`` from the cleanrl
1.2.0 wheel, unmodified. CleanRL's script needs the old ``gym`` 0.23.1 API, which
imports ``pygame`` for CartPole, so its venv also gets pygame. A full run (5 rounds
x 3 contestants x 2 settings = 30 processes) takes about 20 minutes on a quiet
2-core machine and 35 on a busy one; ``--quick`` (1 round, 10k steps at CleanRL's
setting) about 5.
Prints a table and writes data/results/bench.ppo_peers.json.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

import peer_venvs
import race

PEER_VENV_NAMES = ("sb3", "cleanrl")
"""Their pins are in peer_venvs.PEER_VENVS; CleanRL's ppo.py comes from its wheel, unmodified."""

SETTINGS = {
    "sb3": {
        "label": "SB3 PPO defaults: 8 envs x 2048 steps, minibatch 64, 10 epochs",
        "total_steps": 2 * 8 * 2048,
        "num_envs": 8,
        "num_steps": 2048,
        "minibatch_size": 64,
        "update_epochs": 10,
        "learning_rate": 3e-4,
        "anneal_lr": False,
        "anneal_clip": False,
        "gamma": 0.99,
        "gae_lambda": 0.95,
        "ent_coef": 0.0,
        "clip_coef": 0.2,
        "clip_vloss": False,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "norm_adv": True,
        "hidden": 64,
    },
    "cleanrl": {
        "label": "CleanRL ppo.py defaults: 4 envs x 128 steps, 4 minibatches (128), 4 epochs",
        "total_steps": 50_000,
        "num_envs": 4,
        "num_steps": 128,
        "minibatch_size": 128,
        "update_epochs": 4,
        "learning_rate": 2.5e-4,
        "anneal_lr": True,
        "anneal_clip": False,
        "gamma": 0.99,
        "gae_lambda": 0.95,
        "ent_coef": 0.01,
        "clip_coef": 0.2,
        "clip_vloss": True,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "norm_adv": True,
        "hidden": 64,
    },
}
CONTESTANTS = ("ours", "sb3", "cleanrl")
TARGETS = {"sb3": ("sb3", 2.0), "cleanrl": ("cleanrl", 1.0)}
"""Per setting: the peer our rate is compared with, and the ratio ours/peer we need."""


# --- the workers: each runs in its own fresh process and prints one JSON line -------------


def ours(setting: dict, seed: int, threads: int) -> dict:
    """Our PPO (all-CPU placement), training time only."""
    from our_parts import PPOConfig, PPOTrainer, placement, train

    marks = []
    run_iteration = PPOTrainer.run_iteration

    def marked_iteration(trainer: PPOTrainer) -> None:  # observe iteration ends; code unchanged
        run_iteration(trainer)
        marks.append(mark(trainer.global_step))

    PPOTrainer.run_iteration = marked_iteration
    knobs = {k: v for k, v in setting.items() if k != "label"}
    config = PPOConfig.tuned("CartPole-v1", **knobs)
    run = train(
        config,
        placement("all-cpu"),
        seed=seed,
        threads=threads,
        count_copies=False,
        eval_episodes=0,
    )
    return {
        "env_steps": run.env_steps,
        "seconds": sum(run.iteration_seconds),  # every iteration, as the peers time theirs
        "marks": marks,
        "torch_threads": run.threads,
    }


def sb3(setting: dict, seed: int, threads: int) -> dict:
    """SB3's PPO on the CPU: env steps / wall time of ``model.learn``."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    marks = []

    class Marks(BaseCallback):
        """Marks the start of each rollout, i.e. the end of the iteration before."""

        def _on_rollout_start(self) -> None:
            marks.append(mark(self.model.num_timesteps))

        def _on_step(self) -> bool:
            return True

    torch.set_num_threads(threads)
    envs = make_vec_env("CartPole-v1", n_envs=setting["num_envs"], seed=seed)
    rate = setting["learning_rate"]
    model = PPO(
        "MlpPolicy",
        envs,
        learning_rate=(lambda left: rate * left) if setting["anneal_lr"] else rate,
        n_steps=setting["num_steps"],
        batch_size=setting["minibatch_size"],
        n_epochs=setting["update_epochs"],
        gamma=setting["gamma"],
        gae_lambda=setting["gae_lambda"],
        clip_range=setting["clip_coef"],
        # SB3 clips the value prediction (not CleanRL's max of clipped and unclipped losses)
        clip_range_vf=setting["clip_coef"] if setting["clip_vloss"] else None,
        normalize_advantage=setting["norm_adv"],
        ent_coef=setting["ent_coef"],
        vf_coef=setting["vf_coef"],
        max_grad_norm=setting["max_grad_norm"],
        policy_kwargs={"net_arch": {"pi": [setting["hidden"]] * 2, "vf": [setting["hidden"]] * 2}},
        device="cpu",
        seed=seed,
        verbose=0,
    )
    began = time.perf_counter()
    model.learn(total_timesteps=setting["total_steps"], callback=Marks())
    seconds = time.perf_counter() - began
    marks.append(mark(model.num_timesteps))
    return {
        "env_steps": model.num_timesteps,
        "seconds": seconds,
        "marks": marks[1:],
        "torch_threads": torch.get_num_threads(),
    }


def cleanrl(setting: dict, seed: int, threads: int) -> dict:
    """CleanRL's ppo.py, unmodified, run as ``__main__`` while we watch its output.

    Its rate is its own last ``SPS:`` line; each ``SPS:`` line (printed once per
    iteration) is also a mark for the steady-state wall and CPU rates.
    """
    import io
    import runpy

    batch = setting["num_envs"] * setting["num_steps"]
    marks, lines = [], []

    class Tap(io.TextIOBase):
        def write(self, text: str) -> int:
            if text.startswith("SPS:"):
                marks.append(mark((len(marks) + 1) * batch))
            lines.append(text)
            return len(text)

    script = peer_venvs.script("cleanrl")
    sys.argv = [str(script), *cleanrl_arguments(setting, seed)]
    real_stdout, sys.stdout = sys.stdout, Tap()
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.stdout = real_stdout
    import torch

    sps = re.findall(r"^SPS: (\d+)$", "".join(lines), flags=re.MULTILINE)
    steps = setting["total_steps"] // batch * batch
    return {
        "env_steps": steps,
        "seconds": steps / float(sps[-1]),
        "marks": marks,
        "torch_threads": torch.get_num_threads(),
    }


def mark(env_steps: int) -> tuple[int, float, float]:
    """(env steps so far, wall clock, this process's CPU time) at an iteration boundary."""
    return (env_steps, time.perf_counter(), time.process_time())


def cleanrl_arguments(setting: dict, seed: int) -> list[str]:
    """``ppo.py``'s command line for ``setting`` (flags only; its code is unmodified)."""
    batch = setting["num_envs"] * setting["num_steps"]
    flags = {
        "--seed": seed,
        "--cuda": False,
        "--total-timesteps": setting["total_steps"],
        "--num-envs": setting["num_envs"],
        "--num-steps": setting["num_steps"],
        "--num-minibatches": batch // setting["minibatch_size"],
        "--update-epochs": setting["update_epochs"],
        "--learning-rate": setting["learning_rate"],
        "--anneal-lr": setting["anneal_lr"],
        "--gamma": setting["gamma"],
        "--gae-lambda": setting["gae_lambda"],
        "--ent-coef": setting["ent_coef"],
        "--clip-coef": setting["clip_coef"],
        "--clip-vloss": setting["clip_vloss"],
        "--vf-coef": setting["vf_coef"],
        "--max-grad-norm": setting["max_grad_norm"],
        "--norm-adv": setting["norm_adv"],
    }
    return [str(part) for flag, value in flags.items() for part in (flag, value)]


WORKERS = {"ours": ours, "sb3": sb3, "cleanrl": cleanrl}


def serve(job: dict[str, Any]) -> dict:
    """A contestant's process: its worker at ``job``'s setting, budget, seed and threads."""
    setting = {**SETTINGS[job["setting"]], "total_steps": job["total_steps"]}
    return WORKERS[job["contestant"]](setting, job["seed"], job["threads"])


def peer_versions() -> dict[str, dict[str, str]]:
    """Installed versions of the packages that matter, per peer venv."""
    found = {name: peer_venvs.versions(name) for name in PEER_VENV_NAMES}
    found["cleanrl"]["cleanrl"] = peer_venvs.CLEANRL_WHEEL.split("==")[1] + " (ppo.py, unmodified)"
    return found


# --- running and summarising ----------------------------------------------------------------


def measure(contestant: str, setting_name: str, seed: int, threads: int, core: str) -> dict:
    """One fresh process: its steps/s by its own clock, and the whole process's wall time."""
    job = {"contestant": contestant, "setting": setting_name, "seed": seed, "threads": threads,
           "total_steps": SETTINGS[setting_name]["total_steps"]}  # fmt: skip
    venv = None if contestant == "ours" else contestant
    entry = race.Entry(setting_name, contestant, "serve", job, venv=venv)
    result = race.run_worker(Path(__file__).resolve(), entry, job, core)
    (first_steps, first_wall, first_cpu), (steps, wall, cpu) = (
        result["marks"][0],
        result["marks"][-1],
    )
    result["marks"] = [result["marks"][0], result["marks"][-1]]  # the two the rates use
    return {
        **result,
        "steps_per_s": result["env_steps"] / result["seconds"],
        "steady_steps": steps - first_steps,
        "steady_wall_steps_per_s": (steps - first_steps) / (wall - first_wall),
        "steady_cpu_steps_per_s": (steps - first_steps) / (cpu - first_cpu),
        "seed": seed,
    }


def interleaved(rounds: int, threads: int, core: str, settings: list[str]) -> dict:
    """rates[setting][contestant] = list of measurements, one per round."""
    runs = {s: {c: [] for c in CONTESTANTS} for s in settings}
    for r in range(rounds):
        for setting_name in settings:
            for contestant in race.rotated(CONTESTANTS, r):
                run = measure(contestant, setting_name, r, threads, core)
                runs[setting_name][contestant].append(run)
                rates = " ".join(f"{run[metric]:6.0f}" for metric in METRICS)
                print(
                    f"round {r + 1}/{rounds} {setting_name:7s} {contestant:7s} steps/s "
                    f"(run, steady wall, steady CPU) {rates}, "
                    f"process {run['process_seconds']:.0f} s",
                    flush=True,
                )
    return runs


METRICS = {
    "steps_per_s": "whole run, each contestant's own wall clock (the target's measure)",
    "steady_wall_steps_per_s": "iterations 2..N, wall clock (no first-iteration warm-up)",
    "steady_cpu_steps_per_s": "iterations 2..N, process CPU time (robust to a busy machine)",
}


def summarise(runs: dict) -> dict:
    """Per setting and metric: each contestant's spread, ours over each peer (race.ratio: the
    median of the rounds' ratios, its range, the ratio of medians beside it), and the target
    judged on the median of the rounds' ratios, as every race and table of the series is."""
    summary = {}
    for setting_name, by_contestant in runs.items():
        summary[setting_name] = {}
        for metric in METRICS:
            rates = {c: [run[metric] for run in v] for c, v in by_contestant.items()}
            ratios = {
                peer: race.ratio(rates["ours"], rates[peer], higher_is_better=True)
                for peer in CONTESTANTS[1:]
            }
            peer, needed = TARGETS[setting_name]
            quoted = ratios[peer]["median_of_round_ratios"]
            summary[setting_name][metric] = {
                "rates": {c: race.spread(v) for c, v in rates.items()},
                "ours_over": ratios,
                "target": {
                    "peer": peer,
                    "ratio_needed": needed,
                    "ratio": quoted,
                    "met": quoted >= needed,
                },
            }
    return summary


def table(summary: dict) -> str:
    """The summary as text: per setting and metric, each contestant's steps/s, ours over it
    (the median of the rounds' ratios and their range), and the target's verdict."""
    lines = []
    for setting_name, by_metric in summary.items():
        lines.append(f"\n{SETTINGS[setting_name]['label']}")
        for metric, s in by_metric.items():
            lines.append(f"  steps/s, {METRICS[metric]}")
            lines.append(
                f"    {'contestant':10s} {'median':>7s} {'IQR':>6s} {'min-max':>11s} "
                f"{'ours/this':>10s} {'rounds':>11s}"
            )
            for c, st in s["rates"].items():
                ratio = s["ours_over"].get(c)
                ratios = ""
                if ratio:  # every run measures a rate: each round pairs
                    ratios = f"{ratio['median_of_round_ratios']:9.2f}x"
                    if ratio["low"] is not None:  # one round has no range
                        ratios += f" {ratio['low']:.2f}-{ratio['high']:.2f}x"
                lines.append(
                    f"    {c:10s} {st['median']:7.0f} {st['iqr']:6.0f} "
                    f"{st['min']:5.0f}-{st['max']:<5.0f} {ratios}"
                )
            t = s["target"]
            verdict = "met" if t["met"] else "NOT met"
            lines.append(
                f"    target ours/{t['peer']} >= {t['ratio_needed']:g}x "
                f"(median over rounds): {t['ratio']:.2f}x, {verdict}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = race.parser(__doc__.splitlines()[0], rounds=5)
    parser.add_argument("--settings", nargs="+", choices=SETTINGS, default=list(SETTINGS))
    args = race.parse(parser)
    if args.worker:
        race.serve({"serve": serve}, args)
        return
    if args.quick:  # 1 round (race.parse), 10k steps at CleanRL's setting
        SETTINGS["cleanrl"]["total_steps"] = 10_000

    began = time.perf_counter()
    for name in PEER_VENV_NAMES:
        peer_venvs.ensure(name)
    versions = peer_versions()
    runs = interleaved(args.rounds, args.threads, args.core, args.settings)
    summary = summarise(runs)
    print(table(summary))
    wall = time.perf_counter() - began
    print(f"\nwhole benchmark: {wall / 60:.1f} min")
    command = " ".join(["python", "benchmarks/ppo_peers.py", *sys.argv[1:]])
    race.save(
        "bench.ppo_peers",
        {
            "env_id": "CartPole-v1",
            "settings": {name: SETTINGS[name] for name in args.settings},
            "rounds": args.rounds,
            "threads": args.threads,
            "core": args.core,
            "timed": {
                "ours": "env steps / sum of PPOResult.iteration_seconds: every training "
                "iteration, the first included (no eval, no copy counting)",
                "sb3": "env steps / wall time of model.learn(total_timesteps=N)",
                "cleanrl": "last SPS line of ppo.py (its own loop clock, TensorBoard included)",
                "steady": "iteration boundaries: ours after PPOTrainer.run_iteration, SB3 at each "
                "rollout start and after learn, CleanRL at each SPS line",
            },
            "metrics": METRICS,
            "summary": summary,
            "runs": runs,
            "wall_seconds": wall,
        },
        versions,
        command,
        args.quick,
        args.reference,
    )


if __name__ == "__main__":
    main()
