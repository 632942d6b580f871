"""Step 6 of PPO: the update. The clipped-surrogate loss and the learner's epochs of minibatches.

:func:`ppo_loss` is CleanRL's loss for one minibatch; :class:`PPOLearner` runs
``update_epochs`` passes over a rollout that the transfer brought to the update device,
one gradient step per minibatch, and brings its diagnostics back in one copy.

With ``config.compile`` each gradient step is traced whole: the minibatch's gather from
the rollout, the loss, its gradient (``torch.func.grad``, so the backward pass is in the
graph too), the gradient's clipping and Adam's update
(:func:`~hetero_tutorial.rl.flat.adam_update`), all on the flat parameters, and one
compiled graph holds :data:`GRAPH_MINIBATCHES` such steps in a row. Compiling the loss
alone leaves a dozen calls per step outside the graph (zeroing, the backward pass's own,
clipping, the optimizer) at microseconds each; the graph computes the same steps, to float
rounding (``bench compile`` measures the gain).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from hetero_tutorial.core.compiled import compiled
from hetero_tutorial.rl.flat import AdamState, adam_update, clip_norm_
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.policy import Parameters
from hetero_tutorial.rl.ppo.storage import RolloutStorage


def ppo_loss(
    policy: nn.Module, mb: dict[str, torch.Tensor], c: PPOConfig, clip_coef: float | torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(loss, ratio, log_ratio)`` of one minibatch: clipped surrogate, value loss, entropy.

    ``mb`` holds the stored fields (``obs``, ``actions``, ``logprobs``, ``values``,
    ``advantages``, ``returns``); ``logprobs`` are the behaviour policy's, so the
    ratio compares the learner with the policy that acted. ``clip_coef`` is the clipping
    coefficient of this iteration: ``c.clip_coef``, or less as :meth:`PPOLearner.anneal`
    decays it (a 0-d tensor in the compiled step).
    """
    logprob, entropy, value = policy.evaluate(mb["obs"], mb["actions"])
    log_ratio = logprob - mb["logprobs"]
    ratio = log_ratio.exp()
    advantages = mb["advantages"]
    if c.norm_adv:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    clipped_ratio = ratio.clamp(1 - clip_coef, 1 + clip_coef)
    policy_loss = torch.max(-advantages * ratio, -advantages * clipped_ratio).mean()
    value_error = (value - mb["returns"]).pow(2)
    if c.clip_vloss:
        clipped = mb["values"] + (value - mb["values"]).clamp(-clip_coef, clip_coef)
        value_error = torch.max(value_error, (clipped - mb["returns"]).pow(2))
    loss = policy_loss - c.ent_coef * entropy.mean() + c.vf_coef * 0.5 * value_error.mean()
    return loss, ratio, log_ratio


@torch.no_grad()
def ratio_stats(ratio: torch.Tensor, log_ratio: torch.Tensor, clip_coef: float) -> torch.Tensor:
    """``(approx_kl, clipfrac)`` of a minibatch, as one tensor on its device (no copy back).

    How far the learner is from the behaviour policy: CleanRL's KL estimate
    ``(ratio - 1) - log ratio`` and the fraction of ratios the clipping cut.
    """
    approx_kl = ((ratio - 1) - log_ratio).mean()
    clipfrac = ((ratio - 1).abs() > clip_coef).float().mean()
    return torch.stack([approx_kl, clipfrac])


ADAM_EPS = 1e-5
"""Adam's epsilon, CleanRL's, in the eager optimizer and the compiled step alike."""


GRAPH_MINIBATCHES = 4
"""Minibatch steps one compiled graph holds (fewer where the update's steps, its epochs
times its minibatches, are no multiple of it: their greatest common divisor; two of RL Zoo's
ten at 8 environments). Each call of a compiled graph costs the same outside its kernels
(the guards, the code that calls the graph: tens of microseconds on a CPU), as the
rollout's do (:data:`~hetero_tutorial.rl.ppo.collectors.GRAPH_STEPS`); four steps a call
pay it a quarter as often. Four beat two at 1,024 environments on the series' CPU, and
eight were no faster than four, within the measured spread; a larger graph compiles longer
from a cold cache (a step is a forward pass, a backward pass and Adam: tens of kernels).
``bench compile`` and the peers race measure the steady speed and the compile seconds."""


class _LossModule(nn.Module):
    """:func:`ppo_loss` of ``policy`` as a module's forward: what ``functional_call`` needs to
    evaluate it with other weights (the views of the flat weights that the compiled step
    differentiates)."""

    def __init__(self, policy: nn.Module, config: PPOConfig) -> None:
        super().__init__()
        self.policy, self.config = policy, config

    def forward(
        self, mb: dict[str, torch.Tensor], clip_coef: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return ppo_loss(self.policy, mb, self.config, clip_coef)


class PPOLearner:
    """The update: epochs of clipped-surrogate minibatch steps, on the update device."""

    def __init__(self, policy: nn.Module, params: Parameters, config: PPOConfig, seed: int) -> None:
        self.policy, self.params, self.config = policy, params, config
        self.optimizer = params.adam(lr=config.learning_rate, eps=ADAM_EPS)
        self.generator = torch.Generator().manual_seed(seed)  # minibatch order, on the CPU
        self.clip_coef = config.clip_coef
        """the clipping coefficient of the current iteration (see :meth:`anneal`)"""
        device = next(policy.parameters()).device
        self.step = compiled(self.graph_steps, config.compile_mode, device, "PPO's minibatch steps")
        """:meth:`graph_steps` in the config's compile mode (first call timed apart); eager:
        :meth:`minibatch_steps` takes PyTorch's own autograd and fused Adam instead"""
        # A compiled graph guards the Python numbers it reads: a learning rate or clipping
        # coefficient that decays every iteration would compile it again. The graph reads
        # them from 0-d tensors on the device, refilled by anneal, and keeps Adam's state as
        # tensors of its own (the eager optimizer's stays unused).
        self.clip_tensor = torch.tensor(self.clip_coef, device=device)
        self.adam: AdamState | None = None  # eager: torch.optim's Adam steps instead
        if self.step.mode != "eager":
            self.adam = AdamState.of(params.data, config.learning_rate)
            self.step.writes_in_place(params.data, *self.adam.written)
        self._loss_module = _LossModule(policy, config)

    def anneal(self, iteration: int) -> None:
        """Set the learning rate and the clipping coefficient for ``iteration``: each decays
        linearly to zero over the annealing horizon where the config says so (the run's own
        steps unless ``anneal_steps`` says more: see :meth:`PPOConfig.schedule_left`)."""
        c = self.config
        left = c.schedule_left(iteration)
        if c.anneal_lr:
            for group in self.optimizer.param_groups:
                group["lr"] = c.learning_rate * left
            if self.adam is not None:
                self.adam.lr.fill_(c.learning_rate * left)
        if c.anneal_clip:
            self.clip_coef = c.clip_coef * left
            self.clip_tensor.fill_(self.clip_coef)

    def minibatch_steps(
        self,
        rollout: list[torch.Tensor],
        picks: torch.Tensor | Sequence[slice],
        storage: RolloutStorage,
    ) -> list[tuple[torch.Tensor, ...]]:
        """One gradient step per minibatch of ``picks`` (the rows of each, (k, size), or
        slices) of ``rollout`` (tensors laid out like ``storage``'s), in order; returns each
        step's ``(loss, ratio, log_ratio)``. Compiled: one call of the graph."""
        if self.adam is not None:
            return self.step(self.params.data, self.adam, rollout, picks, storage, self.clip_tensor)
        return [self.eager_step(storage.views([t[pick] for t in rollout])) for pick in picks]

    def minibatch_step(
        self, rollout: list[torch.Tensor], pick: torch.Tensor | slice, storage: RolloutStorage
    ) -> tuple[torch.Tensor, ...]:
        """:meth:`minibatch_steps` of one minibatch (compiled: a graph of one step)."""
        picks = pick[None] if isinstance(pick, torch.Tensor) else [pick]
        return self.minibatch_steps(rollout, picks, storage)[0]

    def eager_step(self, mb: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """One gradient step on the minibatch ``mb`` with PyTorch's autograd and Adam."""
        loss, ratio, log_ratio = ppo_loss(self.policy, mb, self.config, self.clip_coef)
        self.params.zero_grad()
        loss.backward()
        self.params.clip_grad_norm_(self.config.max_grad_norm)
        self.optimizer.step()
        return loss, ratio, log_ratio

    def graph_steps(
        self,
        weights: torch.Tensor,
        adam: AdamState,
        rollout: list[torch.Tensor],
        picks: torch.Tensor | Sequence[slice],
        storage: RolloutStorage,
        clip_coef: torch.Tensor,
    ) -> list[tuple[torch.Tensor, ...]]:
        """:meth:`one_graph_step` once per minibatch of ``picks``, in order, for
        ``torch.compile`` to trace as one graph."""
        return [
            self.one_graph_step(weights, adam, rollout, pick, storage, clip_coef) for pick in picks
        ]

    def one_graph_step(
        self,
        weights: torch.Tensor,
        adam: AdamState,
        rollout: list[torch.Tensor],
        pick: torch.Tensor | slice,
        storage: RolloutStorage,
        clip_coef: torch.Tensor,
    ) -> tuple[torch.Tensor, ...]:
        """The eager step's arithmetic as a function of tensors, for ``torch.compile`` to trace
        whole: the minibatch gathered from the rollout, the gradient of :func:`ppo_loss` with
        respect to each parameter's view of the flat ``weights``, laid out flat
        (``FlatParameters.flatten``) and clipped, then Adam's update of ``weights`` and its
        state in place. The gather in the graph is fused into the kernels that read it."""
        mb = storage.views([t[pick] for t in rollout])

        def loss_of(
            parameters: dict[str, torch.Tensor],
        ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
            named = {f"policy.{name}": tensor for name, tensor in parameters.items()}
            loss, ratio, log_ratio = torch.func.functional_call(
                self._loss_module, named, (mb, clip_coef)
            )
            return loss, (loss, ratio, log_ratio)

        grads, out = torch.func.grad(loss_of, has_aux=True)(self.params.views(weights))
        grad = self.params.flatten(grads)
        clip_norm_(grad, self.config.max_grad_norm)
        adam_update(weights, grad, adam, eps=ADAM_EPS)
        return out

    def update(self, batch: list[torch.Tensor], storage: RolloutStorage) -> dict[str, float]:
        """``update_epochs`` passes over the rollout ``batch`` ((T * N, ...) tensors, here).

        Each epoch visits the transitions in a new random order in full minibatches (a
        remainder smaller than a minibatch is left out of that epoch).
        """
        c, size = self.config, len(batch[0])
        # Every epoch's order, drawn on the CPU and copied in one go: a copy from pageable
        # memory waits for the accelerator, so one copy per epoch would stall it per epoch.
        orders = torch.stack(
            [torch.randperm(size, generator=self.generator) for _ in range(c.update_epochs)]
        ).to(batch[0].device)
        minibatches = size // c.minibatch_size
        if c.gather_per_epoch and self.adam is None:
            # Eagerly, one gather per epoch and minibatches that are slices of it.
            rows = [
                slice(m * c.minibatch_size, (m + 1) * c.minibatch_size) for m in range(minibatches)
            ]
            calls = (([t[order] for t in batch], rows) for order in orders)
        else:
            # Or each step gathers its minibatch's rows: every epoch's minibatches in turn,
            # compiled, a graph's worth (GRAPH_MINIBATCHES) to a call; eagerly, all in one.
            picks = orders[:, : minibatches * c.minibatch_size].reshape(-1, c.minibatch_size)
            compiled_steps = self.adam is not None
            per_call = math.gcd(len(picks), GRAPH_MINIBATCHES) if compiled_steps else len(picks)
            calls = ((batch, group) for group in picks.split(per_call))
        extra = None
        for rollout, group in calls:
            steps = self.minibatch_steps(rollout, group, storage)
            extra = self.extra_stats(steps[0]) if extra is None else extra
        # Diagnostics of the last minibatch, as CleanRL logs them, and a subclass's own.
        loss, ratio, log_ratio = steps[-1]
        kl, clipfrac = ratio_stats(ratio, log_ratio, self.clip_coef)
        stats = {"approx_kl": kl, "clipfrac": clipfrac, "loss": loss.detach()}
        stats |= extra
        values = torch.stack(list(stats.values())).tolist()  # one copy back
        return dict(zip(stats, values, strict=True))

    def extra_stats(self, first: tuple[torch.Tensor, ...]) -> dict[str, torch.Tensor]:
        """More 0-d diagnostics for :meth:`update` to bring back in its one copy (none here),
        from ``first``, the update's first step's ``(loss, ratio, log_ratio)``: computed as
        soon as that step returns (a CUDA graph's outputs last until its next replay)."""
        return {}
