"""The peer races of ``benchmarks/`` as a notebook shows them: one table per race from its
committed record (``data/reference/<machine>/bench.*_peers.json``), with where it was measured,
and a sentence for every point where a peer is ahead, saying by how much. A race whose
points are sizes (numbers of environments) reads better as one picture of its ratios against
size (:func:`ratio_figure`), its table and sentences folded beneath (:func:`folded`).

A race's record holds ``pairs``: per point (an environment, a number of workers or of
environments) and metric, the ratio of our median to the peer's over interleaved rounds,
and its range over the rounds. Every ratio here reads "ours / peer" for a speed and "peer /
ours" for a time, so below 1 always means the peer is ahead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import matplotlib.pyplot as plt
from IPython.display import Markdown
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from hetero_tutorial.core import results
from hetero_tutorial.core.findings import Expectation, Finding, Outcome
from hetero_tutorial.core.machine import cpu_details
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.results import Record
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.notebook.tables import markdown_table

METRICS = {
    "steps_per_s": "env steps/s",
    "train_s": "training seconds (compile apart)",
    "total_s": "training seconds with compile",
    "solve_s": "seconds to solve",
    "solve_total_s": "seconds to solve with compile",
    "sample_per_s": "sampled transitions/s",
    "add_per_s": "added transitions/s",
    "bytes_per_transition": "bytes / stored transition",
}
"""How each recorded metric reads in a table (``steps_per_s@N`` is env steps/s at N envs)."""


def race(kind: str) -> Record | None:
    """The newest committed record of a race (``"bench.env_peers"``), or None."""
    records = results.load_references(kind)
    return max(records, key=lambda r: r.provenance.get("date", ""), default=None)


def metric_label(metric: str) -> str:
    name, _, at = metric.partition("@")
    label = METRICS.get(name, name)
    if not at:
        return label
    return f"{label} at {int(at):,} env{'s' if int(at) > 1 else ''}"


def recorded_on(record: Record) -> str:
    """The machine a race record names, and where it is a CPU's name alone (a record from
    before the CPU's identity was kept), that another CPU of that name may have run it:
    notebook 00 counts such a record as no machine's in particular."""
    machine = record.provenance["fingerprint"]
    unnamed = not machine.get("accelerator") and not cpu_details(machine)
    return record.hardware + (", a CPU's name only (its generation was not recorded)" * unnamed)


def provenance(record: Record) -> str:
    """Where and how a race was measured: machine, date, command, peers' versions, rounds."""
    meta = record.provenance
    peers = "; ".join(
        f"{peer}: " + ", ".join(f"{k} {v}" for k, v in versions.items())
        for peer, versions in meta.get("peer_versions", {}).items()
    )
    data = record.data
    return (
        f"Recorded on {recorded_on(record)}, {meta.get('date', '?')[:10]}, "
        f"with `{meta.get('command')}` "
        f"({data.get('rounds')} interleaved rounds, {counted(data.get('threads', 1), 'thread')}, "
        f"core {data.get('core')}); peers' own environments: {peers}."
    )


def round_ratio(pair: dict[str, Any]) -> float | None:
    """A raced pair's ratio: the median of its rounds' ratios (each round ran both side by
    side), the figure every table and verdict of a race quotes, inside its range over rounds."""
    return pair.get("median_of_round_ratios")


def race_table(
    record: Record, keep: Callable[[dict[str, Any]], bool] = lambda pair: True
) -> Markdown:
    """One row per (point, metric, which of ours, peer) of the record's ``pairs`` that ``keep``
    keeps: the ratio (median over rounds) and its range, which way it reads, the target if any."""
    rows = []
    for pair in record.data["summary"]["pairs"]:
        if not keep(pair):
            continue
        low, high = pair.get("low"), pair.get("high")
        rows.append(
            {
                "point": pair["point"],
                "metric": metric_label(pair["metric"]),
                "ours": pair["ours"],
                "peer": pair["peer"],
                "ratio": round_ratio(pair),
                "range": f"{low:.2f}-{high:.2f}x" if low is not None else pair.get("how"),
                "reads": pair["orientation"],
                "target": pair.get("target"),
            }
        )
    columns = {
        "point": "point",
        "metric": "measure",
        "ours": "ours",
        "peer": "peer",
        "ratio": "ratio (median over rounds)",
        "range": "range over rounds",
        "reads": "ratio of",
        "target": "target",
    }
    formats = {"ratio": "{:.2f}x".format, "target": "{:g}x".format}
    return markdown_table(rows, columns, formats, timed=False)


def behind(record: Record, metrics: Sequence[str] | None = None) -> list[str]:
    """A sentence for every pair where the peer is ahead in every round (the whole range of
    the rounds' ratios below 1): by how much, with that range; a pair whose rounds straddle
    1, or with no range, names no one ahead. ``metrics`` keeps only those metrics."""
    found = []
    for pair in record.data["summary"]["pairs"]:
        ratio = round_ratio(pair)
        if ratio is None or ratio >= 1 or (metrics and pair["metric"] not in metrics):
            continue
        low, high = pair.get("low"), pair.get("high")
        if high is None or high >= 1:  # not every round agrees: no one is ahead
            continue
        spread = f"; rounds {low:.2f}-{high:.2f}x" if low is not None else f"; {pair['how']}"
        found.append(
            f"{pair['peer']} is ahead at {pair['point']}, {metric_label(pair['metric'])}: "
            f"{1 / ratio:.{2 if 1 / ratio < 1.1 else 1}f}x {pair['ours']} "  # 1.04x, not 1.0x
            f"(ratio {ratio:.2f}x, {pair['orientation']}{spread})"
        )
    return found


def target_findings(record: Record) -> list[Finding]:
    """Each pair the race set a target for (``ours / peer >= target``), as a finding: the
    rounds' range against the target, held, did not hold or no clear effect."""
    found = []
    for pair in record.data["summary"].get("pairs", []):
        if pair.get("target") is None or (ratio := round_ratio(pair)) is None:
            continue
        low, high = pair.get("low"), pair.get("high")
        rounds = record.data.get("rounds")
        measured = Spread(ratio, low, high, "rounds", rounds) if low is not None else Spread(ratio)
        subject = (
            f"{pair['ours']} / {pair['peer']}, {metric_label(pair['metric'])} ({pair['point']})"
        )
        target = Expectation.at_least(pair["target"], "the target")
        found.append(Finding(subject, measured, target, recorded=True))
    return found


def _ahead(finding: Finding) -> str:
    """Which side of 1x a target's rounds all fell on, where that is clearer than the target."""
    if not finding.measured.measured or finding.outcome is not Outcome.UNCLEAR:
        return ""
    low, high = sorted((finding.measured.low, finding.measured.high))
    return (
        " (ours ahead in every round)"
        if low > 1
        else " (the peer ahead in every round)"
        if high < 1
        else ""
    )


def targets_line(record: Record) -> str:
    """How many of the race's targets held (by name where one or two of several), and each
    one that did not, in words ("" where the race set none)."""
    found = target_findings(record)
    if not found:
        return ""
    held = [f.subject for f in found if f.outcome is Outcome.HELD]
    rest = [f"- {f.sentence()}{_ahead(f)}" for f in found if f.outcome is not Outcome.HELD]
    named = f": {'; '.join(held)}" if held and rest and len(held) <= 2 else ""  # few: by name
    rounds = record.data.get("rounds")
    over = f" over {rounds} rounds" if rounds else ""
    lead = (
        f"The race's targets (benchmarks/README.md){over}: {len(held)} of {len(found)} held{named}."
    )
    return "\n".join([lead, *rest])


def pair(record: Record, point: str, ours: str, peer: str, metric: str) -> dict[str, Any] | None:
    """The record's pair of ``ours`` and ``peer`` on one metric at one point (None if not
    raced there)."""
    wanted = (point, ours, peer, metric)
    for found in record.data["summary"].get("pairs", []):
        if (found["point"], found["ours"], found["peer"], found["metric"]) == wanted:
            return found
    return None


def stat(record: Record, point: str, contestant: str, metric: str) -> float | None:
    """A contestant's median of one metric at one point (None if not recorded)."""
    stats = record.data["summary"]["stats"].get(point, {}).get(contestant, {})
    return stats.get(metric, {}).get("median")


def compile_split(record: Record, point: str, peer: str) -> str:
    """A compiled peer's seconds at one point: compiling, then training; ours beside it."""
    compile_s, train_s = (
        stat(record, point, peer, "compile_s"),
        stat(record, point, peer, "train_s"),
    )
    ours = stat(record, point, "ours", "train_s")
    if compile_s is None or train_s is None or ours is None:
        return f"{peer} at {point}: no compile time recorded"
    return (
        f"{peer} at {point}: {compile_s:.1f} s compiling, then {train_s:.1f} s training; "
        f"ours, eager: {ours:.1f} s training (medians over rounds)"
    )


def race_report(
    kind: str, script: str, metrics: Sequence[str] | None = None, keep: Callable = lambda p: True
) -> Markdown:
    """A race as a notebook shows it: where it was measured, its table, the peers not raced
    and why, and where a peer is ahead (``metrics`` of :func:`behind`); one line saying how to
    record it where ``data/reference/`` has no record of ``kind``."""
    record = race(kind)
    if record is None:
        return Markdown(
            f"No `{kind}` record in `data/reference/` yet (`python {script} --reference`)."
        )
    parts = [provenance(record), race_table(record, keep).data]
    notes = [f"- not raced, {name}: {why.removeprefix('not raced: ')}"
             for name, why in record.data.get("notes", {}).items()]  # fmt: skip
    ahead = [f"- {line}" for line in behind(record, metrics)]
    parts.append("\n".join(notes + (ahead or ["- No peer is ahead at any point of this race."])))
    return Markdown("\n\n".join(parts))


def short_provenance(record: Record) -> str:
    """Where and when a race ran, in one line (:func:`provenance` has the command and the
    peers' versions)."""
    data = record.data
    return (
        f"Recorded on {recorded_on(record)}, {record.provenance.get('date', '?')[:10]}: "
        f"{data.get('rounds')} interleaved rounds, {counted(data.get('threads', 1), 'thread')}, "
        "one core."
    )


def beside_figure(record: Record) -> Markdown:
    """What a race's figure does not show: its targets as findings, the peers not raced and
    why, and where the table with every round and each peer's versions is."""
    notes = [f"- not raced, {name}: {why.removeprefix('not raced: ')}"
             for name, why in record.data.get("notes", {}).items()]  # fmt: skip
    where = (
        f"The table, each peer's versions and every round: `docs/results.md` and "
        f"`data/reference/*/{record.kind}.json`."
    )
    parts = [targets_line(record), "\n".join(notes), where]
    return Markdown("\n\n".join(part for part in parts if part))


RATIO_TICKS = (0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10, 20, 50)
"""Where a ratio axis is labelled (plain numbers, not powers of ten)."""
FINE_TICKS = (0.4, 0.5, 0.6, 0.7, 0.8, 1, 1.25, 1.5, 2)
"""The labels of an axis that spans less than RATIO_TICKS label."""


def _size_and_panel(pair: dict[str, Any]) -> tuple[int, str] | None:
    """A pair's size (the N of ``steps_per_s@N``, or of a point "8 envs") and its panel (the
    point where the metric carries the size, else the metric); None if it has no size."""
    name, _, at = pair["metric"].partition("@")
    if at:
        return int(at), pair["point"]
    head = pair["point"].split()[0]
    return (int(head), METRICS.get(name, name)) if head.isdigit() else None


def ratio_figure(record: Record, metrics: Sequence[str] | None = None, title: str = "") -> Figure:
    """A race's ratios against size, log-log: one panel per point (or per metric, where the
    point is the size), one line per (ours, peer) with its range over rounds as error bars,
    and the line of parity. Above 1, ours is ahead, whichever way the ratio is taken."""
    lines: dict[str, dict[tuple[str, str], list[tuple[int, float, float, float]]]] = {}
    for pair in record.data["summary"]["pairs"]:
        name = pair["metric"].partition("@")[0]
        placed, ratio = _size_and_panel(pair), round_ratio(pair)
        if placed is None or ratio is None or (metrics and name not in metrics):
            continue
        low, high = pair.get("low", ratio), pair.get("high", ratio)
        panel = lines.setdefault(placed[1], {})
        panel.setdefault((pair["ours"], pair["peer"]), []).append(
            (placed[0], ratio, low if low is not None else ratio, high or ratio)
        )
    fig, axes = plt.subplots(1, max(len(lines), 1), figsize=(6 * max(len(lines), 1), 3.8),
                             squeeze=False)  # fmt: skip
    colours = {
        key: f"C{i}" for i, key in enumerate(dict.fromkeys(k for c in lines.values() for k in c))
    }
    for ax, (panel, contestants) in zip(axes[0], lines.items(), strict=False):
        for (ours, peer), points in contestants.items():
            size, ratio, low, high = (list(v) for v in zip(*sorted(points), strict=True))
            below = [r - lo for r, lo in zip(ratio, low, strict=True)]
            above = [hi - r for r, hi in zip(ratio, high, strict=True)]
            ax.errorbar(size, ratio, yerr=[below, above], marker="o", capsize=3,
                        color=colours[ours, peer], label=f"{ours} vs {peer}")  # fmt: skip
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        bottom, top = ax.get_ylim()
        ticks = [t for t in RATIO_TICKS if bottom <= t <= top]
        ax.set_yticks(ticks if len(ticks) > 2 else [t for t in FINE_TICKS if bottom <= t <= top])
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("number of environments")
        ax.set_ylabel("ratio (above 1: ours ahead)")
        ax.set_title(f"{title}{panel}")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def record_line(record: Record | None, kind: str, script: str) -> str:
    """:func:`short_provenance` of a race's record, or how to record one where there is none."""
    if record is None:
        return f"No `{kind}` record in `data/reference/` yet (`python {script} --reference`)."
    return short_provenance(record)
