"""Why the compiled batched CartPole is slower than the eager one here: two measurements.

1. **A compiled call's fixed cost.** ``x * 2 + 1`` eagerly and under ``torch.compile`` at
   64 to 1,048,576 elements: where the compiled call is slower at 64 elements, its fixed
   cost (the Python wrappers around the generated kernel) is the difference.
2. **A pure CartPole step.** The package's eager transition (in-place, each line one fused
   PyTorch operation, :meth:`BatchedCartPole._transition`) against an out-of-place
   version of the same physics, eager and compiled: the form ``torch.compile`` fuses
   best, with no writes into its inputs. Same first states, same actions.

One PyTorch thread, every variant warmed up (compiled first), then ``--repeats`` rounds,
the variants interleaved in each; the median seconds per call and the range over rounds.

    .venv/bin/python benchmarks/compile_overhead.py [--sizes 4096 65536] [--repeats 7]

Prints a table; writes nothing. A probe for the compiled path's targets (benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from hetero_tutorial import BatchedCartPole, compile_cache, make_batched_env

CART = BatchedCartPole  # Gymnasium's constants, as class attributes
M, ML, G = CART.total_mass, CART.polemass_length, CART.gravity
PUSH = CART.force_mag / M


def pure_transition(state, elapsed, actions, initial):
    """CartPole's step out of place on (4, N) states: new tensors only, nothing written."""
    x, x_dot, theta, theta_dot = state.unbind(0)
    force = torch.where(actions.bool(), PUSH, -PUSH)
    cos, sin = torch.cos(theta), torch.sin(theta)
    temp = force + (ML / M) * theta_dot * theta_dot * sin
    denominator = CART.length * (4.0 / 3.0) - (CART.length * CART.masspole / M) * cos * cos
    theta_acc = (G * sin - cos * temp) / denominator
    x_acc = temp - (ML / M) * theta_acc * cos
    tau = CART.tau
    moved = torch.stack(
        [x + tau * x_dot, x_dot + tau * x_acc, theta + tau * theta_dot, theta_dot + tau * theta_acc]
    )
    terminated = (moved[0].abs() > CART.x_threshold) | (
        moved[2].abs() > CART.theta_threshold_radians
    )
    elapsed = elapsed + 1
    truncated = elapsed >= CART.max_episode_steps
    done = terminated | truncated
    state = torch.where(done, initial, moved)
    obs = state.T.contiguous()
    reward = torch.ones_like(x)
    return state, torch.where(done, 0, elapsed), obs, reward, terminated, truncated, moved.T, done


def timed(variants: dict[str, Callable[[], object]], repeats: int, calls: int) -> dict:
    """Median and range of seconds per call, the variants interleaved in every round."""
    for variant in variants.values():  # warm-up: compiling happens here
        for _ in range(3):
            variant()
    rounds: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, variant in variants.items():
            began = time.perf_counter()
            for _ in range(calls):
                variant()
            rounds[name].append((time.perf_counter() - began) / calls)
    return {name: (statistics.median(s), min(s), max(s)) for name, s in rounds.items()}


def show(size: int, results: dict, baseline: str) -> None:
    base = results[baseline][0]
    for name, (median, low, high) in results.items():
        print(f"{size:>9,}  {name:<24} {median * 1e6:9.1f} us  ({low * 1e6:.1f}-{high * 1e6:.1f})"
              f"  {base / median:5.2f}x {baseline}")  # fmt: skip


def twice_plus_one(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0 + 1.0


def affine_variants(size: int) -> dict[str, Callable[[], object]]:
    """``x * 2 + 1`` at ``size`` elements, eager and compiled (a graph of its own)."""
    x, compiled = torch.rand(size), torch.compile(twice_plus_one, dynamic=False)
    return {"eager": lambda: twice_plus_one(x), "compiled": lambda: compiled(x)}


def cartpole_variants(size: int) -> dict[str, Callable[[], object]]:
    """CartPole's transition at ``size`` environments: ours in place, then the pure one
    eager and compiled, from the same first states and actions (no random draw)."""
    env = make_batched_env("CartPole-v1", size, check_actions=False)
    env.reset(seed=0)
    actions = torch.randint(0, 2, (size,), generator=torch.Generator().manual_seed(0))
    initial, start = env._draw_initial_states().clone(), env._state.clone()
    compiled = torch.compile(pure_transition, dynamic=False)
    return {
        "ours, eager (in place)": lambda: env._transition(actions, initial),
        "pure, eager": lambda: pure_transition(start, env._elapsed, actions, initial),
        "pure, compiled": lambda: compiled(start, env._elapsed, actions, initial),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 65536])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    compile_cache()
    print("1. x * 2 + 1: size, variant, seconds per call (range over rounds), speed-up")
    for size in (64, 4096, 65536, 1 << 20):
        show(size, timed(affine_variants(size), args.repeats, max(20, (1 << 22) // size)), "eager")
    print("\n2. CartPole's transition (no random draw): envs, variant, seconds per step")
    for size in args.sizes:
        calls = max(20, (1 << 21) // size)
        show(size, timed(cartpole_variants(size), args.repeats, calls), "ours, eager (in place)")


if __name__ == "__main__":
    main()
