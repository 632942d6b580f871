"""The wheels a GPU machine with no network needs to run ``benchmarks/gpu_reference.py``.

What: downloads, for CPython on Linux x86-64 (manylinux), every package the reference run
and its test slice import that the GPU machine's image lacks (:data:`WHEELS`, at the
versions ``constraints.txt`` pins), into one folder. The package itself is not among them:
the run starts from the repository, whose copy the device call carries. Why: the device
machine cannot reach PyPI; its one short call must not fail on an import. ``make
gpu-wheels`` runs ``python benchmarks/gpu_wheels.py build/gpu-wheels`` (CPython 3.12, the
device's); the bundle's ``COMMIT`` file names the commit it was made at, which the records
of a call carry (the call copies the working tree without ``.git``).

``--check`` proves the list, twice:

1. for the machine it will run on: ``pip install --dry-run --no-index --find-links`` the
   CPython 3.12 manylinux x86-64 wheels ``--only-binary :all: --target``, with what the
   image has (:data:`IMAGE`: PyTorch 2.11.0, Triton 3.6.0, NumPy 2.5.2 and pytest among
   them) declared present by stand-in wheels that hold only their names and versions. Every
   bundled wheel must be a cp312 (or pure) manylinux x86-64 build, every requirement of the
   bundle must be met by the bundle or the image, and no bundled wheel may be one the image
   has, or the check fails;
2. here, on the versions the call will meet: a virtual environment of CPython 3.12 (the
   first found: ``--python``, ``python3.12`` on the PATH, or pyenv's; else this Python, said
   so) gets the image's packages at the image's versions from the registry (PyTorch 2.11.0
   from PyPI is its CUDA 13.0 build, the image's own, with its CUDA libraries: a few GB, made
   once and kept while its list holds; on this CPU it runs with no GPU to see), the bundle
   goes in with ``pip install --no-index --no-deps --target`` as the device run does (for
   3.12 the very wheels the call carries), and the dry run of the one-call command
   (``--part all --deadline 0``: every step, the test slice included) must pass with nothing
   else on the path and leave at most four files to return.
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
    "triton": "3.6.0",
    "numpy": "2.5.2",
    "psutil": None,
    "tqdm": None,
    "nvidia-ml-py": None,
    "sympy": None,
    "mpmath": None,
    "cloudpickle": None,
    "typing-extensions": None,
    "pytest": None,
    "pytest-xdist": None,
    "execnet": None,
    "pluggy": None,
    "iniconfig": None,
    "packaging": None,
    "pygments": None,
}
"""What the reference run needs that the GPU machine's image already has (Python 3.12.3; the
list of the image's packages comes with the device's description), with the version where
it is known (None: the version ``constraints.txt`` pins stands in for it). The test slice's
pytest with pytest-xdist and their requirements are among them: the image's own pytest runs
the slice, with the image's plugins."""
WHEELS = (
    "gymnasium",
    "farama-notifications",
    "ale-py",
    "py-spy",
)
"""What the run imports that the image lacks: Gymnasium and its notifications, Atari frames
(ale-py) and the profiler (py-spy)."""
DEVICE_PYTHON = "3.12"
"""The GPU machine's CPython (3.12.3)."""
COMMIT_FILE = "COMMIT"
"""The bundle's file that names the commit it was made at (gpu_reference.COMMIT_FILE)."""
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


def download(folder: Path, python_version: str = DEVICE_PYTHON) -> list[Path]:
    """Every wheel of :data:`WHEELS` for CPython ``python_version`` on manylinux x86-64."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "--python-version", python_version,
                    "--implementation", "cp", *_platform_options(), "-d", str(folder),
                    *pinned()], check=True)  # fmt: skip
    wheels = sorted(folder.glob("*.whl"))
    sys.path.insert(0, str(REPO))
    from hetero_tutorial.core.results import code_commit

    (folder / COMMIT_FILE).write_text(f"{code_commit() or 'unknown'}\n")
    print(f"{len(wheels)} wheels, {sum(w.stat().st_size for w in wheels) / 2**20:.1f} MiB "
          f"in {folder}, made at {(folder / COMMIT_FILE).read_text().strip()}")  # fmt: skip
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


def resolve_for_the_device(wheels: Path, work: Path, python_version: str = DEVICE_PYTHON) -> dict:
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
    image = {_key(name) for name in IMAGE}
    duplicated = sorted(e for e in from_bundle if _key(e.split()[0]) in image)
    if duplicated:
        raise SystemExit(f"the bundle carries what the image has: {duplicated}")
    return lines


def find_python(version: str = DEVICE_PYTHON, given: str | None = None) -> str:
    """A CPython of ``version`` to check with: ``given``, else ``python<version>`` on the PATH,
    else pyenv's newest of that version; else this Python, with a line saying so."""
    candidates = [given] if given else [f"python{version}"]
    if not given and shutil.which("pyenv"):
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
        found = sorted(Path(root).glob(f"versions/{version}.*/bin/python{version}"), key=_numeric)
        candidates += [str(path) for path in reversed(found)]
    for candidate in candidates:
        try:
            done = subprocess.run([candidate, "-c", "import sys; print(sys.version.split()[0])"],
                                  capture_output=True, text=True, timeout=60)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0 and done.stdout.startswith(f"{version}."):
            print(f"checking with CPython {done.stdout.strip()} ({candidate})")
            return candidate
    if given:
        raise SystemExit(f"--python {given} is not a CPython {version}")
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    print(f"no CPython {version} found (--python PATH names one): checking with this Python, "
          f"{here}, whose wheels are downloaded apart")  # fmt: skip
    return sys.executable


def _numeric(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.parent.parent.name))


def image_environment(work: Path, python: str) -> str:
    """A virtual environment of ``python`` with the image's packages at the image's versions
    (made once; made again when the list changes); returns its Python."""
    venv = work / "venv"
    wanted = [f"{name}=={version}" for name, version in image_versions().items()]
    stamp = venv / "installed.txt"
    if stamp.is_file() and stamp.read_text().split() == wanted:
        print(f"the image's packages: {venv} (kept: the same list)")
        return str(venv / "bin" / "python")
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    print(f"the image's packages into {venv}: {' '.join(wanted)}")
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *wanted],
                   check=True)  # fmt: skip
    stamp.write_text("\n".join(wanted) + "\n")
    return str(venv / "bin" / "python")


def check(work: Path, bundle: Path, python: str | None = None) -> int:
    """Prove the bundle (``bundle``, the folder the device call carries; downloaded for
    CPython 3.12 when empty) for the device, then run the one-call dry run on the image's
    versions with it."""
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    for folder in ("image", "target", "wheels", "out", "steps"):  # the venv is kept
        shutil.rmtree(work / folder, ignore_errors=True)
    if not list(bundle.glob("*.whl")):
        download(bundle, DEVICE_PYTHON)
    report = resolve_for_the_device(bundle, work, DEVICE_PYTHON)
    for line in explain_resolution(report, bundle):
        print(line)
    print(f"{bundle} resolved for CPython {DEVICE_PYTHON} on manylinux x86-64, the image "
          "declared present")  # fmt: skip
    venv_python = image_environment(work, find_python(DEVICE_PYTHON, python))
    version = subprocess.run([venv_python, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    wheels = bundle
    if version.strip() != str(tuple(int(v) for v in DEVICE_PYTHON.split("."))):
        wheels = work / "wheels"  # another Python: the same list, built for it
        download(wheels, ".".join(version.strip("()\n").split(", ")))
    out = work / "out"
    done = subprocess.run([venv_python, str(REPO / "benchmarks" / "gpu_reference.py"),
                           "--dry-run", "--part", "all", "--deadline", "0", "--wheels",
                           str(wheels.resolve()), "--out", str(out), "--work", str(work / "steps")],
                          cwd=work)  # fmt: skip
    returned = sorted(p.name for p in out.rglob("*") if p.is_file())
    print(f"files to return: {len(returned)} ({', '.join(returned)})")
    if done.returncode == 0 and len(returned) <= 4:
        print("wheel list proven")
        return 0
    print("the dry run failed: see above")
    return done.returncode or 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where the wheels go")
    parser.add_argument("--python-version", default=DEVICE_PYTHON, help="the GPU machine's CPython")
    parser.add_argument("--python", help="with --check: the CPython 3.12 to check with")
    parser.add_argument("--check", action="store_true", help="prove the list (see above)")
    parser.add_argument(
        "--bundle",
        type=Path,
        default=REPO / "build" / "gpu-wheels",
        help="with --check: the device's wheels (default build/gpu-wheels)",
    )
    args = parser.parse_args(argv)  # fmt: skip
    if args.check:
        return check(args.folder, args.bundle, args.python)
    download(args.folder, args.python_version)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
