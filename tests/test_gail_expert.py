"""The committed expert: its files load, match their provenance, and its actor still runs
as recorded (within a tolerance: MuJoCo's numerics move between releases)."""

import json
import shutil

import gymnasium as gym
import numpy as np
import pytest

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.envs import mujoco as mujoco_env
from hetero_tutorial.rl.gail import demonstrations

RETURN_TOLERANCE = 0.05
"""How far (a share of the recorded return) one replayed episode may land from the record:
the same MuJoCo release replays it exactly; another one moves the trajectory."""

needs_mujoco = pytest.mark.skipif(
    mujoco_env.mujoco_problem() is not None, reason=str(mujoco_env.mujoco_problem())
)


def test_the_demonstrations_have_the_expert_episodes_and_their_provenance():
    found = demonstrations.load()
    provenance = found.provenance
    assert provenance["env_id"] == "HalfCheetah-v5"
    assert found.obs.shape[1] == 17 and found.actions.shape[1] == 6
    assert len(found.returns) == len(provenance["episode_seeds"]) == 10
    assert len(found.obs) == 10 * 1000  # HalfCheetah's episodes end at their time limit
    np.testing.assert_allclose(found.returns, provenance["returns"], rtol=1e-5)
    assert {"command", "seed", "steps", "versions", "machine"} <= set(provenance)
    assert provenance["versions"]["mujoco"] == mujoco_env.MUJOCO_VERSION
    assert np.abs(found.actions).max() <= 1.0  # HalfCheetah's action bounds


@needs_mujoco
def test_the_expert_replays_an_episode_within_the_tolerance_of_its_record():
    found = demonstrations.load()
    env = gym.make("HalfCheetah-v5")
    actor = demonstrations.expert_actor(env=env)
    seed, recorded = found.provenance["episode_seeds"][0], found.returns[0]
    replayed = float(demonstrations.greedy_episode(actor, env, seed)["rewards"].sum())
    assert abs(replayed - recorded) <= RETURN_TOLERANCE * abs(recorded), (replayed, recorded)


def test_a_changed_file_is_refused_with_the_reason(tmp_path):
    folder = tmp_path / "expert"
    shutil.copytree(demonstrations.EXPERT_DIR, folder)
    data = bytearray((folder / "actor.pt").read_bytes())
    data[-10] ^= 0xFF
    (folder / "actor.pt").write_bytes(bytes(data))
    with pytest.raises(UsageError, match="SHA-256 differs"):
        demonstrations.load(folder)


def test_a_foreign_or_missing_file_is_refused_with_the_command_that_makes_one(tmp_path):
    folder = tmp_path / "expert"
    shutil.copytree(demonstrations.EXPERT_DIR, folder)
    provenance = json.loads((folder / "provenance.json").read_text())
    (folder / "provenance.json").write_text(json.dumps(provenance | {"kind": "bench.ppo"}))
    with pytest.raises(UsageError, match="not an expert's provenance"):
        demonstrations.load(folder)
    with pytest.raises(UsageError, match=r"halfcheetah_expert\.py"):
        demonstrations.load(tmp_path / "nowhere")


def test_a_missing_or_other_mujoco_is_one_line_with_the_command(monkeypatch):
    import mujoco

    monkeypatch.setattr(mujoco, "__version__", "4.0.1")
    problem = mujoco_env.mujoco_problem()
    assert problem is not None and "4.0.1" in problem and mujoco_env.INSTALL in problem
    with pytest.raises(UsageError, match=r"constraints\.txt"):
        mujoco_env.make_halfcheetah()
