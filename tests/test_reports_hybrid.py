"""Notebooks 03 and 05: lines that say what each number is, and where the runs really ran."""

from types import SimpleNamespace

from hetero_tutorial.core.configurations import where
from hetero_tutorial.core.placement import placement
from hetero_tutorial.notebook import allocator_report, hybrid_report
from hetero_tutorial.notebook.exercises import UNSOLVED


def _run(copies: float = 0.0) -> SimpleNamespace:
    return SimpleNamespace(
        copies_per_env_step=copies, evaluations=[(0, -1100.0), (4096, -900.0), (8192, -1200.0)],
        env_steps=8192,
    )  # fmt: skip


def _counted(name: str, per_step: float, on: str = "meta", per_iteration: int = 1) -> dict:
    return {"placement": name, "counted_on": on, "copies_per_env_step": per_step,
            "copies_per_iteration": per_iteration, "steps_counted": 256}  # fmt: skip


def test_real_and_counted_copies_are_named_apart():
    runs = {"all-accelerator": _run(0.0)}  # on a CPU machine the hybrid plan ran as this one
    counted = {
        "all-accelerator": _counted("all-accelerator", 0.5195, per_iteration=133),
        "hybrid": _counted("hybrid", 0.0156, per_iteration=4),
    }
    lines = hybrid_report.copies_lines(runs, counted)
    assert lines[0] == (
        "all-accelerator: 133 copies per iteration of 256 environment steps, 0.5195 per "
        "environment step; really moved in section 1's run: 0.000 per step."
    )
    assert (
        "really moved in section 1's run: 0.000 per step (it ran as all-accelerator)" in (lines[1])
    )
    assert lines[-1] == (
        "Counted on the meta device: the copies each plan's code asks for; none moved data."
    )


def test_the_curves_say_where_they_ran_and_quick_mode_judges_nothing(monkeypatch):
    runs = {"all-accelerator": _run()}
    monkeypatch.setenv("HETERO_TUTORIAL_QUICK", "1")
    ran = where(placement("all-accelerator"))  # "everything on cpu" on a machine without a GPU
    assert (
        hybrid_report.curves_title(runs, "Pendulum-v1") == f"PPO on Pendulum-v1 ({ran}): one seed"
    )
    lines = hybrid_report.learning_lines(runs)
    assert "best greedy return -900.0 (at 4,096 steps), final -1200.0" in lines[0]
    assert lines[-1].startswith("quick mode: no learning verdict (8,192 environment steps")
    monkeypatch.setenv("HETERO_TUTORIAL_QUICK", "0")
    assert not any("quick mode" in line for line in hybrid_report.learning_lines(runs))


def test_a_thread_check_bar_is_not_called_the_allocators():
    row = {"plans": [], "plan": "cpu, 1 thread", "label": "cpu, 1 thread"}
    label = allocator_report._plans_label(row, chosen_threads=2)
    assert label == "thread check: cpu, 1 thread (not chosen; the allocator chose 2)"
    five = {"plans": ["fixed-rule", "hybrid", "all-cpu", "all-accelerator", "allocator"],
            "plan": "fixed-rule", "label": "cpu, 2 threads"}  # fmt: skip
    assert allocator_report._plans_label(five) == "all five plans (cpu, 2 threads)"


def test_the_allocator_and_sampling_figures_pass_the_audit_with_numbers_on_their_axes():
    from hetero_tutorial.notebook import buffer_report
    from hetero_tutorial.notebook.figure_audit import problems

    rows = []
    for network in ("mlp-64", "mlp-256"):
        rows.append({"network": network, "plan": "fixed-rule", "label": "cpu, 1 thread",
                     "plans": ["fixed-rule", "hybrid", "all-cpu", "all-accelerator", "allocator"],
                     "seconds_per_iteration": 1.0, "threads": 1})  # fmt: skip
        rows.append({"network": network, "plan": "cpu, 2 threads", "label": "cpu, 2 threads",
                     "plans": [], "seconds_per_iteration": 1.06, "threads": 2})  # fmt: skip
    figure = allocator_report.allocator_comparison(rows)
    assert problems(figure) == []
    (ax,) = figure.axes
    assert [p.get_hatch() for p in ax.patches[:2]] == ["//", None]  # the allocator's, hatched
    assert any(t.get_text().startswith("mlp-64: thread check") for t in ax.get_yticklabels())
    from hetero_tutorial.studies.buffer_rows import SamplingRow

    unread = {"add_transitions_per_s": 1e6, "bytes_per_transition": 0.0,
              "raw_bytes_per_transition": 34, "neighbour_fraction": 0.0,
              "copies_per_batch": 0}  # fmt: skip
    sampled = [
        SamplingRow(design=d, capacity=c, device="cpu", batch_size=256,
                    sample_transitions_per_s=rate * c / 1e4, **unread)
        for d, rate in (("transition", 5e4), ("tensor", 3e6)) for c in (10_000, 30_000)
    ]  # fmt: skip
    assert problems(buffer_report.buffer_sampling_rates(sampled)) == []


def _decision(network: str, estimate: float) -> SimpleNamespace:
    chosen = SimpleNamespace(total=estimate, label="all-cpu, 1 thread", threads=1)
    other = SimpleNamespace(total=estimate * 2, label="all-cpu, 2 threads", threads=2)
    return SimpleNamespace(
        fields=lambda: {"network": network},
        chosen=chosen,
        candidates=(other, chosen),
        explain=lambda: f"- plan: {chosen.label}: {estimate * 1e3:.1f} ms per iteration",
    )


def test_the_allocators_estimates_are_set_beside_the_measured_iterations():
    rows = [
        {"network": "mlp-64", "plans": ["allocator", "all-cpu"], "seconds_per_iteration": 0.009,
         "iteration_seconds": [0.0085, 0.009, 0.0095, 0.0088, 0.0092]},
        {"network": "mlp-64", "plans": [], "seconds_per_iteration": 0.001, "threads": 2},
        {"network": "mlp-1024", "plans": ["allocator"], "seconds_per_iteration": 0.08,
         "iteration_seconds": [0.078, 0.08, 0.082, 0.079, 0.081]},
    ]  # fmt: skip
    decisions = [_decision("mlp-64", 0.0045), _decision("mlp-1024", 0.155)]
    lines = allocator_report.estimate_lines(decisions, rows)
    assert lines[0].startswith("Training over the allocator's estimate (at least 1x)")
    assert lines[0].endswith("(at least 1x): mlp-64 2.00x (1.89-2.11x): held.")
    assert lines[1].startswith(
        "mlp-1024 training over its estimate (155 ms): 0.52x (per iteration 0.50-0.53x), below "
        "the estimate (at least 1.00x) by 48%: the expectation did not hold"
    )
    fine = allocator_report.estimate_lines(decisions[:1], rows)
    assert len(fine) == 1 and fine[0].endswith("held.")
    # the first three of the same iterations: too few to hold, so set out in full
    three = [rows[0] | {"iteration_seconds": rows[0]["iteration_seconds"][:3]}, rows[1]]
    (few,) = allocator_report.estimate_lines(decisions[:1], three)
    assert few.startswith("mlp-64 training over its estimate (4.5 ms): 2.00x (per iteration")
    assert few.endswith("no verdict, 3 repeats, and a verdict needs 5")
    line = allocator_report.price_guess_line(5.0, decisions[0], priced=0.0045)
    assert "all-cpu, 1 thread, priced per iteration: 4.5 ms, within 20% of your guess" in line
    # unsolved, every price waits: the table, the guess line and the reasons
    assert allocator_report.price_guess_line(5.0, decisions[0], priced=None) == UNSOLVED
    assert allocator_report.candidates_table(decisions[0], None).data == ""
    assert allocator_report.reasons(decisions[0], None) == UNSOLVED
    assert "- plan: all-cpu, 1 thread" in allocator_report.reasons(decisions[0], 0.0045)
