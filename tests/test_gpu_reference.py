"""The GPU reference script runs every step (on the CPU, tiny, in a dry run) and files its
records where the ledger reads them, so that one short device call suffices."""

import json
import os
import subprocess
import sys
from pathlib import Path

from hetero_tutorial.core import results
from hetero_tutorial.ledger.claims import CLAIMS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_reference.py"


def test_a_dry_run_records_what_every_claim_needs_and_files_it(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--dry-run", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = json.loads((out / "summary.json").read_text())
    assert all(row["status"] in ("ok", "not in this checkout") for row in rows), rows
    assert "[1/" in done.stdout and "total" in done.stdout  # progress lines and the summary
    archive = out / "gpu_reference.tar.gz"
    data = tmp_path / "data"
    env = {**os.environ, "HETERO_TUTORIAL_DATA": str(data)}
    filed = subprocess.run(
        [sys.executable, str(SCRIPT), "--unpack", str(archive)],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env,
    )  # fmt: skip
    assert filed.returncode == 0, filed.stderr
    (machine,) = (data / "reference").iterdir()
    records = results.load_all(machine)
    kinds = {record.kind for record in records}
    needed = {kind for claim in CLAIMS for kind in claim.needs}
    assert needed <= kinds, needed - kinds
    names = {path.name for path in machine.glob("*.json")}
    assert {"bench.profile.all-accelerator.json", "bench.ddpg.trajectory.json"} <= names
    profile = results.load(machine / "bench.profile.hybrid.json")
    assert (ROOT / profile.data["flamegraph_svg"]).is_file() or Path(
        profile.data["flamegraph_svg"]
    ).is_file()
    merged = results.load(machine / "bench.ddpg.tensor.json")
    assert merged.data["seeds"] == [0, 1, 2] and len(merged.data["runs"]) == 3


def test_the_budget_table_adds_up_to_six_minutes_and_matches_the_steps():
    import importlib.util
    import re

    spec = importlib.util.spec_from_file_location("gpu_reference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_reference"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    doc = module.__doc__
    table = doc[doc.index("=" * 17) :]
    budgets = {m[1]: int(m[2]) for m in re.finditer(r"^(\S+)\s.*?\s(\d+)$", table, re.M)}
    total = budgets.pop("total")
    assert sum(budgets.values()) == total <= 360
    for step in module.STEPS:
        assert budgets[step.name] == step.budget_s, step.name
    assert module.DEADLINE_S <= 360
