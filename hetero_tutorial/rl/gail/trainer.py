"""Step 3 of GAIL: the round. PPO's iteration, its rewards the discriminator's.

:class:`GAILTrainer` is PPO's trainer (:class:`~hetero_tutorial.rl.ppo.trainer.PPOTrainer`)
with a discriminator beside it. Each round, timed phase by phase:

1. **rollout**: the generator (PPO's policy) steps the environments, as in PPO;
2. **discriminator**: ``disc_updates`` steps of the discriminator, each on ``disc_rows``
   expert rows and as many rows of this rollout, drawn at random;
3. **labelling**: the discriminator rewards every row of the rollout, in one batched call,
   added to the stored rewards (which hold only the time limits' bootstraps: the
   generator sees no environment reward);
4. **advantages**, **transfer**, **update** and **weight_sync**: PPO's.

The discriminator lives on its own device (``disc_device``, by default the update's): the
rollout's rows go to it once a round, and the rewards come back in one copy.
"""

from __future__ import annotations

import torch

from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import PhaseTimer
from hetero_tutorial.rl.gail.config import GAILConfig
from hetero_tutorial.rl.gail.demonstrations import Demonstrations
from hetero_tutorial.rl.gail.discriminator import DiscriminatorLearner
from hetero_tutorial.rl.ppo.trainer import PPOTrainer

PHASES = ("rollout", "discriminator", "labelling", "advantages", "transfer", "update",
          "weight_sync")  # fmt: skip
"""The timed phases of a round, in the order they run."""

DISC_SEED_OFFSET = 2_000_003
"""The discriminator's weights and draws come from ``seed + DISC_SEED_OFFSET``."""


class GAILTrainer(PPOTrainer):
    """One GAIL run: PPO's trainer, its rewards labelled by a discriminator each round.

    ``demonstrations``: the expert's (:func:`~hetero_tutorial.rl.gail.demonstrations.load`).
    ``disc_device``: where the discriminator updates and labels (default: the update's).
    """

    def __init__(
        self,
        config: GAILConfig,
        placement: Placement,
        demonstrations: Demonstrations,
        seed: int = 0,
        *,
        disc_device: torch.device | str | None = None,
        count_copies: bool = False,
    ) -> None:
        super().__init__(config.generator(), placement, seed, count_copies=count_copies)
        self.gail = config
        self.disc_device = torch.device(disc_device or placement.update_device)
        self.timer = PhaseTimer([*placement.devices, self.disc_device])  # its phases wait for it
        self.obs_dim = self.spec.obs_dim
        expert = torch.cat(
            [torch.as_tensor(demonstrations.obs), torch.as_tensor(demonstrations.actions)], 1
        )
        self.expert = expert.float().to(self.disc_device)
        """the expert's rows, (state, action) side by side, on the discriminator's device"""
        torch.manual_seed(seed + DISC_SEED_OFFSET)
        self.disc = DiscriminatorLearner(
            self.obs_dim,
            self.spec.action_dim,
            config.disc_hidden,
            config.disc_lr,
            config.gradient_penalty,
            self.disc_device,
            config.compile,
        )
        on = self.storage.actions.device
        self.action_bounds = [
            torch.as_tensor(b, dtype=torch.float32, device=on)
            for b in (self.spec.action_low, self.spec.action_high)
        ]
        """the actions the environments execute: the expert's rows hold executed actions, so
        the policy's must too (a raw Gaussian sample past the bounds would give it away)"""
        self.draws = torch.Generator().manual_seed(seed + DISC_SEED_OFFSET)
        self.accuracy: list[float] = []
        """the discriminator's accuracy on its last update of each round"""

    def label_rewards(self) -> None:
        """The discriminator's updates on this rollout, then its reward for every row."""
        c, storage = self.gail, self.storage
        with self.phase("discriminator"):
            executed = storage.actions.clamp(*self.action_bounds)
            rows = torch.cat([storage.obs, executed], -1).flatten(0, 1)
            rows = rows.to(self.disc_device)  # one copy of the rollout's rows
            accuracy = None
            for _ in range(c.disc_updates):
                picks = [torch.randint(len(r), (c.disc_rows,), generator=self.draws)
                         for r in (self.expert, rows)]  # fmt: skip
                accuracy = self.disc.step(
                    self.expert[picks[0].to(self.disc_device)], rows[picks[1].to(self.disc_device)]
                )
            if accuracy is not None:
                self.accuracy.append(accuracy.item())
        with self.phase("labelling"):
            rewards = self.disc.label(rows).view(storage.rewards.shape)
            storage.rewards += rewards.to(storage.rewards.device)  # the one copy back
