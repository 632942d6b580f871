"""Our GAIL discriminator's update against TorchRL's GAILLoss: updates per second, same rows.

What: one discriminator update, on the CPU, at the same rows per update and width: a
two-layer tanh MLP on (state, action) of HalfCheetah-v5 (17 + 6 numbers), Adam at 3e-4,
fed the expert's demonstrations (``data/gail/halfcheetah/``) as expert rows and the same
states with uniform random actions as policy rows, 32 such batches drawn before the clock
and taken in turn. Points: ``--rows`` (256: TorchRL's GAIL example; 1,024: tianshou's and
the series'; 8,192: imitation's tuned HalfCheetah), at ``--width`` (64), with the gradient
penalty off, and at 1,024 rows with it on (weight 10):

* ``ours``: ``DiscriminatorLearner.update`` (``rl/gail/discriminator.py``): binary
  cross-entropy on logits, ``loss.backward()``, ``torch.optim.Adam``;
* ``torchrl``: ``GAILLoss(TensorDictModule(mlp + sigmoid, in_keys=["observation",
  "action"], out_keys=["d_logits"]), use_grad_penalty=...)`` on a TensorDict of expert and
  ``collector_*`` rows, ``loss["loss"].backward()``, ``torch.optim.Adam``.

Metric: ``updates_per_s``, each contestant in a fresh process per round, pinned to one
core, one thread. Ratio ours / TorchRL.

    .venv/bin/python benchmarks/gail_peers.py --quick       # smoke run
    .venv/bin/python benchmarks/gail_peers.py               # 5 rounds
    .venv/bin/python benchmarks/gail_peers.py --reference   # also data/reference/<machine>/

The first run builds build/peers/torchrl (a minute). Writes data/results/bench.gail_peers.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import race

DEMONSTRATIONS = Path(__file__).resolve().parents[1] / "data/gail/halfcheetah/demonstrations.npz"
OBS_DIM, ACTION_DIM, BATCHES, LR, PENALTY = 17, 6, 32, 3e-4, 10.0


def _batches(job: dict[str, Any]) -> list[tuple[Any, Any]]:
    """``BATCHES`` pairs of (expert rows, policy rows), (rows, 23) float32 tensors."""
    import numpy as np
    import torch

    with np.load(job["demonstrations"]) as found:
        obs, actions = found["obs"], found["actions"]
    rng = np.random.default_rng(job["seed"])
    pairs = []
    for _ in range(BATCHES):
        picks = rng.integers(0, len(obs), size=(2, job["rows"]))
        expert = np.concatenate([obs[picks[0]], actions[picks[0]]], axis=1)
        random_actions = rng.uniform(-1, 1, size=(job["rows"], ACTION_DIM))
        policy = np.concatenate([obs[picks[1]], random_actions], axis=1)
        pairs.append(tuple(torch.as_tensor(x, dtype=torch.float32) for x in (expert, policy)))
    return pairs


def ours(job: dict[str, Any]) -> race.Metrics:
    """Our discriminator's update, as GAIL's trainer calls it."""
    import torch
    from our_parts import DiscriminatorLearner

    torch.set_num_threads(job["threads"])
    torch.manual_seed(job["seed"])
    learner = DiscriminatorLearner(OBS_DIM, ACTION_DIM, job["width"], LR, job["penalty"], "cpu")
    pairs, turn = _batches(job), [0]

    def update() -> None:
        expert, policy = pairs[turn[0] % BATCHES]
        turn[0] += 1
        learner.update(expert, policy)

    rate = race.steady_rate(update, 1, job["seconds"], job["repeats"])
    return {"updates_per_s": rate["per_s"]}


def torchrl_gail(job: dict[str, Any]) -> race.Metrics:
    """TorchRL's GAILLoss on the same rows, with a discriminator of the same shape."""
    import torch
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.objectives import GAILLoss

    torch.set_num_threads(job["threads"])
    torch.manual_seed(job["seed"])
    width = job["width"]

    class Discriminator(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(OBS_DIM + ACTION_DIM, width), nn.Tanh(), nn.Linear(width, width),
                nn.Tanh(), nn.Linear(width, 1), nn.Sigmoid(),
            )  # fmt: skip

        def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
            return self.net(torch.cat([obs, action], -1))  # GAILLoss takes probabilities

    module = TensorDictModule(
        Discriminator(), in_keys=["observation", "action"], out_keys=["d_logits"]
    )
    loss = GAILLoss(module, use_grad_penalty=job["penalty"] > 0, gp_lambda=PENALTY)
    optimizer = torch.optim.Adam(loss.parameters(), lr=LR)
    rows = job["rows"]
    data = [
        TensorDict(
            {
                "observation": expert[:, :OBS_DIM],
                "action": expert[:, OBS_DIM:],
                "collector_observation": policy[:, :OBS_DIM],
                "collector_action": policy[:, OBS_DIM:],
            },
            batch_size=[rows],
        )
        for expert, policy in _batches(job)
    ]
    turn = [0]

    def update() -> None:
        out = loss(data[turn[0] % BATCHES])
        turn[0] += 1
        optimizer.zero_grad()
        out["loss"].backward()
        optimizer.step()

    rate = race.steady_rate(update, 1, job["seconds"], job["repeats"])
    return {"updates_per_s": rate["per_s"]}


WORKERS = {"ours": ours, "torchrl": torchrl_gail}


def plan(args: Any) -> race.Plan:
    """One point per rows per update (penalty off), and 1,024 rows with the penalty on."""
    job = {"width": args.width, "seconds": args.seconds, "repeats": args.repeats,
           "demonstrations": str(DEMONSTRATIONS)}  # fmt: skip
    points = {f"{rows} rows": (rows, 0.0) for rows in args.rows}
    points["1024 rows, penalty"] = (1024, PENALTY)
    entries, pairs = [], []
    for point, (rows, penalty) in points.items():
        mine = {**job, "rows": rows, "penalty": penalty}
        entries += [
            race.Entry(point, "ours", "ours", mine),
            race.Entry(point, "torchrl", "torchrl", mine, venv="torchrl"),
        ]
        pairs.append(race.Pair(point, "ours", "torchrl", "updates_per_s"))
    return race.Plan(
        kind="bench.gail_peers",
        script=Path(__file__).resolve(),
        entries=entries,
        pairs=pairs,
        fields={
            **job,
            "rows": list(args.rows),
            "obs_dim": OBS_DIM,
            "action_dim": ACTION_DIM,
            "lr": LR,
            "penalty_weight": PENALTY,
            "device": "cpu",
        },
        timed={
            "ours": "DiscriminatorLearner.update(expert, policy): BCE on logits, backward, Adam",
            "torchrl": "GAILLoss(TensorDict) with a sigmoid discriminator, "
            "loss['loss'].backward(), Adam",
        },
        tag=None if args.threads == 1 else f"{args.threads}-threads",
    )


def arguments(argv: list[str] | None = None) -> Any:
    """The race's options (race.parser's and its own), ``--quick``'s budgets applied."""
    made = race.parser(__doc__.splitlines()[0], rounds=5)
    made.add_argument("--rows", type=int, nargs="+", default=[256, 1024, 8192])
    made.add_argument("--width", type=int, default=64, help="units per hidden layer")
    made.add_argument("--seconds", type=float, default=0.3, help="seconds per timed repeat")
    made.add_argument("--repeats", type=int, default=7, help="timed repeats")
    args = race.parse(made, argv)
    if args.quick:
        args.rows, args.seconds, args.repeats = [256], 0.05, 3
    return args


if __name__ == "__main__":
    race.main(arguments, plan, WORKERS)
