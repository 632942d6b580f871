"""The recorded run times of the series: what ``doctor`` scales to this machine.

``python -m hetero_tutorial run [--quick] --reference`` writes one record per run
(``data/reference/<machine>/run.times.*.json``): each notebook's seconds, each cell's, and
the machine's calibration rate. Here they are read back, each notebook under its file name
of today, grouped by machine and mode, and summed over the series. The repository's tools
(``tools/docs/``) print the same figures in the README, the cards and the workshop plan.
"""

from __future__ import annotations

import statistics

from hetero_tutorial.core import results
from hetero_tutorial.core.paths import REPO_DIR

RENUMBERED = {
    "08_claims_ledger.ipynb": "10_claims_ledger.ipynb",
    "09_claims_ledger.ipynb": "10_claims_ledger.ipynb",
}
"""Notebooks renumbered since runs were recorded: the file name a record holds -> today's
(the claims ledger moved to 09 when notebook 08 joined the series, and to 10 when GAIL's
notebook did; it stays last)."""


def run_time_records() -> list[results.Record]:
    """The reference run-time records, each notebook under its file name of today."""
    records = results.load_references("run.times")
    for record in records:
        for key in ("notebook_seconds", "cell_seconds", "printed_words"):
            held = record.data.get(key, {})
            record.data[key] = {RENUMBERED.get(name, name): value for name, value in held.items()}
    return records


def run_times_by_machine() -> dict[tuple[str, str], list[results.Record]]:
    """The reference run-time records by (machine, mode): one record per recorded run."""
    grouped: dict[tuple[str, str], list[results.Record]] = {}
    for record in run_time_records():
        grouped.setdefault((record.hardware, record.data["mode"]), []).append(record)
    return dict(sorted(grouped.items()))


def series_notebooks() -> list[str]:
    """The file names of the series' notebooks (``NN_name.ipynb``), in order."""
    return sorted(path.name for path in (REPO_DIR / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def notebook_medians(runs: list[results.Record]) -> dict[str, float]:
    """Per notebook, its median seconds over the runs that recorded it."""
    found: dict[str, list[float]] = {}
    for record in runs:
        for name, seconds in record.data["notebook_seconds"].items():
            found.setdefault(name, []).append(seconds)
    return {name: statistics.median(values) for name, values in found.items()}


def series_total(runs: list[results.Record]) -> tuple[float, str]:
    """Seconds to run the series: the per-notebook medians summed over the notebooks that
    exist, and a note naming those no run recorded ("" when every one was).

    Summing what each record holds instead would make a partial run look fast.
    """
    names, medians = series_notebooks(), notebook_medians(runs)
    missing = [name[:2] for name in names if name not in medians]
    note = ""
    if missing:
        note = f"{len(names) - len(missing)} of {len(names)} notebooks; "
        note += f"{', '.join(missing)} not recorded"
    return sum(medians[name] for name in names if name in medians), note
