"""Our replay buffers against TorchRL's: adding and sampling transitions per second, bytes each.

What: Pendulum-shaped transitions (3 observation features, 1 action, a reward, the next
observation, terminated and truncated; episodes of 200 steps), a buffer of capacity
``--capacity`` (1e6) filled to the brim, on the CPU, at two points:

* ``uniform``: ``ours``, the package's tensor buffer (``make_buffer("tensor")``: one
  preallocated float32 row per transition, indices drawn on a CPU generator), against
  ``torchrl``: ``ReplayBuffer(storage=LazyTensorStorage(capacity),
  sampler=RandomSampler(), batch_size=256)``;
* ``trajectory``: ``ours``, the trajectory buffer (``make_buffer("trajectory")``: whole
  segments of ``--slice`` consecutive steps, sampled with replacement), against
  ``torchrl``: the same storage with ``SliceSampler(slice_len=--slice,
  end_key=("next", "done"))`` (its default, ``cache_values=False``: adds may come
  between samples, as in DDPG). The slice is 16, not the article's 20, so that a
  batch of 256 is whole slices for both.

Metrics, each in a fresh process per round, once the buffer is full (every add then
overwrites the oldest): ``add_per_s``, transitions added one at a time (ours: ``add``
of NumPy arrays as Gymnasium returns them, through the buffer study's ``feed``;
TorchRL: ``add`` of one of 100 single-transition TensorDicts made before the clock);
``sample_per_s``, transitions per second sampled in batches of ``--batch`` (256);
``bytes_per_transition``, storage over capacity (ours: the tensor's ``nbytes``, or what
tracemalloc saw the Python containers allocate, from the buffer study's ``fill``;
TorchRL: its storage TensorDict's ``bytes()``). Ratios ours / TorchRL for rates,
TorchRL / ours for bytes. Targets: ours >= 5x TorchRL's sampling, >= 10x its adding.

    .venv/bin/python benchmarks/buffer_peers.py --quick       # smoke run: capacity 1e5
    .venv/bin/python benchmarks/buffer_peers.py               # 5 rounds at 1e6
    .venv/bin/python benchmarks/buffer_peers.py --reference   # also data/reference/<machine>/

The first run builds build/peers/torchrl (a few minutes). Writes
data/results/bench.buffer_peers.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import race

OBS_DIM, ACTION_DIM, EPISODE = 3, 1, 200
ADDS_PER_CALL = 100
TARGETS = {("uniform", "sample_per_s"): 5.0, ("uniform", "add_per_s"): 10.0}


# --- the workers -----------------------------------------------------------------------------


def ours(job: dict[str, Any]) -> race.Metrics:
    """Our tensor or trajectory buffer, filled and timed as the buffer study does."""
    import torch
    from our_parts import buffer_designs, make_buffer

    torch.set_num_threads(job["threads"])
    capacity, seed = job["capacity"], job["seed"]
    data = buffer_designs.SyntheticTransitions(capacity, seed)
    buffer = make_buffer(
        job["design"], capacity, OBS_DIM, ACTION_DIM, segment_length=job["slice"], seed=seed
    )
    bytes_each = buffer_designs.fill(buffer, data)
    start = [capacity]

    def add() -> None:
        start[0] = data.feed(buffer, start[0], ADDS_PER_CALL)

    batch = job["batch"]
    adding = race.steady_rate(add, ADDS_PER_CALL, job["seconds"], job["repeats"])
    sampling = race.steady_rate(lambda: buffer.sample(batch), batch, job["seconds"], job["repeats"])
    return {
        "add_per_s": adding["per_s"],
        "sample_per_s": sampling["per_s"],
        "bytes_per_transition": bytes_each,
        "stored": len(buffer),
    }


def torchrl_buffer(job: dict[str, Any]) -> race.Metrics:
    """TorchRL's ReplayBuffer over a LazyTensorStorage, with a random or a slice sampler."""
    import torch
    from tensordict import TensorDict
    from torchrl.data import LazyTensorStorage, ReplayBuffer
    from torchrl.data.replay_buffers.samplers import RandomSampler, SliceSampler

    torch.set_num_threads(job["threads"])
    capacity, batch = job["capacity"], job["batch"]
    generator = torch.Generator().manual_seed(job["seed"])

    def transitions(count: int, first: int) -> TensorDict:
        """``count`` transitions in TorchRL's layout, steps ``first, first + 1, ...``."""
        steps = torch.arange(first, first + count)
        obs = torch.rand(count + 1, OBS_DIM, generator=generator) * 2 - 1
        ended = ((steps + 1) % EPISODE == 0)[:, None]  # truncated by the time limit
        return TensorDict(
            {
                "observation": obs[:-1],
                "action": torch.rand(count, ACTION_DIM, generator=generator) * 4 - 2,
                "next": {
                    "observation": obs[1:],
                    "reward": torch.rand(count, 1, generator=generator) * -16,
                    "terminated": torch.zeros(count, 1, dtype=torch.bool),
                    "truncated": ended,
                    "done": ended.clone(),
                },
            },
            batch_size=[count],
        )

    if job["sampler"] == "random":
        sampler = RandomSampler()
    else:
        sampler = SliceSampler(slice_len=job["slice"], end_key=("next", "done"))
    buffer = ReplayBuffer(storage=LazyTensorStorage(capacity), sampler=sampler, batch_size=batch)
    buffer.extend(transitions(capacity, 0))  # full: every add below overwrites the oldest
    singles = list(transitions(ADDS_PER_CALL, capacity).unbind(0))  # before the clock

    def add() -> None:
        for single in singles:
            buffer.add(single)

    adding = race.steady_rate(add, ADDS_PER_CALL, job["seconds"], job["repeats"])
    sampling = race.steady_rate(buffer.sample, batch, job["seconds"], job["repeats"])
    return {
        "add_per_s": adding["per_s"],
        "sample_per_s": sampling["per_s"],
        "bytes_per_transition": buffer.storage._storage.bytes() / capacity,  # its one TensorDict
        "stored": len(buffer),
    }


WORKERS = {"ours": ours, "torchrl": torchrl_buffer}


# --- the race --------------------------------------------------------------------------------


def plan(args: Any) -> race.Plan:
    """Two points (uniform, trajectory), ours and TorchRL at each, three metrics each."""
    job = {k: getattr(args, k) for k in ("capacity", "batch", "slice", "seconds", "repeats")}
    points = {"uniform": ("tensor", "random"), "trajectory": ("trajectory", "slice")}
    entries, pairs = [], []
    for point, (design, sampler) in points.items():
        entries += [
            race.Entry(point, "ours", "ours", {**job, "design": design}),
            race.Entry(point, "torchrl", "torchrl", {**job, "sampler": sampler}, venv="torchrl"),
        ]
        pairs += [
            race.Pair(point, "ours", "torchrl", metric, target=TARGETS.get((point, metric)))
            for metric in ("sample_per_s", "add_per_s")
        ]
        pairs.append(
            race.Pair(point, "ours", "torchrl", "bytes_per_transition", higher_is_better=False)
        )
    return race.Plan(
        kind="bench.buffer_peers",
        script=Path(__file__).resolve(),
        entries=entries,
        pairs=pairs,
        fields={
            **job,
            "obs_dim": OBS_DIM,
            "action_dim": ACTION_DIM,
            "adds_per_call": ADDS_PER_CALL,
            "device": "cpu",
        },
        timed={
            "ours": "buffer_designs.SyntheticTransitions.feed (100 adds of NumPy arrays) and "
            "buffer.sample(batch), after buffer_designs.fill",
            "torchrl": "100 ReplayBuffer.add(TensorDict) of prebuilt transitions, and "
            "ReplayBuffer.sample(), after one extend to capacity",
        },
        tag=None if args.threads == 1 else f"{args.threads}-threads",
    )


def arguments(argv: list[str] | None = None) -> Any:
    """The race's options (race.parser's and its own), ``--quick``'s budgets applied."""
    made = race.parser(__doc__.splitlines()[0], rounds=5)
    made.add_argument("--capacity", type=int, default=1_000_000, help="transitions held")
    made.add_argument("--batch", type=int, default=256, help="transitions per sample")
    made.add_argument("--slice", type=int, default=16, help="steps per trajectory slice")
    made.add_argument("--seconds", type=float, default=0.3, help="seconds per timed repeat")
    made.add_argument("--repeats", type=int, default=7, help="timed repeats per metric")
    args = race.parse(made, argv)
    if args.batch % args.slice:
        made.error(f"--batch {args.batch} is not whole slices of --slice {args.slice}")
    if args.quick:
        args.capacity, args.seconds, args.repeats = 100_000, 0.05, 3
    return args


if __name__ == "__main__":
    race.main(arguments, plan, WORKERS)
