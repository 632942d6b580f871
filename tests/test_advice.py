"""The advice of notebook 08 names a winner only past the measured noise."""

import statistics
from types import SimpleNamespace

from hetero_tutorial.allocator.curriculum import curriculum, worth
from hetero_tutorial.core import results
from hetero_tutorial.ledger import advice
from hetero_tutorial.ledger.claims import group_by_kind

GPU_ALL, SPLIT = ("cuda:0",) * 3, ("cpu", "cpu", "cuda:0")
FIXED = ["fixed-rule", "hybrid", "all-cpu", "all-accelerator"]


def _record(kind, data):
    machine = {"cpu_model": "Test CPU", "cpu_logical_cores": 2, "accelerator": "GPU"}
    provenance = {"fingerprint": machine, "date": "2026-12-01T00:00:00", "command": "t", "quick": 0}
    return results.Record(kind, data, provenance)


def _row(network, plans, devices, seconds, jitter=0.0, decision_s=0.0):
    """One configuration's row: five timed iterations, ``seconds`` times (1 + jitter * k)."""
    iterations = [seconds * (1 + jitter * k) for k in (-2, -1, 0, 1, 2)]
    return {"network": network, "plan": plans[0], "plans": plans, "label": "+".join(devices),
            "threads": 1, "seconds_per_iteration": seconds, "iteration_seconds": iterations,
            "total_seconds": sum(iterations), "decision_seconds": decision_s,
            **dict(zip(("rollout", "storage", "update"), devices, strict=True))}  # fmt: skip


def _curriculum(allocator_s, jitter, decision_s=0.0):
    """Two stages: the fixed plans as one configuration at 1 s per iteration, the allocator's
    own at ``allocator_s`` with its iterations ``jitter`` apart."""
    stages = ["mlp-64", "mlp-256"]
    rows = []
    for stage in stages:
        rows += [_row(stage, FIXED, GPU_ALL, 1.0),
                 _row(stage, ["allocator"], SPLIT, allocator_s, jitter, decision_s)]  # fmt: skip
    decisions = [
        SimpleNamespace(workload=stage, chosen=SimpleNamespace(label="split"), held=False,
                        placement=SimpleNamespace(rollout_device="cpu", update_device="cuda:0"))
        for stage in stages
    ]  # fmt: skip
    return curriculum(decisions, rows, stages), rows


def test_worth_names_a_saving_only_past_the_paired_spread():
    clear = worth(_curriculum(0.5, 0.02)[0])
    assert clear["best"] == ", ".join(FIXED) and clear["saved"] is True
    assert clear["spread"].value == 2.0 and clear["spread"].measured
    noisy = worth(_curriculum(0.98, 0.1)[0])  # 2% faster by median, iterations +-20%
    assert noisy["saved"] is None
    lost = worth(_curriculum(1.0, 0.0, decision_s=0.5)[0])  # the same speed, plus measuring
    assert lost["saved"] is False and lost["measuring_s"] == 1.0


def test_allocator_advice_and_notebook_sentence_read_the_same_verdict():
    from hetero_tutorial.notebook.curriculum_findings import curriculum_sentence

    summary, rows = _curriculum(0.98, 0.1)
    old = {k: v for k, v in summary.items() if not k.endswith("iteration_sums")}  # older record
    record = _record("bench.allocator", {"curriculum": old, "rows": rows, "criterion": []})
    found = advice.allocator_worth(group_by_kind([record]))
    assert found["advice"].startswith("no clear effect: the allocator and the best fixed")
    assert "no clear effect" in curriculum_sentence(summary)
    summary, rows = _curriculum(0.5, 0.02)
    checks = [{"threads_verdict": "right: the fastest measured"}, {"threads_verdict": "wrong: x"}]
    record = _record("bench.allocator", {"curriculum": summary, "rows": rows, "criterion": checks})
    found = advice.allocator_worth(group_by_kind([record]))
    assert found["advice"].startswith("yes") and "past the noise" in found["advice"]
    assert "the faster count past the noise on 0 of 2" in found["figure"]
    assert "within the noise of the other count on 1" in found["figure"]
    assert "the allocator saved" in curriculum_sentence(summary)


def _buffers(rates, iqr):
    """bench.buffers rows on the CPU at one capacity: ``rates`` by design, IQR ``iqr`` x time."""
    rows = [{"design": d, "capacity": 100_000, "batch_size": 256, "device": "cpu",
             "sample_transitions_per_s": rate, "sample_iqr_s": iqr * 256 / rate}
            for d, rate in rates.items()]  # fmt: skip
    return _record("bench.buffers", {"rows": rows})


def test_buffer_advice_names_the_fastest_sampler_only_past_the_noise():
    clear = advice.buffer(group_by_kind([_buffers({"tensor": 3e6, "transition": 1e6}, 0.05)]))
    assert clear["advice"].startswith("the tensor buffer")
    faster_b = _buffers({"tensor": 1e6, "transition": 1e6, "trajectory": 2e6}, 0.05)
    assert advice.buffer(group_by_kind([faster_b]))["advice"] == "pattern B"
    close = advice.buffer(group_by_kind([_buffers({"tensor": 1.05e6, "transition": 1e6}, 0.3)]))
    assert close["advice"].startswith("no clear winner: tensor and pattern A")


def _check(network, chosen, best, verdict, ratio=1.0, low=None, high=None):
    seconds = {str(chosen): ratio, str(best): 1.0}
    return {"network": network, "threads_chosen": chosen, "threads_best": best,
            "threads_seconds": seconds, "threads_ratio": ratio, "threads_low": low,
            "threads_high": high, "threads_verdict": verdict}  # fmt: skip


CHECKS = [
    _check("mlp-64", 2, 1, "as good as 1 thread within the noise", 1.01, 0.99, 1.01),
    _check("mlp-128", 1, 2, "wrong: 2 threads were faster past the noise", 1.06, 1.057, 1.062),
    _check("mlp-256", 2, 2, "right: the fastest measured, past the noise of 1 thread"),
    _check("mlp-512", 2, 2, "right: the fastest measured, though within the noise of 1 thread"),
]


def test_thread_choices_count_past_the_noise_and_name_the_wrong_one_in_full():
    text = advice.thread_choice_sentence(CHECKS)
    assert "the faster count past the noise on 1 of 4" in text
    assert "within the noise of the other count on 2 (mlp-64, mlp-512)" in text
    assert "at mlp-128 it chose 1 thread and 2 were 6% faster, past the noise" in text
    assert advice.thread_choice_sentence([{"threads_verdict": None}]) == ""


def test_thread_advice_reads_03_and_05_together():
    record = _record("bench.allocator", {"criterion": CHECKS})
    found = advice.threads(group_by_kind([record]))
    assert "03's width sweep not measured yet: run notebook 03" in found["advice"]
    assert "width 128-256: 2 threads (05: 2 threads at 128 and 256)" in found["advice"]
    assert "width 64: either count, no clear effect" in found["advice"]  # one answer per range
    assert "wrong past the noise on 1: at mlp-128" in found["figure"]
    assert found["source"] == "bench.allocator"


def _ddpg(buffer, per_episode):
    runs = [{"config": {"hidden": 256, "seed": seed}, "seconds_per_episode": s,
             "env_steps_per_s": 200 / s} for seed, s in enumerate(per_episode)]  # fmt: skip
    data = {"buffer": buffer, "runs": runs, "seconds_per_episode": statistics.median(per_episode),
            "env_steps_per_s": 200 / statistics.median(per_episode)}  # fmt: skip
    return _record("bench.ddpg", data)


def test_one_seed_of_ddpg_gives_the_buffer_advice_no_verdict_not_no_clear_effect():
    """09 printed "no clear effect" from one seed, beside the recommended buffer's slower run."""
    sampled = _buffers({"tensor": 3e6, "transition": 1e6}, 0.05)
    one = [sampled, _ddpg("transition", [1.33]), _ddpg("tensor", [1.59])]
    found = advice.buffer(group_by_kind(one))["advice"]
    assert "no verdict (0.84x pattern A's, one seed" in found and "no clear effect" not in found
    five = [
        sampled,
        _ddpg("transition", [1.3, 1.4, 1.35, 1.32, 1.38]),
        _ddpg("tensor", [1.6, 1.7, 1.65, 1.62, 1.68]),
    ]
    assert "though DDPG ran slower with it" in advice.buffer(group_by_kind(five))["advice"]
    # the same seeds, two of them: too few for a verdict, and never "no clear effect"
    two = [sampled, _ddpg("transition", [1.3, 1.4]), _ddpg("tensor", [1.6, 1.7])]
    found = advice.buffer(group_by_kind(two))["advice"]
    assert "no verdict (0.82x pattern A's, per seed: 2 repeats, and a verdict needs 5)" in found
    assert "no clear effect" not in found and "ran slower" not in found


def test_a_busy_part_of_the_thread_answer_says_not_judged_not_not_measured():
    """10's thread advice read "03's width sweep not measured yet" where 03 ran busy."""
    hybrid = _record("bench.hybrid", {"width_sweep": []})
    hybrid.provenance["machine_load"] = {"busy": True, "study": "03", "seconds": 2.0}
    allocator = _record("bench.allocator", {"criterion": CHECKS})
    found = advice.threads(group_by_kind([hybrid, allocator]))
    assert "03's width sweep: not judged (busy machine)" in found["advice"]
    assert "not measured yet: run notebook 03" not in found["advice"]
    assert "05's thread checks" not in found["advice"]  # quiet: read, not missing


def test_an_allocator_that_chose_the_fixed_plans_own_configuration_never_repays():
    """05 said "never repays" and 10 "not over runs this short" of one record: the ledger
    now says never too, where the allocator's choices were the best fixed plan's own."""
    stages = ["mlp-64", "mlp-256"]
    rows = [_row(stage, [*FIXED, "allocator"], GPU_ALL, 1.0, 0.01, 0.5) for stage in stages]
    decisions = [
        SimpleNamespace(workload=stage, chosen=SimpleNamespace(label="all"), held=False,
                        placement=SimpleNamespace(rollout_device="cuda:0", update_device="cuda:0"))
        for stage in stages
    ]  # fmt: skip
    summary = curriculum(decisions, rows, stages)
    record = _record("bench.allocator", {"curriculum": summary, "rows": rows, "criterion": []})
    found = advice.allocator_worth(group_by_kind([record]))
    assert found["advice"].startswith("no: its choices ran the best fixed choice's own")
    assert "never repays" in found["advice"] and "runs this short" not in found["advice"]
