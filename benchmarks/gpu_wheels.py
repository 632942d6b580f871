"""The wheels a GPU machine with no network needs to run ``benchmarks/gpu_reference.py``.

What: downloads, for CPython on Linux x86-64 (manylinux), every package the reference run
and its test slice import that the GPU machine's image lacks (:data:`WHEELS`, at the
versions ``constraints.txt`` pins), into one folder. The package itself is not among them:
the run starts from the repository, whose copy the device call carries. Why: the device
machine cannot reach PyPI; its one short call must not fail on an import. ``make
gpu-wheels`` runs ``python benchmarks/gpu_wheels.py build/gpu-wheels`` (CPython 3.12, the
device's).

``--check`` proves the list, twice:

1. for the machine it will run on: ``pip install --dry-run --no-index --find-links`` the
   CPython 3.12 manylinux x86-64 wheels ``--only-binary :all: --target``, with what the
   image has (:data:`IMAGE`: PyTorch 2.11.0 and NumPy 2.5.2 among them) declared present
   by stand-in wheels that hold only their names and versions. Every bundled wheel must be
   a cp312 (or pure) manylinux x86-64 build, and every requirement of the bundle must be
   met by the bundle or the image, or the resolution fails;
2. here, for this machine's Python: a fresh virtual environment gets what the image has
   (from the registry), the same wheels for this Python are installed with ``pip install
   --no-index --no-deps --target`` (as the device run does), and the reference run's dry
   run, its test slice included, must pass with nothing else on the path.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IMAGE = {
    "torch": "2.11.0",
    "numpy": "2.5.2",
    "psutil": None,
    "tqdm": None,
    "nvidia-ml-py": None,
    "sympy": None,
    "mpmath": None,
    "cloudpickle": None,
}
"""What the GPU machine's image already has (Python 3.12.3), with the version where it is
known (None: the version ``constraints.txt`` pins stands in for it). mpmath comes with sympy,
which requires it."""
WHEELS = (
    "gymnasium",
    "farama-notifications",
    "ale-py",
    "py-spy",
    "typing-extensions",
    "pytest",
    "pytest-xdist",
    "execnet",
    "pluggy",
    "iniconfig",
    "packaging",
    "pygments",
)
"""What the run imports that the image lacks: Gymnasium and its notifications, Atari frames
(ale-py), the profiler (py-spy), and the test slice's pytest with pytest-xdist and their
requirements. One is a copy carried on purpose: typing-extensions, which the image has as
PyTorch's requirement at a version we do not know, while Gymnasium needs 4.12 or newer; the
carried one comes first on the path, and a newer typing-extensions serves PyTorch alike."""
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64", "manylinux_2_5_x86_64")  # fmt: skip


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    """Every ``name==version`` of ``constraints.txt``, by normalised name."""
    found = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            found[_key(name)] = version.strip()
    return found


def pinned(names: tuple[str, ...] = WHEELS) -> list[str]:
    """``name==version`` for each name, from ``constraints.txt``."""
    versions = pins()
    missing = [name for name in names if _key(name) not in versions]
    if missing:
        raise SystemExit(f"constraints.txt pins none of {missing}: run `make lock`")
    return [f"{name}=={versions[_key(name)]}" for name in names]


def _platform_options() -> list[str]:
    return [option for platform in PLATFORMS for option in ("--platform", platform)]


def download(folder: Path, python_version: str = "3.12") -> list[Path]:
    """Every wheel of :data:`WHEELS` for CPython ``python_version`` on manylinux x86-64."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "--python-version", python_version,
                    "--implementation", "cp", *_platform_options(), "-d", str(folder),
                    *pinned()], check=True)  # fmt: skip
    wheels = sorted(folder.glob("*.whl"))
    print(f"{len(wheels)} wheels, {sum(w.stat().st_size for w in wheels) / 2**20:.1f} MiB "
          f"in {folder}")  # fmt: skip
    return wheels


def image_versions() -> dict[str, str]:
    """Each package of the image with the version it is declared present at."""
    versions = pins()
    return {name: known or versions[_key(name)] for name, known in IMAGE.items()}


def stand_in_wheel(folder: Path, name: str, version: str) -> Path:
    """A wheel that holds nothing but a name and a version: a package the image has."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{_key(name).replace('-', '_')}-{version}"
    path = folder / f"{dist}-py3-none-any.whl"
    info = f"{dist}.dist-info"
    files = {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: gpu_wheels\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in files.items():
            wheel.writestr(member, text)
        wheel.writestr(f"{info}/RECORD", "".join(f"{m},,\n" for m in [*files, f"{info}/RECORD"]))
    return path


def resolve_for_the_device(wheels: Path, work: Path, python_version: str = "3.12") -> dict:
    """The bundle resolved for the device's Python with the image declared present.

    Returns pip's installation report (``--report``); raises if the resolution fails.
    """
    stand_ins = work / "image"
    shutil.rmtree(stand_ins, ignore_errors=True)
    declared = image_versions()
    for name, version in declared.items():
        stand_in_wheel(stand_ins, name, version)
    report = work / "resolution.json"
    roots = [*pinned(), *(f"{name}=={version}" for name, version in declared.items())]
    subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index",
                    "--find-links", str(wheels), "--find-links", str(stand_ins),
                    "--python-version", python_version, "--implementation", "cp",
                    *_platform_options(), "--only-binary", ":all:",
                    "--target", str(work / "target"), "--report", str(report), "-q", *roots],
                   check=True)  # fmt: skip
    return json.loads(report.read_text())


def explain_resolution(report: dict, wheels: Path) -> list[str]:
    """What the resolution installs from the bundle, and what it takes from the image."""
    bundled = {p.name for p in wheels.glob("*.whl")}
    lines, from_image, from_bundle = [], [], []
    for item in report["install"]:
        meta, file = item["metadata"], Path(item["download_info"]["url"]).name
        entry = f"{meta['name']} {meta['version']}"
        (from_bundle if file in bundled else from_image).append(f"{entry} ({file})")
    lines.append(f"the image has, declared present ({len(from_image)}):")
    lines += [f"  {entry}" for entry in sorted(from_image)]
    lines.append(f"the bundle carries ({len(from_bundle)}):")
    lines += [f"  {entry}" for entry in sorted(from_bundle)]
    unused = sorted(bundled - {Path(i["download_info"]["url"]).name for i in report["install"]})
    if unused:
        raise SystemExit(f"wheels in the bundle that nothing needs: {unused}")
    return lines


def check(work: Path, bundle: Path) -> int:
    """Prove the bundle (``bundle``, the folder the device call carries; downloaded for
    CPython 3.12 when empty) for the device, then run the dry run here with the same list."""
    work = work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    if not list(bundle.glob("*.whl")):
        download(bundle, "3.12")
    report = resolve_for_the_device(bundle, work)
    for line in explain_resolution(report, bundle):
        print(line)
    print(f"{bundle} resolved for CPython 3.12 on manylinux x86-64, the image declared present")
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    python = str(work / "venv" / "bin" / "python")
    have = [f"{name}=={version}" for name, version in image_versions().items()]
    here = {"torch": pinned(("torch",))[0], "numpy": pinned(("numpy",))[0]}  # this machine's
    have = [here.get(item.split("==")[0], item) for item in have]
    subprocess.run([python, "-m", "pip", "install", "-q", *have], check=True)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    download(work / "wheels", version)
    done = subprocess.run([python, str(REPO / "benchmarks" / "gpu_reference.py"), "--dry-run",
                           "--wheels", str(work / "wheels"), "--out", str(work / "out"),
                           "--work", str(work / "steps")], cwd=work)  # fmt: skip
    print("wheel list proven" if done.returncode == 0 else "the dry run failed: see above")
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where the wheels go")
    parser.add_argument("--python-version", default="3.12", help="the GPU machine's CPython")
    parser.add_argument("--check", action="store_true", help="prove the list (see above)")
    parser.add_argument(
        "--bundle",
        type=Path,
        default=REPO / "build" / "gpu-wheels",
        help="with --check: the device's wheels (default build/gpu-wheels)",
    )
    args = parser.parse_args(argv)  # fmt: skip
    if args.check:
        return check(args.folder, args.bundle)
    download(args.folder, args.python_version)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
