"""One short device call that records every benchmark the claims ledger reads, on a CUDA GPU.

What: runs each ``python -m hetero_tutorial bench NAME`` the ledger and the notebooks'
reference sections need, with notebook-sized budgets, in a fresh process each (so a
crash or a hang costs one step), prints a progress line per step and a one-page
summary, and writes the records, the flame graphs and the summary into one archive.
Why: a GPU machine is often lent for minutes; one prepared call must give records we
can trust. How: on the GPU machine, from the repository root (Python 3.12 with a CUDA
build of PyTorch >= 2.4 and NumPy, no network)::

    python3 benchmarks/gpu_reference.py --wheels build/gpu-wheels --out "$OUT"

``--wheels`` installs the wheels ``make gpu-wheels`` downloaded here (Gymnasium and
its dependencies, py-spy, ale-py, ..., and this package) with ``pip install
--no-index --no-deps --target`` into a temporary folder first. Back here::

    .venv/bin/python benchmarks/gpu_reference.py --unpack /path/to/gpu_reference.tar.gz

puts each record under ``data/reference/<machine>/`` (and its flame graph under
``profiles/``); then ``python -m hetero_tutorial ledger --readme``.

Any machine can record its references the same way (``--deadline 0`` on a slow CPU
machine, where the steps take longer than on a GPU machine).

``--dry-run`` runs every step on the CPU with tiny budgets (a test does, so the
script cannot rot). The CPU-only DDPG seeds run in parallel processes, each on its
own core, as one step of their own (never beside a timed GPU step). A deadline
(default 360 s) stops the run before the device call's limit: a step that would
start after it is skipped, and each step has its own timeout.

Budget (seconds of wall time on one H200 with 16 cores; estimates from the notebooks'
CPU run times and the work each step does on a GPU; the summary prints the measured
seconds, so the next run can correct them):

=================  ===================================================  ======
step               what                                                 budget
=================  ===================================================  ======
crossover          MLP forward grid 7 widths x 7 batches, C1, C2             25
ppo                PPO all-accelerator, CartPole, 50k steps (C4)             20
profile-accel      py-spy --native of all-accelerator PPO (C5)               25
profile-hybrid     py-spy --native of hybrid PPO                             20
hybrid             baseline vs hybrid side by side, width sweep (C6, C9)     50
buffers            three buffers to 1e6, sampling to CPU and GPU (C8)        30
ddpg_placements    DDPG under three placements (C4, C7)                      30
ddpg-seeds         3 buffers x 3 seeds of CPU DDPG, 9 parallel processes     45
allocator          allocator vs fixed plans, MLPs and a CNN (C10, C11, C13)  35
pipeline           overlapped rollout and update, GPU learner                25
device_envs        batched environments on the GPU, PPO all-device to 475    40
process starts     11 fresh Pythons importing torch and starting CUDA        15
=================  ===================================================  ======
total                                                                       360
=================  ===================================================  ======
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEADLINE_S = 360.0
DDPG_DESIGNS = ("transition", "trajectory", "tensor")
DDPG_SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Step:
    """One benchmark: its ``bench`` arguments in full and in a dry run, and its budget."""

    name: str
    bench: str
    full: tuple[str, ...]
    dry: tuple[str, ...]
    budget_s: float
    svg: str | None = None
    """the flame graph this step draws (under build/profiles/), to keep beside its record"""
    extra: dict = field(default_factory=dict)


STEPS = (
    Step("crossover", "crossover", (),
         ("--widths", "32", "--batch-sizes", "1", "--repeats", "2"), 25),
    Step("ppo", "ppo", ("--placement", "all-accelerator", "--steps", "50000"),
         ("--placement", "all-accelerator", "--steps", "512"), 20),
    Step("profile-accel", "profile", ("--placement", "all-accelerator", "--native"),
         ("--placement", "all-accelerator", "--steps", "1024"), 25,
         svg="ppo-all-accelerator-h128.svg"),
    Step("profile-hybrid", "profile", ("--placement", "hybrid", "--native"),
         ("--placement", "hybrid", "--steps", "1024"), 20, svg="ppo-hybrid-h128.svg"),
    Step("hybrid", "hybrid", ("--steps", "30720", "--sweep-iterations", "3"),
         ("--steps", "4096", "--widths", "16", "--sweep-iterations", "1", "--sweep-threads", "1"),
         50),
    Step("buffers", "buffers", ("--repeats", "9"),
         ("--capacities", "1000", "--repeats", "2"), 30),
    Step("ddpg_placements", "ddpg_placements", ("--steps", "3000"),
         ("--steps", "500", "--learning-starts", "300", "--hidden", "16"), 30),
    Step("allocator", "allocator", ("--iterations", "3"),
         ("--widths", "8", "--num-steps", "16", "--epochs", "1", "--frames", "synthetic",
          "--cnn-envs", "1", "--cnn-steps", "4", "--cnn-minibatch", "4", "--cnn-epochs", "1",
          "--iterations", "1", "--budget", "0.2"), 35),
    Step("pipeline", "pipeline", ("--workers", "1", "4", "--max-policy-lag", "0", "1",
                                  "--backend", "mp", "--steps", "30720", "--seeds", "0",
                                  "--eval-episodes", "3"),
         ("--workers", "1", "--max-policy-lag", "1", "--backend", "mp", "--steps", "1024",
          "--seeds", "0", "--eval-episodes", "1"), 25),
    Step("device_envs", "device_envs", ("--repeats", "3"),
         ("--num-envs", "1", "64", "--repeats", "2", "--seconds-per-repeat", "0.01",
          "--ppo-num-envs", "16", "--ppo-seeds", "0", "--ppo-steps", "2048"), 40),
)  # fmt: skip
"""The steps, in the order they run (the ledger's most wanted first). The DDPG seeds run
after ``ddpg_placements``, as one parallel step (see :func:`run_ddpg_seeds`)."""


def _bench_names() -> set[str]:
    from hetero_tutorial.app.bench import benchmarks

    return set(benchmarks())


def _environment(dry_run: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if dry_run:
        env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU only, even on a GPU machine
    return env


def _run(command: list[str], timeout: float, env: dict[str, str], log: Path) -> tuple[str, float]:
    """Run one process to its end or its timeout; its output goes to ``log``."""
    began = time.perf_counter()
    with log.open("w") as out:
        try:
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                  timeout=timeout, cwd=REPO)  # fmt: skip
            status = "ok" if done.returncode == 0 else f"failed (exit {done.returncode})"
        except subprocess.TimeoutExpired:
            status = f"timed out after {timeout:.0f} s"
    return status, time.perf_counter() - began


def _bench_command(step_bench: str, arguments: tuple[str, ...], record: Path) -> list[str]:
    return [sys.executable, "-m", "hetero_tutorial", "bench", step_bench, *arguments,
            "--json", str(record)]  # fmt: skip


def run_ddpg_seeds(out: Path, dry_run: bool, timeout: float) -> tuple[str, float]:
    """Every buffer design x seed of all-CPU DDPG at once, one process per core, then merged.

    Each process writes one seed's record; :func:`merge_ddpg` turns them into one
    ``bench.ddpg`` record per design, as ``bench ddpg --seed 0 1 2`` would write.
    """
    tiny = ("--steps", "260", "--learning-starts", "100", "--hidden", "16", "--batch-size", "32")
    steps = tiny if dry_run else (
        "--steps", "5000")  # fmt: skip
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    began, processes = time.perf_counter(), []
    for index, (design, seed) in enumerate((d, s) for d in DDPG_DESIGNS for s in DDPG_SEEDS):
        record = out / "seeds" / f"bench.ddpg.{design}.seed{seed}.json"
        record.parent.mkdir(parents=True, exist_ok=True)
        command = _bench_command("ddpg", ("--buffer", design, "--seed", str(seed), *steps), record)
        if len(cores) > index and shutil.which("taskset"):
            command = ["taskset", "-c", str(cores[-1 - index]), *command]
        log = (out / "logs" / f"ddpg-{design}-{seed}.log").open("w")
        processes.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                           env=_environment(dry_run), cwd=REPO), log))  # fmt: skip
    status = "ok"
    try:
        for process, _ in processes:
            left = max(1.0, timeout - (time.perf_counter() - began))
            try:
                if process.wait(timeout=left) != 0:
                    status = "failed (a seed's process)"
            except subprocess.TimeoutExpired:
                status = f"timed out after {timeout:.0f} s"
                break
    finally:
        for process, log in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()
    if status == "ok":
        merge_ddpg(out)
    return status, time.perf_counter() - began


def merge_ddpg(out: Path) -> None:
    """One ``bench.ddpg`` record per design from the per-seed records (``bench.ddpg``'s fields)."""
    from hetero_tutorial.core import results
    from hetero_tutorial.studies.buffer_designs import summarise_fields

    for design in DDPG_DESIGNS:
        seeds = [results.load(p) for p in sorted((out / "seeds").glob(f"bench.ddpg.{design}.*"))]
        runs = [run for record in seeds for run in record.data["runs"]]
        provenance = dict(seeds[0].provenance)
        provenance["command"] = (
            f"benchmarks/gpu_reference.py: bench ddpg --buffer {design} --seed "
            + " ".join(str(s) for s in DDPG_SEEDS)
            + " (one process per seed, in parallel, each on its own core)"
        )
        merged = results.Record("bench.ddpg", summarise_fields(runs), provenance)
        results.save(merged, out / f"bench.ddpg.{design}.json")


def summary_lines(rows: list[dict]) -> list[str]:
    """The one-page summary: each step's status and seconds against its budget."""
    lines = [f"{'step':<18}{'status':<28}{'seconds':>8}{'budget':>8}"]
    for row in rows:
        seconds = "" if row["seconds"] is None else f"{row['seconds']:.0f}"
        lines.append(f"{row['step']:<18}{row['status']:<28}{seconds:>8}{row['budget']:>8.0f}")
    spent = sum(row["seconds"] or 0 for row in rows)
    lines.append(f"{'total':<46}{spent:>8.0f}{sum(r['budget'] for r in rows):>8.0f}")
    return lines


def record_all(out: Path, dry_run: bool, deadline: float) -> list[dict]:
    """Run every step (skipping benches this checkout lacks); return the summary rows."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(exist_ok=True)
    have, started, rows = _bench_names(), time.perf_counter(), []
    plan = [*STEPS[:7], Step("ddpg-seeds", "ddpg", (), (), 45), *STEPS[7:]]
    for number, step in enumerate(plan, start=1):
        left = deadline - (time.perf_counter() - started) if deadline > 0 else float("inf")
        print(f"[{number}/{len(plan)}] {step.name}: ", end="", flush=True)
        if step.bench not in have:
            status, seconds = "not in this checkout", None
        elif left < 5:
            status, seconds = "skipped: deadline", None
        elif step.name == "ddpg-seeds":
            status, seconds = run_ddpg_seeds(out, dry_run, min(left, 3 * step.budget_s))
        else:
            record = out / f"bench.{step.bench}.{step.name}.json"
            command = _bench_command(step.bench, step.dry if dry_run else step.full, record)
            log = out / "logs" / f"{step.name}.log"
            status, seconds = _run(command, min(left, 3 * step.budget_s + 30),
                                   _environment(dry_run), log)  # fmt: skip
            if step.svg and (REPO / "build" / "profiles" / step.svg).is_file():
                shutil.copy(REPO / "build" / "profiles" / step.svg, out / step.svg)
        print(status + ("" if seconds is None else f" in {seconds:.0f} s"), flush=True)
        rows.append({"step": step.name, "status": status, "seconds": seconds,
                     "budget": step.budget_s})  # fmt: skip
    summary = "\n".join(summary_lines(rows))
    (out / "summary.txt").write_text(summary + "\n")
    (out / "summary.json").write_text(json.dumps(rows, indent=2) + "\n")
    print("\n" + summary)
    return rows


def archive(out: Path) -> Path:
    """Everything the run wrote, in one file (the device returns at most 8 files)."""
    target = out / "gpu_reference.tar.gz"
    with tarfile.open(target, "w:gz") as tar:
        for path in sorted(out.rglob("*")):
            if path.is_file() and path != target:
                tar.add(path, arcname=str(path.relative_to(out)))
    return target


def unpack(archive_path: Path) -> list[Path]:
    """Put an archive's records under ``data/reference/<machine>/`` and its flame graphs
    under ``profiles/`` beside them (the records' ``flamegraph_svg`` rewritten to match).

    Each record is named as ``bench NAME --reference`` names it: ``<kind>.<tag>.json``.
    """
    from hetero_tutorial.app.bench import benchmarks
    from hetero_tutorial.core import results
    from hetero_tutorial.core.paths import display_path

    modules, written = benchmarks(), []
    with tempfile.TemporaryDirectory() as folder, tarfile.open(archive_path) as tar:
        tar.extractall(folder, filter="data")
        folder = Path(folder)
        for path in sorted(folder.glob("bench.*.json")):
            record = results.load(path)
            target_dir = results.reference_directory(record)
            svg = record.data.get("flamegraph_svg")
            if svg and (folder / Path(svg).name).is_file():
                (target_dir / "profiles").mkdir(parents=True, exist_ok=True)
                kept = shutil.copy(folder / Path(svg).name, target_dir / "profiles")
                record.data["flamegraph_svg"] = display_path(kept)
            module = modules[record.kind.removeprefix("bench.")]
            tag = record.data.get(getattr(module, "RECORD_TAG", ""), None)
            written.append(results.save(record, directory=target_dir, tag=tag))
        summary = folder / "summary.txt"
        if summary.is_file() and written:
            shutil.copy(summary, written[0].parent / "gpu_reference.summary.txt")
    return written


def install_wheels(wheels: Path) -> str:
    """Install the carried wheels into a temporary folder; return it (for PYTHONPATH)."""
    target = tempfile.mkdtemp(prefix="gpu-reference-site-")
    files = sorted(str(p) for p in wheels.glob("*.whl"))
    if not files:
        raise SystemExit(f"no wheels in {wheels}: run `make gpu-wheels` on a machine with network")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--no-compile", "--target", target, *files], check=True)  # fmt: skip
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for the records, logs and the archive")
    parser.add_argument("--wheels", type=Path, help="install these wheels first (--target)")
    parser.add_argument("--dry-run", action="store_true", help="every step on the CPU, tiny")
    parser.add_argument(
        "--deadline", type=float, default=DEADLINE_S, help="seconds for all steps (0: none)"
    )
    parser.add_argument("--unpack", type=Path, metavar="ARCHIVE", help="file a run's records")
    args = parser.parse_args(argv)
    if args.unpack:
        for path in unpack(args.unpack):
            print("reference record:", path)
        return 0
    if args.out is None:
        parser.error("--out is required (or --unpack ARCHIVE)")
    if args.wheels:
        site = install_wheels(args.wheels)
        paths = [site, os.environ.get("PYTHONPATH")]
        os.environ["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)
        # --target puts the wheels' programs (py-spy) in its bin/, which is on no PATH
        os.environ["PATH"] = os.pathsep.join([str(Path(site) / "bin"), os.environ["PATH"]])
        sys.path.insert(0, site)
    rows = record_all(args.out, args.dry_run, args.deadline)
    print("archive:", archive(args.out))
    return 0 if all(row["status"] in ("ok", "not in this checkout") for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
