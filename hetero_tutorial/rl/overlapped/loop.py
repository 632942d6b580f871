"""PPO with rollout and update at the same time: rollout workers run while the learner learns.

The sequential hybrid placement (:class:`~hetero_tutorial.rl.ppo.trainer.PPOTrainer`) takes
turns: the CPU collects a rollout while the update device waits, then the update device
updates while the CPU waits. Here ``workers`` processes (or Ray actors) collect
rollouts *while* the learner updates on the previous ones, as IMPALA, Sample Factory
and RLlib do. The price is **policy lag**: a rollout collected with weights version
``v`` (the weights after ``v`` updates) and learned from at version ``V`` has lag
``V - v``. PPO tolerates a little, because its loss already compares the learner with
the policy that acted (the stored behaviour log-probabilities), and its clipping limits
how far one update follows them; ``max_policy_lag`` bounds it (default 1).

The learner's loop, in the order it runs (:func:`train_overlapped`):

1. **start** the workers (each: CPU environments, a CPU actor copy, PPO's ``GymCollector``)
   and **publish** the initial weights as version 0;
2. **hand out** rollouts: the lag schedule (:mod:`~hetero_tutorial.rl.overlapped.schedule`)
   says which may start now, on which worker and slot, with the newest weights version;
   the rollout itself and its advantages are PPO's own code
   (:mod:`~hetero_tutorial.rl.overlapped.worker`);
3. **wait** for a filled rollout (the learner's idle time);
4. **judge its lag**: the schedule keeps it, or drops it as too stale (counted);
5. **transfer**: copy it out of its slot (the worker may refill the slot at once), to the
   update device;
6. **update**: PPO's :class:`~hetero_tutorial.rl.ppo.learner.PPOLearner`, with the learning
   rate annealed by the rollouts done so far;
7. **weight sync**: publish the new weights as the next version; repeat from 2.

With one worker and ``max_policy_lag=0`` every rollout waits for the update before it,
which is the sequential placement exactly: same seeds (the worker's collector is seeded as
``PPOTrainer``'s, the learner's generator as its learner's), same annealing, the same
decisions, and on the CPU the same weights bit for bit (tested). The engines that move
rollouts and weights sit behind one interface (:mod:`~hetero_tutorial.rl.overlapped.engine`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from hetero_tutorial.core.errors import UsageError, require_positive
from hetero_tutorial.core.machine import usable_cores
from hetero_tutorial.core.placement import Placement, as_placement, require_data_devices
from hetero_tutorial.core.timing import PhaseTimer, torch_threads
from hetero_tutorial.core.utilisation import UtilisationSampler
from hetero_tutorial.rl.envs.spec import env_spec
from hetero_tutorial.rl.overlapped.engine import BACKENDS, START_METHODS, Engine, make_engine
from hetero_tutorial.rl.overlapped.schedule import LagSchedule
from hetero_tutorial.rl.overlapped.timeline import (
    LEARNER,
    LEARNER_WAIT,
    OverlappedResult,
    Timeline,
    worker_name,
)
from hetero_tutorial.rl.overlapped.worker import CLOCK, Hook, RolloutReport, WorkerFailed
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.learner import PPOLearner, ratio_stats
from hetero_tutorial.rl.ppo.policy import make_policy, place_policy
from hetero_tutorial.rl.ppo.runs import PPOResult, policy_greedy_returns
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.rl.ppo.trainer import UPDATE_SEED_OFFSET


def default_workers() -> int:
    """One worker per spare core (the learner keeps one), at least one."""
    return max(1, usable_cores() - 1)


# --- 6. The update, watching how stale each rollout is ---------------------------------------


class LagNotingLearner(PPOLearner):
    """PPO's :class:`PPOLearner`, also noting how far the learner is from the behaviour policy
    when an update starts: the ratio of its first minibatch, before any step of this update.

    With lag 0 that ratio is exactly 1 (the learner *is* the behaviour policy); with lag
    1 it already differs, and PPO's clipping starts from there. The note costs a few
    tensor operations per update and changes nothing that is learned.
    """

    def extra_stats(self, first: tuple[torch.Tensor, ...]) -> dict[str, torch.Tensor]:
        """The first minibatch's ratio statistics, copied back with the update's own."""
        _, ratio, log_ratio = first
        start_kl, start_clipfrac = ratio_stats(ratio, log_ratio, self.clip_coef)
        return {"start_approx_kl": start_kl, "start_clipfrac": start_clipfrac}


# --- The run --------------------------------------------------------------------------------


def _check_placement(placement: Placement) -> None:
    """An overlapped run's workers are CPU processes stepping Gymnasium's environments."""
    require_data_devices(placement)
    if placement.batched_envs or placement.rollout_device.type != "cpu":
        what = (
            "batched tensor environments"
            if placement.batched_envs
            else f"a rollout on {placement.rollout_device}"
        )
        raise UsageError(
            f"an overlapped run's workers step Gymnasium's environments and act on the CPU, so "
            f"it cannot take {what} (placement {placement.name!r}). Its placement is "
            "placement('hybrid') (the learner on the update device); PPOTrainer runs the "
            "other placements."
        )


def _check(
    config: PPOConfig,
    placement: Placement,
    workers: int,
    threads: int,
    worker_threads: int,
    max_lag: int,
    backend: str,
    slots: int,
    start_method: str,
) -> None:
    config.validate()
    _check_placement(placement)
    require_positive(workers=workers, threads=threads, worker_threads=worker_threads)
    if slots < 2:
        raise UsageError(
            f"slots_per_worker must be at least 2 (got {slots}): a worker fills one slot "
            "while the learner copies another out"
        )
    if start_method not in START_METHODS:
        raise UsageError(
            f"start_method {start_method!r}: use one of {', '.join(START_METHODS)}; fork copies "
            "a process mid-flight, and a lock held by one of its threads deadlocks the child"
        )
    if max_lag < 0:
        raise UsageError(f"max_policy_lag must be 0 or more, got {max_lag}")
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if not config.flat_parameters:
        raise UsageError(
            "an overlapped run sends the weights to its workers as one flat tensor; "
            "use PPOConfig(flat_parameters=True) (the default)"
        )


def train_overlapped(
    config: PPOConfig,
    placement: Placement | str = "hybrid",
    seed: int = 0,
    *,
    workers: int | None = None,
    max_policy_lag: int = 1,
    backend: str = "mp",
    address: str | None = None,
    slots_per_worker: int | None = None,
    threads: int = 1,
    worker_threads: int = 1,
    eval_episodes: int = 10,
    progress: Callable[[int, int], None] | None = None,
    worker_hook: Hook | None = None,
    stall_timeout: float = 60.0,
    start_method: str = "spawn",
) -> OverlappedResult:
    """Train PPO with ``workers`` rollout workers running while the learner updates.

    ``placement`` (a placement or a preset's name): the learner runs on its
    ``update_device`` (default: the hybrid placement's, the accelerator where there is one);
    workers always run on the CPU, so a placement must put the rollout there, with
    Gymnasium's environments. ``workers``: default one per spare core. ``max_policy_lag``:
    the most updates a rollout's weights may be behind the learner's (0: synchronous).
    ``backend``: ``"mp"`` (processes on this machine) or ``"ray"`` (Ray actors: a Ray of
    its own on the loopback address, or the
    cluster at ``address``, e.g. ``"auto"``). ``slots_per_worker``: rollout slots per worker
    (default ``max(2, max_policy_lag + 1)``). ``threads``, ``worker_threads``: PyTorch
    threads of the learner and of each worker. ``eval_episodes``: greedy episodes after
    training. ``progress(done, total)`` follows the run. ``worker_hook(worker, rollout)``
    runs in a worker before each rollout (tests use it to fail or slow one).
    ``stall_timeout``: seconds with no rollout from live workers before the run is declared
    stuck.

    Raises :class:`~hetero_tutorial.rl.overlapped.worker.WorkerFailed` (a RuntimeError)
    naming the worker, with its traceback, if a worker raises or dies. Every worker is
    stopped when the run ends, however it ends (Ctrl-C included).
    """
    placement = as_placement(placement)
    workers = workers if workers is not None else default_workers()
    slots = slots_per_worker if slots_per_worker is not None else max(2, max_policy_lag + 1)
    _check(
        config,
        placement,
        workers,
        threads,
        worker_threads,
        max_policy_lag,
        backend,
        slots,
        start_method,
    )
    spec = env_spec(config.env_id)
    update_device = placement.update_device
    gpu = update_device if update_device.type == "cuda" else None
    with torch_threads(threads):
        with UtilisationSampler(gpu) as sampler:
            # 1. The learner, exactly as PPOTrainer builds it, and its storage for the transfer.
            torch.manual_seed(seed)
            learner_policy, _, params, _ = place_policy(make_policy(spec, config), placement)
            learner = LagNotingLearner(learner_policy, params, config, seed + UPDATE_SEED_OFFSET)
            storage = RolloutStorage(
                config.num_steps,
                config.num_envs,
                spec,
                placement.storage_device,
                placement.pin_storage,
            )
            timer = PhaseTimer(placement.devices)
            engine = make_engine(
                backend,
                address,
                config=config,
                spec=spec,
                seed=seed,
                workers=workers,
                slots_per_worker=slots,
                weights_size=params.data.numel(),
                threads=worker_threads,
                hook=worker_hook,
                start_method=start_method,
            )
            try:
                engine.publish(params.data, 0)
                timeline = Timeline()
                schedule = LagSchedule(
                    config.num_iterations, workers, slots, max_policy_lag, CLOCK()
                )
                loop = LearnerLoop(
                    config, placement, learner, storage, timer, engine, schedule, timeline
                )
                with sampler.section("learner"):
                    loop.run(stall_timeout, progress)
            finally:
                engine.close()
        eval_returns = (
            policy_greedy_returns(learner_policy, update_device, spec, eval_episodes, seed)
            if eval_episodes
            else []
        )
        run = PPOResult(
            config=config,
            placement=placement.name,
            seed=seed,
            env_steps=loop.collected,
            iteration_seconds=loop.iteration_seconds,
            phase_seconds=loop.phase_seconds(),
            copies={},
            episodes=loop.episodes,
            evaluations=[],
            eval_returns=eval_returns,
            utilisation=sampler.summary("learner"),  # after its exit read the last samples
            update_stats=loop.updates[-1] if loop.updates else {},
            threads=torch.get_num_threads(),
            policy=learner_policy,
        )
    return OverlappedResult(
        run=run,
        backend=backend,
        workers=workers,
        max_policy_lag=max_policy_lag,
        slots_per_worker=slots,
        cores=usable_cores(),
        startup_seconds=engine.startup_seconds,
        timeline=timeline.intervals,
        window=loop.window(),
        lags=loop.lags,
        dropped_lags=loop.dropped_lags,
        updates=loop.updates,
        worker_pids=list(engine.worker_pids),
        worker_cpu_percent=loop.worker_cpu_percent(workers),
    )


class LearnerLoop:
    """The learner's loop (steps 2-7 of the module docstring) and what it measures."""

    def __init__(
        self,
        config: PPOConfig,
        placement: Placement,
        learner: LagNotingLearner,
        storage: RolloutStorage,
        timer: PhaseTimer,
        engine: Engine,
        schedule: LagSchedule,
        timeline: Timeline,
    ) -> None:
        self.config, self.placement, self.learner = config, placement, learner
        self.storage = storage
        self.timer, self.engine, self.schedule, self.timeline = timer, engine, schedule, timeline
        self.collected = 0
        self.episodes: list[tuple[int, float]] = []
        self.lags: list[int] = []
        self.dropped_lags: list[int] = []
        self.updates: list[dict[str, float]] = []
        self.handled_at: list[float] = []
        self.iteration_seconds: list[float] = []
        self.worker_seconds: dict[str, float] = {}
        self.worker_cpu: dict[int, list[tuple[float, float]]] = {}

    def run(self, stall_timeout: float, progress: Callable[[int, int], None] | None) -> None:
        s, engine = self.schedule, self.engine
        last = CLOCK()
        while not s.finished:
            for request in s.ready():  # 2. hand out what the lag bound allows
                engine.submit(request)
            with self.timeline.interval(LEARNER, LEARNER_WAIT):  # 3. wait
                report = self.wait(stall_timeout)
            self.note(report)
            lag = s.lag(report.version)  # 4. the schedule judges its lag
            if not s.keeps(report.version):
                self.dropped_lags.append(lag)
                engine.discard(report)
                s.drop(report.worker, report.slot, CLOCK())
            else:
                with self.timeline.interval(LEARNER, "update"):
                    self.update(report, lag)
                s.finish(True, CLOCK())
            now = CLOCK()
            self.iteration_seconds.append(now - last)
            self.handled_at.append(now - self.timeline.origin)
            last = now
            if progress is not None:
                progress(s.done, s.total)

    def wait(self, stall_timeout: float) -> RolloutReport:
        waited = 0.0
        while True:
            report = self.engine.next_report(0.5)
            if report is not None:
                return report
            waited += 0.5
            if waited >= stall_timeout:
                raise WorkerFailed(
                    f"no rollout arrived for {stall_timeout:.0f} s although every worker is "
                    "alive; the workers may be stuck (raise stall_timeout for very long rollouts)"
                )

    def update(self, report: RolloutReport, lag: int) -> None:
        """Steps 5-7: transfer, update, weight sync (PPOTrainer's phases, timed the same way)."""
        s, placement = self.schedule, self.placement
        self.learner.anneal(s.done)  # by rollouts done, as PPOTrainer anneals by iteration
        with self.timer.phase("transfer"):
            self.storage.wait_for_copy_out()  # the last update's batch has left it
            self.engine.read(report, self.storage)  # slot -> the learner's storage
            s.release(report.worker, report.slot, CLOCK())
            batch = self.storage.flat_batch(placement.update_device, placement.pin_storage)
        for request in s.ready():  # the free slot may let a worker start at once
            self.engine.submit(request)
        with self.timer.phase("update"):
            stats = self.learner.update(batch, self.storage)
        with self.timer.phase("weight_sync"):
            self.engine.publish(self.learner.params.data, s.version + 1)
        self.lags.append(lag)
        self.updates.append({"lag": lag, **stats})

    def note(self, report: RolloutReport) -> None:
        """Record a report: its episodes (at global steps), its worker's intervals and CPU."""
        steps = self.config.batch_size
        self.episodes += [(self.collected + step, ret) for step, ret in report.episodes]
        self.collected += steps
        name = worker_name(report.worker)
        for kind, start, end in report.intervals:
            self.timeline.add(name, kind, max(start, self.timeline.origin), end)
            self.worker_seconds[kind] = self.worker_seconds.get(kind, 0.0) + end - start
        self.worker_cpu.setdefault(report.worker, []).append(
            (report.intervals[-1][2], report.cpu_seconds)
        )

    def window(self) -> tuple[float, float]:
        """The steady window: from the first handled rollout to the last."""
        if len(self.handled_at) < 2:
            return (0.0, self.handled_at[-1] if self.handled_at else 0.0)
        return (self.handled_at[0], self.handled_at[-1])

    def phase_seconds(self) -> dict[str, float]:
        waited = sum(
            i["end"] - i["start"] for i in self.timeline.intervals if i["kind"] == LEARNER_WAIT
        )
        workers = {f"worker {kind}": seconds for kind, seconds in self.worker_seconds.items()}
        return {**dict(self.timer.seconds), "learner wait_rollout": waited, **workers}

    def worker_cpu_percent(self, workers: int) -> list[float]:
        percents = []
        for w in range(workers):
            points = self.worker_cpu.get(w, [])
            if len(points) < 2:
                percents.append(float("nan"))
                continue
            (t0, c0), (t1, c1) = points[0], points[-1]
            percents.append(100 * (c1 - c0) / (t1 - t0) if t1 > t0 else float("nan"))
        return percents
