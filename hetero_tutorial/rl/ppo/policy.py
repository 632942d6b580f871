"""Step 2 of PPO: the networks, built for the environment and placed for the iteration.

:func:`make_policy` builds the actor-critic for an environment's action space;
:func:`place_policy` puts one copy on the update device (the learner) and, where the
rollout runs elsewhere, a second copy on the rollout device, refreshed by the weight sync.
"""

from __future__ import annotations

import copy

from torch import nn

from hetero_tutorial.core.placement import Placement
from hetero_tutorial.rl.envs.spec import EnvSpec
from hetero_tutorial.rl.nets import DiscreteActorCritic, GaussianActorCritic
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.speed import FlatParameters, PerTensorParameters

Parameters = FlatParameters | PerTensorParameters


def make_policy(spec: EnvSpec, config: PPOConfig) -> DiscreteActorCritic | GaussianActorCritic:
    """The actor-critic for ``spec``'s action space, paired or as two MLPs (``config``)."""
    policy_type = DiscreteActorCritic if spec.discrete else GaussianActorCritic
    return policy_type(spec.obs_dim, spec.action_dim, config.hidden, config.paired_networks)


def place_policy(
    policy_cpu: nn.Module, placement: Placement, flat: bool = True
) -> tuple[nn.Module, nn.Module, Parameters, Parameters]:
    """``(learner, rollout policy, learner's parameters, rollout policy's)`` for a placement.

    The learner lives on the update device. The rollout uses the learner itself when
    both phases share a device, otherwise a copy on the rollout device, refreshed with
    ``rollout_params.copy_from(learner_params)``. Both are copies: ``policy_cpu`` itself
    is left as it was (where it was). With ``flat`` (the default) every
    network's parameters live in one tensor, so zeroing, clipping, the optimizer step
    and the weight sync are one or two calls each (see flat.py).
    """
    params = FlatParameters if flat else PerTensorParameters
    learner = copy.deepcopy(policy_cpu).to(placement.update_device)
    learner_params = params(learner)
    if placement.rollout_device == placement.update_device:
        return learner, learner, learner_params, learner_params
    rollout_policy = copy.deepcopy(policy_cpu).to(placement.rollout_device)
    return learner, rollout_policy, learner_params, params(rollout_policy, with_grad=False)
