"""Where compiling pays: each piece of PPO eager vs compiled (vs CUDA-graphed), and whole runs.

Small-network RL spends its time on the fixed cost of each PyTorch call. Compiling
removes calls (fuses them into generated kernels) but adds a guard check per call and
a compile before the first: it pays where one call holds many operations and loses
where a call is tiny. This study measures that, per piece and end to end:

* :func:`piece_rows`: one piece at several sizes, every mode side by side (interleaved
  repeats): ``act`` (the actor-critic's sampling step, at a batch of observations),
  ``env_step`` (batched CartPole, at a number of environments) and ``update`` (one PPO
  minibatch step: its gather from the rollout, loss, backward, clipping and Adam, at a
  minibatch size). Its rows (:class:`~.compile_rows.PieceRow`) hold ``piece``, ``mode``,
  ``device``, ``size``, ``seconds`` (median per call), ``iqr_s`` and ``compile_seconds`` (the
  first call's seconds over a steady call's: where the compiling happens).
* :func:`~.compile_rows.speedup_rows`: each mode's speed-up over eager with the range of
  the paired repeats, and the calls after which compiling paid for itself.
* :func:`forward_grid_rows` and :func:`~.compile_rows.crossovers_by_mode`: notebook 00's
  width x batch grid of an MLP forward in every mode, and how far the accelerator's
  crossover moves once the launch overhead is compiled (or graphed) away.
* :func:`ppo_rows`: PPO trained a few iterations under one placement in each mode,
  interleaved: steady seconds per iteration, env steps per second, the first iteration's
  seconds (where both pieces compile) and the iterations to break even.
* :func:`ddpg_rows`: DDPG (one update per environment step) in each mode, interleaved: the
  same fields per update step.
* :func:`~.compile_breakdown.step_breakdown`: where a compiled minibatch step's time goes
  on the CPU: its matrix products (arithmetic that no compiler removes) against the rest.

The rows are typed, and read without timing anything, in :mod:`.compile_rows`, which also
writes them as a ``bench.compile`` record's fields and reads them back.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from hetero_tutorial.core.devices import resolve_device, synchronize
from hetero_tutorial.core.errors import UsageError, require_positive
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import Spread, compare, torch_threads
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer
from hetero_tutorial.rl.envs.batched import make_batched_env
from hetero_tutorial.rl.envs.spec import env_spec
from hetero_tutorial.rl.nets import DiscreteActorCritic, mlp
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.learner import PPOLearner
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.rl.ppo.trainer import PPOTrainer
from hetero_tutorial.speed.compiler import (
    break_even_iterations,
    compile_switches,
    compile_unavailable,
    compiled,
)
from hetero_tutorial.speed.flat import FlatParameters
from hetero_tutorial.studies.compile_rows import GridRow, PieceRow, RunRow, StepTrace
from hetero_tutorial.studies.crossover import GRID_IN_FEATURES, GRID_OUT_FEATURES

PIECES = ("act", "env_step", "update")
"""The pieces timed, in the order an iteration runs them."""
SIZES = {"act": (1, 8, 64, 1024), "env_step": (64, 4096, 65536), "update": (64, 256, 4096)}
"""Default sizes per piece: batch of observations, environments, minibatch."""
SIZE_NAMES = {"act": "batch", "env_step": "envs", "update": "minibatch"}
OBS_DIM, NUM_ACTIONS, HIDDEN = 4, 2, 64  # CartPole's, and the tuned 64x64 tanh actor-critic


def modes_here(device: torch.device) -> list[str]:
    """The modes worth timing on ``device``: eager, compile, and cudagraphs on CUDA (those
    that cannot run here are left out; :func:`compile_unavailable` says why)."""
    return ["eager"] + [m for m in ("compile", "cudagraphs") if not compile_unavailable(device, m)]


def explain_step(env: Any) -> StepTrace:
    """What TorchDynamo makes of one whole step of a batched env (``env.step``, reset here and
    stepped once with zeros), traced with the ``eager`` backend (no kernels generated):
    ``graphs`` recorded, ``graph_breaks`` and each break's ``reasons`` (Dynamo's words)."""
    from torch._dynamo.utils import counters

    env.reset(seed=0)
    actions = torch.zeros(env.action_space.shape, device=env.device)
    torch.compiler.reset()
    counters.clear()
    torch.compile(env.step, backend="eager")(actions)
    breaks = dict(counters["graph_break"])
    found = StepTrace(
        graphs=counters["stats"]["unique_graphs"],
        graph_breaks=sum(breaks.values()),
        reasons=[reason.strip() for reason in breaks],
    )
    torch.compiler.reset()  # these traces are not the compiled pieces': forget them
    return found


def with_iterations(config: PPOConfig, timed: int) -> PPOConfig:
    """``config`` with a budget of exactly one first iteration and ``timed`` steady ones."""
    return replace(config, total_steps=(1 + timed) * config.batch_size)


def _act_call(size: int, mode: str, device: torch.device) -> Callable[[], Any]:
    torch.manual_seed(0)
    policy = DiscreteActorCritic(OBS_DIM, NUM_ACTIONS, HIDDEN).to(device)
    act = compiled(policy.act, mode, device, "the actor's act")
    obs = torch.randn(size, OBS_DIM, device=device)
    noise = policy.sample_noise((size,), torch.Generator(device).manual_seed(0))

    def call() -> Any:
        with torch.inference_mode():
            return act(obs, noise)

    return call


def _env_step_call(size: int, mode: str, device: torch.device) -> Callable[[], Any]:
    env = make_batched_env(
        "CartPole-v1", size, device, check_actions=False, **compile_switches(mode)
    )
    env.reset(seed=0)
    actions = torch.randint(0, 2, (size,), device=device).float()
    return lambda: env.step(actions)


def _update_call(size: int, mode: str, device: torch.device) -> Callable[[], Any]:
    learner, rollout, storage = minibatch_learner(size, mode, device)
    picks = torch.randperm(size, device=device)[None]  # one minibatch, gathered as in training
    return lambda: learner.step(rollout, picks, storage, learner.clip_tensor)


def minibatch_learner(
    size: int, mode: str, device: torch.device
) -> tuple[PPOLearner, list[torch.Tensor], RolloutStorage]:
    """A PPO learner of the series' CartPole network, and a random flat rollout of ``size``
    transitions (one minibatch's) with its storage's layout."""
    torch.manual_seed(0)
    config = PPOConfig.tuned("CartPole-v1", minibatch_size=size, **compile_switches(mode))
    policy = DiscreteActorCritic(OBS_DIM, NUM_ACTIONS, HIDDEN).to(device)
    learner = PPOLearner(policy, FlatParameters(policy), config, seed=0)
    storage = RolloutStorage(1, size, env_spec("CartPole-v1"), device, pin=False)
    storage.obs.normal_()
    storage.actions.random_(0, NUM_ACTIONS)
    storage.logprobs.fill_(-0.69)
    for field in (storage.values, storage.advantages, storage.returns):
        field.normal_()
    return learner, storage.flat_batch(device, non_blocking=False), storage


CALLS = {"act": _act_call, "env_step": _env_step_call, "update": _update_call}


def _timed_first(call: Callable[[], Any], device: torch.device) -> float:
    synchronize(device)
    began = time.perf_counter()
    call()
    synchronize(device)
    return time.perf_counter() - began


@guarded("the compiled pieces")
def piece_rows(
    piece: str,
    sizes: Sequence[int] | None = None,
    device: torch.device | str = "cpu",
    modes: Sequence[str] | None = None,
    repeats: int = 7,
    seconds_per_repeat: float = 0.02,
    threads: int | None = 1,
) -> list[PieceRow]:
    """Every mode of ``piece`` at each size, timed side by side; one row per mode and size.

    Each mode's first call is timed alone (it compiles; the compiler itself started before,
    untimed, :func:`_start_compiler`); then the modes are warmed up and
    their repeats interleaved, each repeat ``seconds_per_repeat`` long (calls per repeat
    from the first mode's call time). ``samples`` holds each repeat's seconds per call, in
    order, so that :func:`speedup_rows` can pair them.
    """
    if piece not in CALLS:
        raise UsageError(f"unknown piece {piece!r}; choose one of {', '.join(PIECES)}")
    device = resolve_device(device)
    options = (list(modes or modes_here(device)), repeats, seconds_per_repeat, threads)
    return _timed_rows(piece, sizes or SIZES[piece], CALLS[piece], device, *options)


_STARTED: set[tuple[str, str]] = set()
"""The (mode, device) pairs whose compiler this process has started (:func:`_start_compiler`)."""


def _start_compiler(modes: Sequence[str], device: torch.device) -> None:
    """Compile a one-line function once per mode and device, untimed: the compiler's one-off
    start (importing Inductor, probing the C++ toolchain) is no piece's cost, and would
    otherwise be charged to whichever piece is timed first."""
    for mode in modes:
        if mode == "eager" or (mode, str(device)) in _STARTED:
            continue
        if compile_unavailable(device, mode) is None:
            start = compiled(lambda x: x * 2.0 + 1.0, mode, device, "the compiler's start")
            ones = torch.ones(4, device=device)
            for _ in range(2):  # the first call compiles, the second runs the compiled code
                start(ones)
            synchronize(device)
        _STARTED.add((mode, str(device)))


def _timed_rows(
    piece: str,
    sizes: Sequence[int],
    make_call: Callable[[int, str, torch.device], Callable[[], Any]],
    device: torch.device,
    modes: list[str],
    repeats: int,
    seconds_per_repeat: float,
    threads: int | None,
) -> list[PieceRow]:
    rows = []
    with torch_threads(threads):
        _start_compiler(modes, device)
        for size in sizes:
            calls = {mode: make_call(size, mode, device) for mode in modes}
            first = {mode: _timed_first(call, device) for mode, call in calls.items()}
            once = _timed_first(calls[modes[0]], device)
            inner = max(1, int(seconds_per_repeat / max(once, 1e-6)))
            timings = compare(calls, device=device, warmup=2, repeats=repeats, inner=inner)
            for mode, timing in timings.items():
                steady = timing.median
                compile_seconds = 0.0 if mode == "eager" else max(0.0, first[mode] - steady)
                rows.append(
                    PieceRow(
                        piece=piece,
                        mode=mode,
                        device=str(device),
                        size=size,
                        seconds=steady,
                        iqr_s=timing.iqr,
                        samples=list(timing.samples),
                        first_call_seconds=first[mode],
                        compile_seconds=compile_seconds,
                    )
                )
    return rows


def _forward_call(size: int, mode: str, device: torch.device, width: int) -> Callable[[], Any]:
    torch.manual_seed(0)
    net = mlp(GRID_IN_FEATURES, width, GRID_OUT_FEATURES).eval().to(device)
    forward = compiled(net, mode, device, "the grid's MLP forward")
    inputs = torch.randn(size, GRID_IN_FEATURES, device=device)

    def call() -> Any:
        with torch.inference_mode():
            return forward(inputs)

    return call


@guarded("the compiled forward grid")
def forward_grid_rows(
    widths: Sequence[int],
    batch_sizes: Sequence[int],
    devices: Sequence[torch.device | str],
    repeats: int = 5,
    seconds_per_repeat: float = 0.01,
    threads: int | None = 1,
) -> list[GridRow]:
    """Notebook 00's MLP forward over width x batch, in every mode on every device: rows as
    :func:`piece_rows`'s (piece ``forward``), with ``width`` and ``batch_size`` added.

    The inputs live on the device (no copies): what is timed is the forward itself, the
    part compiling can change.
    """
    rows = []
    for device in (resolve_device(d) for d in devices):
        for width in widths:
            make = functools.partial(_forward_call, width=width)
            found = _timed_rows(
                "forward",
                batch_sizes,
                make,
                device,
                modes_here(device),
                repeats,
                seconds_per_repeat,
                threads,
            )
            rows += [GridRow(**row.fields(), width=width, batch_size=row.size) for row in found]
    return rows


@guarded("the compiled pieces")
def pieces_rows(
    sizes: Mapping[str, Sequence[int]],
    device: torch.device | str = "cpu",
    repeats: int = 7,
    threads: int | None = 1,
) -> list[PieceRow]:
    """:func:`piece_rows` of each piece at its ``sizes`` (by piece name), as one study: a
    verdict printed after them all is withheld where any of them ran on a busy machine."""
    return [
        row
        for piece, at in sizes.items()
        for row in piece_rows(piece, at, device, repeats=repeats, threads=threads)
    ]


def _require_eager(modes: Sequence[str]) -> None:
    """A run's rows are ratios to its eager run: refuse modes without one."""
    if "eager" not in modes:
        raise UsageError(f"the modes must include 'eager' (the rows are ratios to it); got {modes}")


def _run_rows(
    piece: str,
    unit: str,
    placement: Placement,
    size: int,
    steps_per_unit: int,
    steady: dict[str, list[float]],
    first: dict[str, float],
    graph_skips: dict[str, int],
) -> list[RunRow]:
    """One row per mode of a run timed in ``unit``s (PPO's iterations, DDPG's updates, each
    ``steps_per_unit`` environment steps): ``steady`` holds each mode's seconds per unit,
    turn by turn with eager's (an iteration per turn, or a turn of updates); ``first`` the
    first unit's seconds, where compiling happens."""
    per = "iteration" if unit == "iteration" else "turn"
    device = str(placement.update_device)
    eager, eager_first = steady["eager"], first["eager"]
    eager_median = float(np.median(eager))
    rows = []
    for mode, seconds in steady.items():
        median = float(np.median(seconds))
        compiling = mode != "eager"
        spread = Spread.of_ratios([e / s for e, s in zip(eager, seconds, strict=True)], per=per)
        extra = max(0.0, first[mode] - eager_first) if compiling else 0.0
        rows.append(
            RunRow(
                piece=piece,
                unit=unit,
                device=device,
                size=size,
                mode=mode,
                seconds=median,
                env_steps_per_s=steps_per_unit / median,
                first_iteration_s=first[mode],
                compile_seconds=extra,
                speedup=spread.value if compiling else 1.0,
                low=spread.low if compiling else None,
                high=spread.high if compiling else None,
                break_even_iterations=break_even_iterations(extra, eager_median, median)
                if compiling
                else None,
                graph_skips=graph_skips[mode],
                repeats=spread.count if compiling else None,
            )
        )
    return rows


@guarded("the compiled PPO runs")
def ppo_rows(
    config: PPOConfig,
    placement: Placement,
    modes: Sequence[str],
    timed: int = 5,
    seed: int = 0,
    threads: int | None = 1,
) -> list[RunRow]:
    """PPO under ``placement`` in each mode (eager among them): the first iteration (where
    compiling happens) and ``timed`` steady iterations, interleaved across modes; one row
    per mode.

    ``seconds`` is the median steady iteration; ``speedup``, ``low`` and ``high`` the
    median and range of each steady iteration's eager seconds over the mode's, paired by
    turn; ``break_even_iterations`` the iterations after which the first iteration's extra
    seconds were paid back.
    """
    _require_eager(modes)
    total = 1 + timed
    if config.num_iterations < total:
        raise UsageError(f"the config runs {config.num_iterations} iterations; need {total}")
    with torch_threads(threads):
        trainers = {
            m: PPOTrainer(replace(config, **compile_switches(m)), placement, seed) for m in modes
        }
        for _ in range(total):
            for trainer in trainers.values():
                trainer.run_iteration()
        for trainer in trainers.values():
            trainer.close()
    return _run_rows(
        f"ppo-{placement.name}",
        "iteration",
        placement,
        config.num_envs,
        config.batch_size,
        {m: t.iteration_seconds[1:] for m, t in trainers.items()},
        {m: t.iteration_seconds[0] for m, t in trainers.items()},
        {m: sum(piece.graph_skips for piece in t.compiled_pieces) for m, t in trainers.items()},
    )


@guarded("the compiled DDPG runs")
def ddpg_rows(
    config: DDPGConfig,
    placement: Placement,
    modes: Sequence[str],
    timed_steps: int = 200,
    chunk: int = 20,
    seed: int = 0,
    threads: int | None = 1,
) -> list[RunRow]:
    """DDPG under ``placement`` in each mode (eager among them): the first update (where
    compiling happens), then ``timed_steps`` steps with an update each, ``chunk`` steps per
    mode in turn; one row per mode, as :func:`ppo_rows`'s with an update step in place of
    an iteration (``size``: the batch of an update; ``first_iteration_s``: the step of the
    first update). The runs stop there (``config.total_steps`` is set to fit). A chunk of 20
    gives quick mode's 100 steps the five turns a verdict needs.
    """
    require_positive(timed_steps=timed_steps, chunk=chunk)
    _require_eager(modes)
    steps = config.learning_starts + 1 + timed_steps + config.count_copies_steps
    trainers = {
        m: DDPGTrainer(
            replace(config, **compile_switches(m), total_steps=steps),
            placement,
            seed,
            threads=threads,
        )
        for m in modes
    }
    for trainer in trainers.values():
        trainer.advance(config.learning_starts + 1)  # random actions, then the first update
    for done in range(0, timed_steps, chunk):
        for trainer in trainers.values():
            trainer.advance(min(chunk, timed_steps - done))
    return _run_rows(
        f"ddpg-{placement.name}",
        "update",
        placement,
        config.batch_size,
        1,
        {m: [1 / rate for rate in t.chunk_steps_per_s] for m, t in trainers.items()},
        {m: t.first_update_seconds or 0.0 for m, t in trainers.items()},
        {m: t.learner.step.graph_skips for m, t in trainers.items()},
    )
