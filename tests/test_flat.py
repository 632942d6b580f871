"""Flat parameters: every segment aligned to 64 bytes, with the padding inert."""

import copy

import pytest
import torch
from torch import nn

from hetero_tutorial.rl.nets import GaussianActorCritic, mlp
from hetero_tutorial.speed.flat import FlatParameters, FunctionalAdam, clip_norm_


class OneFloatFirst(nn.Module):
    """A one-float parameter before the layers, as a log std registered first would be."""

    def __init__(self) -> None:
        super().__init__()
        self.log_std = nn.Parameter(torch.full((1,), -0.5))
        self.net = mlp(3, 8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x) * self.log_std.exp()


def learner_step(
    params, optimizer: FunctionalAdam, loss: torch.Tensor, max_norm: float
) -> torch.Tensor:
    """One step as the learners take it: gradients, laid out as the parameters are, clipped,
    then Adam. Returns the norm before clipping."""
    grads = params.gradients(torch.autograd.grad(loss, params.module_parameters))
    norm = clip_norm_(grads, max_norm)
    with torch.no_grad():
        optimizer.step(grads)
    return norm, grads


def _flattened(module: nn.Module) -> tuple[nn.Module, nn.Module, FlatParameters]:
    torch.manual_seed(0)
    reference = module
    flattened = copy.deepcopy(reference)
    return reference, flattened, FlatParameters(flattened)


def test_every_parameter_starts_64_bytes_into_the_flat_tensor():
    # Unpadded, every view after the one-float log_std starts 4 bytes off a 64-byte line.
    for module in (OneFloatFirst(), GaussianActorCritic(3, 1, 64), mlp(3, 8, 2)):
        flat = FlatParameters(module)
        for p in module.parameters():
            assert (p.data_ptr() - flat.data.data_ptr()) % 64 == 0
            assert (p.grad.data_ptr() - flat.grad.data_ptr()) % 64 == 0
            assert p.data.untyped_storage().data_ptr() == flat.data.untyped_storage().data_ptr()


def test_padding_changes_no_result_and_stays_zero():
    reference, flattened, flat = _flattened(OneFloatFirst())
    in_use = torch.zeros_like(flat.data, dtype=torch.bool)
    for p in flattened.parameters():
        start = (p.data_ptr() - flat.data.data_ptr()) // 4
        in_use[start : start + p.numel()] = True
    x = torch.randn(5, 3)
    torch.testing.assert_close(flattened(x), reference(x))
    ref_optimizer = torch.optim.Adam(reference.parameters(), lr=0.05)
    flat_optimizer = flat.adam(lr=0.05, eps=1e-8)
    for _ in range(3):
        ref_optimizer.zero_grad()
        reference(x).pow(2).sum().backward()
        ref_norm = nn.utils.clip_grad_norm_(reference.parameters(), 0.1)
        ref_optimizer.step()
        norm, (grad,) = learner_step(flat, flat_optimizer, flattened(x).pow(2).sum(), 0.1)
        assert not grad[~in_use].any()  # no gradient reaches the padding
        torch.testing.assert_close(norm, ref_norm)
        assert not flat.data[~in_use].any()  # Adam leaves the padding at zero
    for got, want in zip(flattened.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(got, want)
    target = FlatParameters(copy.deepcopy(reference), with_grad=False)
    target.data.lerp_(flat.data, 0.5)  # a Polyak average over the whole flat tensor
    target.copy_from(flat)
    assert torch.equal(target.data, flat.data)


def test_gradients_lay_per_parameter_tensors_out_as_the_flat_tensor_padding_zero():
    _, flattened, flat = _flattened(OneFloatFirst())
    x = torch.randn(2, 3)
    flat.grad.zero_()  # (the module's own zero_grad would set them to None)
    flattened(x).sum().backward()  # autograd writes the gradients into flat.grad's views
    grads = torch.autograd.grad(flattened(x).sum(), flat.module_parameters)
    assert torch.equal(flat.gradients(grads)[0], flat.grad)


@pytest.mark.parametrize(("fused", "compiled"), [(True, False), (False, False), (False, True)])
def test_adam_steps_as_torch_adam_with_a_changing_rate(fused, compiled):
    """The learners' Adam (torch.optim's functional form) against torch.optim.Adam: fused
    or plain eagerly, and as a compiled step keeps it (its state and rate as tensors)."""
    torch.manual_seed(0)
    start = torch.randn(100)
    grads = [torch.randn(100) for _ in range(5)]
    reference = nn.Parameter(start.clone())
    optimizer = torch.optim.Adam([reference], lr=1e-3, eps=1e-5, fused=fused)
    weights = start.clone()
    mode = "compile" if compiled else "eager"
    adam = FunctionalAdam([weights], 1e-3, eps=1e-5, fused=fused, mode=mode)
    for i, grad in enumerate(grads):
        rate = 1e-3 * (1 - i / 5)  # an annealed rate, as PPOLearner.anneal sets it
        optimizer.param_groups[0]["lr"] = rate
        adam.set_lr(rate)
        reference.grad = grad.clone()
        optimizer.step()
        adam.step([grad])
    atol = 3e-7 if compiled else 0  # a compiled step's rate is float32: float rounding
    torch.testing.assert_close(weights, reference.detach(), rtol=0, atol=atol)
    assert adam.steps[0].item() == 5


def test_clip_norm_scales_only_above_the_limit():
    grads = [torch.tensor([3.0]), torch.tensor([4.0])]  # one norm over all the tensors
    assert clip_norm_(grads, 10.0).item() == 5.0 and [g.item() for g in grads] == [3.0, 4.0]
    clip_norm_(grads, 1.0)
    norm = torch.linalg.vector_norm(torch.cat(grads))
    torch.testing.assert_close(norm, torch.tensor(1.0), atol=1e-5, rtol=0)
