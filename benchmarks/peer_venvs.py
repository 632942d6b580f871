"""The peers' virtual environments under build/peers/: exact pins, created on first use.

Peers are comparison points, never dependencies: each lives in a virtual environment of
its own (ignored by git), built from the exact requirements in :data:`PEER_VENVS` the
first time a race needs it, and rebuilt when those pins change. A peer's own script
(CleanRL's) is taken from its published wheel, unmodified (:func:`wheel_member`).

Torch is the same 2.13.0 as ours everywhere it appears: on this machine pip takes the
CPU wheel from local disk; elsewhere point pip at PyTorch's CPU index first, or an
unpinned install pulls a multi-GB CUDA build.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "build" / "peers"

JAX = ["jax==0.10.2", "jaxlib==0.10.2"]
"""JAX's CPU build: one pin for every JAX peer, so gymnax and rejax run the same compiler."""

PEER_VENVS: dict[str, list[str]] = {
    "sb3": ["torch==2.13.0", "stable-baselines3==2.9.2", "gymnasium==1.4.0"],
    "cleanrl": [
        "torch==2.13.0",
        "gym==0.23.1",  # the API cleanrl 1.2.0's ppo.py is written for
        "numpy==1.26.4",  # gym 0.23 predates NumPy 2
        "pygame==2.6.1",  # gym 0.23's CartPole imports it at module level
        "tensorboard==2.21.0",  # ppo.py logs with torch.utils.tensorboard.SummaryWriter
    ],
    "cleanrl-ddpg": [
        "torch==2.13.0",
        # ddpg_continuous_action.py reads infos["final_observation"], which Gymnasium 1.x's
        # vector envs no longer return: the last Gymnasium before 1.0
        "gymnasium==0.29.1",
        "stable-baselines3==2.3.2",  # its ReplayBuffer; the last SB3 for Gymnasium 0.29
        "numpy==1.26.4",  # Gymnasium 0.29 predates NumPy 2
        "tensorboard==2.21.0",
    ],
    # gymnax 1.0.1 needs Gymnasium < 1.4, and imports six without declaring it
    "gymnax": [*JAX, "gymnax==1.0.1", "gymnasium==1.3.0", "six==1.17.0"],
    # rejax 0.1.3 steps gymnax 0.0.9's five-value step (gymnax 1.x returns six values)
    "rejax": [*JAX, "rejax==0.1.3", "gymnax==0.0.9", "flax==0.12.8", "optax==0.2.8"],
    "envpool": ["envpool==1.2.5", "gymnasium==1.4.0"],  # 1.2.5: the newest for CPython 3.11
    "torchrl": ["torch==2.13.0", "torchrl==0.14.1", "tensordict==0.14.3", "gymnasium==1.4.0"],
}
"""Peer venv name -> exact requirements (``pip install`` arguments)."""

VERSIONS_OF: dict[str, list[str]] = {
    "sb3": ["stable_baselines3", "torch", "gymnasium", "numpy"],
    "cleanrl": ["torch", "gym", "numpy", "tensorboard", "pygame"],
    "cleanrl-ddpg": ["torch", "gymnasium", "stable_baselines3", "numpy", "tensorboard"],
    "gymnax": ["jax", "jaxlib", "gymnax", "gymnasium", "flax", "numpy"],
    "rejax": ["jax", "jaxlib", "rejax", "gymnax", "flax", "optax", "distrax", "numpy"],
    "envpool": ["envpool", "gymnasium", "numpy"],
    "torchrl": ["torch", "torchrl", "tensordict", "gymnasium", "numpy"],
}
"""The installed packages whose versions a record names, per peer venv."""

CLEANRL_WHEEL = "cleanrl==1.2.0"
"""The wheel CleanRL's scripts come from (it declares Python < 3.11: only its files are used)."""
WHEEL_SCRIPTS = {
    "cleanrl": (CLEANRL_WHEEL, "cleanrl/ppo.py"),
    "cleanrl-ddpg": (CLEANRL_WHEEL, "cleanrl/ddpg_continuous_action.py"),
}
"""Peer venv -> (wheel, member): the peer's own script, run unmodified in that venv."""


def peer_python(name: str) -> Path:
    """The interpreter of peer venv ``name``."""
    return PEERS / name / "bin" / "python"


def script(name: str) -> Path:
    """Where peer venv ``name``'s own script (:data:`WHEEL_SCRIPTS`) is kept."""
    return PEERS / name / Path(WHEEL_SCRIPTS[name][1]).name


def ensure(name: str) -> float:
    """Create peer venv ``name`` with its pins unless it exists with them, and extract its
    script (if it has one); return the seconds spent."""
    requirements = PEER_VENVS[name]
    stamp = PEERS / name / ".installed"
    began = time.perf_counter()
    if not (stamp.exists() and stamp.read_text().split() == requirements):
        print(f"setting up build/peers/{name}: {' '.join(requirements)}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(PEERS / name)], check=True)
        pip = [str(peer_python(name)), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, *requirements], check=True)
        stamp.write_text("\n".join(requirements) + "\n")
        print(f"build/peers/{name} ready in {time.perf_counter() - began:.0f} s", flush=True)
    if name in WHEEL_SCRIPTS:
        wheel_member(*WHEEL_SCRIPTS[name], script(name))
    return time.perf_counter() - began


def wheel_member(wheel: str, member: str, target: Path) -> Path:
    """Extract ``member`` of the ``wheel`` (``name==version``) to ``target``, unmodified, once."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=PEERS) as folder:
        download = [sys.executable, "-m", "pip", "download", "--quiet", wheel, "--no-deps"]
        # --python-version: the wheel declares Python < 3.11; only its files are used here
        platform = ["--only-binary=:all:", "--python-version", "3.10", "-d", folder]
        subprocess.run([*download, *platform], check=True)
        (found,) = Path(folder).glob("*.whl")
        with zipfile.ZipFile(found) as archive:
            target.write_bytes(archive.read(member))
    return target


def versions(name: str) -> dict[str, str]:
    """Installed versions of :data:`VERSIONS_OF` ``name``'s packages (``error`` if unreadable)."""
    code = (
        "import json, importlib.metadata as m; "
        f"print(json.dumps({{p: m.version(p) for p in {VERSIONS_OF[name]!r}}}))"
    )
    out = subprocess.run([str(peer_python(name)), "-c", code], capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {"error": out.stderr[-300:]}


def resolves(requirements: list[str]) -> str | None:
    """None if pip can resolve ``requirements`` together here, else pip's reason for the conflict.

    A dry run: nothing is installed. For a peer that may not install beside Gymnasium 1.x.
    """
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed"]
    done = subprocess.run([*command, *requirements], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    lines = (done.stdout + done.stderr).splitlines()
    if "The conflict is caused by:" in lines:  # then one line per requirement in conflict
        after = lines[lines.index("The conflict is caused by:") + 1 :]
        end = after.index("") if "" in after else len(after)
        return "; ".join(line.strip() for line in after[:end])
    return " ".join(line for line in lines if line.startswith("ERROR"))[-300:]


if __name__ == "__main__":  # python benchmarks/peer_venvs.py [NAME ...]: build them ahead
    for venv in sys.argv[1:] or PEER_VENVS:
        ensure(venv)
