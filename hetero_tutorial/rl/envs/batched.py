"""CartPole-v1 and Pendulum-v1 as batched environments on any torch device (CPU, CUDA, MPS).

``N`` environments live in a few tensors on one device and are stepped together
with tensor operations: there is no Python loop over environments, and on an
accelerator ``step`` neither waits for the device nor copies anything to the host
(once ``check_actions=False``: checking action values reads them on the host).
This is how modern simulators reach millions of steps per second (Isaac Gym,
Brax, gymnax): the environments run where the policy runs, so nothing crosses
the PCIe bus between them. :mod:`hetero_tutorial.rl.envs.vector` is the other design,
one Python object per environment on the CPU (Gymnasium's ``SyncVectorEnv``).

The physics, constants, spaces, rewards, termination and time limits (500 steps
for CartPole-v1, 200 for Pendulum-v1) are those of ``gymnasium.make(env_id)``,
step for step (the tests compare them); the state is float32 where Gymnasium's
is float64, so observations agree to float32 precision.

SAME_STEP autoreset, as our Gymnasium vector envs do it: when environment ``i``'s
episode ends at a step (``terminated[i] | truncated[i]``), that step returns the
first observation of its next episode in ``obs[i]``, and the true last
observation of the episode in ``info["final_obs"][i]``. ``info["final_obs"]`` is
a full ``(N, obs_dim)`` tensor: the observation every environment reached
*before* any reset, so its rows for environments that did not end equal
``obs``. ``info["_final_obs"]`` is the ``(N,)`` bool mask of the rows that ended.
Unlike Gymnasium, both keys are present at every step (a dict that changes keys
would need the host to know whether any episode ended).

``compile=True`` runs the step's tensor work (physics, termination, time limit, autoreset,
observations) compiled by ``torch.compile`` (with ``cudagraphs=True`` too: and CUDA-graphed,
on CUDA; see :mod:`hetero_tutorial.speed.compiler`): its dozens of small operations fused
into a few kernels. What is compiled is what runs eagerly, :meth:`~_BatchedEnv.transition`,
one function written out of place (the new state is computed, then written back once), as
JAX environments are. One of its lines, the flags, asks the speed door
(:func:`hetero_tutorial.speed.flags`) how to write it inside a graph compiled for a CPU. The
draw of first states and the checks stay eager, outside it: ``torch.compile`` cannot trace a
``torch.Generator`` (it would cut the graph in two there), and drawing from the env's own
generator is what makes the compiled step draw the same numbers as the eager one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from hetero_tutorial.core.devices import resolve_device, same_device
from hetero_tutorial.core.errors import UsageError, require_positive
from hetero_tutorial.speed import (
    CompiledPiece,
    compile_mode_of,
    compiled,
    flags,
    require_compile_switches,
)

BATCHED_ENV_IDS = ("CartPole-v1", "Pendulum-v1")
"""The environments :func:`make_batched_env` can build."""

StepResult = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]


class _BatchedEnv:
    """What both environments share: the state tensor, the step counter, seeding, autoreset.

    A subclass sets the class attributes and writes :meth:`_advance` (the physics, out of
    place), :meth:`_observe` (state to observation), :meth:`draw_initial_states` and the
    action checks.
    """

    env_id: str
    max_episode_steps: int
    """The time limit in steps: an episode is truncated at its ``max_episode_steps``-th step."""
    state_names: tuple[str, ...]
    single_observation_space: spaces.Box
    single_action_space: spaces.Space

    def __init__(
        self,
        num_envs: int,
        device: str | torch.device = "cpu",
        check_actions: bool = True,
        compile: bool = False,
        cudagraphs: bool = False,
    ) -> None:
        require_positive(num_envs=num_envs)
        require_compile_switches(compile, cudagraphs)
        self.num_envs = num_envs
        self.device = resolve_device(device)
        self.check_actions = check_actions
        """Check action *values* each step (one host sync per step on an accelerator)."""
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._generator = torch.Generator(device=self.device)
        self._generator.seed()  # unseeded, as Gymnasium is, until reset(seed=...)
        # (D, N): one row per state variable, so each variable is a contiguous vector and
        # the physics below runs on contiguous memory (a strided column costs ~5x per op).
        self._state = torch.zeros(len(self.state_names), num_envs, device=self.device)
        self._initial = torch.empty_like(self._state)  # (D, N) next episodes' first states
        self._elapsed = torch.zeros(num_envs, dtype=torch.int32, device=self.device)
        self._limit = torch.tensor(self.max_episode_steps, dtype=torch.int32, device=self.device)
        self._was_reset = False
        self.compiled_step: CompiledPiece | None = None
        """the step's tensor work in its compile mode (None: eager), first call timed apart"""
        if compile:
            self._compile_transition(compile_mode_of(compile, cudagraphs))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env_id}, num_envs={self.num_envs}, {self.device})"

    def _compile_transition(self, mode: str) -> None:
        """:meth:`transition` in ``mode`` for this instance (eagerly, with one line saying
        why, where compiling cannot run here)."""
        self.compiled_step = compiled(
            self.transition, mode, self.device, f"the {self.env_id} step",
            updates=self.state_tensors,
        )  # fmt: skip

    @property
    def state(self) -> torch.Tensor:
        """The physical state, (N, D) float32: a view, so ``env.state[i] = ...`` sets env ``i``.

        Assigning ``env.state = values`` (anything of shape (N, D), e.g. the float64
        ``unwrapped.state`` of Gymnasium environments stacked) copies it in: this is
        how the tests start both implementations from the same states.
        """
        return self._state.T

    @state.setter
    def state(self, values: Any) -> None:
        values = torch.as_tensor(values)  # in its own dtype and place until checked
        shape = (self.num_envs, len(self.state_names))
        if values.shape != shape:
            raise UsageError(
                f"{self.env_id} state must have shape {shape} (envs x {self.state_names}), "
                f"got {tuple(values.shape)}"
            )
        precise = torch.float32 if values.device.type == "mps" else torch.float64  # MPS: no f64
        self._state.copy_(self._canonical(values.to(precise)).T)  # to float32 last

    def _canonical(self, state: torch.Tensor) -> torch.Tensor:
        """The state (N, D) as this env keeps it (Pendulum wraps its angle)."""
        return state

    @property
    def elapsed_steps(self) -> torch.Tensor:
        """Steps since each environment's last reset, (N,) int32; the episode is truncated when it
        reaches :attr:`max_episode_steps`. Assign an int or (N,) values to set it (tests)."""
        return self._elapsed

    @elapsed_steps.setter
    def elapsed_steps(self, values: Any) -> None:
        values = torch.as_tensor(values, dtype=torch.int32, device=self.device)
        if values.dim() > 1 or values.numel() not in (1, self.num_envs):
            raise UsageError(f"elapsed_steps takes an int or {self.num_envs} values")
        self._elapsed.copy_(values.expand(self.num_envs))

    def reset(self, seed: int | None = None) -> tuple[torch.Tensor, dict[str, Any]]:
        """Start a new episode in every environment; return obs (N, obs_dim) float32 and ``{}``.

        ``seed`` seeds the one generator all environments draw from (on this device),
        so the same seed gives the same trajectories; None continues the stream.
        """
        if seed is not None:
            self._generator.manual_seed(seed)
        self._state.copy_(self.draw_initial_states())
        self._elapsed.zero_()
        self._was_reset = True
        return self._observe(self._state), {}

    def step(self, actions: torch.Tensor) -> StepResult:
        """Step every environment once; return obs, reward, terminated, truncated, info.

        obs (N, obs_dim) float32, reward (N,) float32, terminated and truncated
        (N,) bool, all on :attr:`device`; ``info`` as in the module docstring.
        Ended environments start their next episode in this same step.
        """
        self._check(actions)
        # Autoreset without asking the host which envs ended: every env draws a first state,
        # kept only where its episode ends. Drawn here, before the tensor work: the
        # generator is the one thing torch.compile cannot trace (see the module docstring).
        initial = self.draw_initial_states()  # (D, N)
        if self.compiled_step is None:
            return self.transition(actions, initial)
        obs, reward, terminated, truncated, info = self.compiled_step(actions, initial)
        # Compiled for a CPU, the flags are bytes: viewed as bool, free (no copy).
        info["_final_obs"] = info["_final_obs"].view(torch.bool)
        return obs, reward, terminated.view(torch.bool), truncated.view(torch.bool), info

    def transition(self, actions: torch.Tensor, initial: torch.Tensor) -> StepResult:
        """The step's tensor work, from valid actions and the first states ``initial``
        (D, N) drawn for an autoreset (:meth:`draw_initial_states`): what :meth:`step` runs,
        eagerly or compiled, and what PPO's rollout step calls inside its own graph.

        Returns obs, reward, terminated, truncated and info as :meth:`step` does, except
        that inside a graph compiled for a CPU the three flags are bytes
        (:func:`~hetero_tutorial.speed.flags`): read them as
        ``flag.view(torch.bool)`` outside the graph (free), ``flag.bool()`` inside one.
        """
        moved, reward, terminated = self._advance(self._state, actions)  # s_{t+1}: D rows (N,)
        steps = self._elapsed + 1
        truncated = steps >= self._limit  # Gymnasium's TimeLimit wrapper
        done = terminated | truncated
        # Autoreset: the drawn first state where the episode ended, a masked select per
        # state variable (no index list, no host read of which envs ended).
        rows = [torch.where(done, first, row) for first, row in zip(initial, moved, strict=True)]
        self._state.copy_(torch.stack(rows))
        self._elapsed.copy_(steps.masked_fill(done, 0))
        obs, final_obs = self._observe(rows), self._observe(moved)
        terminated, truncated, done = flags(terminated, truncated, done)
        return obs, reward, terminated, truncated, {"final_obs": final_obs, "_final_obs": done}

    @property
    def state_tensors(self) -> tuple[torch.Tensor, ...]:
        """The tensors a step updates in place: the state (D, N) and the step counter (N,)."""
        return self._state, self._elapsed

    def close(self) -> None:
        """Nothing to release (the tensors go with the object); here for the Gymnasium API."""

    def _check(self, actions: torch.Tensor) -> None:
        """Shape, dtype and device are metadata (free); values only if :attr:`check_actions`."""
        if not self._was_reset:
            raise UsageError(f"call reset() on the {self.env_id} envs before step()")
        if not isinstance(actions, torch.Tensor):
            raise UsageError(
                f"actions must be a torch.Tensor on {self.device}, got {type(actions).__name__}; "
                f"use torch.as_tensor(actions, device={str(self.device)!r})"
            )
        if not same_device(actions.device, self.device):
            raise UsageError(
                f"actions are on {actions.device} but the envs are on {self.device}: make the "
                f"actions there (.to({str(self.device)!r})). A batched env keeps the whole "
                "step on one device; a copy per step is what it exists to avoid."
            )
        self._check_action_layout(actions)
        if self.check_actions:
            self._check_action_values(actions)

    def _check_action_layout(self, actions: torch.Tensor) -> None:
        """Raise a UsageError for a wrong shape or dtype (no host sync)."""
        raise NotImplementedError

    def _check_action_values(self, actions: torch.Tensor) -> None:
        """Raise a UsageError for an invalid value (one host sync)."""
        raise NotImplementedError

    def _advance(
        self, state: torch.Tensor, actions: torch.Tensor
    ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor, torch.Tensor]:
        """The physics: the next states of states ``state`` (D, N) under ``actions``, as
        their D rows (N,), new tensors (``state`` is left as it is), with the rewards and
        the terminated flags (N,) of the move. Rows, not a (D, N) tensor: compiled for a
        CPU, a stack is a buffer written and read again, where the rows fuse into the
        step's one loop."""
        raise NotImplementedError

    def _observe(self, rows: Sequence[torch.Tensor]) -> torch.Tensor:
        """Observations (N, obs_dim) of states given as their D rows (N,) (a (D, N) tensor
        is a sequence of its rows): a new contiguous tensor."""
        raise NotImplementedError

    def draw_initial_states(self) -> torch.Tensor:
        """First states (D, N) for every environment, from the env's generator: what every
        step draws for its autoreset (a buffer the next draw overwrites)."""
        raise NotImplementedError


def _first_bad(bad: torch.Tensor, actions: torch.Tensor) -> str:
    """'env i got v' for the first flagged action (called only once the check failed)."""
    index = int(bad.reshape(len(bad), -1).any(1).nonzero()[0])
    return f"env {index} got {actions[index].tolist()}"


class BatchedCartPole(_BatchedEnv):
    """``num_envs`` CartPole-v1 environments stepped as tensors on ``device``.

    Actions: (N,) tensor on the env's device, 0 (push left) or 1 (push right), of an
    integer dtype or a floating one holding 0.0/1.0 (as PPO stores actions). With
    ``check_actions=False`` any nonzero action pushes right.
    ``check_actions=True`` (default) checks that every action is 0 or 1: on an
    accelerator that is one device-to-host sync per step (tens of microseconds,
    and the CPU can no longer queue steps ahead of the device); turn it off where
    actions are valid by construction (a policy's argmax or sample).
    """

    env_id = "CartPole-v1"
    max_episode_steps = 500
    state_names = ("x", "x_dot", "theta", "theta_dot")  # m, m/s, rad, rad/s
    # Gymnasium's constants: SI units, tau seconds per step, thresholds of termination.
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    total_mass = masspole + masscart
    polemass_length = masspole * length  # length is half the pole's length
    theta_threshold_radians = 12 * 2 * math.pi / 360
    x_threshold = 2.4
    _high = np.array(
        [x_threshold * 2, np.inf, theta_threshold_radians * 2, np.inf], dtype=np.float32
    )
    single_observation_space = spaces.Box(-_high, _high, dtype=np.float32)
    single_action_space = spaces.Discrete(2)

    def __init__(
        self,
        num_envs: int,
        device: str | torch.device = "cpu",
        check_actions: bool = True,
        compile: bool = False,
        cudagraphs: bool = False,
    ) -> None:
        super().__init__(num_envs, device, check_actions, compile, cudagraphs)
        on = {"device": self.device}
        # Constants as 0-d tensors on the device, made once: an operation with them
        # broadcasts to (N,) without a Python-number-to-tensor conversion per step.
        push = self.force_mag / self.total_mass  # m/s², the cart's push per unit mass
        self._push_right, self._push_left = torch.tensor(push, **on), torch.tensor(-push, **on)
        self._four_thirds_length = torch.tensor(4.0 / 3.0 * self.length, **on)

    def _check_action_layout(self, actions: torch.Tensor) -> None:
        if actions.shape != (self.num_envs,):
            raise UsageError(
                f"CartPole-v1 takes one action per env, shape ({self.num_envs},), got "
                f"{tuple(actions.shape)}; for (N, 1) actions pass actions[:, 0]"
            )
        if actions.dtype == torch.bool or actions.is_complex():
            raise UsageError(
                f"CartPole-v1 actions must be integers (or floats) 0 or 1, got {actions.dtype}; "
                "use actions.long()"
            )

    def _check_action_values(self, actions: torch.Tensor) -> None:
        bad = (actions != 0) & (actions != 1)
        if bad.any():  # the host sync that check_actions=False avoids
            raise UsageError(
                f"CartPole-v1 actions must be 0 (push left) or 1 (push right): "
                f"{_first_bad(bad, actions)}"
            )

    def _advance(
        self, state: torch.Tensor, actions: torch.Tensor
    ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor, torch.Tensor]:
        # Gymnasium's equations (Florian 2005, https://coneural.org/florian/papers/05_cart_pole.pdf),
        # with the constants folded so that each line is one fused tensor operation:
        # on a CPU each operation costs microseconds of overhead, whatever N is.
        x, x_dot, theta, theta_dot = state.unbind(0)  # (N,) views of the (4, N) state
        M, ml, g = self.total_mass, self.polemass_length, self.gravity
        accel = torch.where(actions.bool(), self._push_right, self._push_left)  # force / M
        cos, sin = torch.cos(theta), torch.sin(theta)
        # Gymnasium's temp = (force + m_p l theta_dot² sin) / M
        temp = torch.addcmul(accel, theta_dot.square(), sin, value=ml / M)
        # theta_acc = (g sin - cos temp) / (l (4/3 - m_p cos² / M))
        numerator = torch.addcmul(sin * g, cos, temp, value=-1.0)
        l_mp_over_M = self.length * self.masspole / M
        denominator = torch.addcmul(self._four_thirds_length, cos, cos, value=-l_mp_over_M)
        theta_acc = numerator / denominator  # rad/s²
        x_acc = torch.addcmul(temp, theta_acc, cos, value=-ml / M)  # m/s²
        # Explicit Euler, every variable from the old state, as Gymnasium writes it.
        x, x_dot, theta, theta_dot = (
            torch.add(x, x_dot, alpha=self.tau),
            torch.add(x_dot, x_acc, alpha=self.tau),
            torch.add(theta, theta_dot, alpha=self.tau),
            torch.add(theta_dot, theta_acc, alpha=self.tau),
        )
        # Compared in float32 (Gymnasium: float64): only a state within ~1e-7 of a
        # threshold could end differently.
        terminated = (x.abs() > self.x_threshold) | (theta.abs() > self.theta_threshold_radians)
        reward = torch.ones_like(x)  # +1 every step, the last too
        return (x, x_dot, theta, theta_dot), reward, terminated

    def _observe(self, rows: Sequence[torch.Tensor]) -> torch.Tensor:
        return torch.stack(tuple(rows), dim=1)  # the state, one environment to a row

    def draw_initial_states(self) -> torch.Tensor:
        # All N envs draw, every step, whether they ended or not: knowing which ended
        # would take a host sync. On a CPU this draw is a quarter of the step.
        return self._initial.uniform_(-0.05, 0.05, generator=self._generator)


class BatchedPendulum(_BatchedEnv):
    """``num_envs`` Pendulum-v1 environments stepped as tensors on ``device``.

    Actions: (N, 1) floating tensor on the env's device, the torque in N m, in
    [-2, 2]. ``check_actions=True`` (default) rejects torques outside [-2, 2] (and
    NaN): one device-to-host sync per step on an accelerator. With
    ``check_actions=False`` they are clipped to [-2, 2], silently, as Gymnasium does.
    """

    env_id = "Pendulum-v1"
    max_episode_steps = 200
    state_names = ("theta", "theta_dot")  # rad (0 is upright), rad/s
    # Gymnasium's constants: m/s², kg, m, s per step, rad/s, N m.
    g, mass, length, dt, max_speed, max_torque = 10.0, 1.0, 1.0, 0.05, 8.0, 2.0
    _high = np.array([1.0, 1.0, max_speed], dtype=np.float32)
    single_observation_space = spaces.Box(low=-_high, high=_high, dtype=np.float32)
    single_action_space = spaces.Box(low=-max_torque, high=max_torque, shape=(1,), dtype=np.float32)

    def __init__(
        self,
        num_envs: int,
        device: str | torch.device = "cpu",
        check_actions: bool = True,
        compile: bool = False,
        cudagraphs: bool = False,
    ) -> None:
        super().__init__(num_envs, device, check_actions, compile, cudagraphs)
        self._reset_high = torch.tensor([[math.pi], [1.0]], device=self.device)  # (2, 1)

    def _canonical(self, state: torch.Tensor) -> torch.Tensor:
        state = state.clone()
        state[:, 0] = self._wrap(state[:, 0])  # in float64 when given float64: 100 rad loses
        return state  # 4e-6 in float32

    @staticmethod
    def _wrap(theta: torch.Tensor) -> torch.Tensor:
        """Angles wrapped into [-pi, pi): Gymnasium's ``angle_normalize``.

        Gymnasium lets theta grow without bound and normalises it for the cost; we wrap
        it at the start of every step: cos, sin and the cost are unchanged, and float32
        keeps its precision (at theta = 100 rad a float32 step is 8e-6 rad).
        """
        return (theta + math.pi).remainder_(2 * math.pi).sub_(math.pi)

    def _check_action_layout(self, actions: torch.Tensor) -> None:
        if actions.shape != (self.num_envs, 1):
            raise UsageError(
                f"Pendulum-v1 takes one torque per env, shape ({self.num_envs}, 1), got "
                f"{tuple(actions.shape)}; for (N,) torques pass actions[:, None]"
            )
        if not actions.is_floating_point():
            raise UsageError(
                f"Pendulum-v1 torques must be floating point, got {actions.dtype}; use .float()"
            )

    def _check_action_values(self, actions: torch.Tensor) -> None:
        bad = ~((actions >= -self.max_torque) & (actions <= self.max_torque))  # NaN is bad too
        if bad.any():  # the host sync that check_actions=False avoids
            raise UsageError(
                f"Pendulum-v1 torques must lie in [-2, 2] N m: {_first_bad(bad, actions)}. "
                "Clip them (actions.clamp(-2, 2)), or pass check_actions=False to clip "
                "silently as Gymnasium does"
            )

    def _advance(
        self, state: torch.Tensor, actions: torch.Tensor
    ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor, torch.Tensor]:
        theta, theta_dot = state.unbind(0)  # (N,) each
        theta = self._wrap(theta)
        u = actions[:, 0].to(torch.float32).clamp(-self.max_torque, self.max_torque)  # N m
        # cost = angle_normalize(theta)² + 0.1 theta_dot² + 0.001 u²
        cost = theta.square().addcmul_(theta_dot, theta_dot, value=0.1)
        reward = cost.addcmul_(u, u, value=0.001).neg_()
        # theta_dot += (3g / 2l sin theta + 3 / (m l²) u) dt, clipped to +-8 rad/s;
        # then theta += theta_dot dt with the *new* theta_dot (semi-implicit Euler).
        theta_acc = torch.sin(theta).mul_(3 * self.g / (2 * self.length))
        theta_acc.add_(u, alpha=3.0 / (self.mass * self.length**2))  # rad/s²
        theta_dot = torch.add(theta_dot, theta_acc, alpha=self.dt).clamp_(
            -self.max_speed, self.max_speed
        )
        moved = (torch.add(theta, theta_dot, alpha=self.dt), theta_dot)
        terminated = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)  # never
        return moved, reward, terminated

    def _observe(self, rows: Sequence[torch.Tensor]) -> torch.Tensor:
        theta, theta_dot = rows
        return torch.stack((torch.cos(theta), torch.sin(theta), theta_dot), dim=1)  # (N, 3)

    def draw_initial_states(self) -> torch.Tensor:
        # theta uniform in [-pi, pi), theta_dot uniform in [-1, 1) rad/s
        drawn = self._initial.uniform_(-1.0, 1.0, generator=self._generator)
        return drawn.mul_(self._reset_high)


_ENVS: dict[str, type[BatchedCartPole] | type[BatchedPendulum]] = {
    env.env_id: env for env in (BatchedCartPole, BatchedPendulum)
}


def make_batched_env(
    env_id: str,
    num_envs: int,
    device: str | torch.device = "cpu",
    check_actions: bool = True,
    compile: bool = False,
    cudagraphs: bool = False,
) -> BatchedCartPole | BatchedPendulum:
    """``num_envs`` copies of ``env_id`` as one batched env on ``device`` (see the module doc).

    ``check_actions`` checks action values every step; on an accelerator it costs
    a host sync per step, so code whose actions are valid by construction (PPO's
    sampled or clipped actions) passes False. ``compile``: torch.compile the step's tensor
    work; ``cudagraphs``: also capture it as a CUDA graph (CUDA only; needs compile=True).
    """
    if env_id not in _ENVS:
        raise UsageError(
            f"no batched version of {env_id!r}: supported are {', '.join(BATCHED_ENV_IDS)}. "
            "For any other Gymnasium id use hetero_tutorial.rl.envs.vector.make_vector_env."
        )
    return _ENVS[env_id](num_envs, device, check_actions, compile, cudagraphs)
