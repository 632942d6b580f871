"""Micro-benchmarks of the building blocks, on every device here (notebook 00, claims C1-C3).

* :func:`forward_grid`: an MLP forward pass over width x batch size, per sample,
  on each device, *including* the copies a rollout pays (inputs to the device,
  outputs back): where the CPU/accelerator crossover lies.
* :func:`policy_step_costs`: one CartPole step driven by a 128-unit policy (C1).
* :func:`value_update_costs`: one Adam step of a 256-unit value network (C2).
* :func:`naive_vs_honest`: what timing without warm-up or synchronisation reports.

Every function times the devices side by side (interleaved, see
:func:`hetero_tutorial.core.timing.compare`) and returns plain dicts that go
straight into a results record. Reading the grid (where the accelerator wins past
the noise, where batching stops paying) is :mod:`~hetero_tutorial.studies.crossover_grid`'s;
the sentences the other measurements print are :mod:`~hetero_tutorial.studies.crossover_findings`'.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import torch
from torch import nn

from hetero_tutorial.core.devices import devices_here, resolve_device, synchronize
from hetero_tutorial.core.errors import UsageError, require_positive
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.timing import Timing, compare, measure
from hetero_tutorial.rl.nets import mlp
from hetero_tutorial.studies.crossover_grid import (  # noqa: F401 (notebook 00 reads them here)
    BATCH_WITHIN,
    batches_that_pay,
    batching_sentence,
    crossover_cells,
    crossover_sentence,
    crossover_widths,
)

GRID_IN_FEATURES = 64
"""Input features of the grid's MLP (a mid-sized observation vector)."""
GRID_OUT_FEATURES = 8
SECONDS_PER_REPEAT = 2e-3
"""The grid times each cell's calls in loops of about this long (at least one call): a
single call of tens of microseconds would pay the timer's reads and any preemption alone,
where the policy step (:func:`policy_step_costs`) times loops of 50 steps."""


def _summary(timing: Timing) -> dict[str, float]:
    return {
        "median_s": timing.median,
        "iqr_s": timing.iqr,
        "q1_s": timing.q1,
        "q3_s": timing.q3,
        "repeats": len(timing.samples),
    }


def _sync_all(devices: Sequence[torch.device]):
    return lambda: [synchronize(device) for device in devices]


def _check_devices(devices: Sequence[torch.device | str]) -> list[torch.device]:
    """The devices, each one that exists here (a clear error names what does)."""
    if not devices:
        raise UsageError("give at least one device, e.g. [torch.device('cpu')]")
    return [resolve_device(device) for device in devices]


def _check_sizes(widths: Sequence[int], batch_sizes: Sequence[int], repeats: int) -> None:
    """Every width and batch size at least 1, and some of each, before anything is timed."""
    if not widths or not batch_sizes:
        raise UsageError("give at least one width and one batch size (--widths 64 --batch-sizes 1)")
    require_positive(
        smallest_width=min(widths), smallest_batch_size=min(batch_sizes), repeats=repeats
    )


def copies_on(module: nn.Module, devices: Sequence[torch.device]) -> dict[torch.device, nn.Module]:
    """An identical copy of ``module`` on each device.

    Copies, because ``module.to(device)`` moves the module itself: the CPU's entry
    would end up on the accelerator too.
    """
    return {device: copy.deepcopy(module).to(device) for device in devices}


def _rollout_forward(
    net: nn.Module, inputs_cpu: torch.Tensor, device: torch.device
) -> torch.Tensor:
    """A forward pass as a rollout makes it: inputs copied in, outputs copied back."""
    with torch.inference_mode():
        return net(inputs_cpu.to(device)).cpu()


@guarded("the forward-pass grid")
def forward_grid(
    widths: Sequence[int],
    batch_sizes: Sequence[int],
    devices: Sequence[torch.device | str],
    repeats: int = 7,
    warmup: int = 2,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Seconds per sample of a two-hidden-layer MLP forward pass, for each width, batch and device.

    The input batch starts on the CPU and the output ends on the CPU, as in a
    rollout, so an accelerator pays for both copies. Each repeat times a loop of calls
    lasting about :data:`SECONDS_PER_REPEAT` on the slowest device. Returns one row per
    (device, width, batch_size) with the median seconds per call and per sample.
    """
    _check_sizes(widths, batch_sizes, repeats)
    devices = _check_devices(devices)
    torch.manual_seed(seed)
    rows = []
    for width in widths:
        nets = copies_on(mlp(GRID_IN_FEATURES, width, GRID_OUT_FEATURES).eval(), devices)
        for batch_size in batch_sizes:
            inputs_cpu = torch.randn(batch_size, GRID_IN_FEATURES)
            candidates = {
                str(device): (lambda n=net, d=device, x=inputs_cpu: _rollout_forward(n, x, d))
                for device, net in nets.items()
            }
            inner = _calls_per_repeat(candidates.values(), _sync_all(devices))
            timings = compare(
                candidates, sync=_sync_all(devices), repeats=repeats, warmup=warmup, inner=inner
            )
            for device_name, timing in timings.items():
                rows.append(
                    {
                        "device": device_name,
                        "width": width,
                        "batch_size": batch_size,
                        "seconds_per_call": timing.median,
                        "iqr_s": timing.iqr,
                        "q1_s": timing.q1,
                        "q3_s": timing.q3,
                        "seconds_per_sample": timing.median / batch_size,
                        "calls_per_repeat": inner,
                    }
                )
    return rows


PROBES = 3
"""Timed tries of each call before a grid cell sets its loop length."""


def _calls_per_repeat(calls, sync) -> int:
    """How many calls make a repeat of about :data:`SECONDS_PER_REPEAT`: each call (after
    a first, untimed warm-up) timed at its fastest of :data:`PROBES` tries, so that one
    preemption cannot make a fast cell a single call; the slowest call sets the loop."""
    slowest = 0.0
    for call in calls:
        fastest = math.inf
        for _ in range(PROBES):
            sync()
            start = time.perf_counter()
            call()
            sync()
            fastest = min(fastest, time.perf_counter() - start)
        slowest = max(slowest, fastest)
    return max(1, int(SECONDS_PER_REPEAT / max(slowest, 1e-7)))


@guarded("the policy step")
def policy_step_costs(
    devices: Sequence[torch.device | str],
    hidden: int = 128,
    env_id: str = "CartPole-v1",
    repeats: int = 15,
    steps_per_repeat: int = 50,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Seconds per environment step when a ``hidden``-unit policy on each device picks the action.

    One step: observation to a tensor, to the device, forward, greedy action,
    back to the CPU, ``env.step`` (and a reset when the episode ends). The
    ``"env_only"`` entry is the environment step alone, for scale.
    """
    devices = _check_devices(devices)
    env = gym.make(env_id)
    obs_dim, num_actions = env.observation_space.shape[0], env.action_space.n
    torch.manual_seed(seed)
    nets = copies_on(mlp(obs_dim, hidden, num_actions).eval(), devices)
    state = {"obs": env.reset(seed=seed)[0]}

    def env_step(action: int) -> None:
        obs, _, terminated, truncated, _ = env.step(action)
        state["obs"] = env.reset()[0] if terminated or truncated else obs

    def policy_step(device: torch.device, net: nn.Module) -> None:
        with torch.inference_mode():
            obs = torch.as_tensor(state["obs"]).unsqueeze(0).to(device)
            env_step(int(net(obs).argmax(dim=1).item()))

    candidates = {str(d): (lambda d=d, n=n: policy_step(d, n)) for d, n in nets.items()}
    candidates["env_only"] = lambda: env_step(env.action_space.sample())
    timings = compare(candidates, sync=_sync_all(devices), repeats=repeats, inner=steps_per_repeat)
    env.close()
    return {name: _summary(timing) for name, timing in timings.items()}


@guarded("the value update")
def value_update_costs(
    devices: Sequence[torch.device | str],
    hidden: int = 256,
    batch_size: int = 256,
    obs_dim: int = 3,
    repeats: int = 15,
    updates_per_repeat: int = 10,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Seconds per Adam step of a value network (two layers of ``hidden`` units) on each device.

    The batch is already on the device, as after the hybrid plan's one copy per rollout.
    """
    devices = _check_devices(devices)
    torch.manual_seed(seed)
    candidates = {}
    for device in devices:
        net = mlp(obs_dim, hidden, 1).to(device)
        optimizer = torch.optim.Adam(net.parameters(), lr=3e-4)
        obs, returns = (
            torch.randn(batch_size, obs_dim, device=device),
            torch.randn(batch_size, 1, device=device),
        )

        def update(net: nn.Module = net, optimizer=optimizer, obs=obs, returns=returns) -> None:
            loss = (net(obs) - returns).pow(2).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

        candidates[str(device)] = update
    timings = compare(
        candidates, sync=_sync_all(devices), repeats=repeats, inner=updates_per_repeat
    )
    return {name: _summary(timing) for name, timing in timings.items()}


@guarded("the two timers")
def naive_vs_honest(
    device: torch.device | str, width: int = 1024, batch_size: int = 1024, calls: int = 50
) -> dict[str, float]:
    """Seconds per forward call as three timers report it, the article's way and ours.

    ``first_call``: the first forward pass of a fresh network, timed as a learner's
    first call happens: the network is built and moved to the device (untimed), then
    its first call pays what is lazy on that device: on CUDA, creating the cuBLAS
    handle and loading the kernels (``CUDA_MODULE_LOADING=LAZY``), 0.1-0.5 s. That is
    "first" *in this process*: :func:`building_blocks` runs this before any other
    measurement so that nothing has warmed the device; called after other work on the
    device (a notebook cell that already ran a network there), it times the first call
    of a fresh network in a warm library, which is far cheaper. The CUDA context is
    created before the clock starts, by the input tensor. ``naive``: a loop of calls with
    no warm-up and no final synchronisation, as the article times it. ``honest``: warmed
    up, synchronised, median of repeats. On a CPU ``naive`` and ``honest`` differ only
    by warm-up; on an accelerator ``naive`` mostly measures how fast kernels are *queued*.
    """
    device = resolve_device(device)
    inputs = torch.randn(batch_size, GRID_IN_FEATURES, device=device)

    def fresh_forward():
        net = mlp(GRID_IN_FEATURES, width, GRID_OUT_FEATURES).to(device)
        synchronize(device)
        return lambda: _inference(net, inputs)

    forward = fresh_forward()
    start = time.perf_counter()
    forward()
    synchronize(device)
    first_call = time.perf_counter() - start

    forward = fresh_forward()
    start = time.perf_counter()
    for _ in range(calls):  # the article's timer: from a cold start, no synchronisation at the end
        forward()
    naive = (time.perf_counter() - start) / calls
    honest = measure(forward, device=device, warmup=5, repeats=9, inner=max(1, calls // 5))
    return {"first_call_s": first_call, "naive_s": naive, "honest_s": honest.median,
            "width": width, "batch_size": batch_size}  # fmt: skip


def _inference(net: nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    with torch.inference_mode():
        return net(inputs)


def ratios(costs: dict[str, dict[str, float]]) -> dict[str, float]:
    """CPU median divided by each accelerator's median: above 1 means the accelerator is faster."""
    cpu = costs["cpu"]["median_s"]
    return {
        name: cpu / cost["median_s"]
        for name, cost in costs.items()
        if name not in ("cpu", "env_only")
    }


TIMER_SIZE = 1024
"""The largest width and batch size :func:`building_blocks` times its three timers at."""


@guarded("the building blocks")
def building_blocks(
    widths: Sequence[int],
    batch_sizes: Sequence[int],
    repeats: int = 7,
    devices: Sequence[torch.device | str] | None = None,
) -> dict[str, Any]:
    """All of notebook 00's measurements on ``devices`` (default: CPU and accelerator if any).

    The timers run first: their first call must be the first on each device (see
    :func:`naive_vs_honest`); the grid's calls would otherwise have warmed cuBLAS. They time
    the grid's largest network and batch, at most :data:`TIMER_SIZE` each.
    """
    _check_sizes(widths, batch_sizes, repeats)
    devices = _check_devices(devices if devices is not None else devices_here())
    width, batch_size = min(TIMER_SIZE, max(widths)), min(TIMER_SIZE, max(batch_sizes))
    timers = {str(d): naive_vs_honest(d, width, batch_size) for d in devices}
    return summarize(
        devices,
        grid=forward_grid(widths, batch_sizes, devices, repeats=repeats),
        policy_step=policy_step_costs(devices, repeats=2 * repeats),
        value_update=value_update_costs(devices, repeats=2 * repeats),
        timers=timers,
    )


def summarize(
    devices: Sequence[torch.device | str],
    grid: list[dict[str, Any]],
    policy_step: dict[str, dict[str, float]],
    value_update: dict[str, dict[str, float]],
    timers: dict[str, dict[str, float]],
    policy_step_again: dict[str, dict[str, float]] | None = None,
) -> dict[str, Any]:
    """The fields of a ``bench.crossover`` record, with the crossover and the speed-ups derived.

    ``policy_step_again``: the CPU step timed a second time later in the run (notebook 00's
    section 5); where given, the record keeps it, so that a comparison with another run can
    use the range of the two timings rather than one timing's IQR."""
    again = {} if policy_step_again is None else {"policy_step_again": policy_step_again}
    return {
        "devices": [str(d) for d in devices],
        "grid": grid,
        "crossover_width_by_batch": crossover_widths(grid),
        "policy_step": policy_step,
        "policy_step_speedup": ratios(policy_step),
        "value_update": value_update,
        "value_update_speedup": ratios(value_update),
        "timers": timers,
    } | again
