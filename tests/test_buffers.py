"""The three replay buffer designs: contents, sampling, shapes, copies and errors."""

import numpy as np
import pytest
import torch

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.notebook.solutions.replay_buffers import ring_slots
from hetero_tutorial.rl import buffers
from hetero_tutorial.rl.buffers import (
    DESIGNS,
    TensorReplayBuffer,
    TrajectoryReplayBuffer,
    make_buffer,
    raw_bytes_per_transition,
)
from hetero_tutorial.studies.buffer_designs import (
    SyntheticTransitions,
    copies_per_batch,
    fill,
    neighbour_fraction,
)

OBS_DIM, ACTION_DIM = 3, 1


def buffer(design, capacity, segment_length=5, seed=0):
    return make_buffer(
        design, capacity, OBS_DIM, ACTION_DIM, segment_length=segment_length, seed=seed
    )


def add_steps(buf, steps, episode_length=None, terminal_every=None):
    """Add transitions whose every field is derived from the step number ``i`` (1-based)."""
    for i in steps:
        buf.add(
            obs=[i, 0.5, -0.5],
            action=[i / 100],
            reward=-float(i),
            next_obs=[i + 1, 0.5, -0.5],
            terminated=bool(terminal_every and i % terminal_every == 0),
            truncated=bool(episode_length and i % episode_length == 0),
        )


def sampled_steps(buf, batch_size, draws=50):
    """Every step number seen in ``draws`` batches, after checking each row is one transition."""
    seen = set()
    for _ in range(draws):
        batch = buf.sample(batch_size)
        steps = batch.obs[:, 0]
        # Fields of a row belong together: no shuffling of one column against another.
        torch.testing.assert_close(batch.next_obs[:, 0], steps + 1)
        torch.testing.assert_close(batch.action[:, 0], steps / 100)
        torch.testing.assert_close(batch.reward, -steps)
        seen.update(int(s) for s in steps)
    return seen


@pytest.mark.parametrize("design", DESIGNS)
def test_only_the_newest_transitions_remain_after_wrap_around(design):
    buf = buffer(design, capacity=10)
    add_steps(buf, range(1, 26))  # 25 transitions into room for 10
    assert len(buf) == 10 and buf.capacity == 10
    assert sampled_steps(buf, batch_size=10) == set(range(16, 26))


@pytest.mark.parametrize("design", DESIGNS)
def test_samples_only_stored_transitions_of_a_partly_filled_buffer(design):
    buf = buffer(design, capacity=1000)
    add_steps(buf, range(1, 21))  # steps start at 1, so an unfilled (zero) row would show
    assert len(buf) == 20
    assert sampled_steps(buf, batch_size=8) <= set(range(1, 21))


def test_trajectory_buffer_closes_segments_at_length_and_at_episode_end():
    buf = buffer("trajectory", capacity=100, segment_length=5)
    add_steps(buf, range(1, 4))
    assert len(buf) == 0  # an open segment cannot be sampled yet
    add_steps(buf, range(4, 6))
    assert len(buf) == 5  # closed at segment_length
    add_steps(buf, range(6, 9), episode_length=8)
    assert len(buf) == 8  # closed by the truncation at step 8
    add_steps(buf, range(9, 11), terminal_every=10)
    assert len(buf) == 10  # closed by the terminal state at step 10


def test_trajectory_buffer_evicts_whole_segments():
    buf = buffer("trajectory", capacity=12, segment_length=5)
    add_steps(buf, range(1, 16))  # three segments of 5: the first no longer fits
    assert len(buf) == 10
    assert sampled_steps(buf, batch_size=10) == set(range(6, 16))


@pytest.mark.parametrize("design", DESIGNS)
def test_terminated_and_truncated_are_kept_apart(design):
    buf = buffer(design, capacity=100, segment_length=4)
    add_steps(buf, range(1, 41), episode_length=10, terminal_every=4)
    for _ in range(10):
        batch = buf.sample(32)
        steps = batch.obs[:, 0]
        torch.testing.assert_close(batch.terminated, (steps % 4 == 0).float())
        torch.testing.assert_close(batch.truncated, (steps % 10 == 0).float())


@pytest.mark.parametrize("batch_size", [1, 7, 64])
def test_every_design_returns_the_same_batch_shapes_dtypes_and_size(batch_size):
    shapes = {}
    for design in DESIGNS:
        buf = buffer(design, capacity=200, segment_length=20)
        add_steps(buf, range(1, 201), episode_length=50)
        batch = buf.sample(batch_size)
        shapes[design] = [(tuple(f.shape), f.dtype, f.device) for f in batch]
    cpu = torch.device("cpu")
    b = batch_size
    expected = [
        ((b, OBS_DIM), torch.float32, cpu),
        ((b, ACTION_DIM), torch.float32, cpu),
        ((b,), torch.float32, cpu),
        ((b, OBS_DIM), torch.float32, cpu),
        ((b,), torch.float32, cpu),
        ((b,), torch.float32, cpu),
    ]
    assert shapes == dict.fromkeys(DESIGNS, expected)


@pytest.mark.parametrize(
    ("design", "copies"), [("transition", 6), ("trajectory", 6), ("tensor", 1)]
)
def test_copies_per_batch_to_an_accelerator(design, copies):
    # The meta device stands in for an accelerator: copies to it are counted, not run.
    buf = buffer(design, capacity=100)
    add_steps(buf, range(1, 101))
    assert copies_per_batch(buf, 32, "meta") == copies
    assert all(f.device.type == "meta" for f in buf.sample(32, "meta"))
    assert copies_per_batch(buf, 32, "cpu") == 0


@pytest.mark.parametrize("design", DESIGNS)
def test_same_seed_same_batches(design):
    batches = []
    for _ in range(2):
        buf = buffer(design, capacity=100, seed=3)
        add_steps(buf, range(1, 101))
        batches.append(buf.sample(16).obs)
    torch.testing.assert_close(*batches)


def test_tensor_buffer_memory_is_close_to_the_raw_bytes():
    buf = TensorReplayBuffer(1_000_000, OBS_DIM, ACTION_DIM)
    raw = raw_bytes_per_transition(OBS_DIM, ACTION_DIM)
    assert raw == 34  # 3 + 1 + 1 + 3 float32, two one-byte flags
    assert buf.nbytes / buf.capacity <= 1.25 * raw


def test_bench_fill_measures_memory_and_correlation():
    data = SyntheticTransitions(2000)
    per_transition = {}
    for design in DESIGNS:
        buf = make_buffer(design, 2000, OBS_DIM, ACTION_DIM, segment_length=20)
        per_transition[design] = fill(buf, data)
        assert len(buf) == 2000
    raw = raw_bytes_per_transition(OBS_DIM, ACTION_DIM)
    assert per_transition["tensor"] == 40  # ten float32 columns
    assert per_transition["transition"] > per_transition["trajectory"] > raw
    segments = make_buffer("trajectory", 2000, OBS_DIM, ACTION_DIM, segment_length=20)
    independent = make_buffer("tensor", 2000, OBS_DIM, ACTION_DIM)
    for buf in (segments, independent):
        data.feed(buf, 0, 2000)
    assert neighbour_fraction(segments.sample(256)) > 0.9  # runs of 20 consecutive steps
    assert neighbour_fraction(independent.sample(256)) < 0.5


def test_exercise_solution_ring_slots_matches_the_tensor_buffer():
    assert ring_slots(8, 5, 10) == [8, 9, 0, 1, 2]
    buf = TensorReplayBuffer(10, OBS_DIM, ACTION_DIM)
    add_steps(buf, range(1, 14))  # 13 adds into 10 slots
    slot_of_step = dict(zip(range(1, 14), ring_slots(0, 13, 10), strict=True))
    stored_step = buf._rows[:, 0]  # column 0 of a row is obs[0], the step number
    for step in range(4, 14):  # the newest 10 steps sit where ring_slots says
        assert stored_step[slot_of_step[step]] == step


@pytest.mark.parametrize("capacity", [0, -5, 2.5, True, "100"])
def test_capacity_must_be_a_positive_whole_number(capacity):
    for design in DESIGNS:
        with pytest.raises(UsageError, match="capacity"):
            buffer(design, capacity)


@pytest.mark.parametrize("design", DESIGNS)
def test_bad_transitions_are_refused_with_a_reason(design):
    buf = buffer(design, capacity=10)
    good = {
        "obs": np.zeros(3),
        "action": np.zeros(1),
        "reward": 0.0,
        "next_obs": np.zeros(3),
        "terminated": False,
        "truncated": False,
    }
    for name, value, message in [
        ("obs", np.zeros(4), "obs has shape"),
        ("obs", np.zeros((1, 3)), "obs has shape"),
        ("obs", ["a", "b", "c"], "obs must be an array of numbers"),
        ("next_obs", np.zeros(2), "next_obs has shape"),
        ("action", np.zeros(2), "action has shape"),
        ("reward", "high", "reward must be a number"),
        ("terminated", 0, "terminated must be a bool"),
        ("truncated", None, "truncated must be a bool"),
    ]:
        with pytest.raises(UsageError, match=message):
            buf.add(**{**good, name: value})
    assert len(buf) == 0


@pytest.mark.parametrize("design", DESIGNS)
def test_sampling_more_than_is_stored_or_a_bad_batch_size_is_refused(design):
    buf = buffer(design, capacity=100)
    add_steps(buf, range(1, 11))
    with pytest.raises(UsageError, match="only 10 transitions"):
        buf.sample(11)
    with pytest.raises(UsageError, match="batch_size"):
        buf.sample(0)


def test_other_bad_settings_are_refused():
    with pytest.raises(UsageError, match="unknown buffer design"):
        make_buffer("prioritized", 10, OBS_DIM, ACTION_DIM)
    with pytest.raises(UsageError, match="segment_length"):
        TrajectoryReplayBuffer(10, OBS_DIM, ACTION_DIM, segment_length=20)
    with pytest.raises(UsageError, match="obs_dim"):
        make_buffer("tensor", 10, 0, ACTION_DIM)
    with pytest.raises(UsageError, match="Available"):
        make_buffer("tensor", 10, OBS_DIM, ACTION_DIM, device="gpu")


@pytest.mark.parametrize("design", DESIGNS)
def test_sampling_to_a_device_that_is_not_here_is_refused(design):
    buf = buffer(design, capacity=100)
    add_steps(buf, range(1, 31))
    with pytest.raises(UsageError, match="Available"):
        buf.sample(4, "cuda:7")


@pytest.mark.skipif(
    getattr(accelerator(), "type", None) == "cuda", reason="pinning works on a CUDA machine"
)
def test_pinned_staging_needs_a_cuda_gpu():
    with pytest.raises(UsageError, match="pin_memory"):
        TensorReplayBuffer(10, OBS_DIM, ACTION_DIM, pin_memory=True)


@pytest.mark.accelerator
@pytest.mark.skipif(accelerator() is None, reason="needs an accelerator")
def test_tensor_buffer_on_the_accelerator_samples_there_without_copies():
    device = accelerator()
    buf = TensorReplayBuffer(100, OBS_DIM, ACTION_DIM, device=device)
    add_steps(buf, range(1, 51))
    assert copies_per_batch(buf, 16, device) == 0
    batch = buf.sample(16, device)
    assert all(f.device == device for f in batch)
    assert set(batch.obs[:, 0].cpu().tolist()) <= set(range(1, 51))


def test_every_storage_device_samples_the_same_rows_from_the_same_seed(monkeypatch):
    # A generator on the storage device (CUDA) would draw another sequence from the same seed.
    # The meta device stands in for an accelerator: its rows hold no data, but the draws
    # behind its indices are made on the CPU and can be compared with the CPU buffer's.
    monkeypatch.setattr(buffers, "DRAWS_PER_COPY", 40, raising=False)  # a new block often
    on_cpu = TensorReplayBuffer(100, OBS_DIM, ACTION_DIM, seed=3)
    on_meta = TensorReplayBuffer(100, OBS_DIM, ACTION_DIM, device="meta", seed=3)
    for buf in (on_cpu, on_meta):
        add_steps(buf, range(1, 61))
    drawn = {"cpu": [], "meta": []}
    for batch_size in (16, 16, 32, 8, 48, 16):
        for name, buf in (("cpu", on_cpu), ("meta", on_meta)):
            batch = buf.sample(batch_size, buf.device)
            assert batch.obs.device == buf.device and len(batch.obs) == batch_size
            drawn[name].append(buf.draws_cpu.clone())
    for mine, theirs in zip(drawn["cpu"], drawn["meta"], strict=True):
        assert torch.equal(mine, theirs)
    # the CPU buffer's rows are the draws modulo the stored count: each a stored step
    assert set(on_cpu.sample(32).obs[:, 0].tolist()) <= set(range(1, 61))


def test_a_batch_is_its_draws_modulo_the_rows_stored_while_filling_and_once_full(monkeypatch):
    # Once full, the buffer turns the rest of a block of draws into rows in one operation:
    # each batch must still be its own draws modulo the rows stored, as while filling.
    monkeypatch.setattr(buffers, "DRAWS_PER_COPY", 40, raising=False)  # a new block often
    buf = TensorReplayBuffer(50, OBS_DIM, ACTION_DIM, seed=5)
    stored = 0
    for batch_size in (8, 8, 16, 8, 24, 8, 16, 8):
        add_steps(buf, range(stored + 1, stored + 13))  # 12 more each time: full at the 5th
        stored += 12
        rows = buf._indices(batch_size)
        end = buf._cursor  # the batch's draws end here, in the block drawn for it
        assert torch.equal(rows, buf.draws_cpu[end - batch_size : end] % min(stored, 50))


def test_the_buffer_study_times_hybrid_ddpgs_pinned_path_on_each_cuda_device(monkeypatch):
    from hetero_tutorial.studies import buffer_designs as study

    asked = []
    monkeypatch.setattr(study, "measure_capacity", lambda capacity, *rest: [{"capacity": capacity}])
    monkeypatch.setattr(  # pinning needs a real CUDA device: record what would be timed
        study, "pinned_sampling", lambda c, b, device, *rest: asked.append((c, str(device))) or [{}]
    )
    cpu, gpu = torch.device("cpu"), torch.device("cuda", 0)
    with_gpu = study.time_designs([100, 200], 16, [cpu, gpu], fresh_process=False).fields()
    assert asked == [(100, "cuda:0"), (200, "cuda:0")] and len(with_gpu["pinned_rows"]) == 2
    assert with_gpu["pinned_note"] is None
    cpu_only = study.time_designs([100], 16, [cpu], fresh_process=False).fields()
    assert cpu_only["pinned_rows"] == [] and "not timed" in cpu_only["pinned_note"]


def test_bench_buffers_record_says_when_the_pinned_path_was_not_timed():
    from argparse import Namespace

    from hetero_tutorial.app.bench import buffers as bench

    args = Namespace(capacities=[300], batch_size=16, devices=["cpu"], repeats=2, seed=0)
    fields = bench.run(args)
    assert {row["design"] for row in fields["rows"]} == set(DESIGNS)
    assert fields["pinned_rows"] == [] and "pin_memory=True" in fields["pinned_note"]


def test_a_tensor_buffer_copied_from_a_filled_one_holds_and_samples_the_same():
    """The pinned path's buffer is one copy of the filled one: same rows, same batches."""
    filled, copy = (TensorReplayBuffer(50, OBS_DIM, ACTION_DIM, seed=3) for _ in range(2))
    add_steps(filled, range(1, 71))  # past the capacity: the ring has wrapped
    copy.copy_rows_from(filled)
    assert len(copy) == len(filled) == 50
    twin = TensorReplayBuffer(50, OBS_DIM, ACTION_DIM, seed=3)
    add_steps(twin, range(1, 71))  # filled one add at a time, as before
    assert torch.equal(copy.sample(16).obs, twin.sample(16).obs)
    with pytest.raises(UsageError, match="one shape"):
        TensorReplayBuffer(10, OBS_DIM, ACTION_DIM).copy_rows_from(filled)


def test_the_buffer_studys_own_process_returns_its_rows_or_its_error_and_ends():
    """Each capacity runs in a spawned process: its rows come back, an error raised there is
    raised here (not a wait forever), and no worker is left behind either way."""
    import psutil

    from hetero_tutorial.studies import buffer_designs as study

    cpu = [torch.device("cpu")]
    rows, pinned = study.in_own_process((300, 16, cpu, 2, 0, 1))
    assert {row.design for row in rows} == set(DESIGNS) and pinned == []
    with pytest.raises(UsageError, match="capacity"):
        study.in_own_process((0, 16, cpu, 2, 0, 1))
    left = [p.cmdline() for p in psutil.Process().children(recursive=True)]
    # multiprocessing's resource tracker stays, as it does for any spawn, until this exits
    assert [cmd for cmd in left if "resource_tracker" not in " ".join(cmd)] == []
