"""The compile choice: compiled pieces compute what the eager ones do, and fall back gracefully.

Compiling is slow the first time (seconds to tens of seconds on a busy 2-core machine), so
each piece is compiled once per module here (the fixtures), at small sizes.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import gymnasium as gym
import pytest
import torch

import hetero_tutorial.speed.compiler as compiled_module
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.modes import QUICK_ENV_VAR
from hetero_tutorial.core.paths import REPO_DIR
from hetero_tutorial.core.placement import as_placement
from hetero_tutorial.core.transfers import CopyCounter
from hetero_tutorial.rl.buffers import Batch
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.learner import DDPGLearner
from hetero_tutorial.rl.envs.batched import BATCHED_ENV_IDS, make_batched_env
from hetero_tutorial.rl.ppo.collectors import BatchedCollector
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.learner import PPOLearner
from hetero_tutorial.rl.ppo.runs import train
from hetero_tutorial.rl.ppo.trainer import PPOTrainer
from hetero_tutorial.speed.compiler import (
    COMPILE_MODES,
    break_even_iterations,
    compile_mode_of,
    compile_switches,
    compile_unavailable,
    compiled,
    require_compile_mode,
    unguarded,
)
from hetero_tutorial.speed.cpu_forms import (
    LIBRARY_ROWS,
    NARROW,
    cpu_forms,
    flags,
    paired_product,
    tanh,
)
from hetero_tutorial.speed.graphs import GRAPH_MINIBATCHES, GRAPH_STEPS
from hetero_tutorial.studies.compiling import forward_grid_rows

NOTEBOOKS = REPO_DIR / "notebooks"
NUM_ENVS = 64
STEPS = 120  # several of CartPole's random-action episodes: autoresets happen


def _rollout(env_id: str, mode: str) -> list[torch.Tensor]:
    """Every step's obs, reward, terminated, truncated and final obs under random actions."""
    env = make_batched_env(env_id, NUM_ENVS, check_actions=False, **compile_switches(mode))
    env.reset(seed=3)
    actions = torch.Generator().manual_seed(5)
    out = []
    for _ in range(STEPS):
        if env_id == "CartPole-v1":
            action = torch.randint(0, 2, (NUM_ENVS,), generator=actions).float()
        else:
            action = torch.rand(NUM_ENVS, 1, generator=actions) * 4 - 2
        obs, reward, terminated, truncated, info = env.step(action)
        out += [obs, reward, terminated, truncated, info["final_obs"]]
    return out


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_the_compiled_batched_step_steps_as_the_eager_one(env_id):
    eager, compiled_run = _rollout(env_id, "eager"), _rollout(env_id, "compile")
    for e, c in zip(eager, compiled_run, strict=True):
        if e.dtype == torch.bool:
            assert torch.equal(e, c)  # the same episodes end at the same steps
        else:
            # Inductor fuses (and so rounds) differently: a 1e-7 difference grows in an
            # unstable system over the steps, as float32 against float64 does.
            torch.testing.assert_close(c, e, rtol=1e-3, atol=1e-3)


UPDATE_CALLS = 10 // math.gcd(10, GRAPH_MINIBATCHES)
"""Graph calls per update at the tuned CartPole settings: its 10 minibatch steps, a graph's
worth (their greatest common divisor with GRAPH_MINIBATCHES) to a call."""


def _trainer(mode: str, iterations: int) -> PPOTrainer:
    config = PPOConfig.tuned("CartPole-v1", total_steps=256 * iterations, **compile_switches(mode))
    trainer = PPOTrainer(config, as_placement("all-device"), seed=0)
    for _ in range(iterations):
        trainer.run_iteration()
    return trainer


@pytest.fixture(scope="module")
def trainers() -> dict[str, PPOTrainer]:
    return {mode: _trainer(mode, 3) for mode in ("eager", "compile")}


@pytest.mark.xdist_group("compiled-trainers")  # one worker builds them once
def test_compiled_ppo_learns_as_eager_ppo_from_the_same_seed(trainers):
    """Three iterations (30 Adam steps, the clip range decaying): the same weights within
    float tolerance, and the same episodes, step for step."""
    eager, comp = trainers["eager"], trainers["compile"]
    torch.testing.assert_close(
        comp.learner.params.data, eager.learner.params.data, rtol=0, atol=2e-3
    )
    assert comp.collector.episodes == eager.collector.episodes
    assert comp.last_stats == pytest.approx(eager.last_stats, rel=1e-2, abs=1e-4)


@pytest.mark.xdist_group("compiled-trainers")  # one worker builds them once
def test_eager_and_compiled_pieces_run_one_function_per_step(trainers):
    """One piece of code per step: eager runs it, compiled compiles it (the CleanRL-shaped
    gradient step, the same function object)."""
    eager, comp = (trainers[m].learner.step for m in ("eager", "compile"))
    assert eager.mode == "eager" and comp.mode == "compile"
    assert eager.eager_fn.__func__ is comp.eager_fn.__func__ is PPOLearner.gradient_steps
    ddpg = _ddpg_learners(("eager", "compile")).values()
    steps = {learner.step.eager_fn.__func__ for learner in ddpg}
    assert steps == {DDPGLearner.update}
    eager, comp = (trainers[m].collector.step for m in ("eager", "compile"))
    assert eager.mode == "eager" and comp.mode == "compile"
    assert eager.eager_fn.__func__ is comp.eager_fn.__func__ is BatchedCollector.rollout_steps
    for env_id in BATCHED_ENV_IDS:  # the environments' physics, stepped eagerly and compiled
        env = make_batched_env(env_id, 4, compile=True)
        assert env.compiled_step.mode == "compile"
        assert env.compiled_step.eager_fn.__func__ is type(env).transition


@pytest.mark.xdist_group("compiled-trainers")  # one worker builds them once
def test_a_compiled_run_times_its_compiling_apart_and_compiles_once(trainers):
    update = trainers["compile"].learner.step
    assert update.mode == "compile" and update.start_seconds > 0
    # a graph's worth of an update's 10 steps to a call, every later call steady
    assert update.steady_calls == 3 * UPDATE_CALLS - 1
    assert update.compile_seconds > 10 * update.steady_seconds / update.steady_calls
    rollout = trainers["compile"].collector.step
    # GRAPH_STEPS of the rollout's 32 steps to a call, every later call steady
    assert rollout.mode == "compile" and rollout.steady_calls == 3 * 32 // GRAPH_STEPS - 1
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] >= 2


def _eager_and_compiled(env_id: str, **settings: int) -> tuple[PPOTrainer, PPOTrainer]:
    """All-device PPO on ``env_id`` trained to its end eagerly and compiled, seed 0."""
    trained = []
    for mode in ("eager", "compile"):
        config = PPOConfig.tuned(env_id, **settings, **compile_switches(mode))
        trainer = PPOTrainer(config, as_placement("all-device"), seed=0)
        while not trainer.done:
            trainer.run_iteration()
        trained.append(trainer)
    return trained[0], trained[1]


def test_a_rollout_of_no_multiple_of_the_graph_steps_puts_fewer_in_each_graph():
    """Six steps a rollout: two to a graph (their greatest common divisor with GRAPH_STEPS),
    three calls a rollout, and the eager rollout's episodes and storage, step for step."""
    eager, comp = _eager_and_compiled(
        "CartPole-v1", num_envs=4, num_steps=6, minibatch_size=12, total_steps=96
    )
    assert GRAPH_STEPS % 2 == 0 and comp.collector.initial.shape[0] == 2
    assert comp.collector.step.calls == 4 * 3
    torch.testing.assert_close(comp.storage.data, eager.storage.data, rtol=0, atol=1e-4)
    assert comp.collector.episodes == eager.collector.episodes != []


def test_an_update_of_no_multiple_of_the_graph_minibatches_puts_fewer_in_each_graph():
    """Three epochs of one minibatch: one step to a graph (their greatest common divisor
    with GRAPH_MINIBATCHES), three calls an update, and the eager run's weights."""
    eager, comp = _eager_and_compiled(
        "CartPole-v1", num_envs=4, num_steps=8, minibatch_size=32, update_epochs=3, total_steps=64
    )
    assert GRAPH_MINIBATCHES % 3 != 0 and comp.learner.step.calls == 2 * 3
    torch.testing.assert_close(
        comp.learner.params.data, eager.learner.params.data, rtol=0, atol=1e-4
    )


@pytest.mark.xdist_group("compiled-trainers")  # one worker builds them once
def test_a_counted_compiled_run_leaves_its_compiling_out_of_the_steady_speed(trainers):
    """Under the copy counter the first iteration runs eagerly, so the pieces compile in the
    second: both are start-up, and the run learns as the eager one still."""
    config = PPOConfig.tuned("CartPole-v1", total_steps=256 * 3, compile=True)
    run = train(config, "all-device", count_copies=True, eval_episodes=0)
    assert run.start_iterations == 2 and run.steady_iterations == run.iteration_seconds[2:]
    assert run.fields()["start_iterations"] == 2
    eager = trainers["eager"].learner.policy.state_dict()
    for name, weights in run.policy.state_dict().items():
        torch.testing.assert_close(weights, eager[name], rtol=0, atol=2e-3)
    counted = PPOTrainer(config, as_placement("all-device"), seed=0, count_copies=True)
    for _ in range(3):
        counted.run_iteration()
    rollout, update = counted.compiled_pieces
    assert rollout.steady_calls == 2 * 32 // GRAPH_STEPS - 1
    assert update.steady_calls == 2 * UPDATE_CALLS - 1
    uncounted = PPOTrainer(config, as_placement("all-device"), seed=0)
    assert uncounted.start_iterations == 1


def test_compiled_pendulum_ppo_collects_and_learns_as_eager():
    """The Gaussian policy and Pendulum's eager transition, traced into the rollout's graph:
    one iteration gives eager's rollout and weights within float tolerance. Its update's 40
    minibatch steps go four to a graph (GRAPH_MINIBATCHES divides them), in 10 calls."""
    eager, comp = _eager_and_compiled(
        "Pendulum-v1", num_envs=8, num_steps=64, minibatch_size=128, total_steps=512
    )
    assert comp.collector.step.mode == "compile" and comp.learner.step.mode == "compile"
    assert GRAPH_MINIBATCHES == 4 and comp.learner.step.calls == 10
    torch.testing.assert_close(comp.storage.data, eager.storage.data, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(
        comp.learner.params.data, eager.learner.params.data, rtol=0, atol=1e-4
    )


def _ddpg_learners(modes: tuple[str, ...], **config: float) -> dict[str, DDPGLearner]:
    env = gym.make("Pendulum-v1")
    return {
        m: DDPGLearner(env, DDPGConfig(**compile_switches(m), **config), as_placement("all-cpu"), 0)
        for m in modes
    }


def _pendulum_batches(count: int, size: int = 256) -> list[Batch]:
    g = torch.Generator().manual_seed(1)
    normal = lambda *shape: torch.randn(*shape, generator=g)  # noqa: E731
    ended = lambda: (torch.rand(size, generator=g) < 0.05).float()  # noqa: E731
    return [Batch(normal(size, 3), normal(size, 1).clamp(-2, 2), normal(size), normal(size, 3),
                  ended(), torch.zeros(size)) for _ in range(count)]  # fmt: skip


def test_the_compiled_ddpg_update_learns_as_the_eager_one():
    """Five updates on the same batches, with steps large enough that the targets move as
    much as the networks (tau 0.5, learning rates 1e-2): after every update all four
    networks' weights agree within float rounding (amplified a little by Adam's normalised
    steps), where a tau of 0.45 is off by far more after one; one graph, compiled once."""
    steps = {"tau": 0.5, "actor_lr": 1e-2, "critic_lr": 1e-2}
    learners = _ddpg_learners(("eager", "compile"), **steps)
    (other_tau,) = _ddpg_learners(("eager",), **{**steps, "tau": 0.45}).values()
    eager, comp = learners["eager"], learners["compile"]
    start = eager.critic_target_flat.data.clone()
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]  # no other test's tau
    for index, batch in enumerate(_pendulum_batches(5)):
        for learner in (eager, comp, other_tau):
            learner.step(batch)
        for mine, theirs in zip(comp.flats, eager.flats, strict=True):
            torch.testing.assert_close(mine.data, theirs.data, rtol=0, atol=2e-5)
        if index == 0:
            pairs = zip(other_tau.flats, eager.flats, strict=True)
            assert max((o.data - e.data).abs().max() for o, e in pairs) > 1e-4
    assert (eager.critic_target_flat.data - start).abs().max() > 1e-2  # the targets moved
    assert comp.step.mode == "compile" and comp.step.steady_calls == 4
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] - graphs == 1


def test_under_a_copy_counter_a_compiled_piece_runs_its_arithmetic_eagerly():
    """The copy counter watches every operation (a dispatch mode, which Dynamo refuses to
    trace under): a compiled update there runs eagerly, uncounted by the piece's clock, and
    updates the weights as the compiled one would."""
    learners = _ddpg_learners(("eager", "compile"))
    first, counted = _pendulum_batches(2)
    for learner in learners.values():
        learner.step(first)
    comp = learners["compile"]
    with CopyCounter():
        comp.step(counted)
    learners["eager"].step(counted)
    assert comp.step.steady_calls == 0  # the counted call ran on no clock
    for mine, theirs in zip(comp.flats, learners["eager"].flats, strict=True):
        torch.testing.assert_close(mine.data, theirs.data, rtol=0, atol=2e-5)


def test_without_a_cpp_compiler_ddpg_updates_eagerly_saying_why(monkeypatch, capsys):
    monkeypatch.setattr(compiled_module, "_cpp_compiler", lambda: None)
    monkeypatch.setattr(compiled_module, "_SAID", set())
    (learner,) = _ddpg_learners(("compile",)).values()
    learner.step(_pendulum_batches(1)[0])
    assert learner.step.mode == "eager" and learner.critic_optimizer.fused  # eager's Adam
    assert "DDPG's update runs eagerly: no C++ compiler" in capsys.readouterr().err


def test_compiling_ppo_needs_flat_parameters_and_eager_ppo_does_not():
    config = PPOConfig.tuned("CartPole-v1", flat_parameters=False, compile=True)
    with pytest.raises(UsageError, match="flat_parameters=True"):
        PPOTrainer(config, as_placement("all-device"), seed=0)
    eager = PPOConfig.tuned("CartPole-v1", flat_parameters=False, total_steps=256)
    trainer = PPOTrainer(eager, as_placement("all-device"), seed=0)
    trainer.run_iteration()
    assert trainer.learner.step.mode == "eager" and trainer.done


def test_a_compiled_step_refuses_one_gather_per_epoch_and_the_default_takes_its_own():
    """gather_per_epoch=True is an eager trick: with compile=True it is refused, where it
    was once ignored; unset, each mode gathers its own way."""
    refused = PPOConfig.tuned("CartPole-v1", gather_per_epoch=True, compile=True)
    with pytest.raises(UsageError, match="gather_per_epoch=True is for eager steps"):
        refused.validate()
    PPOConfig.tuned("CartPole-v1", gather_per_epoch=False, compile=True).validate()
    assert PPOConfig.tuned("CartPole-v1", compile=True).gather_per_epoch is None


def test_without_a_cpp_compiler_ppo_runs_eagerly_saying_why(monkeypatch, capsys):
    monkeypatch.setattr(compiled_module, "_cpp_compiler", lambda: None)
    monkeypatch.setattr(compiled_module, "_SAID", set())
    trainer = _trainer("compile", 1)
    assert trainer.collector.step.mode == trainer.learner.step.mode == "eager"
    assert "no C++ compiler" in trainer.learner.step.fallback
    assert "no C++ compiler" in capsys.readouterr().err


def test_without_a_cpp_compiler_the_run_falls_back_to_eager_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr(compiled_module, "_cpp_compiler", lambda: None)
    monkeypatch.setattr(compiled_module, "_SAID", set())
    reason = compile_unavailable("cpu")
    assert "no C++ compiler" in reason
    env = make_batched_env("CartPole-v1", 4, compile=True)
    env2 = make_batched_env("CartPole-v1", 4, compile=True)
    assert env.compiled_step.mode == "eager" and env.compiled_step.fallback == reason
    assert env2.compiled_step.mode == "eager"
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"compile: the CartPole-v1 step runs eagerly: {reason}"]  # said once
    env.reset(seed=0)
    obs, *_ = env.step(torch.ones(4))
    assert obs.shape == (4, 4)


def test_an_unsupported_python_falls_back_too(monkeypatch):
    monkeypatch.setattr(torch._dynamo, "is_dynamo_supported", lambda: False)
    monkeypatch.setattr(compiled_module, "_SAID", set())
    piece = compiled(lambda x: x + 1, "compile", "cpu", "a test piece")
    assert piece.mode == "eager" and "does not support Python" in piece.fallback
    assert piece(torch.ones(1)).item() == 2.0


def test_cuda_graphs_need_cuda_and_bad_modes_are_refused():
    assert "CUDA device" in compile_unavailable("cpu", "cudagraphs")
    assert compile_unavailable("cpu", "eager") is None
    with pytest.raises(UsageError, match="eager, compile, cudagraphs"):
        require_compile_mode("jit")


def test_the_two_switches_name_the_modes_and_are_checked_where_they_are_set():
    """compile and cudagraphs, as LeanRL names them: each mode has its switches, CUDA graphs
    need compile too, and a mode's name where a switch belongs (the old spelling, which a
    bool test would take as True) is refused, saying what to set."""
    for mode in COMPILE_MODES:
        assert compile_mode_of(**compile_switches(mode)) == mode
    assert PPOConfig(compile=True, cudagraphs=True).compile_mode == "cudagraphs"
    assert DDPGConfig(compile=True).compile_mode == "compile"
    assert PPOConfig().compile_mode == DDPGConfig().compile_mode == "eager"
    with pytest.raises(UsageError, match="needs compile=True too"):
        PPOConfig.tuned("CartPole-v1", cudagraphs=True).validate()
    with pytest.raises(UsageError, match="needs compile=True too"):
        DDPGConfig(cudagraphs=True)
    for mode in COMPILE_MODES:
        with pytest.raises(UsageError, match=f"compile is a switch, True or False; got '{mode}'"):
            PPOConfig.tuned("CartPole-v1", compile=mode).validate()
        with pytest.raises(UsageError, match="compile is a switch"):
            make_batched_env("CartPole-v1", 4, compile=mode)
    with pytest.raises(UsageError, match="cudagraphs is a switch"):
        DDPGConfig(compile=True, cudagraphs="cudagraphs")


def test_a_graphed_piece_starts_in_two_calls_and_counts_every_declined_graph():
    """Under CUDA graphs the first call compiles and warms up, the second captures: both
    are start-up. CUDA graph trees decline a graph on the CPU (the piece is built directly
    here, past the check that stops a run from asking for it), and each call that meets a
    new graph may decline one: counted over all calls."""
    piece = compiled_module.CompiledPiece(lambda x: x * 2 + 1, "cudagraphs", "a test", None)
    for size in (3, 3, 3, 5):  # a new size: a second graph, declined too
        assert torch.equal(piece(torch.ones(size)), torch.full((size,), 3.0))
    assert piece.start_calls == 2 and piece.steady_calls == 2 and piece.start_seconds > 0
    assert piece.graph_skips == 2


def test_a_cpu_piece_calls_its_kernels_from_cpp_and_computes_the_same():
    """On a CPU the code that calls a graph's kernels is generated as C++, not Python (the
    per-call overhead of a small piece): the generated entry point is C++'s, and the
    numbers are eager's."""
    from torch._inductor.utils import run_and_get_code

    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x @ w).sum(0)

    piece = compiled_module.compiled(fn, "compile", "cpu", "a test")
    x, w = torch.randn(16, 8), torch.randn(8, 4)
    out, code = run_and_get_code(piece, x, w)
    assert torch.allclose(out, fn(x, w), atol=1e-6)
    assert any("inductor_entry_impl" in source for source in code)


def test_break_even_iterations():
    assert break_even_iterations(10.0, 0.5, 0.3) == pytest.approx(50.0)
    assert break_even_iterations(10.0, 0.3, 0.3) is None  # never pays


@pytest.mark.accelerator
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a CUDA GPU")
def test_cuda_graphed_ppo_learns_as_eager_ppo_on_cuda():
    """On CUDA: the graphed env step and loss give eager's weights within float tolerance
    after three iterations, and the graphs are captured once (no recompile per iteration)."""
    trained = {}
    for mode in ("eager", "cudagraphs"):
        config = PPOConfig.tuned("CartPole-v1", total_steps=256 * 3, **compile_switches(mode))
        trainer = PPOTrainer(config, as_placement("all-device"), seed=0)
        for _ in range(3):
            trainer.run_iteration()
        trained[mode] = trainer
    eager, graphed = trained["eager"], trained["cudagraphs"]
    if graphed.learner.step.fallback:
        pytest.skip(f"compile unavailable here: {graphed.learner.step.fallback}")
    torch.testing.assert_close(
        graphed.learner.params.data, eager.learner.params.data, rtol=0, atol=5e-3
    )
    # the start: compile, capture
    assert graphed.learner.step.steady_calls == 3 * UPDATE_CALLS - 2
    # Captured, not merely compiled: the steps write their weights, moments and env state in
    # place, which CUDA graph trees refuse to capture unless those are static addresses.
    assert graphed.learner.step.graph_skips == 0 and graphed.collector.step.graph_skips == 0


@pytest.mark.accelerator
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a CUDA GPU")
def test_the_cuda_graphed_ddpg_update_learns_as_the_eager_one_on_cuda():
    """On CUDA: five graphed updates give eager's four networks within float tolerance, and
    the update is captured (its weights, moments and targets static: no graph declined)."""
    env = gym.make("Pendulum-v1")
    learners = {
        m: DDPGLearner(env, DDPGConfig(**compile_switches(m)), as_placement("hybrid"), 0)
        for m in ("eager", "cudagraphs")
    }
    graphed = learners["cudagraphs"]
    if graphed.step.fallback:
        pytest.skip(f"compile unavailable here: {graphed.step.fallback}")
    for batch in _pendulum_batches(5):
        on_device = Batch(*(t.to(graphed.placement.update_device) for t in batch))
        for learner in learners.values():
            learner.step(on_device)
    for mine, theirs in zip(graphed.flats, learners["eager"].flats, strict=True):
        torch.testing.assert_close(mine.data, theirs.data, rtol=0, atol=1e-4)
    assert graphed.step.steady_calls == 5 - 2 and graphed.step.graph_skips == 0


def test_the_step_breakdown_finds_the_paired_networks_products():
    from hetero_tutorial.studies.compile_breakdown import step_breakdown

    found = step_breakdown(256, calls=3, repeats=1)
    # Forward: 3 paired products (4->64, 64->64, 64->2, two networks each); backward: the
    # three weight gradients and the two input gradients that reach a weight (not the obs').
    forward = 2 * 2 * 256 * (4 * 64 + 64 * 64 + 64 * 2)
    backward = 2 * 2 * 256 * (64 * 2 + 64 * 64 + 4 * 64) + 2 * 2 * 256 * (2 * 64 + 64 * 64)
    assert found.matmul_calls == 8 and found.matmul_flops == forward + backward
    # The products ran within the profiled calls; the step was timed at another moment,
    # so on a loaded machine it can be the shorter (the report caps the rest at zero).
    assert 0 < found.matmul_s < found.profiled_s and found.step_s > 0
    assert found.peak_flops_per_s > 0


def test_the_step_breakdown_needs_a_compiler(monkeypatch):
    from hetero_tutorial.studies.compile_breakdown import step_breakdown

    monkeypatch.setattr(compiled_module, "_cpp_compiler", lambda: None)
    with pytest.raises(UsageError, match="no C\\+\\+ compiler"):
        step_breakdown()


def test_a_graph_break_in_a_compiled_piece_is_an_error_not_a_silent_split():
    def broken(x: torch.Tensor) -> torch.Tensor:
        y = x + 1
        torch._dynamo.graph_break()
        return y * 2

    piece = compiled(broken, "compile", "cpu", "a broken piece")
    with pytest.raises(torch._dynamo.exc.Unsupported):
        piece(torch.ones(3))


def test_doctor_says_whether_compile_works_and_how_long_it_took(monkeypatch):
    from hetero_tutorial.app.doctor import compile_check

    found = compile_check()
    assert found["works"] and found["message"] == "ok" and found["first_compile_s"] >= 0
    monkeypatch.setattr(compiled_module, "_cpp_compiler", lambda: None)
    missing = compile_check()
    assert not missing["works"] and "no C++ compiler" in missing["message"]


def test_the_hidden_layers_tanh_is_tanh_eagerly_and_within_rounding_compiled():
    x = torch.linspace(-10, 10, 20_001)
    assert torch.equal(tanh(x), torch.tanh(x))  # eager: the one call, exactly
    compiled_form = torch.compile(tanh, dynamic=False)(x)
    torch.testing.assert_close(compiled_form, torch.tanh(x), rtol=0, atol=3e-7)


@pytest.mark.parametrize(
    ("rows", "outputs"),  # fewer than Dynamo's limit of 8 compiles of one function
    [(8, 2), (LIBRARY_ROWS - 1, NARROW - 1), (LIBRARY_ROWS, 1), (256, NARROW - 1), (256, NARROW)],
)
def test_a_paired_product_is_the_plain_product_eagerly_and_within_rounding_compiled(rows, outputs):
    """Narrow or wide, on few rows or many: each form the compiled layer takes (a product and
    a sum, the plain product, or the transposed) computes the plain product, and its
    gradients, within float rounding."""
    g = torch.Generator().manual_seed(2)
    bias, h, weight = (torch.randn(*shape, generator=g, requires_grad=True)
                       for shape in ((2, 1, outputs), (2, rows, 64), (2, 64, outputs)))  # fmt: skip
    assert torch.equal(paired_product(bias, h, weight), torch.baddbmm(bias, h, weight))
    upstream = torch.randn(2, rows, outputs, generator=g)

    def value_and_gradients(layer):
        out = layer(bias, h, weight)
        return out, *torch.autograd.grad(out, (bias, h, weight), upstream)

    plain = value_and_gradients(torch.baddbmm)
    traced = value_and_gradients(torch.compile(paired_product, dynamic=False, fullgraph=True))
    for expected, got in zip(plain, traced, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-4)


def _traced_ops(fn, *args) -> list[str]:
    """The operations of the graph ``torch.compile`` traces of ``fn(*args)``."""
    ops = []

    def backend(graph, example_inputs):
        ops.extend(str(node.target) for node in graph.graph.nodes if node.op == "call_function")
        return graph.forward

    torch.compile(fn, backend=backend, dynamic=False, isolate_recompiles=True)(*args)
    return ops


def test_the_cpu_forms_switch_turns_every_form_back_into_the_plain_one():
    x, weight, bias = torch.randn(2, 8, 64), torch.randn(2, 64, 2), torch.randn(2, 1, 2)

    def forms():
        return tanh(x), paired_product(bias, x, weight)

    on = _traced_ops(forms)
    assert any("sigmoid" in op for op in on) and not any("tanh" in op for op in on)
    assert not any("baddbmm" in op for op in on)  # 8 rows: a product and a sum
    with cpu_forms(False):
        off = _traced_ops(forms)
    assert any("tanh" in op for op in off) and any("baddbmm" in op for op in off)
    assert not any("sigmoid" in op for op in off)

    done = torch.rand(8) > 0.5

    def env_forms():
        return flags(done)

    wheres = [sum("where" in op for op in _traced_ops(env_forms))]
    with cpu_forms(False):
        wheres.append(sum("where" in op for op in _traced_ops(env_forms)))
    assert wheres == [1, 0]  # a select for the bytes; the mask as it is
    (as_bytes,) = torch.compile(env_forms, backend="eager", dynamic=False)()
    assert as_bytes.dtype == torch.uint8 and torch.equal(as_bytes.bool(), done)


class _Scaled:
    """The owner of a compiled method, with a Python number its graph reads (and guards)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def scaled(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale + 1


def test_unguarded_calls_skip_the_guards_which_is_why_nothing_a_graph_reads_may_change(
    monkeypatch,
):
    """Inside unguarded, once a piece has compiled, its graph runs unchecked: a changed
    Python value that a guard would have sent to a recompile runs the old graph, silently
    (why PyTorch calls the stance unsafe). Outside it the guard recompiles; under the
    checking stance the tests use, the same call raises."""
    owner = _Scaled(2.0)
    piece = compiled(owner.scaled, "compile", "cpu", "a test")
    with unguarded([piece]):  # not compiled yet: the first call checks, and compiles
        assert torch.equal(piece(torch.ones(4)), torch.full((4,), 3.0))
    owner.scale = 3.0
    with unguarded([piece]):
        assert torch.equal(piece(torch.ones(4)), torch.full((4,), 3.0))  # stale: 1 * 2 + 1
    assert torch.equal(piece(torch.ones(4)), torch.full((4,), 4.0))  # checked: recompiled
    monkeypatch.setattr(compiled_module, "STEADY_STANCE", CHECKING_STANCE)
    owner.scale = 4.0
    with pytest.raises(RuntimeError, match="fail_on_recompile"), unguarded([piece]):
        piece(torch.ones(4))
    eager = compiled(owner.scaled, "eager", "cpu", "a test")
    with unguarded([piece, eager]):  # an eager piece among them: the stance stays as it is
        assert torch.equal(piece(torch.ones(4)), torch.full((4,), 5.0))


CHECKING_STANCE = {"stance": "fail_on_recompile"}
"""A stance that checks every guard and raises where one fails: what unguarded calls would
get wrong, had they skipped the guards, as they do outside the tests."""


def test_no_unguarded_call_of_a_ppo_run_needs_a_recompile(monkeypatch):
    """The assumption that makes skipping the guards safe (compiled.STEADY_STANCE): PPO's
    iterations after the first, where the trainer skips its pieces' guards, run with every
    guard checked instead and never meet one that fails, on either environment (the
    learning rate and the clip range decay between iterations, as tensors)."""
    monkeypatch.setattr(compiled_module, "STEADY_STANCE", CHECKING_STANCE)
    stances = []
    set_stance = torch.compiler.set_stance
    monkeypatch.setattr(
        torch.compiler, "set_stance", lambda *a, **k: stances.append(k) or set_stance(*a, **k)
    )
    for env_id in ("CartPole-v1", "Pendulum-v1"):
        config = PPOConfig.tuned(env_id, num_envs=8, total_steps=3 * 8 * 64, compile=True)
        config = replace(config, num_steps=64, minibatch_size=128)
        trainer = PPOTrainer(config, as_placement("all-device"), 0)
        while not trainer.done:
            trainer.run_iteration()
        assert config.anneal_lr and len(trainer.iteration_seconds) == 3
        assert [p.mode for p in trainer.compiled_pieces] == ["compile", "compile"]
    assert stances == [CHECKING_STANCE] * 4  # iterations 2 and 3 of each run


def test_a_pytorch_without_the_public_calls_a_piece_makes_runs_it_eagerly(monkeypatch, capsys):
    assert compiled_module._missing_compile_api() is None  # this PyTorch has them
    monkeypatch.setattr(compiled_module, "_missing_compile_api", lambda: "it lacks them")
    monkeypatch.setattr(compiled_module, "_SAID", set())
    piece = compiled(lambda x: x + 1, "compile", "cpu", "a test piece")
    assert piece.mode == "eager" and "it lacks them (the series checks 2.13.0" in piece.fallback
    assert piece(torch.ones(1)).item() == 2.0
    assert capsys.readouterr().err.count("compile: a test piece runs eagerly") == 1


def _full_mode_parameters() -> dict[str, object]:
    """Notebook 08's parameters cell, run as full mode runs it (read as JSON: the GPU
    machine's image, where this test also runs, has no nbformat)."""
    notebook = json.loads(next(NOTEBOOKS.glob("08_*.ipynb")).read_text())
    (cell,) = [c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", [])]
    values: dict[str, object] = {}
    exec("".join(cell["source"]), values)  # by_mode picks the full budget: QUICK_ENV_VAR unset
    return values


def test_the_full_mode_grid_compiles_every_shape_of_its_forward(monkeypatch):
    """Full mode's grid compiles the same forward once per width and batch (twelve), past
    Dynamo's limit of 8 recompiles of one function: each piece has graphs of its own, and
    every shape runs compiled (tiny repeats: the compiling is what is tested). The limit is
    lowered to 1 here and the grid cut to its first two widths and batches: four shapes past
    a limit of one are the same case as twelve past eight, at a third of the compiling."""
    monkeypatch.delenv(QUICK_ENV_VAR, raising=False)
    grid = _full_mode_parameters()
    assert len(grid["GRID_WIDTHS"]) * len(grid["GRID_BATCHES"]) > 8  # the case the limit stops
    widths, batches = grid["GRID_WIDTHS"][:2], grid["GRID_BATCHES"][:2]
    with torch._dynamo.config.patch(recompile_limit=1):
        rows = forward_grid_rows(widths, batches, ["cpu"], repeats=1, seconds_per_repeat=1e-4)
    assert {(r.width, r.batch_size) for r in rows if r.mode == "compile"} == {
        (width, batch) for width in widths for batch in batches
    }


def test_the_series_cache_replaces_inductors_default_but_not_a_folder_asked_for(
    monkeypatch, tmp_path
):
    """Importing Inductor sets TORCHINDUCTOR_CACHE_DIR to its shared default where it is
    unset (a notebook's kernel inherits it): that is no folder asked for, and the series'
    own cache takes its place; a folder a learner set is kept."""
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    monkeypatch.setattr(compiled_module, "CACHE_DIR", tmp_path / "series")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", default_cache_dir())
    assert compiled_module.compile_cache() == (tmp_path / "series", False)
    (tmp_path / "series" / "kernel").touch()
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    assert compiled_module.compile_cache() == (tmp_path / "series", True)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "mine"))
    assert compiled_module.compile_cache() == (tmp_path / "mine", False)
