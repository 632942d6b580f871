"""Our pipeline's rollout workers against TorchRL's multi-process collectors: env steps/s.

What: rollout collection alone, with a fixed policy (a 64x64 Tanh actor-critic at its
initial weights: no learner, no update), on CartPole-v1, each worker process stepping
``--envs`` (8) Gymnasium environments in a ``SyncVectorEnv`` (ours autoresets them in the
same step, as our PPO does) for
``--steps`` (128) steps per rollout, one PyTorch thread per process, at 1 and at 2
workers:

* ``ours``: the overlapped pipeline's process engine (``ProcessEngine``: spawned
  workers, each PPO's own ``Collector`` filling shared-memory rollout slots, two slots
  per worker); this process publishes the weights once, keeps every slot requested,
  and copies each filled rollout out of its slot (``engine.read``), as the learner does;
* ``torchrl-sync``: ``MultiSyncCollector``, one batch of every worker's rollout at a time;
* ``torchrl-async``: ``MultiAsyncCollector``, each worker's rollout as it comes;
  both over ``GymWrapper`` of the same ``SyncVectorEnv`` (its autoreset DISABLED, the
  mode TorchRL prefers: it resets the ended environments itself), the policy a
  ``ProbabilisticActor`` (categorical, with log-probabilities) and a ``ValueOperator``,
  so that both sides compute what PPO stores (actions, log-probabilities, values).
  Ours also computes GAE advantages in the worker; TorchRL's collectors do not.

Timed: in the main process, after ``2 x workers`` rollouts of warm-up, the env steps of
the next ``--rollouts x workers`` rollouts to arrive over the seconds they took (worker
start-up excluded). Each contestant is a fresh process per round, every process it
starts ended with it. The processes are not pinned by default (``--core none``): the
workers need cores of their own. Sample Factory is raced only if it installs beside
Gymnasium 1.x; the record says why not (checked by a pip dry run).

    .venv/bin/python benchmarks/collection_peers.py --quick       # smoke run
    .venv/bin/python benchmarks/collection_peers.py               # 5 rounds
    .venv/bin/python benchmarks/collection_peers.py --reference   # also data/reference/<machine>/

The first run builds build/peers/torchrl. Writes data/results/bench.collection_peers.json.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import peer_venvs
import race

ENV_ID = "CartPole-v1"
HIDDEN = 64
SLOTS = 2
SAMPLE_FACTORY = ["sample-factory==2.1.1", "gymnasium==1.4.0"]
"""Sample Factory's newest release beside our Gymnasium: raced only if pip can resolve them."""


def steady(arrivals: list[tuple[float, int]], warmup: int) -> float:
    """Env steps per second of the rollouts after the first ``warmup`` (time, env steps)."""
    (began, _), timed = arrivals[warmup - 1], arrivals[warmup:]
    return sum(steps for _, steps in timed) / (timed[-1][0] - began)


def ours(job: dict[str, Any]) -> race.Metrics:
    """The pipeline's process engine, every slot kept busy, each rollout copied out."""
    import torch
    from our_parts import (
        FlatParameters,
        PPOConfig,
        ProcessEngine,
        RolloutRequest,
        RolloutStorage,
        env_spec,
        make_policy,
    )

    torch.set_num_threads(job["threads"])
    workers, seed = job["workers"], job["seed"]
    config = PPOConfig.tuned(ENV_ID, num_envs=job["envs"], num_steps=job["steps"], hidden=HIDDEN)
    spec = env_spec(ENV_ID)
    torch.manual_seed(seed)
    weights = FlatParameters(make_policy(spec, config), with_grad=False).data  # the fixed policy
    began = time.perf_counter()
    engine = ProcessEngine(config, spec, seed, workers, SLOTS, weights.numel(), threads=1)
    startup = time.perf_counter() - began
    try:
        engine.publish(weights, 0)
        storage = RolloutStorage(
            config.num_steps, config.num_envs, spec, torch.device("cpu"), False
        )
        started = 0

        def request(worker: int, slot: int) -> None:
            nonlocal started
            now = time.time()  # the pipeline's clock
            engine.submit(RolloutRequest(started, worker, slot, now, now, 0))
            started += 1

        for worker in range(workers):
            for slot in range(SLOTS):
                request(worker, slot)
        arrivals = []
        for _ in range(job["warmup"] + job["rollouts"]):
            report = engine.next_report(120.0)
            if report is None:
                raise RuntimeError("no rollout arrived within 120 s")
            engine.read(report, storage)  # the rollout reaches this process
            request(report.worker, report.slot)
            arrivals.append((time.perf_counter(), config.batch_size))
    finally:
        engine.close()
    return {"steps_per_s": steady(arrivals, job["warmup"]), "startup_s": startup}


def torchrl_collector(job: dict[str, Any]) -> race.Metrics:
    """TorchRL's MultiSyncCollector or MultiAsyncCollector over the same vector envs."""
    import torch
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torch import nn
    from torch.distributions import Categorical
    from torchrl.collectors import MultiAsyncCollector, MultiSyncCollector
    from torchrl.modules import MLP, ProbabilisticActor, ValueOperator

    torch.set_num_threads(job["threads"])
    torch.manual_seed(job["seed"])
    workers, per_rollout = job["workers"], job["envs"] * job["steps"]
    mlp = {"in_features": 4, "num_cells": [HIDDEN, HIDDEN], "activation_class": nn.Tanh}
    logits = TensorDictModule(MLP(out_features=2, **mlp), ["observation"], ["logits"])
    actor = ProbabilisticActor(logits, ["logits"], ["action"], distribution_class=Categorical,
                               return_log_prob=True)  # fmt: skip
    policy = TensorDictSequential(actor, ValueOperator(MLP(out_features=1, **mlp), ["observation"]))
    sync = job["mode"] == "sync"
    collector = (MultiSyncCollector if sync else MultiAsyncCollector)(
        [VectorCartPole(job["envs"], job["seed"] + i) for i in range(workers)],
        policy,
        frames_per_batch=per_rollout * workers if sync else per_rollout,
        total_frames=-1,
        num_threads=job["threads"],
        num_sub_threads=1,
    )
    arrivals = []
    try:
        for batch in collector:  # sync: every worker's rollout at once; async: one at a time
            arrivals.append((time.perf_counter(), batch.numel()))
            if (
                sum(steps for _, steps in arrivals)
                >= (job["warmup"] + job["rollouts"]) * per_rollout
            ):
                break
    finally:
        collector.shutdown()
    warmup_batches = job["warmup"] // workers if sync else job["warmup"]
    return {"steps_per_s": steady(arrivals, warmup_batches)}


class VectorCartPole:
    """Makes, in a collector's worker, TorchRL's wrapper of a Gymnasium ``SyncVectorEnv``.

    A class, not a closure: the collector pickles it into its spawned workers.
    """

    def __init__(self, envs: int, seed: int) -> None:
        self.envs, self.seed = envs, seed

    def __call__(self) -> Any:
        import gymnasium as gym
        from torchrl.envs import GymWrapper

        vector = gym.vector.SyncVectorEnv(
            [lambda: gym.make(ENV_ID) for _ in range(self.envs)],
            # TorchRL's preferred mode: it resets the envs that ended itself, with a mask
            autoreset_mode=gym.vector.AutoresetMode.DISABLED,
        )
        env = GymWrapper(vector, categorical_action_encoding=True)
        env.set_seed(self.seed)
        return env


WORKERS = {"ours": ours, "torchrl": torchrl_collector}


def plan(args: Any) -> race.Plan:
    """Ours and TorchRL's two collectors, at 1 and 2 workers."""
    entries, pairs = [], []
    for workers in (1, 2):
        point = f"{workers} worker{'s' * (workers > 1)}"
        job = {"workers": workers, "envs": args.envs, "steps": args.steps,
               "warmup": 2 * workers, "rollouts": args.rollouts * workers}  # fmt: skip
        entries += [
            race.Entry(point, "ours", "ours", job),
            race.Entry(point, "torchrl-sync", "torchrl", {**job, "mode": "sync"}, "torchrl"),
            race.Entry(point, "torchrl-async", "torchrl", {**job, "mode": "async"}, "torchrl"),
        ]
        for peer in ("torchrl-sync", "torchrl-async"):
            pairs.append(race.Pair(point, "ours", peer, "steps_per_s", target=1.0))
    return race.Plan(
        kind="bench.collection_peers",
        script=Path(__file__).resolve(),
        entries=entries,
        pairs=pairs,
        fields={
            "env_id": ENV_ID,
            "envs_per_worker": args.envs,
            "steps_per_rollout": args.steps,
            "hidden": HIDDEN,
            "slots_per_worker": SLOTS,
        },
        timed={
            "ours": "ProcessEngine: env steps of the rollouts copied out after the warm-up, "
            "over the seconds since the last warm-up rollout arrived",
            "torchrl-sync": "MultiSyncCollector: the same, per yielded batch",
            "torchrl-async": "MultiAsyncCollector: the same, per yielded batch",
        },
        tag=None if args.threads == 1 else f"{args.threads}-threads",
    )


def arguments(argv: list[str] | None = None) -> Any:
    """The race's options (race.parser's and its own), ``--quick``'s budgets applied."""
    made = race.parser(__doc__.splitlines()[0], rounds=5, core="none")
    made.add_argument("--envs", type=int, default=8, help="environments per worker")
    made.add_argument("--steps", type=int, default=128, help="steps per rollout")
    made.add_argument("--rollouts", type=int, default=10, help="timed rollouts per worker")
    args = race.parse(made, argv)
    if args.quick:
        args.steps, args.rollouts = 32, 3
    return args


def sample_factory_notes() -> dict[str, str]:
    """Whether Sample Factory installs beside Gymnasium 1.x, from a pip dry run."""
    wanted = " with ".join(SAMPLE_FACTORY)
    why = peer_venvs.resolves(SAMPLE_FACTORY)
    note = f"not raced: pip cannot install {wanted}: {why}" if why else f"{wanted} resolve now"
    return {"sample-factory": note}


if __name__ == "__main__":
    race.main(arguments, plan, WORKERS, notes=sample_factory_notes)
