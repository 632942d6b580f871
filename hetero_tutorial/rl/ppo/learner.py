"""Step 6 of PPO: the update. The clipped-surrogate loss and the learner's epochs of minibatches.

:func:`ppo_loss` is CleanRL's loss for one minibatch; :meth:`PPOLearner.gradient_step` is
one step on it, as CleanRL writes it: the loss, its gradient, the gradient's clipping and
Adam's step. :class:`PPOLearner` runs ``update_epochs`` passes over a rollout that the
transfer brought to the update device, one gradient step per minibatch, and brings its
diagnostics back in one copy.

Eager and compiled runs call the same steps (:meth:`PPOLearner.gradient_steps`); with
``config.compile`` ``torch.compile`` traces a few of them into one graph (how many:
:func:`~hetero_tutorial.speed.minibatches_per_call`): the minibatch's gather from the
rollout, the loss, its backward pass, the clipping and Adam. Two choices make that possible.
The gradient comes from ``torch.autograd.grad`` (the same backward pass as
``loss.backward()``, returned instead of accumulated), which Dynamo traces where asked (see
:mod:`hetero_tutorial.speed.compiler`); and Adam steps through ``torch.optim``'s functional
form (:class:`~hetero_tutorial.speed.FunctionalAdam`), because ``Optimizer.step`` cuts a
graph on purpose. A graph cut at the backward pass and at the
optimizer, as LeanRL's compiled PPO accepts, measured 2.4x slower here (``bench compile``
measures the gain of the one graph).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.policy import Parameters
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.speed import clip_norm_, compiled, minibatches_per_call


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
"""Adam's epsilon, CleanRL's."""


class PPOLearner:
    """The update: epochs of clipped-surrogate minibatch steps, on the update device."""

    def __init__(self, policy: nn.Module, params: Parameters, config: PPOConfig, seed: int) -> None:
        self.policy, self.params, self.config = policy, params, config
        self.generator = torch.Generator().manual_seed(seed)  # minibatch order, on the CPU
        self.clip_coef = config.clip_coef
        """the clipping coefficient of the current iteration (see :meth:`anneal`)"""
        device = next(policy.parameters()).device
        self.step = compiled(
            self.gradient_steps, config.compile_mode, device, "PPO's minibatch steps",
            traces_autograd=True,
        )  # fmt: skip
        """:meth:`gradient_steps` in the config's compile mode (first call timed apart)"""
        self.optimizer = params.adam(config.learning_rate, ADAM_EPS, self.step.mode)
        # A compiled graph guards the Python numbers it reads: a learning rate or clipping
        # coefficient that decays every iteration would compile it again. The steps read
        # them from 0-d tensors on the device, refilled by anneal.
        self.clip_tensor = torch.tensor(self.clip_coef, device=device)

    def anneal(self, iteration: int) -> None:
        """Set the learning rate and the clipping coefficient for ``iteration``: each decays
        linearly to zero over the annealing horizon where the config says so (the run's own
        steps unless ``anneal_steps`` says more: see :meth:`PPOConfig.schedule_left`)."""
        c = self.config
        left = c.schedule_left(iteration)
        if c.anneal_lr:
            self.optimizer.set_lr(c.learning_rate * left)
        if c.anneal_clip:
            self.clip_coef = c.clip_coef * left
            self.clip_tensor.fill_(self.clip_coef)

    def gradient_steps(
        self,
        rollout: list[torch.Tensor],
        picks: torch.Tensor | Sequence[slice],
        storage: RolloutStorage,
        clip_coef: torch.Tensor,
    ) -> list[tuple[torch.Tensor, ...]]:
        """:meth:`gradient_step` once per minibatch of ``picks``, in order: what
        :attr:`step` runs, eagerly or traced as one graph."""
        return [self.gradient_step(rollout, pick, storage, clip_coef) for pick in picks]

    def gradient_step(
        self,
        rollout: list[torch.Tensor],
        pick: torch.Tensor | slice,
        storage: RolloutStorage,
        clip_coef: torch.Tensor,
    ) -> tuple[torch.Tensor, ...]:
        """One gradient step on the minibatch ``pick`` of ``rollout``: the loss, its gradient
        with respect to the policy's parameters, clipped, and Adam's step. Returns the
        minibatch's ``(loss, ratio, log_ratio)``, detached."""
        mb = storage.views([t[pick] for t in rollout])
        loss, ratio, log_ratio = ppo_loss(self.policy, mb, self.config, clip_coef)
        grads = torch.autograd.grad(loss, self.params.module_parameters)  # the backward pass
        grads = self.params.gradients(grads)  # flat parameters: one tensor
        clip_norm_(grads, self.config.max_grad_norm)
        with torch.no_grad():
            self.optimizer.step(grads)
        return loss.detach(), ratio.detach(), log_ratio.detach()

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
        if c.gather_per_epoch is not False and self.step.mode == "eager":
            # Eagerly, one gather per epoch and minibatches that are slices of it.
            rows = [
                slice(m * c.minibatch_size, (m + 1) * c.minibatch_size) for m in range(minibatches)
            ]
            calls = (([t[order] for t in batch], rows) for order in orders)
        else:
            # Or each step gathers its minibatch's rows (a compiled graph specialises on a
            # slice's bounds): every epoch's minibatches in turn, a graph's worth to a call.
            picks = orders[:, : minibatches * c.minibatch_size].reshape(-1, c.minibatch_size)
            per_call = minibatches_per_call(len(picks))  # equal groups: one graph
            calls = ((batch, group) for group in picks.split(per_call))
        extra = None
        for rollout, group in calls:
            steps = self.step(rollout, group, storage, self.clip_tensor)
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
