import copy

import pytest
import torch
from test_flat import learner_step
from torch import nn

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.nets import (
    DiscreteActorCritic,
    GaussianActorCritic,
    PairedMLP,
    SeparateMLPs,
    mlp,
)
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.learner import ppo_loss
from hetero_tutorial.speed.flat import FlatParameters, PerTensorParameters


def _member_forward(paired: PairedMLP, member: int, x: torch.Tensor) -> torch.Tensor:
    """The same network computed layer by layer with ordinary matmuls."""
    h = x
    for index, (weight, bias) in enumerate(zip(paired.weights, paired.biases, strict=True)):
        h = h @ weight[member] + bias[member]
        if index < len(paired.weights) - 1:
            h = torch.tanh(h)
    return h


def test_paired_mlp_computes_two_independent_networks():
    torch.manual_seed(0)
    paired = PairedMLP(3, 8, 2, out_gains=(0.01, 1.0))
    x = torch.randn(5, 3)
    first, second = paired(x)
    torch.testing.assert_close(first, _member_forward(paired, 0, x))
    torch.testing.assert_close(second, _member_forward(paired, 1, x))
    first.sum().backward()  # the first network's output does not depend on the second's weights
    for weight in paired.weights:
        assert weight.grad[1].abs().max() == 0 and weight.grad[0].abs().max() > 0


def test_paired_mlp_output_gains_scale_each_member():
    torch.manual_seed(0)
    last = PairedMLP(4, 64, 4, out_gains=(0.01, 1.0)).weights[-1]
    assert last[0].norm() < 0.05 * last[1].norm()
    with pytest.raises(UsageError):
        PairedMLP(0, 8, 2, out_gains=(1.0, 1.0))


@pytest.mark.parametrize("net_type", [DiscreteActorCritic, GaussianActorCritic])
def test_actor_critic_interface_shapes(net_type):
    net = net_type(4, 2, 16)
    obs = torch.randn(6, 4)
    noise = net.sample_noise((6,), torch.Generator().manual_seed(0))
    action, logprob, value = net.act(obs, noise)
    assert logprob.shape == value.shape == (6,)
    new_logprob, entropy, new_value = net.evaluate(obs, action)
    torch.testing.assert_close(new_logprob, logprob)
    torch.testing.assert_close(new_value, value)
    assert entropy.shape == (6,) and net.value(obs).shape == (6,)


def test_gumbel_max_sampling_follows_the_softmax():
    torch.manual_seed(0)
    net = DiscreteActorCritic(2, 3, 8)
    obs = torch.zeros(20_000, 2)
    noise = net.sample_noise((20_000,), torch.Generator().manual_seed(1))
    actions, _, _ = net.act(obs, noise)
    frequencies = torch.bincount(actions[:, 0].long(), minlength=3) / 20_000
    probabilities = torch.softmax(net(obs[:1])[0], dim=-1)[0]
    torch.testing.assert_close(frequencies, probabilities, atol=0.015, rtol=0)


def _reference_and_flat():
    torch.manual_seed(0)
    reference = mlp(3, 8, 2)
    flattened = copy.deepcopy(reference)
    return reference, flattened, FlatParameters(flattened)


def test_flat_parameters_keep_the_module_and_collect_its_gradients():
    reference, flattened, flat = _reference_and_flat()
    x = torch.randn(4, 3)
    torch.testing.assert_close(flattened(x), reference(x))
    for _ in range(2):  # gradients accumulate into the flat buffer, zeroed in one call
        flat.grad.zero_()
        flattened(x).pow(2).sum().backward()
    reference(x).pow(2).sum().backward()
    for got, want in zip(flattened.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(got.grad, want.grad)
    # every gradient lands in the flat buffer (its padding stays zero)
    assert flat.grad.count_nonzero() == sum(p.grad.count_nonzero() for p in reference.parameters())


def test_flat_clipping_and_adam_match_pytorch_per_parameter():
    reference, flattened, flat = _reference_and_flat()
    x = torch.randn(4, 3)
    ref_optimizer = torch.optim.Adam(reference.parameters(), lr=0.1)
    flat_optimizer = flat.adam(lr=0.1, eps=1e-8)  # fused on the CPU
    for _ in range(3):
        ref_optimizer.zero_grad()
        reference(x).pow(2).sum().backward()
        ref_norm = nn.utils.clip_grad_norm_(reference.parameters(), 0.1)
        ref_optimizer.step()
        norm, _ = learner_step(flat, flat_optimizer, flattened(x).pow(2).sum(), 0.1)
        torch.testing.assert_close(norm, ref_norm)
    for got, want in zip(flattened.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(got, want)


def test_copy_from_moves_all_weights_in_one_copy():
    _, learner, learner_flat = _reference_and_flat()
    rollout = mlp(3, 8, 2)
    rollout_flat = FlatParameters(rollout, with_grad=False)
    rollout_flat.copy_from(learner_flat)
    for got, want in zip(rollout.parameters(), learner.parameters(), strict=True):
        assert torch.equal(got, want)


def test_flattening_nothing_is_an_error():
    with pytest.raises(UsageError, match="no parameters"):
        FlatParameters(nn.Tanh())


@torch.no_grad()
def _load_paired(separate: SeparateMLPs, paired: PairedMLP) -> None:
    """Give ``separate`` the weights of ``paired`` (member 0: the actor, 1: the critic)."""
    for member, net in enumerate((separate.actor, separate.critic)):
        linears = [layer for layer in net if isinstance(layer, nn.Linear)]
        for layer, weight, bias in zip(linears, paired.weights, paired.biases, strict=True):
            out = layer.out_features
            layer.weight.copy_(weight[member, :, :out].T)
            layer.bias.copy_(bias[member, 0, :out])


def _plain_twin(paired_policy: nn.Module) -> nn.Module:
    """The same policy with two separate MLPs (CleanRL's shape), from the same weights."""
    kind = type(paired_policy)
    obs_dim = paired_policy.actor_critic.weights[0].shape[1]
    hidden = paired_policy.actor_critic.weights[0].shape[2]
    plain = kind(obs_dim, paired_policy.noise_dim, hidden, paired=False)
    _load_paired(plain.actor_critic, paired_policy.actor_critic)
    if hasattr(plain, "log_std"):
        plain.log_std.data.copy_(paired_policy.log_std.data)
    return plain


@pytest.mark.parametrize("net_type", [DiscreteActorCritic, GaussianActorCritic])
def test_plain_and_paired_actor_critics_agree_on_outputs_losses_and_gradients(net_type):
    torch.manual_seed(0)
    paired = net_type(4, 3, hidden=16)
    plain = _plain_twin(paired)
    config = PPOConfig(minibatch_size=32)
    obs = torch.randn(32, 4)
    actions = torch.randint(0, 3, (32, 1)).float() if net_type is DiscreteActorCritic else None
    if actions is None:
        actions = torch.randn(32, 3)
    scalars = {name: torch.randn(32) for name in ("values", "advantages", "returns")}
    mb = {"obs": obs, "actions": actions, "logprobs": torch.randn(32) * 0.1 - 1.0, **scalars}
    for got, want in zip(plain(obs), paired(obs), strict=True):
        torch.testing.assert_close(got, want)
    clip = config.clip_coef
    plain_loss = ppo_loss(plain, mb, config, clip)[0]
    paired_loss = ppo_loss(paired, mb, config, clip)[0]
    torch.testing.assert_close(plain_loss, paired_loss)
    plain_loss.backward()
    paired_loss.backward()
    body = paired.actor_critic
    linears = [
        [layer for layer in net if isinstance(layer, nn.Linear)]
        for net in (plain.actor_critic.actor, plain.actor_critic.critic)
    ]
    for member, layers in enumerate(linears):
        for layer, weight, bias in zip(layers, body.weights, body.biases, strict=True):
            out = layer.out_features
            torch.testing.assert_close(layer.weight.grad, weight.grad[member, :, :out].T)
            torch.testing.assert_close(layer.bias.grad, bias.grad[member, 0, :out])
    # the paired critic's unused output columns get no gradient: the two are the same network
    assert body.weights[-1].grad[1, :, 1:].abs().max() == 0


def test_per_tensor_parameters_do_what_flat_parameters_do():
    torch.manual_seed(0)
    reference = DiscreteActorCritic(4, 2, hidden=8)
    nets = [copy.deepcopy(reference) for _ in range(2)]
    params = [FlatParameters(nets[0]), PerTensorParameters(nets[1])]
    optimizers = [p.adam(lr=1e-2, eps=1e-5) for p in params]
    obs = torch.randn(16, 4)
    for net, p, optimizer in zip(nets, params, optimizers, strict=True):
        for _ in range(3):
            learner_step(p, optimizer, net(obs)[0].pow(2).sum() * 100, 0.5)
    for flat, per_tensor in zip(nets[0].parameters(), nets[1].parameters(), strict=True):
        torch.testing.assert_close(flat, per_tensor, rtol=1e-5, atol=1e-6)
    twin = PerTensorParameters(copy.deepcopy(reference))
    twin.copy_from(params[1])
    assert all(torch.equal(a, b) for a, b in zip(twin.tensors, params[1].tensors, strict=True))
