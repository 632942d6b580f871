"""What each of our PPO's speed tricks buys, per environment step, measured side by side.

With the small networks of classic control on a CPU, the cost of a PPO iteration is
set by how many PyTorch operations it runs, not by their arithmetic (notebook 00):
each call costs microseconds of overhead whatever its size. Our PPO's three tricks
each cut the number of calls, without changing what is computed:

* ``paired_networks``: layer ``i`` of the actor and of the critic is one batched
  matmul (:class:`~hetero_tutorial.speed.PairedMLP`) instead of two;
* ``flat_parameters``: every parameter lives in one tensor
  (:class:`~hetero_tutorial.speed.flat.FlatParameters`), so zeroing, clipping and the
  Adam step are a call or two instead of one per parameter tensor;
* ``gather_per_epoch``: the rollout is shuffled with one gather per epoch and
  minibatches are slices of it, instead of a gather per minibatch.

:func:`trick_speeds` trains one PPO per variant (all tricks; all but one, for each
trick; none, which is CleanRL's shape) and interleaves their iterations round by
round, so drift in the machine's speed hits every variant alike. A trick's effect
is the ratio of steps per second with and without it, per round: the spread over
rounds is the noise it must beat.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hetero_tutorial.core.errors import require_positive
from hetero_tutorial.core.machine_load import guarded, judged
from hetero_tutorial.core.placement import placement
from hetero_tutorial.core.timing import Spread, torch_threads
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.trainer import PPOTrainer
from hetero_tutorial.studies.threads import MIN_PAIRS

TRICKS = {
    "paired_networks": "actor and critic layers as one batched matmul each",
    "flat_parameters": "all parameters in one tensor (zero, clip, Adam, copy: one call each)",
    "gather_per_epoch": "one gather per epoch; minibatches are slices",
}
"""Each trick's :class:`PPOConfig` switch, and what it does."""

ALL, NONE = "all tricks", "no tricks"


def variants(config: PPOConfig) -> dict[str, PPOConfig]:
    """The configurations to race: all tricks, all but each one, and none (CleanRL's shape)."""
    found = {ALL: replace(config, **dict.fromkeys(TRICKS, True))}
    for trick in TRICKS:
        found[f"without {trick}"] = replace(found[ALL], **{trick: False})
    found[NONE] = replace(config, **dict.fromkeys(TRICKS, False))
    return found


@guarded("the speed-tricks race")
def trick_speeds(
    config: PPOConfig,
    rounds: int = 5,
    iterations: int = 2,
    threads: int | None = 1,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Environment steps per second of each variant, interleaved over ``rounds``.

    Each round times ``iterations`` iterations of every variant in turn, after one
    warm-up iteration each. Returns ``rows`` (one per trick, and one for all three:
    ``trick``, ``what``, ``with_steps_per_s``, ``without_steps_per_s``, ``ratio``
    (median of the per-round ratios), ``ratio_low`` / ``ratio_high`` (their range),
    ``rounds``) and ``steps_per_s`` (each variant's per-round speeds).
    """
    require_positive(rounds=rounds, iterations=iterations)
    racers = variants(replace(config, total_steps=(1 + rounds * iterations) * config.batch_size))
    speeds: dict[str, list[float]] = {name: [] for name in racers}
    with torch_threads(threads):
        cpu = placement("all-cpu")
        trainers = {name: PPOTrainer(variant, cpu, seed) for name, variant in racers.items()}
        for trainer in trainers.values():
            trainer.run_iteration()  # warm-up: first calls, allocator growth
        for index in range(rounds):
            for name, trainer in trainers.items():
                start = time.perf_counter()
                for _ in range(iterations):
                    trainer.run_iteration()
                seconds = time.perf_counter() - start
                speeds[name].append(iterations * config.batch_size / seconds)
            if progress is not None:
                progress(index + 1, rounds)
        for trainer in trainers.values():
            trainer.close()
    pairs = {trick: (ALL, f"without {trick}") for trick in TRICKS} | {"all three": (ALL, NONE)}
    rows = []
    for trick, (with_it, without_it) in pairs.items():
        ratios = [a / b for a, b in zip(speeds[with_it], speeds[without_it], strict=True)]
        rows.append(
            {
                "trick": trick,
                "what": TRICKS.get(trick, "all three tricks against CleanRL's shape"),
                "with_steps_per_s": statistics.median(speeds[with_it]),
                "without_steps_per_s": statistics.median(speeds[without_it]),
                "ratio": statistics.median(ratios),
                "ratio_low": min(ratios),
                "ratio_high": max(ratios),
                "rounds": rounds,
            }
        )
    return {"rows": rows, "steps_per_s": speeds}


def round_spread(row: dict[str, Any]) -> Spread:
    """A row's per-round ratios as a :class:`Spread`; one round measures no spread."""
    if row["rounds"] < 2:
        return Spread(row["ratio"], how="one round")
    return Spread(row["ratio"], row["ratio_low"], row["ratio_high"], "rounds", row["rounds"])


@judged()
def verdict(row: dict[str, Any]) -> str:
    """A sentence for one trick, naming an effect only when every round agrees on its sign,
    from :data:`~hetero_tutorial.studies.threads.MIN_PAIRS` rounds on, the series' one
    minimum for paired repeats (fewer: no verdict, as a thread check gives none)."""
    spread = round_spread(row)
    if not spread.measured:
        return f"{row['trick']}: no verdict (one round), {row['ratio']:.2f}x"
    if row["rounds"] < MIN_PAIRS:
        return (
            f"{row['trick']}: no verdict, {row['ratio']:.2f}x (rounds {spread.low:.2f}-"
            f"{spread.high:.2f}x; {row['rounds']} rounds, and a verdict needs {MIN_PAIRS})"
        )
    figures = f"rounds {spread.low:.2f}-{spread.high:.2f}x"
    side = spread.beyond(1.0)
    makes = "make" if row["trick"].startswith("all ") else "makes"  # "all three make"
    if side:
        return f"{row['trick']} {makes} PPO {row['ratio']:.2f}x faster per step ({figures})"
    if side is False:
        return f"{row['trick']} {makes} PPO slower here: {row['ratio']:.2f}x ({figures})"
    return f"{row['trick']}: no clear effect here, {row['ratio']:.2f}x ({figures}: in the noise)"
