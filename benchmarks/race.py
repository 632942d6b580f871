"""What every peer race shares: options, fresh pinned processes, rotated rounds, ratios, records.

A race script declares a :class:`Plan`: the *entries* (one contestant at one point of the
race, e.g. gymnax at CartPole-v1; each runs as a fresh process per round, in its own
virtual environment) and the *pairs* to compare (ours against a peer on one metric). This
module runs it the same way for every script:

1. **options** (:func:`parser`): ``--rounds``, ``--threads``, ``--core``, ``--quick``,
   ``--reference``, and the hidden ``--worker``/``--job`` a contestant's process is
   started with;
2. **processes** (:func:`run_worker`): the script itself, run by the entry's interpreter,
   pinned with ``taskset`` to ``--core`` (unless ``none``), with ``--threads`` threads
   for PyTorch, OpenMP, MKL and XLA; it prints one JSON line of metrics; the whole
   process group is ended however it ends;
3. **rounds** (:func:`interleave`): round ``r`` runs every entry once before round
   ``r + 1``, and at each point rotates who goes first, so that the machine's drift
   (up to 2x over minutes here) falls on every contestant alike;
4. **ratios** (:func:`summarise`): per pair, the median of the per-round ratios (ours
   over the peer, oriented so that above 1 means ours is ahead), the figure quoted and
   judged against a target, and its range, the lowest to the highest per-round ratio;
   the ratio of the medians is recorded beside them;
5. **records** (:func:`save`): through the package's record helpers, with the peers'
   versions in the provenance; ``--reference`` also files it under
   ``data/reference/<machine>/``.

Only the standard library is imported at the top: a contestant's process may run in a
peer's venv, where neither torch nor this package is installed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import peer_venvs

Metrics = dict[str, Any]
"""What one contestant's process measured: metric name -> number (None: not reached)."""


class RaceError(RuntimeError):
    """A contestant's process failed; the message names it, its command and its last output."""


# --- 1. Options ---------------------------------------------------------------------------


def parser(description: str, rounds: int, core: str = "1") -> argparse.ArgumentParser:
    """The options every race takes; a script adds its own before :func:`parse`."""
    made = argparse.ArgumentParser(description=description)
    made.add_argument("--rounds", type=int, default=rounds, help=f"interleaved rounds ({rounds})")
    made.add_argument(
        "--threads", type=int, default=1, help="threads of every contestant: PyTorch, OpenMP, XLA"
    )
    made.add_argument(
        "--core", default=core, help=f"taskset core list for every process, or 'none' ({core})"
    )
    made.add_argument("--quick", action="store_true", help="smoke run: 1 round, small budgets")
    made.add_argument(
        "--reference",
        action="store_true",
        help="also write the record to data/reference/<machine>/",
    )
    made.add_argument("--worker", help=argparse.SUPPRESS)
    made.add_argument("--job", help=argparse.SUPPRESS)
    return made


def parse(made: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse and check the options: errors say what to do (argparse's usage message)."""
    args = made.parse_args(argv)
    if args.worker:
        return args
    if args.quick and args.reference:
        made.error("--quick results are no reference; drop one of the two")
    if args.rounds < 1 or args.threads < 1:
        made.error("--rounds and --threads must be 1 or more")
    if args.quick:
        args.rounds = 1
    if args.core != "none" and shutil.which("taskset") is None:
        made.error("taskset not found: install util-linux, or pass --core none")
    return args


# --- 2. One contestant, one fresh process -------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One contestant at one point of a race: what runs, in a fresh process, each round."""

    point: str
    """where in the race, e.g. ``CartPole-v1`` or ``8 envs``"""
    contestant: str
    """who, e.g. ``ours`` or ``gymnax``"""
    worker: str
    """the name of the script's worker function that measures it"""
    job: dict[str, Any]
    """the worker's arguments (JSON); ``seed`` and ``threads`` are added per round"""
    venv: str | None = None
    """the peer venv it runs in (:data:`peer_venvs.PEER_VENVS`); None: the project's"""
    core: str | None = None
    """taskset core list for this entry alone (``none``: every core); None: ``--core``"""

    @property
    def python(self) -> str:
        return sys.executable if self.venv is None else str(peer_venvs.peer_python(self.venv))


def thread_environment(threads: int) -> dict[str, str]:
    """Environment variables that hold every library of a contestant to ``threads`` threads."""
    xla = f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
    return {
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "XLA_FLAGS": f"{xla} intra_op_parallelism_threads={threads}",
        "PYTHONWARNINGS": "ignore",
    }


def run_worker(
    script: Path, entry: Entry, job: dict[str, Any], core: str, timeout: float = 3600.0
) -> Metrics:
    """Run ``entry``'s worker in a fresh process and return its metrics (its last JSON line).

    The process runs in a temporary folder (a peer may write logs where it runs), in a
    session of its own: whatever it started (a collector's workers) is ended with it, on
    success, failure, timeout or Ctrl-C. ``process_seconds`` is its whole wall time.
    """
    command = [entry.python, str(script), "--worker", entry.worker, "--job", json.dumps(job)]
    if core != "none":
        command = ["taskset", "-c", core, *command]
    env = {**os.environ, **thread_environment(job["threads"])}
    peer_venvs.PEERS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=peer_venvs.PEERS) as cwd:
        # Output to files, not pipes: a child left behind that still holds a pipe open
        # would keep the race waiting for the pipe's end after the contestant is done.
        out_path, err_path = Path(cwd) / "stdout", Path(cwd) / "stderr"
        with out_path.open("w") as out_file, err_path.open("w") as err_file:
            began = time.perf_counter()
            process = subprocess.Popen(
                command, cwd=cwd, env=env, stdout=out_file, stderr=err_file, text=True,
                start_new_session=True,
            )  # fmt: skip
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise RaceError(
                    f"{entry.contestant} at {entry.point} ran past {timeout:.0f} s"
                ) from None
            finally:
                _end_group(process)
            seconds = time.perf_counter() - began
        out, err = out_path.read_text(), err_path.read_text()
    if process.returncode != 0:
        raise RaceError(
            f"{entry.contestant} at {entry.point} failed (exit {process.returncode}):\n"
            f"{' '.join(command)}\n{err[-3000:]}"
        )
    lines = out.strip().splitlines()
    if not lines:
        raise RaceError(f"{entry.contestant} at {entry.point} printed no result:\n{err[-3000:]}")
    return {**json.loads(lines[-1]), "process_seconds": seconds}


def _end_group(process: subprocess.Popen) -> None:
    """End the process's session (it and everything it started): politely, then by force."""
    for stop in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, stop)
        except ProcessLookupError:
            return  # nothing left
        try:
            process.wait(2.0)
        except subprocess.TimeoutExpired:
            continue
        try:
            os.killpg(process.pid, 0)  # a child that outlived the leader?
        except ProcessLookupError:
            return


def serve(
    workers: dict[str, Callable[[dict[str, Any]], Metrics]], args: argparse.Namespace
) -> None:
    """In a contestant's process: run worker ``--worker`` on ``--job`` and print its metrics."""
    metrics = workers[args.worker](json.loads(args.job))
    print(json.dumps(metrics), flush=True)


# --- 3. Rounds -----------------------------------------------------------------------------


def rotated(names: Sequence[str], round_index: int) -> list[str]:
    """``names`` starting at the ``round_index``-th (mod their number): who goes first rotates."""
    shift = round_index % len(names)
    return [*names[shift:], *names[:shift]]


Measure = Callable[[Entry, dict[str, Any], str], Metrics]
"""``measure(entry, job, core) -> metrics``: :func:`run_worker` for a script's own worker."""


def interleave(
    entries: Sequence[Entry],
    rounds: int,
    threads: int,
    core: str,
    measure: Measure,
    show: Callable[[str], None] = print,
) -> dict[str, dict[str, list[Metrics]]]:
    """``runs[point][contestant]``: one measurement per round, in round order.

    Round ``r`` runs every point in turn, and at each point every contestant in
    :func:`rotated` order, each with seed ``r`` (the same seed for every contestant).
    """
    points = list(dict.fromkeys(entry.point for entry in entries))
    runs: dict[str, dict[str, list[Metrics]]] = {
        point: {e.contestant: [] for e in entries if e.point == point} for point in points
    }
    for r in range(rounds):
        for point in points:
            here = {e.contestant: e for e in entries if e.point == point}
            for name in rotated(list(here), r):
                entry = here[name]
                job = {**entry.job, "seed": r, "threads": threads}
                metrics = measure(entry, job, entry.core or core)
                runs[point][name].append(metrics)
                show(f"round {r + 1}/{rounds} {point}: {name} {brief(metrics)}")
    return runs


def brief(metrics: Metrics) -> str:
    """A progress line's view of metrics: the numbers, three significant figures."""
    shown = [
        f"{name} {value:.3g}"
        for name, value in metrics.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    ]
    return ", ".join(shown)


# --- 4. Ratios -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """Ours against one peer, on one metric, at one point of the race."""

    point: str
    ours: str
    peer: str
    metric: str
    higher_is_better: bool = True
    """rates: ours / peer; seconds and bytes (False): peer / ours. Above 1: ours is ahead."""
    target: float | None = None
    """the ratio ours must reach, if the race has a target for this pair"""


def spread(values: Sequence[float | None]) -> dict[str, Any]:
    """Median, quartiles, IQR, min and max of the measured values (None: not reached).

    ``count`` says how many were measured; with none, every statistic is None.
    """
    measured = [v for v in values if v is not None and math.isfinite(v)]
    if not measured:
        return {"count": 0, "median": None, "q1": None, "q3": None, "iqr": None, "min": None,
                "max": None}  # fmt: skip
    doubled = measured * 2 if len(measured) < 2 else measured  # one value: no spread
    q1, median, q3 = statistics.quantiles(doubled, n=4, method="inclusive")
    return {"count": len(measured), "median": median, "q1": q1, "q3": q3, "iqr": q3 - q1,
            "min": min(measured), "max": max(measured)}  # fmt: skip


def ratio(ours: Sequence[float | None], peer: Sequence[float | None], higher_is_better: bool):
    """Ours against the peer over paired rounds: the median of the rounds' ratios and their
    range (and, recorded beside them, the ratio of the two medians).

    Oriented so that above 1 means ours is ahead (ours / peer for rates, peer / ours for
    seconds). Only rounds where both were measured pair up (``round_ratios``); the range
    is the package's :meth:`Spread.of_pairs` of them, lowest to highest (None with one
    round: one round measures no spread). The median of the rounds' ratios is the figure
    quoted and judged against a target: each round ran both side by side, and it lies
    inside their range, where the ratio of medians, taken over rounds apart, need not.
    """
    from our_parts import Spread  # in the parent only

    if len(ours) != len(peer):
        raise ValueError(f"paired rounds need as many on each side: {len(ours)} and {len(peer)}")
    top, bottom = (ours, peer) if higher_is_better else (peer, ours)
    pairs = [(t, b) for t, b in zip(top, bottom, strict=True) if t and b]
    if not pairs:
        return {"ratio_of_medians": None, "median_of_round_ratios": None, "round_ratios": [],
                "low": None, "high": None, "how": "no round measured both",
                "orientation": "ours / peer" if higher_is_better else "peer / ours"}  # fmt: skip
    tops, bottoms = [t for t, _ in pairs], [b for _, b in pairs]
    value = statistics.median(t / b for t, b in pairs)
    found = Spread.of_pairs(tops, bottoms, value=value, per="round")
    return {
        "ratio_of_medians": statistics.median(tops) / statistics.median(bottoms),
        "median_of_round_ratios": value,
        "round_ratios": [t / b for t, b in pairs],
        "low": found.low,
        "high": found.high,
        "how": found.how,
        "orientation": "ours / peer" if higher_is_better else "peer / ours",
    }


def summarise(runs: dict[str, dict[str, list[Metrics]]], pairs: Sequence[Pair]) -> dict[str, Any]:
    """Per point and contestant the spread of every metric; per pair its ratio and target."""
    stats = {
        point: {
            name: {
                metric: spread([m.get(metric) for m in measured])
                for metric in _numeric_metrics(measured)
            }
            for name, measured in by_name.items()
        }
        for point, by_name in runs.items()
    }
    compared = []
    for pair in pairs:
        side = runs[pair.point]
        found = ratio(
            [m.get(pair.metric) for m in side[pair.ours]],
            [m.get(pair.metric) for m in side[pair.peer]],
            pair.higher_is_better,
        )
        value = found["median_of_round_ratios"]
        met = None if pair.target is None or value is None else value >= pair.target
        compared.append({**asdict(pair), **found, "met": met})
    return {"stats": stats, "pairs": compared}


def _numeric_metrics(measured: list[Metrics]) -> list[str]:
    names: dict[str, None] = {}
    for metrics in measured:
        for name, value in metrics.items():
            if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
                names[name] = None
    return list(names)


def table(summary: dict[str, Any]) -> str:
    """The pairs as lines a reader can scan: medians, ratio, range, target."""
    lines = []
    for p in summary["pairs"]:
        ours = summary["stats"][p["point"]][p["ours"]].get(p["metric"], {}).get("median")
        peer = summary["stats"][p["point"]][p["peer"]].get(p["metric"], {}).get("median")
        value = p["median_of_round_ratios"]
        shown = "not measured" if value is None else f"{value:.2f}x"
        if p["low"] is not None:
            shown += f" (rounds {p['low']:.2f}-{p['high']:.2f}x)"
        if p["target"] is not None:
            verdict = {True: "met", False: "NOT met", None: "not judged"}[p["met"]]
            shown += f", target >= {p['target']:g}x {verdict}"
        lines.append(
            f"{p['point']:>16s}  {p['metric']:<22s} {p['ours']:<14s} {_number(ours):>10s}  "
            f"{p['peer']:<14s} {_number(peer):>10s}  {p['orientation']} {shown}"
        )
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


# --- 5. The run and its record -------------------------------------------------------------


@dataclass
class Plan:
    """What a race script measures: its entries and pairs, and what its record says."""

    kind: str
    """the record's kind, e.g. ``bench.env_peers``"""
    script: Path
    """the script whose ``--worker`` entry point runs each contestant"""
    entries: list[Entry]
    pairs: list[Pair]
    fields: dict[str, Any] = field(default_factory=dict)
    """the race's settings, copied into the record"""
    timed: dict[str, str] = field(default_factory=dict)
    """per contestant: what its clock covers"""
    notes: dict[str, str] = field(default_factory=dict)
    """what the race leaves out, and why (a peer that does not install here)"""
    tag: str | None = None
    """the record's tag, when one kind has several records (one per thread count)"""

    def venvs(self) -> list[str]:
        return list(dict.fromkeys(e.venv for e in self.entries if e.venv is not None))

    def check(self) -> None:
        """Every pair compares two entries of its point (a plan that cannot run says so)."""
        have = {(e.point, e.contestant) for e in self.entries}
        for pair in self.pairs:
            for name in (pair.ours, pair.peer):
                if (pair.point, name) not in have:
                    raise ValueError(f"pair {pair} names {name!r} at {pair.point!r}: no such entry")


def main(
    arguments: Callable[[Sequence[str] | None], argparse.Namespace],
    plan: Callable[[argparse.Namespace], Plan],
    workers: dict[str, Callable[[dict[str, Any]], Metrics]],
    argv: Sequence[str] | None = None,
    notes: Callable[[], dict[str, str]] | None = None,
) -> Any:
    """A race script's entry point: serve one contestant (``--worker``), or run the race.

    ``notes()``, if given, adds to the plan's notes what only a real run finds out (whether
    a peer installs here); a test builds the plan without it.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = arguments(argv)
    if args.worker:
        return serve(workers, args)
    race_plan = plan(args)
    if notes is not None:
        race_plan.notes.update(notes())
    return run(race_plan, args, argv=argv)


def run(
    plan: Plan,
    args: argparse.Namespace,
    measure: Measure | None = None,
    argv: Sequence[str] | None = None,
) -> Any:
    """Run ``plan`` as ``args`` say; print the ratios; write and return the record.

    By default the peers' venvs are built first (where missing) and every entry runs
    :func:`run_worker` on the plan's script. A test passes a stand-in ``measure``
    instead: then no venv is built and the record names no peer versions.
    """
    plan.check()
    for name, note in plan.notes.items():
        print(f"{name}: {note}")
    began = time.perf_counter()
    versions: dict[str, dict[str, str]] = {}
    if measure is None:
        for name in plan.venvs():
            peer_venvs.ensure(name)
        versions = {name: peer_venvs.versions(name) for name in plan.venvs()}
        measure = lambda entry, job, core: run_worker(plan.script, entry, job, core)  # noqa: E731
    runs = interleave(plan.entries, args.rounds, args.threads, args.core, measure)
    summary = summarise(runs, plan.pairs)
    print(table(summary))
    if args.quick:
        print("(--quick: a smoke run, one round; no figure here is a measurement to quote)")
    fields = {
        **plan.fields,
        "rounds": args.rounds,
        "threads": args.threads,
        "core": args.core,
        "timed": plan.timed,
        "notes": plan.notes,
        "summary": summary,
        "runs": runs,
        "wall_seconds": time.perf_counter() - began,
    }
    words = list(sys.argv[1:] if argv is None else argv)
    command = " ".join(["python", f"benchmarks/{plan.script.name}", *words])
    return save(plan.kind, fields, versions, command, args.quick, args.reference, plan.tag)


def save(
    kind: str,
    fields: dict[str, Any],
    versions: dict[str, dict[str, str]],
    command: str,
    quick: bool,
    reference: bool,
    tag: str | None = None,
) -> Any:
    """Write the record (the peers' versions in its provenance); a reference copy if asked."""
    from our_parts import results  # the package's record helpers, in the parent only

    provenance = results.provenance(command=command, quick=quick)
    provenance["peer_versions"] = versions
    record = results.Record(kind, fields, provenance)
    print(f"record written to {results.save(record, directory=results.RESULTS_DIR, tag=tag)}")
    if reference:
        folder = results.reference_directory(record)
        print(f"reference record written to {results.save(record, directory=folder, tag=tag)}")
    return record


# --- In a contestant's process: a steady rate ----------------------------------------------


def steady_rate(
    call: Callable[[], object],
    items_per_call: int,
    seconds: float,
    repeats: int,
    sync: Callable[[], object] = lambda: None,
    max_calls: int = 100_000,
) -> dict[str, float]:
    """Items per second of ``call`` in steady state: warmed up, synchronised, repeated.

    One untimed call first (it pays lazy set-up); then as many calls per repeat as fill
    about ``seconds`` (probed by doubling); then ``repeats`` repeats, each ended by
    ``sync()`` (JAX's ``block_until_ready``: its calls return before they finish).
    Returns the median rate, its IQR and the calls per repeat.
    """
    call()
    sync()
    calls, elapsed = 1, 0.0
    while calls < max_calls:
        start = time.perf_counter()
        for _ in range(calls):
            call()
        sync()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds / 4:
            break
        calls *= 2
    calls = max(1, min(max_calls, round(calls * seconds / max(elapsed, 1e-9))))
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        sync()
        rates.append(calls * items_per_call / (time.perf_counter() - start))
    found = spread(rates)
    return {"per_s": found["median"], "iqr_per_s": found["iqr"], "calls_per_repeat": calls}
