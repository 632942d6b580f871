"""Notebook 04's race of its buffers against TorchRL's: who is ahead and why, and its targets."""

from __future__ import annotations

from typing import Any

from IPython.display import Markdown

from hetero_tutorial.notebook import peer_races

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
        lines.append(
            "Ours is ahead in every round (the medians shown) on: " + ", ".join(ahead) + "."
        )
    return lines


NO_RACE = (
    "No buffer race against TorchRL is recorded in `data/reference/` yet: "
    "`python benchmarks/buffer_peers.py --reference` runs one (TorchRL in its own virtual "
    "environment under `build/peers/`) and writes it."
)


def race(record: Any = "newest") -> Markdown:
    """A buffer race as notebook 04 shows it (default: the newest committed one): where it
    was measured, who is ahead and why, its targets, and where its table is."""
    record = peer_races.race("bench.buffer_peers") if record == "newest" else record
    if record is None:
        return Markdown(NO_RACE)
    lines = "\n".join(f"- {line}" for line in race_sentences(record))
    where = (
        f"Recorded on {peer_races.recorded_on(record)}, "
        f"{record.provenance.get('date', '?')[:10]}, with "
        f"{record.data['capacity']:,} transitions stored and {record.data['slice']}-step "
        "segments: its bytes per transition are for that size and segment length, not the "
        "memory table's."
    )
    return Markdown(f"{where}\n\n{lines}\n\n{peer_races.beside_figure(record).data}")
