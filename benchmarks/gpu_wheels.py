"""The wheels a GPU machine with no network needs to run ``benchmarks/gpu_reference.py``.

What: downloads, for Linux x86-64 and one CPython version, every package the
reference run imports that a bare PyTorch machine lacks (:data:`WHEELS`, at the
versions ``constraints.txt`` pins), and builds this package as a wheel, into one
folder. The machine is assumed to have Python with a CUDA build of PyTorch (2.4 or
newer) and NumPy, and nothing else. Why: the device machine cannot reach PyPI; its
one short call must not fail on an import. ``make gpu-wheels`` runs
``python benchmarks/gpu_wheels.py build/gpu-wheels`` (CPython 3.12, the device's).

``--check`` proves the list: a fresh virtual environment gets torch and NumPy only,
then the same wheels for this machine's Python are installed with ``pip install
--no-index --no-deps --target`` (as the device run does), and the reference run's
dry run must pass with nothing else on the path.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WHEELS = (
    "gymnasium",
    "cloudpickle",
    "farama-notifications",
    "typing-extensions",
    "ale-py",
    "py-spy",
    "psutil",
    "tqdm",
    "nvidia-ml-py",
    "sympy",
    "mpmath",
)
"""What the run imports beyond torch and NumPy: Gymnasium and its dependencies, Atari
frames (ale-py), the profiler (py-spy), the machine's facts (psutil), progress bars
(tqdm), NVML (nvidia-ml-py), and sympy with mpmath, which torch's compiler stack imports
when the first optimiser is built (a bare torch install may lack them)."""
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64", "manylinux_2_5_x86_64")  # fmt: skip


def pinned(names: tuple[str, ...] = WHEELS) -> list[str]:
    """``name==version`` for each name, from ``constraints.txt`` (names compared loosely)."""
    versions = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            versions[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    missing = [name for name in names if name not in versions]
    if missing:
        raise SystemExit(f"constraints.txt pins none of {missing}: run `make lock`")
    return [f"{name}=={versions[name]}" for name in names]


def download(folder: Path, python_version: str = "3.12") -> list[Path]:
    """Every wheel of :data:`WHEELS` for ``python_version`` on Linux x86-64, and this package."""
    folder.mkdir(parents=True, exist_ok=True)
    platforms = [option for platform in PLATFORMS for option in ("--platform", platform)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "--python-version", python_version,
                    "--implementation", "cp", *platforms, "-d", str(folder), *pinned()],
                   check=True)  # fmt: skip
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(folder),
                    str(REPO)], check=True)  # fmt: skip
    wheels = sorted(folder.glob("*.whl"))
    print(f"{len(wheels)} wheels, {sum(w.stat().st_size for w in wheels) / 2**20:.1f} MiB "
          f"in {folder}")  # fmt: skip
    return wheels


def check(work: Path) -> int:
    """The reference run's dry run in a fresh venv holding only torch and NumPy + the wheels."""
    work = work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    python = str(work / "venv" / "bin" / "python")
    base = pinned(("torch", "numpy"))
    subprocess.run([python, "-m", "pip", "install", "-q", *base], check=True)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    download(work / "wheels", version)
    done = subprocess.run([python, str(REPO / "benchmarks" / "gpu_reference.py"), "--dry-run",
                           "--wheels", str(work / "wheels"), "--out", str(work / "out")],
                          cwd=work)  # fmt: skip
    print("wheel list proven" if done.returncode == 0 else "the dry run failed: see above")
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where the wheels go")
    parser.add_argument("--python-version", default="3.12", help="the GPU machine's CPython")
    parser.add_argument("--check", action="store_true", help="prove the list in a fresh venv")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.folder)
    download(args.folder, args.python_version)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
