"""Our batched environments against gymnax, EnvPool and Gymnasium's vector env: env steps/s.

What: CartPole-v1 and Pendulum-v1 at 1, 64, 4,096 and 65,536 environments, stepped
with random valid actions, by

* ``ours``: the package's batched tensor environments on the CPU, through the
  environment study's own stepper (``env_throughput.make_stepper("batched-cpu")``:
  SAME_STEP autoreset, action checks off as PPO runs them);
* ``ours-compiled``: the same with ``compile=True`` (the step's tensor work
  compiled by ``torch.compile``; its first step, where it compiles, is the untimed one);
* ``gymnax``: gymnax 1.0.1, ``jax.jit`` of ``jax.vmap(env.step)`` (its step autoresets
  too), called once per step from Python as ours is, a fresh key split per step inside
  the jitted function; the first call (trace and compile) is timed apart, as
  ``compile_s@N``;
* ``envpool-1``: EnvPool 1.2.5's Gymnasium interface, synchronous (``batch_size =
  num_envs``), ``num_threads=1``, on the pinned core;
* ``envpool-all``: the same with one thread per core, on every core (never pinned);
* ``gymnasium``: Gymnasium's own NumPy vector CartPole
  (``make_vec(vectorization_mode="vector_entry_point")``, NEXT_STEP autoreset), the
  environment study's stepper too; Gymnasium has none for Pendulum-v1.

Each contestant runs in a fresh process per round and measures every size in it: build,
reset, one untimed step, then as many steps per repeat as fill ``--seconds``, repeated
``--repeats`` times (``race.steady_rate``; JAX's steps end with ``block_until_ready``).
Actions come from 16 random batches drawn before the clock, cycled. The figure to
quote is the median of the per-round ratios (ours / peer), with their range. Targets:
ours >= 1x gymnax at 4,096 and 65,536 envs, >= 10x EnvPool (one thread) at 4,096;
ours-compiled >= 2x gymnax at 4,096 and 65,536.

    .venv/bin/python benchmarks/env_peers.py --quick        # smoke run, about a minute
    .venv/bin/python benchmarks/env_peers.py                # 5 rounds
    .venv/bin/python benchmarks/env_peers.py --reference    # also data/reference/<machine>/

The first run builds build/peers/gymnax and build/peers/envpool (a few minutes).
Writes data/results/bench.env_peers.json.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import race

ENV_IDS = ("CartPole-v1", "Pendulum-v1")
NUM_ENVS = (1, 64, 4096, 65_536)
ACTION_BANK = 16
"""Batches of random actions drawn before the clock and cycled through."""
TARGETS = {
    ("ours", "gymnax", 4096): 1.0,
    ("ours", "gymnax", 65_536): 1.0,
    ("ours", "envpool-1", 4096): 10.0,
    ("ours-compiled", "gymnax", 4096): 2.0,
    ("ours-compiled", "gymnax", 65_536): 2.0,
}
"""(ours, peer, num_envs) -> the ratio ours / peer the race asks for (either environment)."""


# --- the workers: each runs in a fresh process and returns its metrics --------------------


def actions_bank(env_id: str, num_envs: int, seed: int) -> list[Any]:
    """Random valid actions as NumPy arrays: CartPole (N,) ints, Pendulum (N, 1) torques."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if env_id == "CartPole-v1":
        return [rng.integers(0, 2, num_envs, dtype=np.int32) for _ in range(ACTION_BANK)]
    return [rng.uniform(-2, 2, (num_envs, 1)).astype(np.float32) for _ in range(ACTION_BANK)]


def cycling(step: Callable[[Any], object], actions: list[Any]) -> Callable[[], object]:
    """A no-argument step feeding ``actions[0], actions[1], ...`` round and round."""
    count = [0]

    def call() -> object:
        count[0] += 1
        return step(actions[count[0] % len(actions)])

    return call


def sweep(job: dict[str, Any], build: Callable[[int], tuple[Callable, Callable]]) -> race.Metrics:
    """For each size: ``build(n)`` -> (step, sync), then its steady rate; metrics per size."""
    metrics: race.Metrics = {}
    for n in job["num_envs"]:
        began = time.perf_counter()
        step, sync = build(n)
        metrics[f"build_s@{n}"] = time.perf_counter() - began
        rate = race.steady_rate(step, n, job["seconds"], job["repeats"], sync)
        metrics[f"steps_per_s@{n}"] = rate["per_s"]
        metrics[f"iqr_per_s@{n}"] = rate["iqr_per_s"]
    return metrics


def study_stepper(job: dict[str, Any]) -> race.Metrics:
    """Ours or Gymnasium's vector env, through the environment study's stepper."""
    import torch
    from our_parts import env_throughput

    torch.set_num_threads(job["threads"])

    def build(n: int) -> tuple[Callable, Callable]:
        stepper = env_throughput.make_stepper(
            job["implementation"], job["env_id"], n, job["seed"], compile=job["compile"]
        )
        return stepper.step, lambda: None  # CPU tensors and NumPy: done when step returns

    return sweep(job, build)


def gymnax_steps(job: dict[str, Any]) -> race.Metrics:
    """gymnax: a jitted, vmapped step per call; the first call (compile) timed apart."""
    import gymnax
    import jax
    import jax.numpy as jnp

    env, params = gymnax.make(job["env_id"])
    compile_seconds = {}

    def build(n: int) -> tuple[Callable, Callable]:
        reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
        batched_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

        @jax.jit
        def step(key: jax.Array, state: Any, action: jax.Array) -> tuple[jax.Array, Any, Any]:
            key, now = jax.random.split(key)
            obs, state, *_ = batched_step(jax.random.split(now, n), state, action, params)
            return key, state, obs

        key = jax.random.key(job["seed"])
        obs, state = reset(jax.random.split(key, n), params)
        actions = [jnp.asarray(a) for a in actions_bank(job["env_id"], n, job["seed"])]
        live = {"key": key, "state": state, "obs": obs}

        def call(action: jax.Array) -> None:
            live["key"], live["state"], live["obs"] = step(live["key"], live["state"], action)

        began = time.perf_counter()
        call(actions[0])  # traced and compiled here
        live["obs"].block_until_ready()
        compile_seconds[n] = time.perf_counter() - began
        return cycling(call, actions), lambda: live["obs"].block_until_ready()

    metrics = sweep(job, build)
    return {**metrics, **{f"compile_s@{n}": s for n, s in compile_seconds.items()}}


def envpool_steps(job: dict[str, Any]) -> race.Metrics:
    """EnvPool, synchronous: ``num_threads`` threads (0: one per core it may run on)."""
    import envpool

    threads = job["num_threads"] or len(os.sched_getaffinity(0))

    def build(n: int) -> tuple[Callable, Callable]:
        envs = envpool.make_gymnasium(
            job["env_id"], num_envs=n, batch_size=n, num_threads=threads, seed=job["seed"]
        )
        envs.reset()
        return cycling(envs.step, actions_bank(job["env_id"], n, job["seed"])), lambda: None

    return {**sweep(job, build), "envpool_threads": threads}


WORKERS = {"study": study_stepper, "gymnax": gymnax_steps, "envpool": envpool_steps}


# --- the race --------------------------------------------------------------------------------


def plan(args: Any) -> race.Plan:
    """Every contestant at each environment, and ours against each of them at every size."""
    sizes = args.num_envs
    common = {"num_envs": sizes, "seconds": args.seconds, "repeats": args.repeats}
    entries, pairs = [], []
    for env_id in ENV_IDS:
        job = {**common, "env_id": env_id}
        ours = {**job, "implementation": "batched-cpu", "compile": False}
        here = [
            race.Entry(env_id, "ours", "study", ours),
            race.Entry(env_id, "gymnax", "gymnax", job, venv="gymnax"),
            race.Entry(env_id, "envpool-1", "envpool", {**job, "num_threads": 1}, venv="envpool"),
            race.Entry(
                env_id, "envpool-all", "envpool", {**job, "num_threads": 0}, "envpool", "none"
            ),
        ]
        if env_id == "CartPole-v1":  # Gymnasium has no vector Pendulum
            here.append(
                race.Entry(
                    env_id,
                    "gymnasium",
                    "study",
                    {**job, "implementation": "gymnasium-vector", "compile": False},
                )
            )
        compiled = race.Entry(env_id, "ours-compiled", "study", {**ours, "compile": True})
        entries += [*here, compiled]
        matches = [("ours", e.contestant) for e in here[1:]] + [("ours-compiled", "gymnax")]
        pairs += [
            race.Pair(env_id, a, b, f"steps_per_s@{n}", target=TARGETS.get((a, b, n)))
            for a, b in matches
            for n in sizes
        ]
    return race.Plan(
        kind="bench.env_peers",
        script=Path(__file__).resolve(),
        entries=entries,
        pairs=pairs,
        fields={
            "env_ids": list(ENV_IDS),
            "num_envs": list(sizes),
            "seconds_per_repeat": args.seconds,
            "repeats": args.repeats,
            "action_bank": ACTION_BANK,
        },
        timed={
            "ours": "env_throughput.make_stepper('batched-cpu').step: one batched step per call",
            "ours-compiled": "the same, compile=True (first step, where it compiles, untimed)",
            "gymnax": "jit(vmap(env.step)) per call, a key split inside; compile_s@N: first call",
            "envpool-1": "envs.step(actions), synchronous, num_threads=1, pinned",
            "envpool-all": "envs.step(actions), synchronous, a thread per core, not pinned",
            "gymnasium": "make_vec(vector_entry_point).step (NumPy; CartPole only)",
        },
        tag=None if args.threads == 1 else f"{args.threads}-threads",
    )


def arguments(argv: list[str] | None = None) -> Any:
    """The race's options (race.parser's and its own), ``--quick``'s budgets applied."""
    made = race.parser(__doc__.splitlines()[0], rounds=5)
    made.add_argument("--num-envs", type=int, nargs="+", default=list(NUM_ENVS))
    made.add_argument("--seconds", type=float, default=0.2, help="seconds per timed repeat")
    made.add_argument("--repeats", type=int, default=7, help="timed repeats per size")
    args = race.parse(made, argv)
    if args.quick:
        args.seconds, args.repeats = 0.02, 3
    return args


if __name__ == "__main__":
    race.main(arguments, plan, WORKERS)
