"""What the runs hand the utilisation sampler: training only inside a section (never the
greedy evaluations), and summaries asked for only after the sampler has stopped (its exit
collects the last GPU samples)."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.overlapped import loop
from hetero_tutorial.rl.ppo import runs
from hetero_tutorial.rl.ppo.config import PPOConfig

TINY = {"total_steps": 512, "num_envs": 2, "num_steps": 128, "minibatch_size": 64}


class RecordingSampler:
    """Stands in for UtilisationSampler: knows whether a section is open and whether it exited."""

    def __init__(self, gpu: Any = None) -> None:
        self.in_section = False
        self.exited = False

    def __enter__(self) -> "RecordingSampler":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.exited = True

    @contextmanager
    def section(self, label: str) -> Iterator[None]:
        self.in_section = True
        try:
            yield
        finally:
            self.in_section = False

    def summary(self, label: str) -> dict[str, Any]:
        return {"summarised_after_exit": self.exited}


def test_evaluations_run_outside_the_training_section_and_summaries_after_exit(monkeypatch):
    samplers: list[RecordingSampler] = []

    def make_sampler(gpu: Any = None) -> RecordingSampler:
        samplers.append(RecordingSampler(gpu))
        return samplers[-1]

    evaluated_in_section: list[bool] = []

    def greedy_returns(trainer: Any, episodes: int) -> list[float]:
        evaluated_in_section.append(samplers[-1].in_section)
        return [0.0]

    monkeypatch.setattr(runs, "UtilisationSampler", make_sampler)
    monkeypatch.setattr(runs, "greedy_returns", greedy_returns)
    config = PPOConfig.tuned("CartPole-v1", **TINY)
    run = runs.train(config, placement("all-cpu"), eval_every=256, eval_episodes=1)
    assert len(run.evaluations) == 3  # before training and after each of the 2 iterations
    assert evaluated_in_section == [False] * 4  # those 3, and the one after training
    assert run.utilisation == {"summarised_after_exit": True}


def test_an_overlapped_run_summarises_utilisation_after_the_sampler_stopped(monkeypatch):
    monkeypatch.setattr(loop, "UtilisationSampler", RecordingSampler)
    config = PPOConfig(env_id="CartPole-v1", **TINY)
    result = loop.train_overlapped(config, workers=1, eval_episodes=0)
    assert result.run.utilisation == {"summarised_after_exit": True}
