"""The overlapped engine (rl/overlapped/): same learning as the sequential placement at lag 0,
the lag bound, dropped rollouts, and what a run measures. Faults: test_overlapped_faults.py;
the Ray engine: test_overlapped_ray.py."""

import multiprocessing
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.overlapped import process_engine
from hetero_tutorial.rl.overlapped.loop import train_overlapped
from hetero_tutorial.rl.overlapped.process_engine import serve_rollouts
from hetero_tutorial.rl.overlapped.schedule import LagSchedule
from hetero_tutorial.rl.overlapped.timeline import LEARNER, LEARNER_WAIT
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import train

# CleanRL's shape (4 envs x 128 steps, 4 epochs of 4 minibatches) on CartPole: quick iterations.
CONFIG = PPOConfig(env_id="CartPole-v1", total_steps=6 * 512)


def run_children() -> list[psutil.Process]:
    """This process's live children, but Python's resource tracker: it starts with the first
    shared lock and serves the interpreter until it exits (not one run)."""
    children = psutil.Process().children(recursive=True)
    alive = []
    for child in children:
        try:
            if "resource_tracker" not in " ".join(child.cmdline()) and child.is_running():
                alive.append(child)
        except psutil.NoSuchProcess:
            pass
    return alive


def shared_memory_files() -> set[str]:
    """The segments in /dev/shm, but for multiprocessing's semaphores (``sem.mp-*``): each
    lock or queue of any program using multiprocessing keeps one there while it lives, so a
    test running beside this one (on the other xdist worker) adds and removes them at will.
    What the series itself shares are PyTorch's tensors and Ray's object store."""
    shm = Path("/dev/shm")
    names = {p.name for p in shm.iterdir()} if shm.is_dir() else set()
    return {name for name in names if not name.startswith("sem.mp-")}


def slow_rollout_2(worker: int, rollout: int) -> None:
    """Worker hook: rollout 2 takes a second, so later rollouts overtake it."""
    if rollout == 2:
        time.sleep(1.0)


def flat(module: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def test_one_worker_at_lag_0_learns_exactly_what_the_sequential_plan_learns():
    sequential = train(CONFIG, placement("hybrid"), seed=3, eval_episodes=3)
    shm_before = shared_memory_files()
    overlapped = train_overlapped(
        CONFIG, placement("hybrid"), seed=3, workers=1, max_policy_lag=0, eval_episodes=3
    )
    assert torch.equal(flat(sequential.policy), flat(overlapped.run.policy))  # bit for bit
    assert overlapped.run.episodes == sequential.episodes
    assert overlapped.run.eval_returns == sequential.eval_returns
    assert overlapped.policy_lag_histogram == {0: CONFIG.num_iterations}
    assert overlapped.dropped_rollouts == 0
    assert not run_children(), "a worker outlived its run"
    assert shared_memory_files() <= shm_before, "a shared-memory segment outlived its run"


def test_the_schedule_reproduces_the_sequential_order_at_lag_0_and_overlaps_at_lag_1():
    sync = LagSchedule(total=3, workers=1, slots=2, max_lag=0, now=0.0)
    first = sync.ready()
    assert [r.index for r in first] == [0] and sync.ready() == []  # rollout 1 waits
    sync.release(0, first[0].slot, 1.0)
    assert sync.ready() == []  # a free slot is not enough: the update must finish
    sync.finish(True, 2.0)
    (second,) = sync.ready()
    assert second.index == 1 and second.weights_since == 2.0 > second.slot_free_since

    ahead = LagSchedule(total=4, workers=1, slots=2, max_lag=1, now=0.0)
    assert [r.index for r in ahead.ready()] == [0, 1]  # the next one while the learner updates
    ahead.release(0, 0, 1.0)
    assert ahead.ready() == []  # rollout 2 may start only once rollout 0 is learned from
    ahead.finish(True, 2.0)
    assert [r.index for r in ahead.ready()] == [2]


def test_the_schedule_alone_decides_which_arriving_rollout_is_dropped():
    schedule = LagSchedule(total=4, workers=2, slots=2, max_lag=1, now=0.0)
    requests = schedule.ready()  # rollouts 0 and 1, collected with weights version 0
    for request in requests:
        schedule.release(request.worker, request.slot, 1.0)
        schedule.finish(True, 1.0)  # two updates: the learner is at version 2
    assert schedule.lag(0) == 2 and not schedule.keeps(0)  # a rollout of version 0: too stale
    assert schedule.keeps(1) and schedule.keeps(2)
    (late,) = [r for r in schedule.ready() if r.worker == 0][:1]
    done = schedule.done
    schedule.drop(late.worker, late.slot, 2.0)  # its slot is free again, and it counts as done
    assert schedule.done == done + 1 and schedule.version == 2
    assert late.slot in schedule.free_slots[late.worker]


def test_a_slow_worker_makes_a_rollout_stale_and_it_is_dropped_and_counted():
    result = train_overlapped(
        CONFIG, seed=0, workers=2, max_policy_lag=1, eval_episodes=0, worker_hook=slow_rollout_2
    )
    assert result.dropped_rollouts >= 1 and all(lag > 1 for lag in result.dropped_lags)
    assert max(result.lags) <= 1
    assert len(result.lags) + result.dropped_rollouts == CONFIG.num_iterations
    assert result.run.env_steps == CONFIG.num_iterations * CONFIG.batch_size  # dropped: collected
    assert result.trained_env_steps_per_s < result.env_steps_per_s
    fields = result.fields()
    assert fields["dropped_rollouts"] == result.dropped_rollouts
    assert sum(fields["policy_lag_histogram"].values()) == len(result.lags)


def test_a_run_measures_speed_waits_lag_and_a_timeline_on_one_clock():
    result = train_overlapped(CONFIG, seed=1, workers=1, max_policy_lag=1, eval_episodes=2)
    assert result.policy_lag_histogram == {0: 1, 1: CONFIG.num_iterations - 1}
    assert result.env_steps_per_s > 0 and len(result.run.eval_returns) == 2
    assert 0 <= result.learner_idle_share <= 1 and 0 <= result.worker_idle_share <= 1
    assert result.worker_idle_shares() == [pytest.approx(result.worker_idle_share)]
    processes = {i["process"] for i in result.timeline}
    assert processes == {LEARNER, "worker 0"}
    kinds = {i["kind"] for i in result.timeline}
    assert {"rollout", "update", LEARNER_WAIT} <= kinds
    assert all(0 <= i["start"] <= i["end"] for i in result.timeline)
    rollouts = [i for i in result.timeline if i["kind"] == "rollout"]
    updates = [i for i in result.timeline if i["kind"] == "update"]
    assert len(rollouts) == len(updates) == CONFIG.num_iterations
    # The point of it all: the worker collects while the learner updates.
    overlap = sum(
        max(0.0, min(r["end"], u["end"]) - max(r["start"], u["start"]))
        for r in rollouts
        for u in updates
    )
    assert overlap > 0
    first_kl = [u["start_approx_kl"] for u in result.updates]
    assert first_kl[0] == 0.0 and all(kl != 0.0 for kl in first_kl[1:])  # lag 1: not the same
    fields = result.fields()
    for name in (
        "env_steps_per_s",
        "learner_idle_share",
        "worker_idle_share",
        "policy_lag_histogram",
        "dropped_rollouts",
        "timeline",
        "eval_return_mean",
        "backend",
        "workers",
        "max_policy_lag",
    ):
        assert name in fields
    assert not run_children()


def test_one_worker_at_lag_1_repeats_exactly_from_a_seed():
    """Requests name their weight version, so process timing cannot change the decisions."""
    first, second = (
        train_overlapped(CONFIG, seed=4, workers=1, max_policy_lag=1, eval_episodes=0)
        for _ in range(2)
    )
    assert torch.equal(flat(first.run.policy), flat(second.run.policy))
    assert first.run.episodes == second.run.episodes


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"workers": 0}, "workers must be at least 1"),
        ({"max_policy_lag": -1}, "max_policy_lag must be 0 or more"),
        ({"backend": "threads"}, "unknown backend"),
        ({"address": "auto"}, "use it with backend='ray'"),
        ({"slots_per_worker": 1}, "slots_per_worker must be at least 2"),
        ({"start_method": "fork"}, "spawn"),
        ({"threads": 0}, "threads must be at least 1"),
        ({"worker_threads": 0}, "worker_threads must be at least 1"),
        ({"placement": "all-device"}, "workers step Gymnasium's environments and act on the CPU"),
        ({"placement": placement("hybrid", "meta")}, "only counts copies"),
    ],
)
def test_bad_settings_are_clear_errors(options, message):
    with pytest.raises(UsageError, match=message):
        train_overlapped(CONFIG, **options)


def test_batched_environments_are_refused_not_silently_replaced_by_gymnasiums():
    with pytest.raises(UsageError, match=r"batched tensor environments .*placement\('hybrid'\)"):
        train_overlapped(CONFIG, replace(placement("hybrid"), batched_envs=True))


def test_a_worker_that_cannot_set_its_threads_tells_the_learner_why(monkeypatch):
    monkeypatch.setattr(process_engine.signal, "signal", lambda *args: None)  # keep Ctrl-C
    learner_end, worker_end = multiprocessing.Pipe()
    serve_rollouts(worker_end, [], None, CONFIG, seed=0, index=0, threads=0, hook=None)
    kind, payload = learner_end.recv()
    assert kind == "error" and "set_num_threads" in payload


def test_per_tensor_parameters_are_refused_with_what_to_do():
    config = PPOConfig(env_id="CartPole-v1", flat_parameters=False)
    with pytest.raises(UsageError, match="flat_parameters=True"):
        train_overlapped(config)
