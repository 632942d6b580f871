"""Environment steps per second of four designs of vectorised environment, against their number.

* ``gymnasium-sync``: our :func:`~hetero_tutorial.rl.envs.vector.make_vector_env`, Gymnasium's
  ``SyncVectorEnv``: one Python environment object per environment, stepped in a loop.
* ``gymnasium-vector``: Gymnasium's own NumPy vector implementation
  (``gym.make_vec(env_id, n, vectorization_mode="vector_entry_point")``), one array
  operation per equation for all environments. Only for ids that have one (CartPole-v1;
  Gymnasium has none for Pendulum-v1). Its autoreset is NEXT_STEP, not SAME_STEP.
* ``batched-cpu``: :mod:`hetero_tutorial.rl.envs.batched`, the same as tensor operations.
* ``batched-<type>`` (``batched-cuda``, ``batched-mps``, ...): the same tensors on the
  accelerator, where the step is a few dozen kernel launches whatever the number of
  environments.

Timing is interleaved (:func:`~hetero_tutorial.core.timing.compare`), warmed up,
synchronised around each repeat, on one PyTorch thread by default. Actions are random
and valid, drawn before the clock starts (a bank of :data:`ACTION_BANK` batches, on the
env's device, cycled). Each repeat steps an implementation as often as fits in about
``seconds_per_repeat``, so slow designs and large batches stay in seconds; the
``SyncVectorEnv`` above ``sync_max_envs`` environments (tens of milliseconds a step,
and as long again to build) is not measured, and its row says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from hetero_tutorial.core.devices import accelerator, synchronize
from hetero_tutorial.core.errors import UsageError, require_positive
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.timing import compare, torch_threads
from hetero_tutorial.rl.envs.batched import BATCHED_ENV_IDS, make_batched_env
from hetero_tutorial.rl.envs.vector import make_vector_env

DEFAULT_NUM_ENVS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]
"""Log-spaced from 1 to 65,536 environments (powers of 4)."""
SYNC_MAX_ENVS = 4096
"""Largest ``num_envs`` at which ``gymnasium-sync`` is measured by default (~20 us per env per
step here: 4,096 envs take ~0.1 s a step, 65,536 would take seconds a step to run and to build)."""
ACTION_BANK = 16
"""Batches of random actions drawn before timing and cycled through."""
MAX_STEPS_PER_REPEAT = 2000
BASELINES = ("gymnasium-sync", "gymnasium-vector")
"""The implementations :func:`ratio_rows` divides by."""


@dataclass
class Stepper:
    """One implementation, ready to step: ``step()`` advances every env once."""

    step: Callable[[], object]
    device: torch.device
    close: Callable[[], None]


def implementations(env_id: str) -> list[str]:
    """The implementations measurable here for ``env_id``, slowest design first."""
    names = ["gymnasium-sync"]
    if gym.spec(env_id).vector_entry_point is not None:
        names.append("gymnasium-vector")
    names.append("batched-cpu")
    found = accelerator()
    if found is not None:
        names.append(f"batched-{found.type}")
    return names


def _numpy_actions(env_id: str, num_envs: int, rng: np.random.Generator) -> list[np.ndarray]:
    if env_id == "CartPole-v1":
        return [rng.integers(0, 2, num_envs) for _ in range(ACTION_BANK)]
    return [rng.uniform(-2, 2, (num_envs, 1)).astype(np.float32) for _ in range(ACTION_BANK)]


def _cycling(step: Callable[[Any], object], actions: Sequence[Any]) -> Callable[[], object]:
    """A no-argument step that feeds ``actions[0], actions[1], ...`` round and round."""
    counter = iter(range(1 << 62))
    return lambda: step(actions[next(counter) % len(actions)])


def make_stepper(
    implementation: str,
    env_id: str,
    num_envs: int,
    seed: int = 0,
    check_actions: bool = False,
    compile: bool = False,
    cudagraphs: bool = False,
) -> Stepper:
    """Build ``implementation`` for ``num_envs`` copies of ``env_id``, reset, with its actions;
    ``compile`` and ``cudagraphs``: the batched environments' switches (see
    :func:`~hetero_tutorial.rl.envs.batched.make_batched_env`)."""
    rng = np.random.default_rng(seed)
    actions = _numpy_actions(env_id, num_envs, rng)
    cpu = torch.device("cpu")
    if implementation == "gymnasium-sync":
        envs = make_vector_env(env_id, num_envs)
    elif implementation == "gymnasium-vector":
        envs = gym.make_vec(env_id, num_envs, vectorization_mode="vector_entry_point")
    elif implementation.startswith("batched-"):
        device = cpu if implementation == "batched-cpu" else accelerator()
        if device is None or f"batched-{device.type}" != implementation:
            raise UsageError(
                f"{implementation!r} is not available here; choose from {implementations(env_id)}"
            )
        batched = make_batched_env(
            env_id, num_envs, device, check_actions, compile=compile, cudagraphs=cudagraphs
        )
        batched.reset(seed=seed)
        on_device = [torch.as_tensor(a, device=device) for a in actions]  # before the clock
        return Stepper(_cycling(batched.step, on_device), batched.device, batched.close)
    else:
        raise UsageError(f"unknown implementation {implementation!r}; {implementations(env_id)}")
    envs.reset(seed=seed)
    return Stepper(_cycling(envs.step, actions), cpu, envs.close)


def _repeat(step: Callable[[], object], times: int) -> None:
    """``times`` steps, each result dropped at once (keeping them would hold k x N obs)."""
    for _ in range(times):
        step()


def _steps_fitting(stepper: Stepper, seconds: float) -> int:
    """How many steps of ``stepper`` take about ``seconds`` (after a first, untimed step)."""
    stepper.step()
    synchronize(stepper.device)
    probe, start = 1, time.perf_counter()
    while True:
        for _ in range(probe):
            stepper.step()
        synchronize(stepper.device)
        elapsed = time.perf_counter() - start
        if elapsed > seconds / 10 or probe >= MAX_STEPS_PER_REPEAT:
            per_step = elapsed / (2 * probe - 1)  # probes of 1, 2, 4, ... steps so far
            return int(np.clip(round(seconds / per_step), 1, MAX_STEPS_PER_REPEAT))
        probe *= 2


def measure_point(
    env_id: str,
    num_envs: int,
    names: Sequence[str],
    repeats: int = 5,
    threads: int | None = 1,
    seconds_per_repeat: float = 0.05,
    check_actions: bool = False,
) -> list[dict[str, Any]]:
    """One row per implementation in ``names`` for ``num_envs`` envs, measured interleaved."""
    with torch_threads(threads):
        steppers = {
            name: make_stepper(name, env_id, num_envs, check_actions=check_actions)
            for name in names
        }
        steps = {name: _steps_fitting(s, seconds_per_repeat) for name, s in steppers.items()}
        devices = {s.device for s in steppers.values()}
        timings = compare(
            {name: (lambda s=s, k=steps[name]: _repeat(s.step, k)) for name, s in steppers.items()},
            sync=lambda: [synchronize(device) for device in devices],
            warmup=1,
            repeats=repeats,
        )
    for stepper in steppers.values():
        stepper.close()
    rows = []
    for name, timing in timings.items():
        env_steps = steps[name] * num_envs  # per repeat
        rows.append(
            {
                "implementation": name,
                "env_id": env_id,
                "num_envs": num_envs,
                "env_steps_per_s": env_steps / timing.median,
                "iqr": env_steps / timing.q1 - env_steps / timing.q3,  # env steps/s
                "seconds_per_step": timing.median / steps[name],
                "steps_per_repeat": steps[name],
                "repeats": repeats,
                "threads": threads,
                "device": str(steppers[name].device),
                "check_actions": check_actions if name.startswith("batched") else None,
                "skipped": None,
            }
        )
    return rows


@guarded("the environment throughput study")
def measure_throughput(
    env_ids: Sequence[str] = BATCHED_ENV_IDS,
    num_envs: Sequence[int] = DEFAULT_NUM_ENVS,
    repeats: int = 5,
    threads: int | None = 1,
    seconds_per_repeat: float = 0.05,
    sync_max_envs: int = SYNC_MAX_ENVS,
    check_actions: bool = False,
) -> list[dict[str, Any]]:
    """Rows of env steps per second for every implementation, env id and number of envs.

    ``check_actions`` applies to the batched envs (PPO runs them unchecked). A
    ``gymnasium-sync`` point above ``sync_max_envs`` gets a row with
    ``env_steps_per_s`` None and the reason in ``skipped``.
    """
    if not num_envs:
        raise UsageError("give at least one number of environments, e.g. [1, 64, 4096]")
    require_positive(repeats=repeats, sync_max_envs=sync_max_envs, num_envs=min(num_envs))
    unknown = [env_id for env_id in env_ids if env_id not in BATCHED_ENV_IDS]
    if unknown:
        raise UsageError(f"no batched version of {unknown}: choose from {list(BATCHED_ENV_IDS)}")
    rows: list[dict[str, Any]] = []
    for env_id in env_ids:
        for n in num_envs:
            names = implementations(env_id)
            if n > sync_max_envs:
                names.remove("gymnasium-sync")
                rows.append(
                    {
                        "implementation": "gymnasium-sync",
                        "env_id": env_id,
                        "num_envs": n,
                        "env_steps_per_s": None,
                        "threads": threads,
                        "skipped": f"num_envs above sync_max_envs={sync_max_envs}",
                    }
                )
            rows += measure_point(
                env_id, n, names, repeats, threads, seconds_per_repeat, check_actions
            )
    return rows


def throughput_ratios(
    rows: Sequence[dict[str, Any]], env_id: str, num_envs: int, baseline: str
) -> dict[str, float]:
    """Each implementation's env steps/s over ``baseline``'s, for ``env_id`` at ``num_envs``.

    Above 1: faster than the baseline. Implementations not measured there are left out.
    """
    rates = {
        row["implementation"]: row["env_steps_per_s"]
        for row in rows
        if row["env_id"] == env_id and row["num_envs"] == num_envs and row["env_steps_per_s"]
    }
    if baseline not in rates:
        raise UsageError(
            f"no {baseline} measurement for {env_id} at {num_envs} envs; measured: {sorted(rates)}"
        )
    return {name: rate / rates[baseline] for name, rate in rates.items() if name != baseline}


def rates_by_implementation(
    rows: Sequence[dict[str, Any]], env_id: str
) -> dict[str, dict[int, float]]:
    """``{implementation: {num_envs: env steps/s}}`` of the measured rows of ``env_id``."""
    rates: dict[str, dict[int, float]] = {}
    for row in rows:
        if row["env_id"] == env_id and row["env_steps_per_s"]:
            rates.setdefault(row["implementation"], {})[row["num_envs"]] = row["env_steps_per_s"]
    return rates


TIE = 0.1
"""Lines within this fraction of each other at a point are tied there (timing noise on a
shared machine is a few percent), and a crossing needs a clear winner on each side."""


def crossings(
    rows: Sequence[dict[str, Any]], env_id: str, tie: float = TIE
) -> list[dict[str, Any]]:
    """Where one implementation's throughput line crosses another's, for ``env_id``.

    For every pair measured at two or more common numbers of environments: each
    ``num_envs`` at which the faster of the two changes, with ``faster_below`` and
    ``faster_above`` naming who wins on each side, ``between`` the measured points
    around it, and ``tied_at`` the points between those where the two were within
    ``tie`` of each other (too close to call). The crossing is interpolated on the
    log-log plot between the two points around it.
    """
    rates = rates_by_implementation(rows, env_id)
    found = []
    names = list(rates)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            common = sorted(set(rates[a]) & set(rates[b]))
            gaps = {n: np.log(rates[a][n] / rates[b][n]) for n in common}  # > 0: a is faster
            clear = [n for n in common if abs(gaps[n]) > np.log1p(tie)]
            for lo, hi in pairwise(clear):
                if (gaps[lo] > 0) == (gaps[hi] > 0):
                    continue
                x0, x1 = np.log(lo), np.log(hi)
                at = float(np.exp(x0 + (x1 - x0) * gaps[lo] / (gaps[lo] - gaps[hi])))
                found.append(
                    {
                        "num_envs": at,
                        "faster_below": a if gaps[lo] > 0 else b,
                        "faster_above": b if gaps[lo] > 0 else a,
                        "between": (lo, hi),
                        "tied_at": [n for n in common if lo < n < hi],
                    }
                )
    return sorted(found, key=lambda c: c["num_envs"])


def step_cost_fit(rows: Sequence[dict[str, Any]], env_id: str) -> dict[str, dict[str, float]]:
    """Fit seconds per vector step = ``fixed_s`` + ``per_env_s`` x num_envs, per implementation.

    ``fixed_s`` is what a step costs whatever its size (Python calls, tensor operations'
    dispatch, kernel launches); ``per_env_s`` the work each environment adds. Fitted by
    least squares on relative errors, so small and large batches count alike.
    ``half_fixed_at`` is the number of environments at which the two are equal:
    below it, overhead is most of a step's cost. Needs two or more measured sizes.
    """
    fits = {}
    for name, points in rates_by_implementation(rows, env_id).items():
        if len(points) < 2:
            continue
        n = np.array(sorted(points), dtype=float)
        seconds = n / np.array([points[int(k)] for k in n])  # seconds per vector step
        design = np.stack([np.ones_like(n), n], axis=1) / seconds[:, None]
        (fixed, per_env), *_ = np.linalg.lstsq(design, np.ones_like(n), rcond=None)
        fixed, per_env = max(float(fixed), 0.0), max(float(per_env), 1e-15)
        fits[name] = {"fixed_s": fixed, "per_env_s": per_env, "half_fixed_at": fixed / per_env}
    return fits


def ratio_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Speed ratios over each baseline measured, per env id and number of environments."""
    found = []
    points = sorted({(row["env_id"], row["num_envs"]) for row in rows})
    for env_id, num_envs in points:
        measured = {
            r["implementation"]
            for r in rows
            if (r["env_id"], r["num_envs"]) == (env_id, num_envs) and r["env_steps_per_s"]
        }
        for baseline in BASELINES:
            if baseline in measured:
                found.append(
                    {
                        "env_id": env_id,
                        "num_envs": num_envs,
                        "baseline": baseline,
                        "ratios": throughput_ratios(rows, env_id, num_envs, baseline),
                    }
                )
    return found
