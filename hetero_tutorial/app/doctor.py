"""``python -m hetero_tutorial doctor``: a pre-flight check a workshop can ask every learner to run.

It reports versions, the CPU, the accelerator (with a real kernel run on it),
whether py-spy can profile here, whether ``torch.compile`` works here and how long its
first compile takes (notebook 08), and how long the notebooks should take on this
machine, estimated from a two-second calibration against recorded run times. Then the
classroom checks (:data:`CLASSROOM_CHECKS`), what breaks on a shared server or a
teacher's laptop: how many cores the series will use, where Ray keeps its temp folder,
whether py-spy can sample native frames, and whether a browser for the book and snakeviz is
installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

from hetero_tutorial.app.calibration import calibrate
from hetero_tutorial.app.run_times import run_times_by_machine, series_total
from hetero_tutorial.core.contention import allowance_line
from hetero_tutorial.core.devices import accelerator, synchronize
from hetero_tutorial.core.machine import THREADS_VARIABLE, core_limits, cpu_label, fingerprint
from hetero_tutorial.core.machine_load import how_busy
from hetero_tutorial.profiling.pyspy import py_spy_status
from hetero_tutorial.rl.overlapped.ray_engine import user_temp_dir
from hetero_tutorial.speed.compiler import compile_cache, compile_unavailable

MIN_PYTHON = (3, 10)


def _accelerator_works(device: torch.device) -> str:
    """Run a small matmul on the accelerator and check it against the CPU."""
    try:
        a = torch.randn(64, 64)
        on_device = (a.to(device) @ a.to(device)).cpu()
        synchronize(device)
    except RuntimeError as error:
        return f"FAILED: {error}"
    return "ok" if torch.allclose(on_device, a @ a, atol=1e-3) else "WRONG RESULT"


def compile_check(device: torch.device | str = "cpu") -> dict[str, Any]:
    """Whether ``torch.compile`` works on ``device`` here, and its first compile's seconds.

    Compiles and runs a three-operation function on a small tensor, with the series'
    cache (:func:`~hetero_tutorial.speed.compiler.compile_cache`), and checks the result
    against eager. ``works`` False carries the reason: the pieces then run eagerly.
    """
    reason = compile_unavailable(device)
    if reason is not None:
        return {"works": False, "message": reason, "first_compile_s": None, "cache_warm": None}
    _, warm = compile_cache()
    x = torch.linspace(-1, 1, 64, device=device)
    began = time.perf_counter()
    try:
        got = torch.compile(lambda t: (t * 2).sin().add(1))(x)
    except Exception as error:  # any failure of the compiler means: run eagerly here
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return {"works": False, "message": f"FAILED: {first}", "first_compile_s": None,
                "cache_warm": warm}  # fmt: skip
    seconds = time.perf_counter() - began
    works = bool(torch.allclose(got, (x * 2).sin().add(1), atol=1e-6))
    message = "ok" if works else "WRONG RESULT"
    return {"works": works, "message": message, "first_compile_s": round(seconds, 1),
            "cache_warm": warm}  # fmt: skip


def _expected_run_times(rate: float) -> list[dict[str, Any]]:
    """Scale each reference machine's run time (per mode: its per-notebook medians summed over
    the series, :func:`series_total`) by (its rate / this machine's)."""
    estimates = []
    for (hardware, mode), runs in run_times_by_machine().items():
        scale = statistics.median(r.data["calibration_units_per_s"] for r in runs) / rate
        total, note = series_total(runs)
        estimates.append(
            {
                "mode": mode,
                "reference_machine": hardware,
                "reference_seconds": round(total, 1),
                "expected_seconds_here": round(total * scale, 1),
                "reference_runs": len(runs),
                "notebooks_note": note,
            }
        )
    return estimates


BROWSERS = ("chromium", "chromium-browser", "google-chrome")
"""The browsers the book's test and 02's snakeviz picture look for, on PATH."""


def threads_check() -> str:
    """How many cores "all cores" means here, and what caps it (:func:`core_limits`)."""
    limits = core_limits()
    line = (
        f"{min(limits.values())} cores used as 'all cores' ("
        + ", ".join(f"{name}: {count}" for name, count in limits.items())
        + ")"
    )
    asked = os.environ.get(THREADS_VARIABLE)
    if asked:
        return line + f"; {THREADS_VARIABLE}={asked} caps what the notebooks use"
    return line + (
        f"; set {THREADS_VARIABLE}=N to cap what the notebooks use (on a shared server, "
        "each seat's share of the cores)"
    )


def ray_check() -> str:
    """Whether Ray is installed, and whether its default temp folder is usable by this user
    (a ``/tmp/ray`` another user created stops everyone else's Ray)."""
    if importlib.util.find_spec("ray") is None:
        return "not installed (notebook 06's Ray part is skipped; pip install -e '.[ray]')"
    folder = Path(tempfile.gettempdir()) / "ray"
    if folder.exists() and not os.access(folder, os.W_OK):
        return (
            f"installed, but {folder} belongs to another user: Ray started with its default "
            f"temp folder fails here; the series' Ray uses {user_temp_dir()}, this user's own"
        )
    return f"installed; its default temp folder {folder} is usable by this user"


def native_check() -> str:
    """Whether py-spy samples native (C/C++) frames here, which 02 needs on a GPU seat."""
    status = py_spy_status(native=True)
    if status.available:
        return "py-spy samples native frames here (02 adds them where an accelerator runs)"
    return f"not here ({status.message}): 02 samples Python frames only"


def browser_check() -> str:
    """Whether a browser for the book's test and 02's snakeviz picture is installed."""
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        return "none found (make setup-browser installs Chromium for the book and snakeviz)"
    playwright = importlib.util.find_spec("playwright") is not None
    return f"{found}" + ("" if playwright else " (Playwright missing: pip install -e '.[book]')")


CLASSROOM_CHECKS: dict[str, Callable[[], str]] = {
    "Threads": threads_check,
    "Ray": ray_check,
    "Native": native_check,
    "Browser": browser_check,
}
"""The classroom checks, by the label the report gives them; each returns one line."""


def collect() -> dict[str, Any]:
    """Everything the doctor reports, as plain data."""
    machine = fingerprint()
    device = accelerator()
    try:
        gym.make("CartPole-v1").reset(seed=0)
        gymnasium_check = "ok"
    except Exception as error:  # any failure here means the notebooks cannot run
        gymnasium_check = f"FAILED: {error}"
    load = how_busy(seconds=2.0)  # before the calibration, which a busy machine slows
    rate = calibrate()
    spy = py_spy_status()
    return {
        "load": load,
        "allowance": allowance_line(),
        "python_ok": sys.version_info[:2] >= MIN_PYTHON,
        "machine": machine,
        "accelerator_check": _accelerator_works(device) if device is not None else None,
        "gymnasium_check": gymnasium_check,
        "py_spy": {"available": spy.available, "message": spy.message},
        "compile": compile_check(),
        "calibration_units_per_s": round(rate, 1),
        "expected_run_times": _expected_run_times(rate),
        "classroom": {label: check() for label, check in CLASSROOM_CHECKS.items()},
    }


def render(report: dict[str, Any]) -> str:
    """The report as text a learner can read and paste into a workshop chat."""
    machine = report["machine"]
    versions = machine["versions"]
    accel = machine["accelerator"]
    lines = [
        "hetero-tutorial doctor",
        f"  Python       {machine['python']}"
        + ("" if report["python_ok"] else f"  (too old: need {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+)"),
        f"  PyTorch      {versions['torch']}   Gymnasium {versions['gymnasium']} "
        f"({report['gymnasium_check']})   NumPy {versions['numpy']}",
        f"  CPU          {cpu_label(machine)}, {machine['usable_cores']} usable cores "
        f"({machine['cpu_physical_cores']} physical), "
        f"{machine['memory_bytes'] / 2**30:.0f} GiB RAM",
    ]
    if accel is None:
        lines.append(
            "  Accelerator  none found (no CUDA, MPS or XPU). Every notebook still runs on the "
            "CPU, and shows recorded GPU reference results where data/reference/ has them."
        )
    else:
        memory = accel.get("memory_bytes")
        size = f", {memory / 2**30:.0f} GiB" if memory else ""
        lines.append(
            f"  Accelerator  {accel.get('name', accel['type'])} ({accel['device']}{size}); "
            f"test kernel: {report['accelerator_check']}"
        )
    lines.append(f"  py-spy       {report['py_spy']['message']}")
    check = report["compile"]
    if check["works"]:
        cache = "warm cache" if check["cache_warm"] else "cold cache"
        lines.append(
            f"  compile      torch.compile works: first compile {check['first_compile_s']:.1f} s "
            f"({cache}; notebook 08 compiles a few pieces)"
        )
    else:
        lines.append(f"  compile      not here ({check['message']}): notebook 08 runs eagerly")
    lines.append(f"  CPUs         this process {report['allowance']}")
    lines.append(f"  Load         {report['load']}")
    lines.append(f"  Calibration  {report['calibration_units_per_s']:.0f} work units/s (2 s run)")
    if report["expected_run_times"]:
        for mode in ("quick", "full"):
            mine = [e for e in report["expected_run_times"] if e["mode"] == mode]
            if mine:
                here = statistics.median(e["expected_seconds_here"] for e in mine) / 60
                lines.append(
                    f"  Run time     {mode} mode: about {here:.1f} min here (the series, scaled "
                    f"by calibration from {len(mine)} recorded machine(s))"
                )
    else:
        lines.append("  Run time     no reference run times recorded yet in data/reference/")
    lines += [f"  {label:<12} {text}" for label, text in report.get("classroom", {}).items()]
    return "\n".join(lines)


def healthy(report: dict[str, Any]) -> bool:
    """Whether the notebooks can run: Python new enough, Gymnasium works, accelerator not broken."""
    accel_ok = report["accelerator_check"] in (None, "ok")
    return report["python_ok"] and report["gymnasium_check"] == "ok" and accel_ok


def doctor(json_path: Path | None = None) -> int:
    """Print the report (and write it as JSON if asked); exit status 0 when healthy."""
    report = collect()
    print(render(report))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2) + "\n")
        print(f"  JSON report written to {json_path}")
    return 0 if healthy(report) else 1
