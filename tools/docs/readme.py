"""The generated tables of the README and of the results page, from the committed
reference records only.

Each table sits between two markers in its page (:data:`PAGES`); :data:`COMMAND` rewrites
them from ``data/reference/``, and a test checks that the committed pages match, so no
figure in them is typed by hand. The README is a front page (the notebooks, with their run
and reading minutes); ``docs/results.md`` holds the claims ledger, every machine's run times
and the speed races.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from pathlib import Path

from hetero_tutorial.app.run_times import (
    notebook_medians,
    run_times_by_machine,
    series_notebooks,
    series_total,
)
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.paths import REPO_DIR
from hetero_tutorial.ledger import verdicts as ledger
from tools.docs import hosted
from tools.docs.cards import WORDS_PER_MINUTE, reading_minutes, run_time, title

README = REPO_DIR / "README.md"
RESULTS = REPO_DIR / "docs" / "results.md"
COMMAND = "python -m tools.docs regenerate"
"""The command that regenerates every generated section (``make docs`` runs it)."""


def marker(name: str, end: bool = False) -> str:
    if end:
        return f"<!-- generated:{name} end -->"
    return f"<!-- generated:{name} start ({COMMAND}) -->"


def run_times_table() -> str:
    """Seconds per notebook in quick and full mode on each reference machine: the median of
    its recorded runs (their count in the last column). One column per notebook of the
    series (a notebook a machine's runs did not include shows a dash, and the total says so)."""
    grouped = run_times_by_machine()
    if not grouped:
        return "No run times recorded yet (`make run` writes them; see Contributing)."
    names = series_notebooks()
    lines = ["| machine | mode | " + " | ".join(n[:2] for n in names) + " | total | runs |"]
    lines.append("|" + "---|" * (len(names) + 4))
    for (hardware, mode), runs in grouped.items():
        medians = notebook_medians(runs)
        cells = [f"{medians[n]:.0f} s" if n in medians else "—" for n in names]
        total, note = series_total(runs)
        total_cell = f"{total / 60:.1f} min" + (f" ({note})" if note else "")
        lines.append(
            f"| {hardware} | {mode} | " + " | ".join(cells) + f" | {total_cell} | {len(runs)} |"
        )
    return "\n".join(lines)


def front_machine(grouped: dict[tuple[str, str], list[results.Record]]) -> str | None:
    """The machine the front page quotes: the one of the newest full-mode run (a full run is
    what a class waits for), else of the newest run."""
    runs = [r for (_, mode), rs in grouped.items() for r in rs if mode == "full"]
    runs = runs or [r for rs in grouped.values() for r in rs]
    return max(runs, key=lambda r: r.provenance["date"]).hardware if runs else None


def notebooks_table() -> str:
    """The front page's contents: each notebook with its reading minutes and its run time in
    quick and full mode on one reference machine (:func:`front_machine`)."""
    grouped = run_times_by_machine()
    machine = front_machine(grouped)
    medians = {
        mode: notebook_medians(grouped.get((machine, mode), [])) for mode in ("quick", "full")
    }
    lines = [
        "| # | notebook | reading | run, quick mode | run, full mode |",
        "|---|---|---|---|---|",
    ]
    names = series_notebooks()
    for name in names:
        runs = [run_time(medians[m][name]) if name in medians[m] else "—" for m in medians]
        link = f"[{title(name)}](notebooks/{name})"
        cells = [name[:2], link, f"{reading_minutes(name):.0f} min", *runs]
        lines.append("| " + " | ".join(cells) + " |")
    reading = sum(reading_minutes(name) for name in names)
    totals = [f"{series_total(grouped[(machine, m)])[0] / 60:.0f} min in {m} mode"
              for m in medians if (machine, m) in grouped]  # fmt: skip
    where = f"on {machine}: {' and '.join(totals)}" if totals else "not recorded yet"
    lines += [
        "",
        f"Reading: the notebook's own prose at {WORDS_PER_MINUTE} words a minute, "
        f"{reading / 60:.1f} hours for the series (what a cell prints comes on top). Running: the "
        f"median of the recorded runs {where} (every machine's in "
        "[the results](docs/results.md#run-times)).",
    ]
    return "\n".join(lines)


DDPG_TARGET = ">= 1.25x"
"""Our DDPG's target against SB3's: the median over every recorded round."""


def _pinning(record: results.Record) -> str:
    """How a peer benchmark ran: rounds, threads, and whether it was pinned to a core.

    The scripts record ``core`` (``taskset -c`` for ``ppo_peers.py``'s processes, the
    process's affinity for the DDPG races); an older record says it on its command line
    (``--core none``: not pinned; no ``--core``: the default, core 1).
    """
    core = record.data.get("core")
    if core is None:
        command = record.provenance["command"].split()
        core = command[command.index("--core") + 1] if "--core" in command else "1"
    threads = record.data.get("threads", 1)
    pinned = "not pinned" if core == "none" else f"pinned to core {core}"
    return f"{threads} thread{'s' * (threads != 1)}, {pinned}"


def _run_note(record: results.Record, ratios: list[float], what: str = "") -> str:
    """One record's part of a row: its rounds, how it ran, the machine, the day, and its own
    median ratio (the command is said once, above the table)."""
    median = statistics.median(ratios)
    when = record.provenance["date"][:10]
    return (
        f"{len(ratios)} rounds, {_pinning(record)}{what}, {record.hardware}, {when}: {median:.2f}x"
    )


def _range(values: list[float], unit: str = "") -> str:
    return f"{min(values):,.0f}-{max(values):,.0f}{unit}"


def _ratio_cell(ratios: list[float]) -> str:
    """The median of every round's ratio, with their range: one day's figure is not the claim."""
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}x)"


def _row(
    name: str,
    ours: list[float],
    peer: list[float],
    ratios: list[float],
    target: str,
    runs: list[str],
) -> str:
    return (
        f"| {name} | {_range(ours)} | {_range(peer)} | {_ratio_cell(ratios)} | {target} | "
        + "; ".join(runs)
        + " |"
    )


def _ppo_rows() -> list[str]:
    lines = []
    pairs = (("sb3", "sb3"), ("sb3", "cleanrl"), ("cleanrl", "cleanrl"))
    records = results.load_references("bench.ppo_peers")
    for setting, peer in pairs if records else ():
        ours, theirs, ratios, runs = [], [], [], []
        for record in records:
            rates = record.data["summary"][setting]["steps_per_s"]
            ours += [rates["rates"]["ours"][k] for k in ("min", "max")]
            theirs += [rates["rates"][peer][k] for k in ("min", "max")]
            ratios += rates["ours_over"][peer]["round_ratios"]
            runs.append(_run_note(record, rates["ours_over"][peer]["round_ratios"]))
        target = {"sb3": ">= 2x", "cleanrl": "> 1x"}[peer] if setting == peer else "—"
        label = "SB3" if setting == "sb3" else "CleanRL"
        name = f"PPO, {label} settings, vs {'SB3' if peer == 'sb3' else 'CleanRL'}"
        lines.append(_row(name, ours, theirs, ratios, target, runs))
    return lines


def _ddpg_rows() -> list[str]:
    """Every recorded round of our DDPG against SB3's, pinned or not, in one row; then the
    written-out backward's rounds (benchmarks/ddpg_written_out.py, not the package's)."""
    ours, sb3, ratios, runs = [], [], [], []
    races = [(r, r.data["round_ratios"], "") for r in results.load_references("bench.ddpg_vs_sb3")]
    written = results.load_references("bench.ddpg_written_out")
    beside = ", beside the written-out backward"  # the same race, with a third contestant
    races += [(r, r.data["round_ratios"]["ours/sb3"], beside) for r in written]
    for record, round_ratios, what in races:
        ours += record.data["steps_per_s"]["ours"]
        sb3 += record.data["steps_per_s"]["sb3"]
        ratios += round_ratios
        runs.append(_run_note(record, round_ratios, what))
    name = "DDPG 256x256, batch 256, vs SB3 (every recorded round)"
    lines = [_row(name, ours, sb3, ratios, DDPG_TARGET, runs)] if ratios else []
    for record in written:
        data = record.data
        lines.append(
            _row(
                "DDPG as above, backward written out by hand "
                "(benchmarks/ddpg_written_out.py, not the package's), vs SB3",
                data["steps_per_s"]["written_out"],
                data["steps_per_s"]["sb3"],
                data["round_ratios"]["written_out/sb3"],
                "—",
                [_run_note(record, data["round_ratios"]["written_out/sb3"])],
            )
        )
    return lines


PEERS = {
    "gymnax": "gymnax (jit + vmap)",
    "envpool-1": "EnvPool, 1 thread",
    "envpool-all": "EnvPool, all cores",
    "gymnasium": "Gymnasium's vector env",
    "rejax": "rejax (compiled loop)",
    "sb3": "SB3",
    "cleanrl": "CleanRL",
    "torchrl": "TorchRL",
    "torchrl-sync": "TorchRL's MultiSyncCollector",
    "torchrl-async": "TorchRL's MultiAsyncCollector",
    "ours": "ours eager",
}
"""How the speed table names each peer contestant of the races in ``benchmarks/``."""

OURS = {"ours": "", "ours-compiled": "ours compiled (torch.compile), "}
"""How a row names our contestant (eager: not named), before its peer."""


def _env_race(pair: dict) -> str:
    envs = int(pair["metric"].split("@")[1])
    return f"{pair['point']} env steps/s at {envs:,} envs, batched on the CPU"


RACES: dict[str, tuple[str, Callable[[dict], str], Callable[[dict], bool]]] = {
    "bench.env_peers": (
        "Batched environments against gymnax and EnvPool",
        _env_race,
        lambda p: p.get("target") is not None,
    ),
    "bench.device_ppo_peers": (
        "All-device PPO against rejax, SB3 and CleanRL",
        lambda p: f"PPO on CartPole, all-device, {p['point']}, env steps/s",
        lambda p: p["metric"] == "steps_per_s",
    ),
    "bench.buffer_peers": (
        "Replay buffers against TorchRL",
        lambda p: (
            f"replay buffer at 1e6, batch 256, {p['point']} sampling: "
            + ("transitions sampled/s" if p["metric"] == "sample_per_s" else "transitions added/s")
        ),
        lambda p: p["metric"] in ("sample_per_s", "add_per_s"),
    ),
    "bench.collection_peers": (
        "Rollout collection against TorchRL's collectors",
        lambda p: f"rollout collection, CartPole, {p['point']}, env steps/s",
        lambda p: True,
    ),
    "bench.ddpg_vs_cleanrl": (
        "DDPG against CleanRL",
        lambda p: f"DDPG 256x256, batch 256, {p['point']}, env steps/s",
        lambda p: True,
    ),
}
"""The peer races' records (``benchmarks/``): the heading of their table, a row's name from
its pair, and which pairs are rows (the rates; for the environments, the sizes with a
target)."""


def _race_rows(kind: str) -> list[str]:
    """One row per raced pair (point, peer, metric) of ``kind``, over every recorded run."""
    _, name_of, keep = RACES[kind]
    grouped: dict[tuple[str, str, str, str], list[tuple[results.Record, dict]]] = {}
    for record in results.load_references(kind):
        for pair in record.data["summary"]["pairs"]:
            if keep(pair) and pair["round_ratios"]:
                key = (pair["point"], pair["ours"], pair["peer"], pair["metric"])
                grouped.setdefault(key, []).append((record, pair))
    lines = []
    for (point, us, peer, metric), found in grouped.items():
        ours, theirs, ratios, runs = [], [], [], []
        for record, pair in found:
            stats = record.data["summary"]["stats"][point]
            ours += [stats[pair["ours"]][metric][k] for k in ("min", "max")]
            theirs += [stats[peer][metric][k] for k in ("min", "max")]
            ratios += pair["round_ratios"]
            runs.append(_run_note(record, pair["round_ratios"]))
        target = found[-1][1].get("target")
        name = f"{name_of(found[-1][1])}, {OURS.get(us, us)}vs {PEERS.get(peer, peer)}"
        lines.append(_row(name, ours, theirs, ratios, f">= {target:g}x" if target else "—", runs))
    return lines


SPEED_HEADER = [
    "| comparison | ours (per s) | peer (per s) | ours / peer: median of rounds (range) "
    "| target | runs (rounds, threads, pinning, machine, day: their median) |",
    "|---|---|---|---|---|---|",
]


def _commands(kinds: tuple[str, ...]) -> str:
    """Each command that recorded ``kinds``, once, in the order first recorded."""
    found = [r.provenance["command"] for kind in kinds for r in results.load_references(kind)]
    return ", ".join(f"`{command}`" for command in dict.fromkeys(found))


def speed_table() -> str:
    """Our PPO and DDPG against Stable-Baselines3 and CleanRL, and each capability against the
    peer a learner would pick instead (gymnax, EnvPool, rejax, TorchRL), over every recorded
    run: one table per race, under the commands that recorded it.

    The rates are each contestant's range over the rounds (steps per second unless the row
    names another unit); the ratio is the median of the per-round ratios (the contestants
    of a round ran interleaved) with their range; the last column says how each record
    ran, pinned to a core or not, where and when.
    """
    races: list[tuple[str, tuple[str, ...], list[str]]] = [
        ("PPO against Stable-Baselines3 and CleanRL", ("bench.ppo_peers",), _ppo_rows()),
        ("DDPG against Stable-Baselines3", ("bench.ddpg_vs_sb3", "bench.ddpg_written_out"),
         _ddpg_rows()),
    ]  # fmt: skip
    races += [(RACES[kind][0], (kind,), _race_rows(kind)) for kind in RACES]
    parts = []
    for heading, kinds, rows in races:
        if rows:
            parts += [f"### {heading}", "", f"Recorded with {_commands(kinds)}.", ""]
            parts += [*SPEED_HEADER, *rows, ""]
    if not parts:
        return "No peer benchmark recorded yet (see benchmarks/README.md)."
    return "\n".join(parts[:-1])


SECTIONS: dict[str, Callable[[], str]] = {
    "open-in": hosted.links_section,
    "notebooks": notebooks_table,
}
"""Every generated section of the README, by marker name."""

RESULTS_SECTIONS: dict[str, Callable[[], str]] = {
    "ledger": ledger.readme_table,
    "run-times": run_times_table,
    "speed": speed_table,
}
"""Every generated section of ``docs/results.md``, by marker name."""

PAGES: dict[Path, dict[str, Callable[[], str]]] = {README: SECTIONS, RESULTS: RESULTS_SECTIONS}
"""The pages whose tables :func:`update_pages` regenerates, with their sections."""


def section(text: str, name: str) -> str:
    """The current content of section ``name`` in README ``text``."""
    pattern = re.escape(marker(name)) + r"\n(.*?)\n" + re.escape(marker(name, end=True))
    found = re.search(pattern, text, re.S)
    if found is None:
        raise UsageError(f"no generated section {name!r} in the page ({marker(name)} is missing)")
    return found.group(1)


def regenerated(text: str, sections: dict[str, Callable[[], str]] = SECTIONS) -> str:
    """``text`` with every one of its generated ``sections`` rebuilt from the reference
    records (the README's :data:`SECTIONS` by default)."""
    for name, build in sections.items():
        old = f"{marker(name)}\n{section(text, name)}\n{marker(name, end=True)}"
        text = text.replace(old, f"{marker(name)}\n{build()}\n{marker(name, end=True)}")
    return text


def update(readme: Path = README, sections: dict[str, Callable[[], str]] = SECTIONS) -> None:
    """Regenerate the generated sections of ``readme`` (or of another page with its own
    ``sections``) from the reference records."""
    readme.write_text(regenerated(readme.read_text(), sections))


def update_pages() -> list[Path]:
    """Regenerate the README's and the results page's generated sections; return the pages."""
    for page, sections in PAGES.items():
        update(page, sections)
    return list(PAGES)
