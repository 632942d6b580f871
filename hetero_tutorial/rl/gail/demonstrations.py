"""GAIL's expert demonstrations: what the expert did, the expert itself, and where they came from.

An expert is trained here once, by the project's own DDPG (``benchmarks/halfcheetah_expert.py``,
outside CI), and leaves three files in one folder (:data:`EXPERT_DIR`):

* ``demonstrations.npz``: ``obs`` (N, obs_dim), ``actions`` (N, action_dim), ``rewards`` (N,)
  and ``episode`` (N,), the episode each step belongs to: the expert's greedy episodes;
* ``actor.pt``: the expert's actor (DDPG's deterministic actor), its weights and width;
* ``provenance.json``: the command, seed, steps, each episode's return, the versions of
  MuJoCo, Gymnasium and PyTorch, the machine, and each file's SHA-256, so that a file
  changed or brought from elsewhere is refused with the reason, not read.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.paths import REPO_DIR
from hetero_tutorial.rl.nets import DeterministicActor

EXPERT_DIR = REPO_DIR / "data" / "gail" / "halfcheetah"
KIND = "gail.expert"
FILES = ("demonstrations.npz", "actor.pt")
MAKE = "python benchmarks/halfcheetah_expert.py"
"""The command that trains the expert and writes the files (about half an hour on a CPU)."""


@dataclass(frozen=True)
class Demonstrations:
    """The expert's episodes, step by step, and their provenance."""

    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    episode: np.ndarray
    provenance: dict[str, Any]

    @property
    def returns(self) -> list[float]:
        """Each episode's return, in order."""
        return [float(self.rewards[self.episode == e].sum()) for e in np.unique(self.episode)]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save(
    folder: Path,
    episodes: list[dict[str, np.ndarray]],
    actor: DeterministicActor,
    hidden: int,
    provenance: dict[str, Any],
) -> Path:
    """Write ``episodes`` (each ``obs``, ``actions``, ``rewards``), the ``actor`` and the
    provenance (with the files' hashes and the episodes' returns) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    fields = {k: np.concatenate([e[k] for e in episodes]) for k in ("obs", "actions", "rewards")}
    fields["episode"] = np.concatenate(
        [np.full(len(e["rewards"]), i, dtype=np.int32) for i, e in enumerate(episodes)]
    )
    np.savez_compressed(
        folder / FILES[0], **{k: v.astype(np.float32 if k != "episode" else np.int32)
                              for k, v in fields.items()}
    )  # fmt: skip
    state = {k: v.detach().cpu() for k, v in actor.state_dict().items()}
    torch.save({"hidden": hidden, "state_dict": state}, folder / FILES[1])
    provenance = provenance | {
        "kind": KIND,
        "returns": [float(e["rewards"].sum()) for e in episodes],
        "sha256": {name: _sha256(folder / name) for name in FILES},
    }
    (folder / "provenance.json").write_text(json.dumps(provenance, indent=1) + "\n")
    return folder


def provenance_of(folder: Path = EXPERT_DIR) -> dict[str, Any]:
    """The folder's provenance, checked: its kind, and every file's hash against it."""
    path = folder / "provenance.json"
    if not path.exists():
        raise UsageError(f"no expert in {folder}: make one with `{MAKE}`")
    try:
        provenance = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise UsageError(
            f"{path} is not valid JSON ({error}): make the expert again ({MAKE})"
        ) from None
    if not isinstance(provenance, dict) or provenance.get("kind") != KIND:
        raise UsageError(
            f"{path} is not an expert's provenance (kind {provenance.get('kind')!r}, "
            f"not {KIND!r}): make the expert with `{MAKE}`"
        )
    for name in FILES:
        file = folder / name
        if not file.exists():
            raise UsageError(f"{file} is missing: make the expert again ({MAKE})")
        if _sha256(file) != provenance.get("sha256", {}).get(name):
            raise UsageError(
                f"{file} is not the file its provenance describes (its SHA-256 differs): "
                f"restore it with `git checkout -- {file.name}` or make the expert again ({MAKE})"
            )
    return provenance


def load(folder: Path = EXPERT_DIR) -> Demonstrations:
    """The expert's demonstrations, checked against their provenance."""
    provenance = provenance_of(folder)
    with np.load(folder / FILES[0]) as found:
        fields = {k: found[k] for k in ("obs", "actions", "rewards", "episode")}
    steps = len(fields["rewards"])
    if any(len(v) != steps for v in fields.values()) or fields["obs"].ndim != 2:
        raise UsageError(f"{folder / FILES[0]}'s fields disagree in length: make it again ({MAKE})")
    return Demonstrations(**fields, provenance=provenance)


def expert_actor(folder: Path = EXPERT_DIR, env: gym.Env | None = None) -> DeterministicActor:
    """The expert's actor, on the CPU, for ``env``'s spaces (default: the provenance's)."""
    provenance = provenance_of(folder)
    saved = torch.load(folder / FILES[1], weights_only=True)
    if env is None:
        env = gym.make(provenance["env_id"])
    space = env.action_space
    actor = DeterministicActor(
        env.observation_space.shape[0],
        space.shape[0],
        torch.as_tensor(space.low, dtype=torch.float32),
        torch.as_tensor(space.high, dtype=torch.float32),
        saved["hidden"],
    )
    actor.load_state_dict(saved["state_dict"])
    return actor.requires_grad_(False)


@torch.inference_mode()
def greedy_episode(actor: DeterministicActor, env: gym.Env, seed: int) -> dict[str, np.ndarray]:
    """One episode of ``actor``'s own actions (no noise) from ``env.reset(seed=seed)``."""
    obs, _ = env.reset(seed=seed)
    steps: dict[str, list[np.ndarray]] = {"obs": [], "actions": [], "rewards": []}
    done = False
    while not done:
        action = actor(torch.as_tensor(obs, dtype=torch.float32)).numpy()
        steps["obs"].append(obs)
        steps["actions"].append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        steps["rewards"].append(np.float32(reward))
        done = terminated or truncated
    return {k: np.asarray(v, dtype=np.float32) for k, v in steps.items()}
