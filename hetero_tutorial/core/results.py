"""Result records: every number the series shows, with where and how it was measured.

A record is one flat JSON object: ``schema`` (so a foreign file is recognised),
``kind`` (what was measured, e.g. ``"bench.ppo"``), ``provenance`` (hardware
fingerprint, library versions, date, command, quick or full mode, the code's commit), and the
measured fields themselves (``env_steps_per_s``, ``rows``, ...) beside them.
Records of a learner's own runs go to ``data/results/`` (ignored by git);
reference records from known machines are committed under ``data/reference/``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hetero_tutorial.core import machine_load
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine import cpu_details, fingerprint
from hetero_tutorial.core.modes import quick_mode
from hetero_tutorial.core.paths import REPO_DIR

SCHEMA = "hetero-tutorial/record/v1"
RESERVED_FIELDS = ("schema", "kind", "provenance")
PROVENANCE_FIELDS = ("fingerprint", "date", "command", "quick")
"""Fields every record's provenance must carry."""

DATA_DIR = Path(os.environ.get("HETERO_TUTORIAL_DATA", REPO_DIR / "data"))
RESULTS_DIR = DATA_DIR / "results"
REFERENCE_DIR = DATA_DIR / "reference"


class RecordError(UsageError):
    """A file that is not a valid hetero-tutorial record."""


NOTEBOOK_ENV_VAR = "HETERO_TUTORIAL_NOTEBOOK"
"""Set by ``python -m hetero_tutorial run`` to the notebook it executes, for provenance."""


def _current_command() -> str:
    """The command line of this process, or the notebook it runs (a kernel's argv says nothing)."""
    if "ipykernel" in sys.modules:
        return os.environ.get(NOTEBOOK_ENV_VAR, "a Jupyter notebook")
    return " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])


COMMIT_ENV_VAR = "HETERO_TUTORIAL_COMMIT"
"""The commit of the code, for a copy of the repository that has no ``.git`` (a device call
carries the working tree alone): ``benchmarks/gpu_reference.py`` sets it for its steps."""


@cache
def code_commit() -> str | None:
    """The commit the measuring code is at: :data:`COMMIT_ENV_VAR` where set, else git's
    ``HEAD`` with ``-dirty`` when files differ from it; None without either. A record's
    numbers belong to the code that made them; this says which."""
    if os.environ.get(COMMIT_ENV_VAR):
        return os.environ[COMMIT_ENV_VAR]
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=40"],
            cwd=REPO_DIR,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = done.stdout.strip() if done.returncode == 0 else ""
    return found or None


def provenance(command: str | None = None, quick: bool | None = None) -> dict[str, Any]:
    """Where and how a measurement is being made: machine, versions, date, command, mode, the
    code's commit (:func:`code_commit`), and (``machine_load``) how busy others kept the
    machine during the timed studies since the previous record (:func:`machine_load.for_record`)."""
    found = {
        "fingerprint": fingerprint(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": command if command is not None else _current_command(),
        "quick": quick_mode() if quick is None else quick,
        "commit": code_commit(),
    }
    readings = machine_load.for_record()
    if readings:
        found["machine_load"] = readings[0].to_json()
    if readings and readings[0].busy:
        found["machine_load"]["busy_studies"] = [r.to_json() for r in readings]
    return found


def busy_line(record: Record, studies: Sequence[str] = ()) -> str | None:
    """Why ``record`` is not judged, if a study it holds ran on a busy machine, else None.

    ``studies``: the names of the studies whose figures a reader of the record uses; a busy
    study outside them withholds nothing (empty: every study counts). Records made before
    the busy studies were listed (``busy_studies``) name only the first: every study counts."""
    load = record.provenance.get("machine_load") or {}
    if not load.get("busy"):
        return None
    readings = load.get("busy_studies")
    if readings is None:
        readings = [load]
    elif studies:
        readings = [r for r in readings if r["study"] in studies]
    return machine_load.Busyness.from_json(readings[0]).line() if readings else None


@dataclass
class Record:
    """One measurement: what (``kind``), the numbers (``data``) and their ``provenance``."""

    kind: str
    data: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=provenance)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9_.-]+", self.kind):
            raise RecordError(
                f"record kind {self.kind!r} must be lower-case words joined by . _ or -"
            )
        clashes = [name for name in RESERVED_FIELDS if name in self.data]
        if clashes:
            raise RecordError(f"record data may not use the reserved field(s) {', '.join(clashes)}")
        missing = [name for name in PROVENANCE_FIELDS if name not in (self.provenance or {})]
        if missing:
            raise RecordError(
                f"record {self.kind!r} has no provenance field(s) {', '.join(missing)}; "
                "build it with hetero_tutorial.core.results.provenance()"
            )

    @property
    def hardware(self) -> str:
        """A short label of the machine: the accelerator's name, else the CPU (its model, and
        its family, model and vector instructions where the record has them: records from two
        CPUs of one name are labelled, and so grouped, apart)."""
        machine = self.provenance["fingerprint"]
        accel = machine.get("accelerator")
        if accel:
            return f"{accel.get('name', accel['type'])}"
        cores = machine.get("cpu_logical_cores")
        details = cpu_details(machine)
        details += "; " if details else ""
        return f"{machine.get('cpu_model', 'unknown CPU')} ({details}{cores} cores, no GPU)"

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "kind": self.kind, "provenance": self.provenance, **self.data}

    @classmethod
    def from_json(cls, payload: Any, source: str = "record") -> Record:
        if not isinstance(payload, dict) or payload.get("schema") != SCHEMA:
            raise RecordError(
                f"{source} is not a hetero-tutorial record (expected a JSON object with "
                f"schema {SCHEMA!r}); records are written by hetero_tutorial.core.results.save()"
            )
        for name, kind in (("kind", str), ("provenance", dict)):
            if not isinstance(payload.get(name), kind):
                raise RecordError(f"{source}: field {name!r} is missing or not a {kind.__name__}")
        data = {k: v for k, v in payload.items() if k not in RESERVED_FIELDS}
        try:
            return cls(payload["kind"], data, payload["provenance"])
        except RecordError as error:
            raise RecordError(f"{source}: {error}") from None


def machine_slug(facts: dict[str, Any]) -> str:
    """Folder name for a machine's reference records, e.g. ``nvidia-h200``, ``amd-epyc-2-cores``."""
    accel = facts.get("accelerator")
    if accel:
        name = accel.get("name") or accel["type"]
    else:
        name = f"{facts.get('cpu_model', 'cpu')} {facts.get('cpu_logical_cores')} cores"
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def same_machine(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two fingerprints are of one kind of machine: the same reference folder
    (:func:`machine_slug`) and the same CPU identity (family, model, vector instructions...).
    A fingerprint from before the identity was kept matches only another such: a CPU of the
    same name may be another generation."""
    return machine_slug(a) == machine_slug(b) and a.get("cpu_identity") == b.get("cpu_identity")


def each_once(labels: Iterable[str]) -> str:
    """``labels`` joined with "or", each once, in order: the machines (or CPUs) a reference
    folder's records came from, as a folder may hold records from two CPUs of one name."""
    return " or ".join(dict.fromkeys(labels))


def hardware_of(records: list[Record]) -> str:
    """The machine labels of ``records`` (a reference folder's), each once (:func:`each_once`)."""
    return each_once(record.hardware for record in records) or "no records"


def reference_directory(record: Record) -> Path:
    """Where a reference record from the record's machine belongs: ``data/reference/<machine>/``."""
    return REFERENCE_DIR / machine_slug(record.provenance["fingerprint"])


def save(
    record: Record,
    path: str | Path | None = None,
    directory: Path = RESULTS_DIR,
    tag: str | None = None,
) -> Path:
    """Write ``record`` as JSON and return where.

    Default path: ``<directory>/<kind>.json``, or ``<directory>/<kind>.<tag>.json``
    when one kind has several records (e.g. one per placement).
    """
    name = f"{record.kind}.{tag}.json" if tag else f"{record.kind}.json"
    target = Path(path) if path is not None else Path(directory) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(record.to_json(), indent=2, sort_keys=False, default=str) + "\n")
    return target


def load(path: str | Path) -> Record:
    """Read a record, with a clear error for a missing, malformed or foreign file."""
    path = Path(path)
    try:
        payload = json.loads(path.read_text())
    except FileNotFoundError:
        raise RecordError(f"no record at {path}") from None
    except json.JSONDecodeError as error:
        raise RecordError(
            f"{path} is not valid JSON ({error.msg} at line {error.lineno})"
        ) from None
    return Record.from_json(payload, source=str(path))


def load_all(directory: str | Path, kind: str | None = None) -> list[Record]:
    """Every record in ``directory`` (recursively), optionally only those of one ``kind``."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    records = [load(path) for path in sorted(directory.rglob("*.json"))]
    return [r for r in records if kind is None or r.kind == kind]


NO_ACCELERATOR_REFERENCES = (
    "No reference records from a machine with an accelerator in data/reference/ yet."
)
"""What a notebook prints where it would show GPU reference records and there are none."""


def load_references(kind: str | None = None, with_accelerator: bool = False) -> list[Record]:
    """The committed reference records (``data/reference/``), optionally of one kind.

    ``with_accelerator``: only those measured on a machine with an accelerator, for
    the notebooks' sections that show what a GPU does (a CPU-only record has nothing
    to say there).
    """
    records = load_all(REFERENCE_DIR, kind)
    if with_accelerator:
        records = [r for r in records if r.provenance["fingerprint"].get("accelerator")]
    return records
