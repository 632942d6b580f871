"""Notebook 06's tables and figures: an overlap study's configurations, PPO's ratio by policy
lag, the accelerator's utilisation (live, or from reference records), timelines of every
process, speed-up against workers, learning and clipping by policy lag. Each takes measured
rows or timelines and returns the table or the figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core import machine_load, results
from hetero_tutorial.core.plural import counted
from hetero_tutorial.notebook import peer_races
from hetero_tutorial.notebook.exercises import UNSOLVED, prediction_line
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies import learning, overlap, overlap_findings


def _percent(value: float) -> str:
    return f"{value:.0%}"


def _times(value: float) -> str:
    return f"{value:.2f}x"


def _speedup(entry: dict[str, Any]) -> str:
    """A configuration's speed-up, the median over the seeds with their range in brackets
    where two or more seeds ran."""
    text = _times(entry["speedup_vs_sequential"])
    if entry.get("seeds", 1) >= 2 and entry.get("speedup_low") is not None:
        text += f" ({entry['speedup_low']:.2f}-{entry['speedup_high']:.2f}x)"
    return text


def summary_table(summary: Sequence[dict[str, Any]], ideal: bool = True) -> Markdown:
    """One row per configuration of :func:`~hetero_tutorial.studies.overlap.summarise`.

    ``ideal=False`` leaves out the ideal speed-up and the share of it reached: the tables
    shown before the exercise that asks for the ideal."""
    columns = {
        "name": "configuration",
        "env_steps_per_s": "steps/s",
        "speedup_vs_sequential": "x sequential",
        "ideal_speedup": "ideal",
        "share_of_ideal": "of ideal",
        "learner_idle_share": "learner idle",
        "worker_idle_share": "worker idle",
        "dropped_rollouts": "dropped",
        "eval_return_mean": "final greedy return (mean)",
        "other_load_cores": "others' load (cores)",
    }
    formats = {
        "env_steps_per_s": "{:,.0f}".format,
        "speedup_vs_sequential": _times,
        "ideal_speedup": _times,
        "share_of_ideal": _percent,
        "learner_idle_share": _percent,
        "worker_idle_share": _percent,
        "eval_return_mean": "{:.1f}".format,
        "other_load_cores": "{:.2f}".format,
    }
    if not ideal:
        columns = {k: v for k, v in columns.items() if k not in ("ideal_speedup", "share_of_ideal")}
    if all(e.get("other_load_cores") is None for e in summary):
        del columns["other_load_cores"]  # no run lasted long enough to meter it: no column
    rows = [{**e, "name": overlap_findings.label(e), "speedup": _speedup(e)} for e in summary]
    columns = {("speedup" if k == "speedup_vs_sequential" else k): v for k, v in columns.items()}
    return markdown_table(rows, columns, formats)


def ideal_table(
    summary: Sequence[dict[str, Any]], timeline: Sequence[dict[str, Any]] = ()
) -> Markdown:
    """Each overlapped configuration's speed-up against its ideal, the outcome in the words of
    :func:`~hetero_tutorial.studies.overlap_findings.ideal_finding`; below the table, the
    causes the run can check for every configuration outside its ideal
    (:func:`~hetero_tutorial.studies.overlap_findings.outside_ideal_lines`), the sequential
    ``timeline``'s run among them."""
    phases = overlap_findings.timeline_phases(timeline) if timeline else None
    rows = []
    for entry in summary:
        if entry["plan"] == "sequential":
            continue
        finding = overlap_findings.ideal_finding(entry, summary=summary, timeline=phases)
        value = finding.measured.value
        place = finding.expected.place(value)
        gap = f" by {finding.expected.gap_words(value)}" * (place != "inside")
        rows.append({**entry, "name": overlap_findings.label(entry), "speedup": _speedup(entry),
                     "outcome": f"{place}{gap}: {finding.outcome.value}"})  # fmt: skip
    table = markdown_table(
        rows,
        {"name": "configuration", "speedup": "x sequential",
         "ideal_speedup": "ideal (at most)", "outcome": "against its ideal"},
        {"ideal_speedup": _times},
        timed=False,
    )  # fmt: skip
    outside = overlap_findings.outside_ideal_lines(summary, phases)
    return Markdown("\n\n".join([table.data, *(["\n".join(outside)] if outside else [])]))


def timeline_line(lanes: Sequence[dict[str, Any]], study: dict[str, Any]) -> str:
    """The sequential timeline's own phase times beside the study's R and U: the timeline is
    a separate, short run of the same plan, so its bars need not match them."""
    iterations = sum(i["kind"] == "rollout" for i in lanes)
    rollouts, updates = overlap_findings.timeline_phases(lanes)
    rollout, update = overlap.sequential_phase_times(study)
    runs = sum(row.get("plan") == overlap.SEQUENTIAL for row in study.get("rows", []))
    over = (
        "the study's sequential run, its"
        if runs == 1
        else f"the study's {runs} sequential runs, each one's"
    )
    return (
        f"This sequential timeline is a separate run ({iterations} iterations "
        f"after a warm-up): rollouts {rollouts * 1e3:.1f} ms, updates "
        f"{updates * 1e3:.1f} ms (medians); section 3's R = "
        f"{rollout * 1e3:.1f} ms and U = {update * 1e3:.1f} ms are means over {over} "
        "first iteration left out."
    )


def clipping_sentence(
    by_lag: dict[Any, dict[str, float]], study: dict[str, Any] | None = None
) -> str:
    """What the clipping table says, in words: each lag's approx KL before PPO's first step
    against the distance lag 0's own epochs travel within an update (its last minibatch),
    and whether the clip bit at all, set against the notebook's expectation that with a
    lagged rollout it can bite at the first step. ``study``: where no run's greedy return
    passed the task's learning bar, a clip that never bit is put down to a policy that had
    learned nothing yet (:func:`~hetero_tutorial.studies.learning.floor_of`)."""
    lags = {int(lag): stats for lag, stats in by_lag.items()}
    text = []
    own = lags.get(0, {}).get("approx_kl")
    for lag in sorted(k for k in lags if k > 0):
        start = lags[lag]["start_approx_kl"]
        against = ""
        if own:
            against = (
                f": {start / own:.1f}x the {own:.1e} that lag 0's epochs travel in an update "
                "(its last minibatch)"
            )
        text.append(
            f"Lag {lag} starts {start:.1e} from the acting policy (approx KL before the first "
            f"step){against}."
        )
    clipped = {
        (lag, when): stats[key]
        for lag, stats in lags.items()
        for when, key in (("first", "start_clipfrac"), ("last", "clipfrac"))
    }
    lagged_first = [v for (lag, when), v in clipped.items() if lag > 0 and when == "first"]
    if not any(clipped.values()):
        why = "a start this close to the acting policy moves no ratio past the clip range"
        floor = learning.floor_of(study["env_id"]) if study else None
        if floor is not None and all(r["eval_return_mean"] <= floor for r in study["rows"]):
            why = (
                f"no run's greedy return rose above {study['env_id']}'s learning bar of {floor:g}: "
                "with "
                "nothing learned yet, each update moved the policy too little to clip"
            )
        seeds = len({row.get("seed") for row in study["rows"]}) if study else 1
        text.append(
            "The clip fraction is 0.000 at every lag and minibatch: no ratio was clipped. "
            f"Clipping can bite at once, but it did not in this run ({counted(seeds, 'seed')}: "
            f"no verdict on the expectation): {why}."
        )
    elif lagged_first and not any(lagged_first):
        text.append(
            "Clip fraction: "
            + ", ".join(f"lag {lag} {when} {v:.3f}" for (lag, when), v in clipped.items())
            + ": no lagged rollout was clipped at its first step, so clipping did not bite at "
            "once here."
        )
    else:
        text.append(
            "Clip fraction: "
            + ", ".join(f"lag {lag} {when} {v:.3f}" for (lag, when), v in clipped.items())
            + "."
        )
    return " ".join(text)


def collection_race() -> Markdown:
    """The committed race of our workers against TorchRL's collectors: where it ran and where
    a peer is ahead (or that none is), its targets, and where its table is."""
    kind, script = "bench.collection_peers", "benchmarks/collection_peers.py"
    record = peer_races.race(kind)
    if record is None:
        return peer_races.race_report(kind, script)
    ratios = [peer_races.round_ratio(p) for p in record.data["summary"]["pairs"]]
    ratios = [r for r in ratios if r is not None]
    ahead = peer_races.behind(record) or ["No peer is ahead at any point of this race."]
    head = (
        f"Recorded on {peer_races.recorded_on(record)}, {record.provenance.get('date', '?')[:10]}"
    )
    if ratios:
        head += f": ours / peer env steps/s {min(ratios):.2f}-{max(ratios):.2f}x over its points"
    lines = "\n".join(f"- {line}" for line in ahead)
    return Markdown(f"{head}.\n\n{lines}\n\n{peer_races.beside_figure(record).data}")


def guard_line() -> str:
    """What the busy-machine guard read over the whole of the study that just ran (each
    run's own meter reads only runs of several sampling intervals)."""
    reading = machine_load.latest()
    if reading is None:
        return "The busy-machine guard took no reading here (it is switched off)."
    return reading.line() if reading.busy else reading.quiet_line()


def ideal_reveal(
    guess: float | None,
    answer: Any,
    summary: Sequence[dict[str, Any]],
    timeline: tuple[float, float] | None = None,
    **key: Any,
) -> str:
    """Exercise 1's reveal, once it is solved (``answer``, what ``check`` returned): one
    overlapped configuration's ideal beside its measured speed-up, and the learner's guess
    beside the ideal."""
    if answer is None:
        return UNSOLVED
    return "\n".join(
        (
            overlap_findings.ideal_vs_measured(summary, timeline, **key),
            ideal_guess_line(guess, summary, **key),
        )
    )


def ideal_guess_line(guess: float | None, summary: Sequence[dict[str, Any]], **key: Any) -> str:
    """The learner's predicted ideal speed-up beside the study's, for one overlapped
    configuration (``backend``, ``workers``, ``max_policy_lag``)."""
    entry = overlap_findings.find(summary, **key)
    found = None if entry is None else entry.get("ideal_speedup")
    what = f"The ideal speed-up of {overlap_findings.label(entry) if entry else key}"
    return prediction_line(what, guess, found, _times, tolerance=0.1)


def lag_guess_line(guess: int | None, histogram: dict[int, int], bound: int) -> str:
    """The learner's predicted lag beside the lag most rollouts arrived with at ``bound``."""
    if not histogram:
        return prediction_line(f"The usual lag at a bound of {bound}", guess, None)
    usual = max(histogram, key=histogram.get)
    count = sum(histogram.values())
    what = (
        f"The lag most rollouts arrived with at a bound of {bound} ({histogram[usual]} of {count})"
    )
    return prediction_line(what, guess, usual, tolerance=0)


def clipping_table(by_lag: dict[str, dict[str, float]]) -> Markdown:
    """Approx KL and clip fraction at updates' first and last minibatch, per policy lag."""
    columns = {
        "lag": "lag",
        "updates": "updates",
        "start_approx_kl": "approx KL, first minibatch",
        "start_clipfrac": "clip fraction, first",
        "approx_kl": "approx KL, last minibatch",
        "clipfrac": "clip fraction, last",
    }
    formats = {
        "updates": "{:.0f}".format,
        "start_approx_kl": "{:.2e}".format,
        "start_clipfrac": "{:.3f}".format,
        "approx_kl": "{:.2e}".format,
        "clipfrac": "{:.3f}".format,
    }
    return markdown_table([{"lag": lag, **s} for lag, s in by_lag.items()], columns, formats)


def gpu_table(study: dict[str, Any]) -> Markdown:
    """The first seed's runs of a study whose learner ran on an accelerator: the GPU's
    sampled utilisation (percent) and the speed-up over the sequential plan."""
    first = study["seeds"][0]
    rows = [{"name": overlap_findings.label(r), **r} for r in study["rows"] if r["seed"] == first]
    columns = {"name": "configuration", "gpu_percent": "GPU %", "speedup_vs_sequential": "x seq."}
    formats = {"gpu_percent": "{:.0f}".format, "speedup_vs_sequential": _times}
    return markdown_table(rows, columns, formats)


def gpu_references() -> Markdown:
    """Every configuration of the committed ``bench.overlap`` records measured on a machine
    with an accelerator, per machine; a sentence saying so where there are none."""
    rows = [
        {"machine": record.hardware, "name": overlap_findings.label(entry), **entry}
        for record in results.load_references("bench.overlap", with_accelerator=True)
        for entry in record.data["summary"]
    ]
    if not rows:
        return Markdown(results.NO_ACCELERATOR_REFERENCES)
    columns = {"machine": "machine", "name": "configuration", "speedup_vs_sequential": "x seq."}
    return markdown_table(rows, columns, {"speedup_vs_sequential": _times}, timed=False)


def gpu_section(study: dict[str, Any], accelerator: Any) -> Markdown | None:
    """Section 6's table: the live GPU table where the learner ran on an ``accelerator``,
    else the GPU machines' reference records, else nothing (the notebook's one pointer line,
    from ``gpu_paragraph``, says where the GPU case is told)."""
    if accelerator is not None:
        return gpu_table(study)
    if not results.load_references("bench.overlap", with_accelerator=True):
        return None
    return gpu_references()
