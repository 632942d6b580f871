"""Host<->device copies per environment step, counted on any machine (claim C4).

How many copies a placement makes is a property of the code, not of the hardware: the
rollout's two copies per vector step, the hybrid plan's one batched transfer and one
weight sync per iteration. So they can be counted without an accelerator: the
accelerator's phases run on PyTorch's ``meta`` device (shapes, no data), and a
:class:`~hetero_tutorial.core.transfers.MetaCopyCounter` counts every copy across
devices and answers copies out of ``meta`` with zeros. With an accelerator the same
functions count on it, for real.

:func:`ppo_copies` counts one PPO iteration, :func:`ddpg_copies` a stretch of DDPG steps
with one update each; both return plain dicts for the records (``counted_on`` says
where: ``"meta"`` is the stand-in).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.findings import Outcome
from hetero_tutorial.core.placement import placement
from hetero_tutorial.core.transfers import META, CopyCounter, MetaCopyCounter
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import copies_per_step
from hetero_tutorial.rl.ppo.trainer import PPOTrainer


def counting_device(device: str | torch.device | None = None) -> torch.device:
    """``device``, or this machine's accelerator, or ``meta`` (the stand-in) without one."""
    if device is not None:
        return torch.device(device)
    found = accelerator()
    return found if found is not None else META


def _counter(device: torch.device) -> CopyCounter:
    return MetaCopyCounter() if device.type == "meta" else CopyCounter()


def _one_device(algorithm: str, placement_name: str, device: torch.device) -> dict[str, Any]:
    """The count of a placement with every phase on the CPU: there is no other device to copy
    to, so nothing is run (running it under a dispatch mode would only cost time)."""
    return {
        "algorithm": algorithm,
        "placement": placement_name,
        "counted_on": str(device),
        "by_phase": {},
        "copies_per_env_step": 0.0,
        "note": "every phase on the CPU: one device, nothing to copy",
    }


def _not_on_meta(config: PPOConfig, placement_name: str) -> dict[str, Any]:
    """Why a plan with batched environments is not counted on the ``meta`` stand-in: its
    environments step on the device itself and draw random numbers there, which ``meta``
    (no data) cannot do. Its copies (one per rollout, the update's diagnostics) are
    counted on a real accelerator only."""
    return {
        "algorithm": "ppo",
        "placement": placement_name,
        "counted_on": None,
        "env_id": config.env_id,
        "by_phase": {},
        "copies_per_env_step": None,
        "copies_per_iteration": None,
        "note": "not counted: its environments run on the device, which the meta stand-in "
        "cannot run; count it on an accelerator",
    }


def ppo_copies(
    config: PPOConfig,
    placement_name: str = "all-accelerator",
    device: str | torch.device | None = None,
    seed: int = 0,
    update_epochs: int | None = 1,
) -> dict[str, Any]:
    """Copies of one PPO iteration of ``config`` under a preset, by phase and per env step.

    ``device``: where the accelerator's phases run (default :func:`counting_device`). A
    placement with batched environments is not counted on ``meta`` (see :func:`_not_on_meta`).
    ``update_epochs``: the update's epochs in the counted iteration (None: the config's).
    The update copies once per update, not per epoch (every epoch's minibatch order
    goes over in one copy, the diagnostics come back in one), and on ``meta`` each
    epoch costs seconds of Python, so one epoch is counted by default; a test checks
    that the counts do not depend on it.
    """
    device = counting_device(device)
    counted = placement(placement_name, accelerator_device=device)
    if all(d.type == "cpu" for d in counted.devices):
        return {**_one_device("ppo", placement_name, device), "copies_per_iteration": 0}
    if counted.batched_envs and device.type == "meta":
        return _not_on_meta(config, placement_name)
    epochs = config.update_epochs if update_epochs is None else update_epochs
    one_iteration = replace(config, total_steps=config.batch_size, update_epochs=epochs)
    trainer = PPOTrainer(one_iteration, counted, seed)
    trainer.counter = _counter(device)  # run_iteration counts its first iteration under it
    trainer.run_iteration()
    trainer.close()
    by_phase = copies_per_step(trainer)
    return {
        "algorithm": "ppo",
        "placement": placement_name,
        "counted_on": str(device),
        "env_id": config.env_id,
        "steps_counted": config.batch_size,
        "update_epochs_counted": epochs,
        "by_phase": by_phase,
        "copies_per_env_step": sum(p["count_per_env_step"] for p in by_phase.values()),
        "copies_per_iteration": sum(p["count_per_iteration"] for p in by_phase.values()),
    }


def ddpg_copies(
    config: DDPGConfig,
    placement_name: str = "all-accelerator",
    device: str | torch.device | None = None,
    steps: int = 20,
) -> dict[str, Any]:
    """Copies of ``steps`` DDPG steps (one update each) under a preset, by phase.

    The buffer is first filled with ``batch_size`` random-action steps (not counted),
    so every counted step samples a batch and updates.
    """
    device = counting_device(device)
    counted = placement(placement_name, device)
    if all(d.type == "cpu" for d in counted.devices):
        return {**_one_device("ddpg", placement_name, device), "copies_per_1000_samples": 0.0}
    config = replace(
        config,
        learning_starts=config.batch_size,
        total_steps=config.batch_size + steps + 2,
        count_copies_steps=steps,
    )
    with _counter(device):  # building (a rollout actor copied off meta) and filling: not counted
        trainer = DDPGTrainer(config, counted)
        for step in range(config.learning_starts):
            trainer.step(step)
    with _counter(device) as counter:
        for step in range(config.learning_starts, config.learning_starts + steps):
            trainer.step(step, counter.phase)
    trainer.env.close()
    by_phase = {
        phase: {
            "count_per_1000_steps": 1000 * stats["count"] / steps,
            "bytes_per_env_step": stats["bytes"] / steps,
        }
        for phase, stats in counter.by_phase().items()
    }
    per_step = counter.total().count / steps
    return {
        "algorithm": "ddpg",
        "placement": placement_name,
        "counted_on": str(device),
        "buffer": config.buffer,
        "steps_counted": steps,
        "by_phase": by_phase,
        "copies_per_env_step": per_step,
        "copies_per_1000_samples": 1000 * per_step,
    }


def copies_sentence(ppo: dict[str, Any], ddpg: dict[str, Any]) -> str:
    """C4 in one sentence, from two counts: which algorithm switches devices more per step."""
    where = "counted on the meta device (a stand-in: the code's copies, no data moved)"
    if ppo["counted_on"] != "meta":
        where = f"counted on {ppo['counted_on']}"
    a, b = ppo["copies_per_env_step"], ddpg["copies_per_env_step"]
    more = "PPO" if a > b else "DDPG" if b > a else "neither"
    ratio = max(a, b) / max(min(a, b), 1e-12)
    text = (
        f"All-accelerator PPO ({ppo['env_id']}) makes {a:.3f} copies per environment step, "
        f"all-accelerator DDPG ({ddpg['buffer']} buffer) {b:.2f}, {where}: "
    )
    if more == "neither":
        return text + "the same number."
    return text + f"{more} switches devices {ratio:.1f}x as often per step."


def c4_sensitivity(env_id: str = "CartPole-v1", envs: tuple[int, ...] = (1, 8)) -> list[dict]:
    """C4's counts as its two choices vary: PPO at each of ``envs`` environments (the same
    rollout of ``num_envs x num_steps`` transitions, so the update's copies weigh the
    same), all-accelerator DDPG with pattern A (per-field copies) and with the tensor
    buffer (one copy per stored transition), counted where :func:`counting_device` says.

    A count, not a timing: the same on every machine, so no repeats are needed.
    """
    tuned = PPOConfig.tuned(env_id)
    rollout = tuned.num_envs * tuned.num_steps
    found = []
    for n in envs:
        config = replace(tuned, num_envs=n, num_steps=rollout // n)
        found.append({**ppo_copies(config), "setting": f"{n} environment{'s' * (n > 1)}"})
    for design, name in (("transition", "pattern A"), ("tensor", "the tensor buffer")):
        found.append({**ddpg_copies(DDPGConfig(buffer=design)), "setting": name})
    return found


def c4_sensitivity_sentence(rows: list[dict]) -> str:
    """What C4's verdict depends on, read from :func:`c4_sensitivity`'s counts."""
    ppo = [r for r in rows if r["algorithm"] == "ppo"]
    ddpg = [r for r in rows if r["algorithm"] == "ddpg"]
    pairs = [(p, d) for p in ppo for d in ddpg]
    held = [(p, d) for p, d in pairs if p["copies_per_env_step"] > d["copies_per_env_step"]]
    ratios = [p["copies_per_env_step"] / d["copies_per_env_step"] for p, d in pairs]
    text = (
        f"PPO copies more per environment step than DDPG in {len(held)} of {len(pairs)} "
        f"pairings of the table's settings (PPO / DDPG from {min(ratios):.2f}x to "
        f"{max(ratios):.2f}x). "
    )
    rollout = [r["by_phase"].get("rollout", {}) for r in ppo]
    per_step = [p.get("count_per_env_step") for p in rollout]
    if all(v is not None for v in per_step):
        text += (
            "PPO's rollout alone (the table adds the update's) copies less per step the more "
            "environments one forward pass serves ("
            + ", ".join(f"{v:.2f} at {r['setting']}" for v, r in zip(per_step, ppo, strict=True))
            + "); DDPG's serves one, like PPO at 1, and its extra copies are its buffer's. "
        )
    if len(held) in (0, len(pairs)):
        verdict = "holds at every setting" if held else "holds at none of the settings"
        return text + (
            f"So the claim {verdict} counted here; by how much turns on the environments and "
            "the buffer's design, not on on- versus off-policy learning."
        )
    return text + (
        "So the verdict itself turns on the number of environments and the buffer's design: "
        "C4 is a claim about those choices, not about on- versus off-policy learning."
    )


def c4_sentence(ppo: dict[str, Any], ddpg: dict[str, Any]) -> str:
    """C4 from two counts (:func:`copies_sentence`), then its
    outcome by notebook 10's rule (:func:`~hetero_tutorial.ledger.rules.c4`): held only if PPO
    copies more per step than DDPG, as PPO's over DDPG's. Counts have no noise: a verdict."""
    a, b = ppo["copies_per_env_step"], ddpg["copies_per_env_step"]
    text = (
        f"{copies_sentence(ppo, ddpg)} C4 expects on-policy PPO to switch devices "
        "more often per environment step than off-policy DDPG (PPO's copies over DDPG's above "
        "1x): "
    )
    if a == b:
        return text + f"{Outcome.NOT_HELD.value}, the two make the same number."
    if b == 0:
        return text + f"{Outcome.HELD.value}, DDPG copies nothing and PPO {a:.3f} per step."
    if a > b:
        return text + f"{Outcome.HELD.value}, {a / b:.2f}x."
    return text + (
        f"{Outcome.NOT_HELD.value}, {a / b:.3f}x: PPO makes {1 - a / b:.0%} fewer copies "
        "per step than DDPG, the other way round."
    )


C7_SWITCHES = 20
"""C7's setting: "20+" device switches per 1000 samples (read as sampled transitions)."""


def c7_switches_sentence(counted: dict[str, dict[str, Any]], batch_size: int) -> str:
    """C7's "20+ per 1000 samples" beside this run's count, like with like: copies per 1000
    transitions the updates sampled (one batch of ``batch_size`` per environment step), of
    the placement that copies most; the batch's own copies (the ``sample`` phase) apart."""
    name, most = max(counted.items(), key=lambda item: item[1]["copies_per_env_step"])
    per_step = most["copies_per_env_step"]
    sampled = 1000 * per_step / batch_size
    batch = most["by_phase"].get("sample", {}).get("count_per_1000_steps", 0) / 1000
    own = f"; the batch's own {batch:.0f} copies come to {1000 * batch / batch_size:.1f}"
    text = (
        f"C7's setting (its speed needs an accelerator to judge), {C7_SWITCHES}+ device "
        "switches per 1000 "
        f"samples, read as transitions sampled (a batch of {batch_size} per environment step), "
        f"not as environment steps: {name} makes {sampled:.1f} copies per 1000 sampled "
        f"transitions ({per_step:.0f} per step{own * (batch > 0)})"
    )
    # the setting, not the claim: the ledger judges C7, which needs an accelerator to time
    if sampled >= C7_SWITCHES:
        return text + f", at least {C7_SWITCHES}: this run has C7's setting."
    gap = 1 - sampled / C7_SWITCHES  # never printed as 0%
    return text + (
        f", {gap:.{0 if gap >= 0.01 else 1}%} below {C7_SWITCHES}: this run's DDPG switches less "
        "often per sample than the article's did, so it lacks C7's setting."
    )
