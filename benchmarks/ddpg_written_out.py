"""What leaving autograd would buy our DDPG: its update with the backward pass written out.

Our DDPG's speed target against Stable-Baselines3 is 1.25x its environment steps per
second (``ddpg_vs_sb3.py``; 1.5x was asked first). Ours uses autograd, as CleanRL
and SB3 do, and measures 1.2-1.4x. Most of a step is the update's ten 256x256x256
matrix products, which both libraries pay in the same MKL kernel, so the remaining
lever is everything around them. This script measures how much of it autograd accounts for: it swaps
in an update whose backward pass is written out by hand (the chain rule through
Linear-ReLU-Linear-ReLU-Linear, gradients written straight into the flat gradient
tensors, no graph), checks that one update from the same state gives the same
weights as autograd's, and then races three contestants interleaved
in one process, one PyTorch thread, one core: ours, ours written out, and SB3.

    .venv/bin/python benchmarks/ddpg_written_out.py               # 12 rounds, ~3 min
    .venv/bin/python benchmarks/ddpg_written_out.py --reference   # also data/reference/<machine>/

Writes data/results/bench.ddpg_written_out.json. The written-out update lives
here, not in the package: it is an experiment that prices a design choice
(readable autograd code versus speed), not the DDPG the notebooks teach.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Sequence

import torch
from ddpg_vs_sb3 import (
    BATCH_SIZE,
    HIDDEN,
    LEARNING_STARTS,
    interleaved,
    ours,
    race_parser,
    save,
    sb3,
    settle,
)
from torch import nn

from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.buffers import Batch
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.learner import DDPGLearner
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer

Linears = Sequence[nn.Linear]


def linears(net: nn.Sequential) -> list[nn.Linear]:
    """The Linear layers of an MLP built by ``hetero_tutorial.rl.nets.mlp`` (ReLU between them)."""
    layers = [m for m in net if isinstance(m, nn.Linear)]
    others = [m for m in net if not isinstance(m, nn.Linear | nn.ReLU)]
    if others:
        raise TypeError(f"written-out backward handles Linear and ReLU only, not {others}")
    return layers


def forward(layers: Linears, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The MLP's output and the input of each layer (what the backward pass needs)."""
    inputs = []
    for index, layer in enumerate(layers):
        inputs.append(x)
        x = torch.addmm(layer.bias, x, layer.weight.t())
        if index < len(layers) - 1:
            x = torch.relu(x)
    return x, inputs


def backward(
    layers: Linears,
    inputs: list[torch.Tensor],
    grad_out: torch.Tensor,
    weight_grads: bool = True,
    input_grad: bool = False,
) -> torch.Tensor | None:
    """Back-propagate ``grad_out``; write the weights' gradients into their ``.grad``.

    With ``input_grad``, return the gradient with respect to the MLP's input.
    """
    grad = grad_out
    for index in reversed(range(len(layers))):
        layer, x = layers[index], inputs[index]
        if weight_grads:
            if index == 0:  # few input columns: MKL is ~6x faster at the transposed product
                layer.weight.grad.copy_((x.t() @ grad).t())
            else:
                torch.mm(grad.t(), x, out=layer.weight.grad)
            torch.sum(grad, 0, out=layer.bias.grad)
        if index > 0:  # through the layer, then through the ReLU that produced its input
            grad = torch.ops.aten.threshold_backward(grad @ layer.weight, x, 0.0)
    return (layers[0].weight.t() @ grad.t()).t() if input_grad else None


def written_out_update(learner: DDPGLearner) -> Callable[[Batch], None]:
    """``learner.step`` with the same steps and losses, its backward passes written out."""
    actor, critic = linears(learner.actor.net), linears(learner.critic.net)
    actor_target = linears(learner.actor_target.net)
    critic_target = linears(learner.critic_target.net)
    scale, center = learner.actor.scale, learner.actor.center
    config = learner.config

    @torch.no_grad()
    def update(batch: Batch) -> None:
        size, obs_dim = batch.obs.shape
        pre_tanh, _ = forward(actor_target, batch.next_obs)
        next_action = center + scale * torch.tanh(pre_tanh)
        next_q, _ = forward(critic_target, torch.cat([batch.next_obs, next_action], -1))
        td_target = batch.reward + config.gamma * (1.0 - batch.terminated) * next_q.squeeze(-1)
        # Critic: d/dq of mean((q - target)^2).
        q, inputs = forward(critic, torch.cat([batch.obs, batch.action], -1))
        backward(critic, inputs, ((q.squeeze(-1) - td_target) * (2.0 / size)).unsqueeze(-1))
        learner.critic_optimizer.step([learner.critic_flat.grad])
        # Actor: d/dq of -mean(q) into the action, through tanh and the actor.
        pre_tanh, actor_inputs = forward(actor, batch.obs)
        tanh = torch.tanh(pre_tanh)
        q, inputs = forward(critic, torch.cat([batch.obs, center + scale * tanh], -1))
        grad_q = torch.full_like(q, -1.0 / size)
        grad_input = backward(critic, inputs, grad_q, weight_grads=False, input_grad=True)
        grad_pre_tanh = grad_input[:, obs_dim:] * scale * (1.0 - tanh * tanh)
        backward(actor, actor_inputs, grad_pre_tanh)
        learner.actor_optimizer.step([learner.actor_flat.grad])
        learner.actor_target_flat.data.lerp_(learner.actor_flat.data, config.tau)
        learner.critic_target_flat.data.lerp_(learner.critic_flat.data, config.tau)

    return update


def largest_difference(run: DDPGTrainer) -> dict[str, float]:
    """Largest gap in the weights after one update from the same state, both ways (Adam's
    steps are normalised, so a gradient that differed would show in every weight it moves)."""
    learner = run.learner
    flats = learner.flats
    optimizers = (learner.actor_optimizer, learner.critic_optimizer)
    saved = [flat.data.clone() for flat in flats]
    saved_state = [t.clone() for o in optimizers for t in o.written]
    batch = run.buffer.sample(BATCH_SIZE, learner.placement.update_device)

    def one_update(update: Callable[[Batch], None]) -> torch.Tensor:
        for flat, data in zip(flats, saved, strict=True):
            flat.data.copy_(data)
        state = [t for o in optimizers for t in o.written]
        for tensor, value in zip(state, saved_state, strict=True):
            tensor.copy_(value)
        update(batch)
        return torch.cat([flat.data for flat in flats])

    weights = one_update(learner.step)
    written_weights = one_update(written_out_update(learner))
    return {
        "weight": (weights - written_weights).abs().max().item(),
        "largest_step": (weights - torch.cat(saved)).abs().max().item(),
    }


def main() -> None:
    args = race_parser(__doc__.splitlines()[0], rounds=12).parse_args()
    settle(args.core, threads=1)
    config = DDPGConfig(total_steps=LEARNING_STARTS + 200, hidden=HIDDEN)
    check = DDPGTrainer(config, placement("all-cpu"), args.seed)
    check.advance(LEARNING_STARTS + 10)  # a few updates, so Adam's state is not empty
    differences = largest_difference(check)

    def write_out(run: DDPGTrainer) -> None:
        run.learner.step = written_out_update(run.learner)

    steps = LEARNING_STARTS + args.rounds * args.chunk
    contestants = {
        "ours": ours(steps, 1, args.seed),
        "written_out": ours(steps, 1, args.seed, adapt=write_out),
        "sb3": sb3(args.seed),
    }
    print(f"one update, autograd vs written out, largest differences: {differences}")
    if differences["weight"] > 1e-3 * differences["largest_step"]:
        sys.exit("the written-out update disagrees with autograd's; not racing it")
    rates = interleaved(contestants, args.chunk, args.rounds)

    pairs = [("ours", "sb3"), ("written_out", "sb3"), ("written_out", "ours")]
    ratios = {
        f"{a}/{b}": [x / y for x, y in zip(rates[a], rates[b], strict=True)] for a, b in pairs
    }
    fields = {
        "env_id": "Pendulum-v1",
        "hidden": HIDDEN,
        "batch_size": BATCH_SIZE,
        "threads": 1,
        "core": args.core,
        "chunk_steps": args.chunk,
        "largest_difference_one_update": differences,
        "steps_per_s": rates,
        "median_steps_per_s": {name: statistics.median(v) for name, v in rates.items()},
        "round_ratios": ratios,
        "median_round_ratio": {name: statistics.median(v) for name, v in ratios.items()},
        "range_round_ratio": {name: [min(v), max(v)] for name, v in ratios.items()},
        "target_ratio": 1.25,
    }
    for key in ("median_steps_per_s", "median_round_ratio", "range_round_ratio"):
        print(f"{key}: {fields[key]}")
    save("bench.ddpg_written_out", fields, args.reference)


if __name__ == "__main__":
    main()
