"""The annealing horizon: one seed, one budget, the learning rate and clip range decayed over
different numbers of steps.

:meth:`PPOConfig.tuned` decays CartPole's learning rate and clipping coefficient linearly to
zero, and by default they reach zero at the run's last step (``total_steps``). A short run
then takes ever smaller steps long before it has learned; the same steps cut from a longer
run (``anneal_steps`` above ``total_steps``) keep most of their step size. This study trains
the same seed for the same steps once per horizon, so that the schedule is the only thing
that differs between the runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hetero_tutorial.core.placement import Placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import PPOResult, train


def horizon_runs(
    config: PPOConfig,
    placement: Placement,
    horizons: Sequence[int],
    steps: int,
    seed: int = 0,
    eval_every: int = 4_096,
    threads: int | None = 1,
) -> dict[int, PPOResult]:
    """Train ``steps`` environment steps of ``config`` once per horizon in ``horizons``
    (environment steps its decays reach zero over, each ``steps`` or more); results keyed by
    horizon. Greedy evaluations of 10 episodes every ``eval_every`` steps, from the start;
    no copy counting and no evaluation after training (neither is what this compares)."""
    return {
        horizon: train(
            replace(config, total_steps=steps, anneal_steps=horizon),
            placement,
            seed,
            threads=threads,
            count_copies=False,
            eval_episodes=0,
            eval_every=eval_every,
        )
        for horizon in horizons
    }
