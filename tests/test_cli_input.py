"""Bad input to the bench commands gets a UsageError that says what to do, before any work."""

import pytest

from hetero_tutorial.app import cli
from hetero_tutorial.app.bench import hybrid
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.profiling import target
from hetero_tutorial.rl.ppo.options import RunOptions
from hetero_tutorial.studies import crossover


def test_argument_errors_raise_from_python_and_exit_2_on_the_command_line(capsys):
    with pytest.raises(UsageError, match="invalid int value: 'x'"):
        cli.bench(["crossover", "--repeats", "x"])
    with pytest.raises(SystemExit) as exited:
        cli.main(["bench", "crossover", "--repeats", "x"])
    assert exited.value.code == 2 and "invalid int value" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--batch-sizes", "0"], "smallest_batch_size must be at least 1, got 0"),
        (["--widths", "-8"], "smallest_width must be at least 1, got -8"),
        (["--repeats", "0"], "repeats must be at least 1, got 0"),
    ],
)
def test_crossover_sizes_are_checked_before_anything_is_timed(monkeypatch, argv, message):
    monkeypatch.setattr(crossover, "naive_vs_honest", lambda *a: pytest.fail("timed first"))
    with pytest.raises(UsageError, match=message):
        cli.bench(["crossover", *argv])


def test_crossover_devices_are_resolved_with_what_exists_named():
    with pytest.raises(UsageError, match=r"unknown device 'gpu0'\. Available on this machine"):
        crossover.forward_grid([8], [1], ["gpu0"])


def test_hybrid_checks_its_sweep_before_the_side_by_side_training(monkeypatch):
    monkeypatch.setattr(hybrid, "train_side_by_side", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(UsageError, match="sweep_iterations must be at least 1, got 0"):
        cli.bench(["hybrid", "--sweep-iterations", "0"])


def test_profile_offers_only_the_placements_the_profiled_program_runs():
    with pytest.raises(UsageError, match="invalid choice: 'all-device'"):
        cli.bench(["profile", "--placement", "all-device"])


def test_the_profiled_program_leaves_threads_alone_unless_told(monkeypatch):
    asked = []

    def fake(options):
        asked.append(options.threads)
        fields = {"placement": "all-cpu", "env_steps": 1, "env_steps_per_s": 1.0}
        return type("Run", (), {**fields, "phase_seconds": {"rollout": 1.0}})

    monkeypatch.setitem(target.RUNNERS, "all-cpu", fake)
    options = RunOptions(threads=None, hidden=8)
    argv = target.command(["all-cpu"], options)[3:]  # after python -m module
    assert argv[argv.index("--threads") + 1] == "auto"
    target.main(argv)
    target.main([*argv, "--threads", "3"])
    assert asked == [None, 3]
