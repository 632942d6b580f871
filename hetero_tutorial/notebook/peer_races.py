"""The peer races of ``benchmarks/`` as a notebook shows them: one table per race from its
committed record (``data/reference/<machine>/bench.*_peers.json``), with where it was measured,
and a sentence for every point where a peer is ahead, saying by how much.

A race's record holds ``pairs``: per point (an environment, a number of workers or of
environments) and metric, the ratio of our median to the peer's over interleaved rounds,
and its range over the rounds. Every ratio here reads "ours / peer" for a speed and "peer /
ours" for a time, so below 1 always means the peer is ahead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core import results
from hetero_tutorial.core.results import Record
from hetero_tutorial.notebook.tables import markdown_table

METRICS = {
    "steps_per_s": "env steps/s",
    "train_s": "training seconds (compile apart)",
    "total_s": "training seconds with compile",
    "solve_s": "seconds to solve",
    "solve_total_s": "seconds to solve with compile",
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


def provenance(record: Record) -> str:
    """Where and how a race was measured: machine, date, command, peers' versions, rounds."""
    meta = record.provenance
    peers = "; ".join(
        f"{peer}: " + ", ".join(f"{k} {v}" for k, v in versions.items())
        for peer, versions in meta.get("peer_versions", {}).items()
    )
    data = record.data
    return (
        f"Recorded on {record.hardware}, {meta.get('date', '?')[:10]}, "
        f"with `{meta.get('command')}` "
        f"({data.get('rounds')} interleaved rounds, {data.get('threads')} thread(s), core "
        f"{data.get('core')}); peers' own environments: {peers}."
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
    """A sentence for every pair where the peer is ahead (ratio below 1): by how much, with
    the range over rounds; ``metrics`` keeps only those metrics."""
    found = []
    for pair in record.data["summary"]["pairs"]:
        ratio = round_ratio(pair)
        if ratio is None or ratio >= 1 or (metrics and pair["metric"] not in metrics):
            continue
        low, high = pair.get("low"), pair.get("high")
        spread = f"; rounds {low:.2f}-{high:.2f}x" if low is not None else f"; {pair['how']}"
        found.append(
            f"{pair['peer']} is ahead at {pair['point']}, {metric_label(pair['metric'])}: "
            f"{1 / ratio:.1f}x {pair['ours']} (ratio {ratio:.2f}x, {pair['orientation']}{spread})"
        )
    return found


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
        f"{peer} at {point}: {compile_s:.1f} s compiling its whole training loop, then "
        f"{train_s:.1f} s training; ours (eager, nothing to compile): {ours:.1f} s training "
        "(medians over rounds)"
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
    notes = [f"- not raced, {name}: {why}" for name, why in record.data.get("notes", {}).items()]
    ahead = [f"- {line}" for line in behind(record, metrics)]
    parts.append("\n".join(notes + (ahead or ["- No peer is ahead at any point of this race."])))
    return Markdown("\n\n".join(parts))
