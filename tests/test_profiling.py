"""Profiling: transfer patterns, stack classification, py-spy for real, cProfile, torch.profiler."""

import json
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from hetero_tutorial.app import cli
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.notebook.solutions.profiling import inclusive_share
from hetero_tutorial.profiling import cprofiler, flamegraph, stacks, torch_profiler
from hetero_tutorial.profiling import pyspy as profiling
from hetero_tutorial.rl.ppo.config import PPOConfig

# A training loop in miniature; the constructed stacks below point at its lines.
LOOP = textwrap.dedent(
    """\
    def iteration(trainer):
        with trainer.phase("rollout"):
            rollout(trainer)
        with trainer.phase("update"):
            update(trainer)


    def rollout(trainer):
        obs = trainer.obs.to(trainer.device)  # copy in
        action = trainer.policy(obs)  # not a .cpu() call: comments do not count
        value = helper(action.to(trainer.device))
        return action.cpu().numpy()


    def helper(x):
        return x * 2


    def update(trainer):
        loss = trainer.loss()
        return loss.item()
    """
)


@pytest.fixture
def loop(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(LOOP)
    return str(path)


def _stack(loop, *frames):
    """Frame strings as py-spy writes them: a (function, line) pair is a frame of ``loop``."""
    return tuple(f if isinstance(f, str) else f"{f[0]} ({loop}:{f[1]})" for f in frames)


@pytest.fixture
def known(loop):
    """Constructed samples: rollout 100 (50 transfer), update 100 (30 transfer), outside 45."""
    top = ("<module> (/x/run.py:1)",)
    samples = Counter()
    samples[_stack(loop, *top, ("iteration", 3), ("rollout", 9))] = 30  # .to(
    samples[_stack(loop, *top, ("iteration", 3), ("rollout", 10))] = 40  # comment only
    samples[_stack(loop, *top, ("iteration", 3), ("rollout", 11), ("helper", 16))] = 5
    samples[_stack(loop, *top, ("iteration", 2))] = 5  # the `with` line: the phase timer
    samples[_stack(loop, *top, ("iteration", 3), ("rollout", 12))] = 20  # .cpu().numpy()
    waiting = "cudaStreamSynchronize (libcudart.so.12)"
    samples[_stack(loop, *top, ("iteration", 5), ("update", 20), waiting)] = 10
    samples[_stack(loop, *top, ("iteration", 5), ("update", 20))] = 70
    samples[_stack(loop, *top, ("iteration", 5), ("update", 21))] = 20  # .item()
    samples[("<module> (/x/run.py:1)", "_find_and_load (<frozen importlib._bootstrap>:1176)")] = 40
    samples[()] = 5  # a thread with no Python frame
    return samples


def test_patterns_are_complete_and_compile():
    for pattern in stacks.TRANSFER_PATTERNS:
        assert pattern.kind in ("copy", "wait")
        regexes = [pattern.source, pattern.cprofile, pattern.torch_event, pattern.native]
        assert any(regexes), pattern.operation
        for regex in filter(None, regexes):
            re.compile(regex)
    rows = stacks.pattern_rows()
    assert len(rows) == len(stacks.TRANSFER_PATTERNS) and rows[0]["operation"]


@pytest.mark.parametrize(
    ("name", "column", "operation"),
    [
        ("actions = action.cpu().numpy()", "source", "`.to(device)`, `.cpu()`, `.cuda()`"),
        ("approx_kl, clipfrac = stats.tolist()", "source", "`.item()`, `.tolist()`"),
        ("torch.cuda.synchronize(device)", "source", "`torch.cuda.synchronize()` (and MPS/XPU's)"),
        (
            "<method 'to' of 'torch._C.TensorBase' objects>",
            "cprofile",
            "`.to(device)`, `.cpu()`, `.cuda()`",
        ),
        ("Memcpy HtoD (Pageable -> Device)", "torch_event", "CUDA's copy functions"),
        ("aten::_local_scalar_dense", "torch_event", "`.item()`, `.tolist()`"),
        ("cudaMemcpyAsync", "native", "CUDA's copy functions"),
        ("cuStreamSynchronize", "native", "`torch.cuda.synchronize()` (and MPS/XPU's)"),
    ],
)
def test_each_tool_names_a_transfer_its_own_way(name, column, operation):
    assert stacks.match(name, column).operation == operation


@pytest.mark.parametrize(
    "name", ["logits = self.actor(obs)", "aten::mm", "cudaLaunchKernel", "total = sum(x)"]
)
def test_other_work_is_not_a_transfer(name):
    for column in ("source", "cprofile", "torch_event", "native"):
        assert stacks.match(name, column) is None


def test_frames_parse_python_native_and_frozen():
    python = stacks.Frame.parse("PPOTrainer.rollout (/repo/hetero_tutorial/ppo.py:470)")
    assert (python.function, python.line, python.is_python) == ("PPOTrainer.rollout", 470, True)
    assert python.label == "PPOTrainer.rollout (hetero_tutorial/ppo.py:470)"
    native = stacks.Frame.parse("f<&g(_object*, _object*)> (libtorch_python.so)")
    assert (native.function, native.file, native.is_python) == (
        "f<&g(_object*, _object*)>",
        "libtorch_python.so",
        False,
    )
    frozen = stacks.Frame.parse("_find_and_load (<frozen importlib._bootstrap>:1176)")
    assert not frozen.is_python and frozen.source() == ""


def test_read_collapsed_merges_repeats_and_keeps_empty_stacks():
    text = "a (x.py:1);b (x.py:2) 3\na (x.py:1);b (x.py:2) 4\n 5\n\n"
    assert stacks.read_collapsed(text) == {("a (x.py:1)", "b (x.py:2)"): 7, (): 5}
    with pytest.raises(UsageError, match="--format raw"):
        stacks.read_collapsed("<svg>not raw</svg>")


def test_a_frame_name_with_a_line_break_joins_its_lines_into_one_stack():
    # as py-spy once wrote it here: a string read mid-import, its newline kept
    text = "a (x.py:1) 2\n (The following types\n);b (y.py:3) 1\na (x.py:1) 1\n"
    assert stacks.read_collapsed(text) == {
        ("a (x.py:1)",): 3,
        (" (The following types)", "b (y.py:3)"): 1,
    }
    with pytest.raises(UsageError, match="line 2 is not a collapsed stack"):
        stacks.read_collapsed("a (x.py:1) 2\n (cut off here")


def test_transfer_shares_of_constructed_stacks(known):
    shares = stacks.transfer_shares(known)
    assert shares.samples == {"rollout": 100, "update": 100}
    assert shares.transfer == {"rollout": 50, "update": 30}
    assert shares.outside == 45
    assert shares.share == pytest.approx(0.4)
    assert shares.stderr == pytest.approx((82 / 204 * 122 / 204 / 204) ** 0.5)  # Agresti-Coull
    none_of_50 = stacks.TransferShares({"rollout": 50}, {"rollout": 0}, {}, 0)
    assert none_of_50.share == 0 and none_of_50.stderr == pytest.approx(0.026, abs=5e-4)
    assert shares.by_phase() == {"rollout": 0.5, "update": 0.3}
    assert shares.phase_share() == {"rollout": 0.5, "update": 0.5}
    assert shares.operations == {
        "`.to(device)`, `.cpu()`, `.cuda()`": 50,
        "`torch.cuda.synchronize()` (and MPS/XPU's)": 10,
        "`.item()`, `.tolist()`": 20,
    }
    assert sum(row["transfer_of_training"] for row in shares.rows()) == pytest.approx(0.4)


def test_a_profile_without_phases_says_what_to_do():
    shares = stacks.transfer_shares(Counter({("main (/x/run.py:1)",): 9}))
    with pytest.raises(UsageError, match="raise the steps or rate"):
        _ = shares.share


def test_top_frames_and_training_stacks(known, loop):
    training = stacks.training_stacks(known)
    assert sum(training.values()) == 200
    top = stacks.top_frames(training, n=2)
    assert top[0] == (f"update ({'/'.join(loop.split('/')[-2:])}:20)", 0.35)
    assert top[1][1] == pytest.approx(0.2)


def test_inclusive_share_counts_each_sample_once(known):
    training = stacks.training_stacks(known)
    assert inclusive_share(training, "rollout") == pytest.approx(0.475)
    recursive = Counter({("f (a.py:1)", "f (a.py:1)"): 1, ("g (a.py:2)",): 1})
    assert inclusive_share(recursive, "f") == 0.5


def test_flamegraph_svg_is_valid_and_reddens_transfers(known):
    training = stacks.training_stacks(known)
    svg = flamegraph.flamegraph_svg(training, "known", stacks.transfer_stacks(training))
    root = ET.fromstring(svg)
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    # line 3 of the loop calls rollout: 95 samples, 50 of them transfers
    assert any(
        t.startswith("iteration (") and "95 samples (47.5%), 53% of them" in t for t in titles
    )
    assert 'fill="rgb(214,39,40)"' in svg  # a box whose samples were all transfers
    assert flamegraph.flamegraph_svg(Counter(), "empty").endswith("</svg>")


def test_speedscope_file_holds_every_sample(known):
    scope = flamegraph.speedscope(known, "known")
    profile = scope["profiles"][0]
    assert profile["endValue"] == sum(known.values()) == sum(profile["weights"])
    assert all(0 <= i < len(scope["shared"]["frames"]) for s in profile["samples"] for i in s)


def test_split_runs_by_their_function():
    samples = Counter(
        {
            ("main (r.py:1)", "run_hybrid (r.py:5)", "f (r.py:9)"): 2,
            ("main (r.py:1)", "run_all_cpu (r.py:7)"): 3,
            ("main (r.py:1)",): 4,
        }
    )
    runs = profiling.split_runs(samples, {"hybrid": "run_hybrid", "all-cpu": "run_all_cpu"})
    assert {name: sum(s.values()) for name, s in runs.items()} == {"hybrid": 2, "all-cpu": 3}


SCRIPT = textwrap.dedent(
    """\
    import time
    from contextlib import contextmanager

    import numpy as np


    class Loop:
        @contextmanager
        def phase(self, name):
            yield


    def spend(seconds, work):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            work()


    data = np.random.default_rng(0).random((100, 100))
    loop = Loop()
    for _ in range(40):
        with loop.phase("reading"):
            spend(0.01, lambda: data.tolist())
        with loop.phase("computing"):
            spend(0.01, lambda: np.sort(data))
    """
)


@pytest.fixture(scope="module")
def py_spy():
    status = profiling.py_spy_status()
    if not status.available:
        pytest.skip(status.message)
    return status


def test_py_spy_profiles_a_real_script(py_spy, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    profile = profiling.profile_command(
        [sys.executable, str(script)], "script", out_dir=tmp_path, rate=200
    )
    by_phase = profile.shares.by_phase()
    assert profile.shares.total > 50
    # reading: the tolist line (freeing the list lands on the caller's line, not a transfer)
    assert by_phase["reading"] > 0.2 and by_phase["computing"] == 0
    assert set(profile.shares.operations) == {"`.item()`, `.tolist()`"}
    assert ET.fromstring(profile.svg()).tag.endswith("svg")
    assert json.loads(profile.speedscope_path.read_text())["profiles"][0]["weights"]
    fields = profile.fields()
    assert 0 < fields["transfer_share"] < 1 and fields["top_frames"]


def test_a_failing_target_is_reported(py_spy, tmp_path):
    target = [sys.executable, "-c", "raise RuntimeError('boom')"]
    with pytest.raises(UsageError, match="boom"):
        profiling.profile_command(target, "fails", out_dir=tmp_path)


PY_SPY_FAILING_AFTER_ITS_TARGET = """\
Traceback (most recent call last):
  File "<string>", line 1, in <module>
RuntimeError: boom
Error: Failed to get process executable name. Check that the process is running.

Caused by:
    0: No such file or directory (os error 2)

Stack backtrace:
   0: <E as anyhow::context::ext::StdError>::ext_context
   1: py_spy::python_process_info::PythonProcessInfo::new
   2: py_spy::python_spy::PythonSpy::new
   3: py_spy::python_spy::PythonSpy::retry_new
   4: std::sys::backtrace::__rust_begin_short_backtrace
"""


def test_a_target_that_dies_before_py_spy_attaches_is_reported_by_its_own_error(tmp_path):
    done = subprocess.CompletedProcess([], 1, stdout="", stderr=PY_SPY_FAILING_AFTER_ITS_TARGET)
    with pytest.raises(UsageError, match="RuntimeError: boom") as caught:
        profiling._check_recording(done, tmp_path / "missing.txt")
    assert "py_spy::" not in str(caught.value)


def test_missing_py_spy_explains_and_cprofile_still_works(monkeypatch, tmp_path):
    monkeypatch.setattr(profiling, "py_spy_executable", lambda: None)
    status = profiling.py_spy_status()
    assert not status.available and "pip install py-spy" in status.message
    with pytest.raises(UsageError, match="pip install py-spy"):
        profiling.profile_command([sys.executable, "-c", "pass"], "none", out_dir=tmp_path)
    _, result = cprofiler.cprofile_call(lambda: sum(range(1000)), "tiny", tmp_path)
    assert result.path.exists()


def test_py_spy_that_may_not_sample_explains(monkeypatch, tmp_path):
    fake = tmp_path / "py-spy"
    fake.write_text("#!/bin/sh\necho 'Permission denied (os error 1)' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(profiling, "py_spy_executable", lambda: str(fake))
    status = profiling.py_spy_status()
    assert not status.available and "Permission denied" in status.message
    with pytest.raises(UsageError, match=r"Permission denied.*cProfile"):
        profiling.profile_command([sys.executable, "-c", "pass"], "denied", out_dir=tmp_path)


def _tiny_config():
    return PPOConfig.tuned(
        "CartPole-v1", total_steps=128, num_envs=2, num_steps=64, hidden=16, minibatch_size=64
    )


def test_cprofile_of_ppo_training(tmp_path):
    result = cprofiler.cprofile_ppo(_tiny_config(), placement("all-cpu"), out_dir=tmp_path)
    assert result.path.suffix == ".prof" and result.path.exists()
    top = result.top(5)
    assert len(top) == 5 and top[0]["tottime"] >= top[-1]["tottime"]
    assert "`.to(device)`, `.cpu()`, `.cuda()`" in result.transfer_seconds()
    assert 0 < result.transfer_share < 1
    assert cprofiler.snakeviz_command(result.path).startswith("snakeviz ")
    with pytest.raises(UsageError, match="tottime"):
        result.top(sort="ncalls")


def test_torch_profile_names_the_phases(tmp_path):
    profile = torch_profiler.torch_profile(
        _tiny_config(), placement("all-cpu"), warmup=0, out_dir=tmp_path
    )
    phases = profile.phases()
    assert {row["name"] for row in phases} >= {"rollout", "update"}
    assert all(row["annotation"] and row["device"] == "cpu" for row in phases)
    assert all(stacks.match(row["name"], "torch_event") for row in profile.transfers())
    top = profile.top(3)
    assert top[0]["self_cpu_s"] > 0 and not any(row["annotation"] for row in top)
    assert "traceEvents" in json.loads(profile.trace_path.read_text())


def test_reference_profiles_find_their_svg(monkeypatch, tmp_path):
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path)
    assert profiling.reference_profiles() == []
    svg = tmp_path / "gpu.svg"
    svg.write_text("<svg/>")
    record = results.Record("bench.profile", {"transfer_share": 0.3, "flamegraph_svg": str(svg)})
    results.save(record, tmp_path / "bench.profile.json")
    [(found, text)] = profiling.reference_profiles()
    assert found.data["transfer_share"] == 0.3 and text == "<svg/>"


def _fake_profile_ppo(monkeypatch, known, tmp_path):
    """Replace py-spy's recording of PPO with the constructed samples; return what was asked."""
    asked = {}

    def fake_profile_ppo(placements, options, out_dir, **sampling):
        asked.update(sampling, placements=placements, out_dir=out_dir, hidden=options.hidden)
        options = sampling
        command = ["py-spy", "record", "--rate", str(options["rate"]), "--idle"]
        raw = tmp_path / "samples" / "raw.txt"
        return {placements[0]: profiling.make_profile("fake", known, command, raw, out_dir)}

    monkeypatch.setattr("hetero_tutorial.app.bench.profile.profile_ppo", fake_profile_ppo)
    return asked


def test_bench_profile_writes_the_record(monkeypatch, known, tmp_path):
    """The command's wiring, with py-spy's samples replaced by the constructed ones.

    Profiling real PPO under py-spy takes tens of seconds here (a fresh process
    imports PyTorch); notebook 02 runs that path for real.
    """
    asked = _fake_profile_ppo(monkeypatch, known, tmp_path)
    path = tmp_path / "profile.json"
    argv = ["bench", "profile", "--placement", "all-accelerator", "--hidden", "128"]
    assert cli.main([*argv, "--rate", "50", "--json", str(path)]) == 0
    assert asked["placements"] == ["all-accelerator"] and asked["hidden"] == 128
    assert asked["rate"] == 50 and asked["idle"] and not asked["native"] and asked["nonblocking"]
    record = results.load(path)
    data = record.data
    assert record.kind == "bench.profile" and data["placement"] == "all-accelerator"
    assert data["transfer_share"] == pytest.approx(0.4)
    assert data["transfer_share_by_phase"] == {"rollout": 0.5, "update": 0.3}
    assert all(isinstance(f, str) and 0 < share <= 1 for f, share in data["top_frames"])
    assert Path(data["flamegraph_svg"]).is_file() and data["rate"] == 50


def test_bench_profile_reference_keeps_its_pictures_beside_the_record(monkeypatch, known, tmp_path):
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path / "reference")
    asked = _fake_profile_ppo(monkeypatch, known, tmp_path)
    assert cli.main(["bench", "profile", "--placement", "hybrid", "--reference", "--blocking"]) == 0
    assert not asked["nonblocking"]
    [(record, svg)] = profiling.reference_profiles()
    assert record.data["placement"] == "hybrid" and svg.startswith("<svg")
    assert asked["out_dir"].parent.parent == tmp_path / "reference"
    assert not list((tmp_path / "reference").rglob("*.speedscope.json"))  # not a record


SYNC = "`torch.cuda.synchronize()` (and MPS/XPU's)"
COPY = "CUDA's copy functions"
PIN = "`.pin_memory()`"


def test_an_mps_synchronisation_line_is_a_wait():
    # torch.mps.synchronize() runs `torch._C._mps_deviceSynchronize()`: a capital S
    assert stacks.match("return torch._C._mps_deviceSynchronize()", "source").operation == SYNC
    assert stacks.match("return torch._C._cuda_synchronize()", "source").operation == SYNC


TORCH_EVENTS = {  # event names as torch.profiler reports them on a CUDA machine
    "Memcpy HtoD (Pageable -> Device)": COPY,
    "Memcpy HtoD (Pinned -> Device)": COPY,
    "Memcpy DtoH (Device -> Pageable)": COPY,
    "Memcpy DtoH (Device -> Pinned)": COPY,
    "Memcpy DtoD (Device -> Device)": None,  # a copy within the GPU: no host involved
    "cudaMemcpyAsync": None,  # the call that queues a copy (any direction): Memcpy rows time it
    "cudaHostAlloc": PIN,  # pinning, also behind torch.empty(..., pin_memory=True)
    "cudaStreamSynchronize": SYNC,
    "aten::mm": None,
}


def test_torch_profiler_counts_host_device_copies_and_pinning_only():
    rows = [
        {"name": name, "calls": 2, "annotation": False, "device": "cuda"} for name in TORCH_EVENTS
    ]
    for name, operation in TORCH_EVENTS.items():
        found = stacks.match(name, "torch_event")
        assert (found.operation if found else None) == operation, name
    profile = torch_profiler.TorchProfile(rows, Path("t.json"), ("CPU", "CUDA"), 1)
    assert {row["name"] for row in profile.transfers()} == {
        name for name, operation in TORCH_EVENTS.items() if operation
    }


def test_the_phase_timers_syncs_are_counted_apart_from_transfers(loop, tmp_path):
    """At a phase boundary PhaseTimer waits for the GPU: that absorbs queued compute."""
    top = ("<module> (/x/run.py:1)",)
    timer = (
        "PPOTrainer.phase (/x/hetero_tutorial/rl/ppo.py:431)",
        "PhaseTimer.phase (/x/hetero_tutorial/core/timing.py:200)",
        "PhaseTimer.synchronize (/x/hetero_tutorial/core/timing.py:192)",
        "synchronize (/x/hetero_tutorial/core/devices.py:140)",
        "cudaDeviceSynchronize (libcudart.so.12)",
    )
    samples = Counter()
    samples[_stack(loop, *top, ("iteration", 4), *timer)] = 30  # entering "update"
    samples[_stack(loop, *top, ("iteration", 3), *timer)] = 10  # leaving "rollout"
    samples[_stack(loop, *top, ("iteration", 3), ("rollout", 9))] = 20  # .to(: a copy
    samples[_stack(loop, *top, ("iteration", 5), ("update", 21))] = 15  # .item(): a wait
    samples[_stack(loop, *top, ("iteration", 5), ("update", 20))] = 25  # arithmetic
    shares = stacks.transfer_shares(samples)
    assert shares.samples == {"update": 70, "rollout": 30}
    assert shares.transfer == {"update": 15, "rollout": 20}  # copies + waits for data
    assert shares.copies == {"update": 0, "rollout": 20}
    assert shares.waits == {"update": 15, "rollout": 0}
    assert shares.timer_sync == {"update": 30, "rollout": 10}
    assert shares.share == pytest.approx(0.35) and shares.share_of("timer_sync") == 0.4
    assert shares.by_phase("timer_sync") == {"update": 30 / 70, "rollout": 10 / 30}
    assert SYNC not in shares.operations  # the loop's own syncs would be; the timer's are not
    red = stacks.transfer_stacks(samples)  # the flame graph reddens what the share counts
    assert sum(samples[s] for s in red) == 35
    command = ["py-spy", "record", "--rate", "100", "--idle", "--nonblocking"]
    fields = profiling.make_profile("t", samples, command, tmp_path / "raw.txt", tmp_path).fields()
    assert fields["transfer_share"] == pytest.approx(0.35) and fields["nonblocking"]
    assert fields["copy_share"] == 0.2 and fields["wait_share"] == 0.15
    assert fields["timer_sync_share"] == 0.4 and 0 < fields["timer_sync_share_stderr"] < 0.1


def test_py_spy_samples_without_pausing_unless_asked(monkeypatch):
    monkeypatch.setattr(profiling, "py_spy_executable", lambda: "py-spy")
    assert "--nonblocking" in profiling.py_spy_command(["python"], Path("o.txt"))
    assert "--nonblocking" not in profiling.py_spy_command(
        ["python"], Path("o.txt"), nonblocking=False
    )


def test_native_frames_are_sampled_with_pauses_and_never_asked_without(monkeypatch):
    """py-spy cannot read native stacks without pausing the program: it would exit at once
    ("Can't get native stack traces with the --nonblocking option."), so that is refused."""
    monkeypatch.setattr(profiling, "py_spy_executable", lambda: "py-spy")
    native = profiling.py_spy_command(["python"], Path("o.txt"), native=True)
    assert "--native" in native and "--nonblocking" not in native  # pauses by default
    with pytest.raises(UsageError, match="only from a paused program"):
        profiling.py_spy_command(["python"], Path("o.txt"), native=True, nonblocking=True)
    with pytest.raises(UsageError, match="--blocking"):  # before anything starts
        cli.bench(["profile", "--native", "--json", "never.json"])


def test_a_native_profile_is_recorded_apart_from_the_share(monkeypatch, known, tmp_path):
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path / "reference")
    asked = _fake_profile_ppo(monkeypatch, known, tmp_path)
    argv = ["bench", "profile", "--placement", "hybrid", "--reference"]
    assert cli.main([*argv, "--native", "--blocking"]) == 0
    assert asked["native"] and not asked["nonblocking"]
    names = sorted(p.name for p in (tmp_path / "reference").rglob("bench.profile.*.json"))
    assert names == ["bench.profile.hybrid-native.json"]


def test_every_package_frame_of_a_forward_and_backward_is_read_as_arithmetic():
    """02's "what kind of work" reads a frame by its file: wherever the package keeps the
    layers' arithmetic (rl/nets.py, the CPU forms), its frames must read as arithmetic, or a
    learner is told the matrix product is "other"."""
    import torch

    from hetero_tutorial.profiling.reading import kind_of
    from hetero_tutorial.profiling.stacks import Frame
    from hetero_tutorial.rl.nets import DiscreteActorCritic

    net, seen = DiscreteActorCritic(4, 2, hidden=64), set()

    def tracer(frame, event, arg):
        if event == "call" and "hetero_tutorial" in frame.f_code.co_filename:
            seen.add((frame.f_code.co_name, frame.f_code.co_filename))

    sys.setprofile(tracer)
    try:
        log_probs, value = net(torch.randn(16, 4))
        (log_probs.sum() + value.sum()).backward()
    finally:
        sys.setprofile(None)
    assert seen
    kinds = {name: kind_of(Frame(name, file)) for name, file in seen}
    assert set(kinds.values()) <= {"arithmetic", "per call"}, kinds
