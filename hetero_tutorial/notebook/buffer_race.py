"""Notebook 04's race of its buffers against TorchRL's: settings, table, who is ahead and why."""

from __future__ import annotations

from typing import Any

from IPython.display import Markdown

from hetero_tutorial.notebook import peer_races
from hetero_tutorial.notebook.tables import markdown_table

count = "{:,.0f}".format

RACE_POINTS = {
    "uniform": "tensor buffer vs ReplayBuffer(LazyTensorStorage), RandomSampler",
    "trajectory": "trajectory buffer vs LazyTensorStorage with SliceSampler",
}
"""The buffer race's two points (``benchmarks/buffer_peers.py``), as the table names them."""
RACE_METRICS = {
    "sample_per_s": ("sampled transitions / s", count),
    "add_per_s": ("added transitions / s (one at a time)", count),
    "bytes_per_transition": ("bytes / stored transition", "{:.1f}".format),
}
WHY_PEER_AHEAD = {
    ("uniform", "bytes_per_transition"): (
        "one-byte bools for its flags, where our float32 row spends 4 bytes on each"
    ),
    ("trajectory", "bytes_per_transition"): (
        "flat tensors, where our pattern B keeps Python objects per segment"
    ),
}
"""Why the peer wins where it does, from what each side stores (benchmarks/README.md)."""


def race_settings(record: Any) -> str:
    """The buffer race's own settings, after :func:`peer_races.provenance`'s where and when."""
    data = record.data
    return (
        f"Capacity {data['capacity']:,}, batch {data['batch']}, slices of {data['slice']}, each "
        "contestant in its own process. Ratios: the medians' ratio, oriented so above 1 "
        "favours ours, with the range of the per-round ratios."
    )


def race_table(record: Any) -> Markdown:
    """One row per race point and metric: ours, TorchRL's, the ratio and its range."""
    rows = []
    for pair in record.data["summary"]["pairs"]:
        label, fmt = RACE_METRICS[pair["metric"]]
        point, metric = pair["point"], pair["metric"]
        rows.append(
            {
                "point": RACE_POINTS[point],
                "metric": label,
                "ours": fmt(peer_races.stat(record, point, "ours", metric)),
                "peer": fmt(peer_races.stat(record, point, pair["peer"], metric)),
                "ratio": f"{peer_races.round_ratio(pair):.2f}x "
                f"({pair['low']:.2f}-{pair['high']:.2f}x)",
                "target": "—" if pair["target"] is None else f">= {pair['target']:g}x",
            }
        )
    return markdown_table(
        rows,
        {
            "point": "race",
            "metric": "metric",
            "ours": "ours",
            "peer": "TorchRL",
            "ratio": "in our favour (range)",
            "target": "target",
        },
        timed=False,
    )


def race_sentences(record: Any) -> list[str]:
    """Where TorchRL is ahead, by how much and why; and where ours is, by how much."""
    lines, ahead = [], []
    for pair in record.data["summary"]["pairs"]:
        label, fmt = RACE_METRICS[pair["metric"]]
        where = f"{RACE_POINTS[pair['point']].split(' vs ')[0]}, {label}"
        if pair["high"] < 1:  # every round in the peer's favour
            ours, peer = (
                peer_races.stat(record, pair["point"], side, pair["metric"])
                for side in ("ours", pair["peer"])
            )
            why = WHY_PEER_AHEAD.get((pair["point"], pair["metric"]), "not explained here")
            lines.append(
                f"TorchRL is ahead on the {where}: {fmt(peer)} against our {fmt(ours)}, "
                f"{1 / peer_races.round_ratio(pair):.2f}x in its favour. Why: {why}."
            )
        elif pair["low"] > 1:
            short = {"sample_per_s": "sampling", "add_per_s": "adding"}.get(pair["metric"], label)
            buffer = RACE_POINTS[pair["point"]].split(" vs ")[0]
            ahead.append(f"{buffer.split()[0]} {short} {peer_races.round_ratio(pair):.1f}x")
    if ahead:
        lines.append("Ours is ahead, every round, on: " + ", ".join(ahead) + ".")
    return lines


NO_RACE = (
    "No buffer race against TorchRL is recorded in `data/reference/` yet: "
    "`python benchmarks/buffer_peers.py --reference` runs one (TorchRL in its own virtual "
    "environment under `build/peers/`) and writes it."
)


def race(record: Any = "newest") -> Markdown:
    """A buffer race as notebook 04 shows it (default: the newest committed one): where it
    was measured and who is ahead and why; its settings and table folded away."""
    record = peer_races.race("bench.buffer_peers") if record == "newest" else record
    if record is None:
        return Markdown(NO_RACE)
    lines = "\n".join(f"- {line}" for line in race_sentences(record))
    if targets := peer_races.targets_line(record):
        lines += f"\n\n{targets}"
    where = f"Recorded on {record.hardware}, {record.provenance.get('date', '?')[:10]}."
    settings = f"{peer_races.provenance(record)} {race_settings(record)}"
    return Markdown(
        f"{where}\n\n{lines}\n\n<details><summary>The race's settings and table</summary>"
        f"\n\n{settings}\n\n{race_table(record).data}\n\n</details>"
    )
