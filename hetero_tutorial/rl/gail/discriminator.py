"""Step 2 of GAIL: the discriminator, its loss and the reward it gives.

``D(s, a)`` is the probability that a (state, action) row is the expert's, from one MLP's
logit. Its loss is binary cross-entropy, expert rows labelled 1 and the policy's 0; the
generator's reward for a row is ``-log(1 - D(s, a))``, which is ``softplus(logit)``: large
where the discriminator takes the row for the expert's. The gradient penalty (optional)
pulls the norm of D's gradient towards 1 on rows drawn between expert and policy rows: a
second backward pass through the first one's graph.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hetero_tutorial.rl.nets import mlp
from hetero_tutorial.speed import FlatParameters, compiled, say_fallback

ADAM_EPS = 1e-8
"""torch.optim.Adam's default"""


class Discriminator(nn.Module):
    """An MLP from (state, action) to the logit of "this row is the expert's"."""

    def __init__(self, obs_dim: int, action_dim: int, hidden: int = 64) -> None:
        super().__init__()
        self.net = mlp(obs_dim + action_dim, hidden, 1, activation=nn.Tanh)

    def forward(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([obs, actions], dim=-1)).squeeze(-1)


def reward(logits: torch.Tensor) -> torch.Tensor:
    """The generator's reward, ``-log(1 - D)``, from D's logits (``softplus``, stable)."""
    return F.softplus(logits)


def gradient_penalty(
    discriminator: Discriminator, expert: torch.Tensor, policy: torch.Tensor, obs_dim: int
) -> torch.Tensor:
    """``(||grad D|| - 1)^2`` on rows mixed at random between ``expert`` and ``policy`` rows
    (each (B, obs_dim + action_dim)), its graph kept for the backward pass."""
    mix = torch.rand(len(expert), 1, device=expert.device)
    rows = (mix * expert + (1 - mix) * policy).requires_grad_(True)
    logits = discriminator(rows[:, :obs_dim], rows[:, obs_dim:])
    (grad,) = torch.autograd.grad(logits.sum(), rows, create_graph=True)
    return (grad.norm(dim=1) - 1).pow(2).mean()


def discriminator_loss(
    discriminator: Discriminator,
    expert: torch.Tensor,
    policy: torch.Tensor,
    obs_dim: int,
    penalty: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(loss, accuracy)`` on ``expert`` and ``policy`` rows (each (B, obs + action)):
    binary cross-entropy, plus ``penalty`` times :func:`gradient_penalty` where it is on."""
    logits_expert = discriminator(expert[:, :obs_dim], expert[:, obs_dim:])
    logits_policy = discriminator(policy[:, :obs_dim], policy[:, obs_dim:])
    loss = F.binary_cross_entropy_with_logits(
        logits_expert, torch.ones_like(logits_expert)
    ) + F.binary_cross_entropy_with_logits(logits_policy, torch.zeros_like(logits_policy))
    if penalty > 0:
        loss = loss + penalty * gradient_penalty(discriminator, expert, policy, obs_dim)
    with torch.no_grad():
        right = (logits_expert > 0).float().sum() + (logits_policy <= 0).float().sum()
        accuracy = right / (len(expert) + len(policy))
    return loss, accuracy


class DiscriminatorLearner:
    """The discriminator on its device, its optimizer, and its two jobs: an update on
    expert and policy rows, and the reward of every row of a rollout.

    ``compile``: :meth:`update` runs through ``torch.compile`` (``self.step``, what a round
    calls); with the gradient penalty it runs eagerly, and says so once: the penalty's
    second backward pass goes through the first one's graph, which compiling does not trace.
    """

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        hidden: int,
        lr: float,
        penalty: float,
        device: torch.device | str,
        compile: bool = False,
    ) -> None:
        self.obs_dim, self.penalty = obs_dim, penalty
        self.discriminator = Discriminator(obs_dim, action_dim, hidden).to(device)
        # Its parameters live in one flat tensor (see speed/flat.py), as DDPG's do: the gradient
        # and the optimizer step are one call each, and the step traces as one graph.
        self.flat = FlatParameters(self.discriminator)
        what = "GAIL's discriminator update"
        if compile and penalty > 0:
            say_fallback(what, "the gradient penalty's second backward pass is not compiled")
        mode = "compile" if compile and penalty == 0 else "eager"
        self.step = compiled(self.update, mode, device, what, traces_autograd=True)
        """:meth:`update`, eagerly or compiled: what a round calls"""
        self.optimizer = self.flat.adam(lr, ADAM_EPS, self.step.mode)

    def update(self, expert: torch.Tensor, policy: torch.Tensor) -> torch.Tensor:
        """One step on ``expert`` and ``policy`` rows (state and action side by side, on the
        discriminator's device); returns its accuracy on them, on the device."""
        loss, accuracy = discriminator_loss(
            self.discriminator, expert, policy, self.obs_dim, self.penalty
        )
        grads = torch.autograd.grad(loss, self.flat.module_parameters)
        with torch.no_grad():
            self.optimizer.step(self.flat.gradients(grads))
        return accuracy

    @torch.no_grad()
    def label(self, rows: torch.Tensor) -> torch.Tensor:
        """The generator's reward for each of ``rows``, in one batched call."""
        return reward(self.discriminator(rows[:, : self.obs_dim], rows[:, self.obs_dim :]))
