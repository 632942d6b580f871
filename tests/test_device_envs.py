"""The batched tensor environments against Gymnasium's, step for step; seeding, errors, no syncs.

Tolerance: the batched envs keep their state in float32, Gymnasium in float64, so
one step agrees to about one float32 rounding (1e-7 relative). Both systems are
unstable (the upright pole, the upright pendulum) and amplify any difference by
about e^(4 t), t in seconds: x1.1 per CartPole step, x1.25 per Pendulum step
(measured). Running free for five steps between copies of Gymnasium's state keeps
the gap under a quarter of rtol = atol = 1e-5; running free for a whole 500-step
episode would let it grow to the size of the state: chaos, not a bug.
"""

from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from hetero_tutorial.app import cli
from hetero_tutorial.core import results
from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.envs.batched import (
    BATCHED_ENV_IDS,
    BatchedCartPole,
    BatchedPendulum,
    make_batched_env,
)
from hetero_tutorial.rl.envs.vector import make_vector_env
from hetero_tutorial.studies import env_throughput

ACCELERATOR = accelerator()
DEVICES = [
    "cpu",
    pytest.param(
        str(ACCELERATOR),
        marks=[
            pytest.mark.skipif(ACCELERATOR is None, reason="no accelerator on this machine"),
            pytest.mark.accelerator,
        ],
        id="accelerator",
    ),
]
RESYNC_EVERY = 5
"""Steps the batched envs run free before their state is copied from Gymnasium's again."""
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}

Policy = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def random_pushes(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 2, len(obs))


def half_balanced(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Even envs balance the pole (it survives the 500-step limit), odd envs push at random."""
    balance = (obs @ np.array([0.1, 0.5, 3.0, 1.0]) > 0).astype(np.int64)
    return np.where(np.arange(len(obs)) % 2 == 0, balance, random_pushes(obs, rng))


def torques(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Torques beyond [-2, 2] too: both envs clip them (the batched one with checks off)."""
    return rng.uniform(-3.0, 3.0, (len(obs), 1)).astype(np.float32)


def _gym_states(vector_env: gym.vector.SyncVectorEnv) -> np.ndarray:
    return np.stack([env.unwrapped.state for env in vector_env.envs])


def _as_numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.cpu().numpy()


def compare_with_gymnasium(
    env_id: str, device: str, policy: Policy, steps: int, num_envs: int = 8, seed: int = 0
) -> dict[str, int]:
    """Step our SyncVectorEnv (SAME_STEP) and the batched env side by side; assert they agree.

    Returns how many terminations, truncations and resets were seen, so a test can
    check that it exercised them.
    """
    reference = make_vector_env(env_id, num_envs)
    gym_obs, _ = reference.reset(seed=seed)
    batched = make_batched_env(env_id, num_envs, device, check_actions=False)
    batched.reset(seed=seed)
    batched.state = _gym_states(reference)
    rng = np.random.default_rng(seed)
    seen = {"terminated": 0, "truncated": 0, "resets": 0}
    for t in range(steps):
        actions = policy(gym_obs, rng)
        gym_obs, gym_reward, gym_terminated, gym_truncated, gym_info = reference.step(actions)
        obs, reward, terminated, truncated, info = batched.step(torch.as_tensor(actions).to(device))

        assert obs.shape == gym_obs.shape and obs.dtype == torch.float32 and obs.is_contiguous()
        assert reward.dtype == torch.float32 and terminated.dtype == truncated.dtype == torch.bool
        np.testing.assert_array_equal(_as_numpy(terminated), gym_terminated, f"step {t}")
        np.testing.assert_array_equal(_as_numpy(truncated), gym_truncated, f"step {t}")
        np.testing.assert_allclose(_as_numpy(reward), gym_reward, **TOLERANCE, err_msg=f"step {t}")
        ended = gym_terminated | gym_truncated
        np.testing.assert_array_equal(_as_numpy(info["_final_obs"]), ended)
        final_obs = _as_numpy(info["final_obs"])
        # Running envs: obs (and final_obs, which equals it there) as Gymnasium's.
        np.testing.assert_allclose(_as_numpy(obs)[~ended], gym_obs[~ended], **TOLERANCE)
        np.testing.assert_array_equal(final_obs[~ended], _as_numpy(obs)[~ended])
        if ended.any():
            # Ended envs: the episode's true last observation, then a fresh first one
            # (from each env's own random stream, so it cannot match Gymnasium's).
            expected = np.stack(gym_info["final_obs"][ended])
            np.testing.assert_allclose(final_obs[ended], expected, **TOLERANCE)
            high = np.full(4, 0.05) if env_id == "CartPole-v1" else np.array([np.pi, 1.0])
            assert (np.abs(_as_numpy(batched.state)[ended]) <= high * (1 + 1e-6)).all()  # f32 pi
            np.testing.assert_array_equal(_as_numpy(batched.elapsed_steps)[ended], 0)
        seen["terminated"] += int(gym_terminated.sum())
        seen["truncated"] += int(gym_truncated.sum())
        seen["resets"] += int(ended.sum())
        # Continue from Gymnasium's states: reset envs at once, all of them every few steps.
        rows = np.ones(num_envs, bool) if (t + 1) % RESYNC_EVERY == 0 else ended
        state = _as_numpy(batched.state).astype(np.float64)
        state[rows] = _gym_states(reference)[rows]
        batched.state = state  # float64, as Gymnasium's: cast to float32 once, inside
    reference.close()
    return seen


@pytest.mark.parametrize("device", DEVICES)
def test_cartpole_matches_gymnasium_through_terminations_and_resets(device):
    seen = compare_with_gymnasium("CartPole-v1", device, random_pushes, steps=150)
    assert seen["terminated"] > 20 and seen["truncated"] == 0


@pytest.mark.parametrize("device", DEVICES)
def test_cartpole_matches_gymnasium_through_the_time_limit(device):
    seen = compare_with_gymnasium("CartPole-v1", device, half_balanced, steps=520)
    assert seen["truncated"] == 4  # the four balanced envs, at step 500
    assert seen["terminated"] > 20


@pytest.mark.parametrize("device", DEVICES)
def test_pendulum_matches_gymnasium_over_two_episodes(device):
    seen = compare_with_gymnasium("Pendulum-v1", device, torques, steps=410)
    assert seen == {"terminated": 0, "truncated": 16, "resets": 16}


def test_an_episode_can_end_by_termination_and_time_limit_at_once():
    """Gymnasium's TimeLimit truncates at step 500 even when the pole falls at that step."""
    reference = gym.make("CartPole-v1")
    reference.reset(seed=0)
    falling = np.array([0.0, 0.0, 0.2, 2.0])  # crosses 12 degrees within one step
    reference.unwrapped.state = falling.copy()
    time_limit = reference  # find the wrapper that counts the steps
    while not isinstance(time_limit, gym.wrappers.TimeLimit):
        time_limit = time_limit.env
    time_limit._elapsed_steps = 499
    gym_obs, _, gym_terminated, gym_truncated, _ = reference.step(1)

    batched = BatchedCartPole(1)
    batched.reset(seed=0)
    batched.state = falling[None]
    batched.elapsed_steps = 499
    obs, _, terminated, truncated, info = batched.step(torch.tensor([1]))
    assert gym_terminated and gym_truncated
    assert bool(terminated[0]) and bool(truncated[0]) and bool(info["_final_obs"][0])
    np.testing.assert_allclose(info["final_obs"][0].numpy(), gym_obs, **TOLERANCE)
    assert int(batched.elapsed_steps[0]) == 0 and (obs.abs() <= 0.05).all()


@pytest.mark.parametrize("env_id", BATCHED_ENV_IDS)
def test_spaces_equal_gymnasiums(env_id):
    reference = gym.make(env_id)
    batched = make_batched_env(env_id, 3)
    assert batched.single_observation_space == reference.observation_space
    assert batched.single_action_space == reference.action_space
    assert batched.observation_space.shape == (3, *reference.observation_space.shape)
    assert batched.max_episode_steps == reference.spec.max_episode_steps


def _trajectory(env, seed: int, actions: torch.Tensor) -> torch.Tensor:
    first, _ = env.reset(seed=seed)
    return torch.stack([first] + [env.step(a)[0] for a in actions])


@pytest.mark.parametrize("env_id", BATCHED_ENV_IDS)
def test_same_seed_same_trajectory_other_seed_another(env_id):
    generator = torch.Generator().manual_seed(1)
    if env_id == "CartPole-v1":
        actions = torch.randint(0, 2, (250, 16), generator=generator)
    else:
        actions = torch.rand(250, 16, 1, generator=generator) * 4 - 2
    env = make_batched_env(env_id, 16)
    once = _trajectory(env, 3, actions)  # 250 steps: Pendulum resets once, CartPole often
    again = _trajectory(make_batched_env(env_id, 16), 3, actions)
    other = _trajectory(env, 4, actions)
    assert torch.equal(once, again)
    assert not torch.isclose(once[0], other[0]).any()
    assert not torch.equal(env.reset()[0], env.reset()[0])  # no seed: the stream continues


def test_reset_distributions_are_gymnasiums():
    """CartPole: uniform(-0.05, 0.05) on all four; Pendulum: theta uniform in [-pi, pi),
    theta_dot in [-1, 1)."""
    n = 50_000
    cartpole = BatchedCartPole(n)
    obs, _ = cartpole.reset(seed=0)
    assert obs.min() >= -0.05 and obs.max() < 0.05
    assert obs.min() < -0.0499 and obs.max() > 0.0499  # the whole range, not a narrower one
    assert obs.mean(0).abs().max() < 0.002 and torch.allclose(
        obs.var(0), torch.full((4,), 0.1**2 / 12), rtol=0.05
    )
    pendulum = BatchedPendulum(n)
    obs, _ = pendulum.reset(seed=0)
    theta = torch.atan2(obs[:, 1], obs[:, 0])
    assert torch.allclose(obs[:, 0] ** 2 + obs[:, 1] ** 2, torch.ones(n), atol=1e-6)
    assert theta.min() < -3.13 and theta.max() > 3.13 and abs(theta.mean()) < 0.05
    assert obs[:, 2].min() >= -1 and obs[:, 2].max() < 1 and obs[:, 2].min() < -0.999
    # Autoreset draws from the same distribution: end every episode at once.
    pendulum.elapsed_steps = 199
    obs, _, _, truncated, info = pendulum.step(torch.zeros(n, 1))
    assert truncated.all() and info["_final_obs"].all()
    assert obs[:, 2].abs().max() < 1 and abs(torch.atan2(obs[:, 1], obs[:, 0]).mean()) < 0.05
    assert not torch.isclose(obs, info["final_obs"]).all(1).any()


def test_state_rows_can_be_set_through_the_view():
    env = BatchedPendulum(3)
    env.reset(seed=0)
    env.state[1] = torch.tensor([0.0, 0.5])  # upright, turning
    env.state = env.state.clone()  # assigning a whole state copies it in
    np.testing.assert_allclose(env.step(torch.zeros(3, 1))[0][1, 2], 0.5, atol=1e-6)
    env.state = np.array([[7.0, 0.0]] * 3)  # angles are kept wrapped into [-pi, pi)
    np.testing.assert_allclose(env.state[:, 0].numpy(), 7.0 - 2 * np.pi, rtol=1e-6)


def test_cartpole_takes_float_actions_as_ppo_stores_them():
    ints, floats = BatchedCartPole(8), BatchedCartPole(8)
    actions = torch.randint(0, 2, (60, 8), generator=torch.Generator().manual_seed(0))
    assert torch.equal(_trajectory(ints, 5, actions), _trajectory(floats, 5, actions.float()))


def test_unchecked_actions_are_read_as_gymnasium_would_clip_or_push():
    """check_actions=False: CartPole reads nonzero as 'push right'; Pendulum clips to [-2, 2]."""
    twos = _trajectory(BatchedCartPole(4, check_actions=False), 0, torch.full((30, 4), 2))
    assert torch.equal(twos, _trajectory(BatchedCartPole(4), 0, torch.ones(30, 4, dtype=int)))
    big = _trajectory(BatchedPendulum(4, check_actions=False), 0, torch.full((30, 4, 1), 9.0))
    assert torch.equal(big, _trajectory(BatchedPendulum(4), 0, torch.full((30, 4, 1), 2.0)))


def _cartpole(**options) -> BatchedCartPole:
    env = BatchedCartPole(4, **options)
    env.reset(seed=0)
    return env


def _pendulum(**options) -> BatchedPendulum:
    env = BatchedPendulum(4, **options)
    env.reset(seed=0)
    return env


BAD_INPUTS = {
    "unknown env": (lambda: make_batched_env("MountainCar-v0", 4), "CartPole-v1, Pendulum-v1"),
    "no envs": (lambda: BatchedCartPole(0), "num_envs must be at least 1, got 0"),
    "absent device": (lambda: BatchedCartPole(4, device="cuda:99"), "Available"),
    "unknown device": (lambda: make_batched_env("Pendulum-v1", 4, "tpu"), "Available"),
    "step before reset": (lambda: BatchedCartPole(4).step(torch.zeros(4)), "call reset()"),
    "numpy actions": (lambda: _cartpole().step(np.zeros(4)), "torch.as_tensor(actions"),
    "other device": (
        lambda: _cartpole().step(torch.zeros(4, device="meta")),
        "actions are on meta but the envs are on cpu",
    ),
    "cartpole shape": (lambda: _cartpole().step(torch.zeros(4, 1)), "pass actions[:, 0]"),
    "cartpole bool": (lambda: _cartpole().step(torch.ones(4, dtype=bool)), "actions.long()"),
    "cartpole 2": (
        lambda: _cartpole().step(torch.tensor([0, 1, 1, 2])),
        "must be 0 (push left) or 1 (push right): env 3 got 2",
    ),
    "cartpole 0.5": (lambda: _cartpole().step(torch.tensor([0.5, 0, 1, 1])), "env 0 got 0.5"),
    "pendulum shape": (lambda: _pendulum().step(torch.zeros(4)), "pass actions[:, None]"),
    "pendulum ints": (lambda: _pendulum().step(torch.zeros(4, 1, dtype=int)), "floating point"),
    "pendulum 2.5": (
        lambda: _pendulum().step(torch.tensor([[0.0], [2.5], [0.0], [0.0]])),
        "torques must lie in [-2, 2] N m: env 1 got [2.5]. Clip them",
    ),
    "pendulum nan": (
        lambda: _pendulum().step(torch.tensor([[0.0], [0.0], [float("nan")], [0.0]])),
        "env 2 got [nan]",
    ),
    "state shape": (lambda: setattr(_pendulum(), "state", torch.zeros(4, 3)), "shape (4, 2)"),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_input_says_what_to_do(case):
    make_mistake, expected = BAD_INPUTS[case]
    with pytest.raises(UsageError) as error:
        make_mistake()
    assert expected in str(error.value)


SYNC_OPS = {
    "_local_scalar_dense",  # .item(), bool(t), int(t), if t: ...
    "item",
    "nonzero",  # boolean indexing, torch.where(cond) with one argument
    "nonzero_static",
    "is_nonzero",
    "equal",
    "masked_select",
    "_unique2",
    "unique_consecutive",
    "repeat_interleave",
}
"""Operations whose output shape or Python result needs the tensor's values on the host:
on an accelerator each one waits for the device."""


class HostReads(TorchDispatchMode):
    """Counts the operations of :data:`SYNC_OPS` run inside the block."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in SYNC_OPS:
            self.seen.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("env_id", BATCHED_ENV_IDS)
def test_step_reads_nothing_back_to_the_host(env_id):
    unchecked, checked = (make_batched_env(env_id, 64, check_actions=c) for c in (False, True))
    actions = torch.zeros(64) if env_id == "CartPole-v1" else torch.zeros(64, 1)
    for env in (unchecked, checked):
        env.reset(seed=0)
        env.elapsed_steps = env.max_episode_steps - 5  # autoresets happen in the window
    with HostReads() as reads:
        for _ in range(20):
            unchecked.step(actions)
    assert reads.seen == []
    with HostReads() as reads:  # the detector sees the value check's one read per step
        for _ in range(20):
            checked.step(actions)
    assert reads.seen == ["_local_scalar_dense"] * 20


@pytest.mark.accelerator
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA's sync debug mode")
@pytest.mark.parametrize("env_id", BATCHED_ENV_IDS)
def test_step_does_not_synchronize_cuda(env_id):
    env = make_batched_env(env_id, 1024, "cuda", check_actions=False)
    env.reset(seed=0)
    shape = (1024,) if env_id == "CartPole-v1" else (1024, 1)
    actions = torch.ones(shape, device="cuda")
    env.step(actions)  # first calls may initialise lazily
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(10):
            env.step(actions)
        env.check_actions = True
        with pytest.raises(RuntimeError, match="synchroniz"):
            env.step(actions)
    finally:
        torch.cuda.set_sync_debug_mode("default")


def test_throughput_rows_and_ratios():
    rows = env_throughput.measure_throughput(
        ["CartPole-v1"], [2, 3], repeats=1, seconds_per_repeat=0.002, sync_max_envs=2
    )
    measured = [r for r in rows if r["env_steps_per_s"] is not None]
    assert {r["implementation"] for r in measured} >= {
        "gymnasium-sync",
        "gymnasium-vector",
        "batched-cpu",
    }
    assert all(r["env_steps_per_s"] > 0 and r["threads"] == 1 for r in measured)
    (skipped,) = [r for r in rows if r["env_steps_per_s"] is None]
    assert skipped["implementation"] == "gymnasium-sync" and skipped["num_envs"] == 3
    assert "sync_max_envs=2" in skipped["skipped"]
    ratios = env_throughput.throughput_ratios(rows, "CartPole-v1", 2, "gymnasium-sync")
    sync, batched = (
        next(
            r["env_steps_per_s"]
            for r in measured
            if r["implementation"] == name and r["num_envs"] == 2
        )
        for name in ("gymnasium-sync", "batched-cpu")
    )
    assert ratios["batched-cpu"] == pytest.approx(batched / sync)
    with pytest.raises(UsageError, match="no gymnasium-sync measurement"):
        env_throughput.throughput_ratios(rows, "CartPole-v1", 3, "gymnasium-sync")


def test_throughput_knows_which_implementations_exist():
    assert "gymnasium-vector" not in env_throughput.implementations("Pendulum-v1")
    with pytest.raises(UsageError, match="choose from"):
        env_throughput.make_stepper("batched-tpu", "CartPole-v1", 2)
    with pytest.raises(UsageError, match="no batched version"):
        env_throughput.measure_throughput(["Acrobot-v1"], [2])


def test_bench_device_envs_writes_a_record(tmp_path):
    path = tmp_path / "device_envs.json"
    argv = ["bench", "device_envs", "--envs", "Pendulum-v1", "--num-envs", "2"]
    argv += ["--repeats", "1", "--seconds-per-repeat", "0.002", "--no-ppo", "--json", str(path)]
    assert cli.main(argv) == 0
    record = results.load(path)
    assert record.kind == "bench.device_envs"
    assert {row["implementation"] for row in record.data["rows"]} >= {
        "gymnasium-sync",
        "batched-cpu",
    }
    (ratio,) = record.data["ratios"]
    assert ratio["baseline"] == "gymnasium-sync" and ratio["ratios"]["batched-cpu"] > 0
    assert record.data["ppo"] is None  # --no-ppo
