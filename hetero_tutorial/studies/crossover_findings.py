"""What notebook 00's measurements say, in sentences printed from them: the stopwatches,
one CartPole step (and the PyTorch operators in it), and one value update (C1, C2)."""

from __future__ import annotations

import gymnasium as gym
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.rl.nets import mlp


class _OperationCounter(TorchDispatchMode):
    """Counts the operators PyTorch's dispatcher runs inside the ``with`` block."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def operations_per_policy_step(hidden: int = 128, env_id: str = "CartPole-v1") -> int:
    """How many PyTorch operators one policy step of :func:`policy_step_costs` runs (on the CPU)."""
    env = gym.make(env_id)
    net = mlp(env.observation_space.shape[0], hidden, env.action_space.n).eval()
    obs, _ = env.reset(seed=0)
    with torch.inference_mode(), _OperationCounter() as counter:
        int(net(torch.as_tensor(obs).unsqueeze(0).to("cpu")).argmax(dim=1).item())
    env.close()
    return counter.count


@judged()
def timers_sentence(timers: dict[str, dict[str, float]]) -> str:
    """What the three stopwatches of :func:`naive_vs_honest` said, per device.

    On a CPU a call finishes before it returns, so only warm-up separates the timers: a
    naive loop or a first call *faster* than the warmed median means the machine's speed
    changed between the timings, which the sentence says, instead of reading it as
    queueing (an accelerator's asynchronous launches are what a naive timer mistakes)."""
    lines = []
    for device, row in timers.items():
        first, naive = row["first_call_s"] / row["honest_s"], row["naive_s"] / row["honest_s"]
        on_cpu = torch.device(device).type == "cpu"
        hides = (
            "a one-off cost that warming up keeps out of the figures" if first > 2
            else "a small one-off cost" if first > 1.2
            else "no one-off cost to speak of here" if first >= 0.8 or not on_cpu
            else "faster than warmed-up calls, which on a CPU only a machine that was busier "
            "during the repeats than during the first call explains"
        )  # fmt: skip
        warm = f"the first call took {first:.1f}x the honest median: {hides}"
        if naive < 0.8 and on_cpu:
            said = (
                f"the naive timer read {naive:.2f}x the honest one: faster, which on a CPU (no "
                "queue) means the machine's speed changed between the two timings"
            )
        elif naive < 0.8:
            said = f"the naive timer read {naive:.2f}x the honest one: it timed queueing, not work"
        elif naive > 1.2:
            said = f"the naive timer read {naive:.2f}x the honest one: its cold start weighed in"
        else:
            said = f"the naive timer read {naive:.2f}x the honest one: within 20% on this device"
        lines.append(f"{device}: {warm}; {said}.")
    return " ".join(lines)


@judged()
def policy_step_sentence(costs: dict[str, dict[str, float]], operations: int) -> str:
    """One policy step on each device: how much is the environment, how much PyTorch's calls
    (C1's CPU half against the article's 0.3 ms is a finding of its own, over two timings:
    :func:`hetero_tutorial.notebook.step_drift.c1_cpu_finding`)."""
    cpu, env = costs["cpu"]["median_s"], costs["env_only"]["median_s"]
    policy = cpu - env
    text = (
        f"One step costs {format_seconds(cpu)} on the CPU, of which the environment alone is "
        f"{format_seconds(env)}: the policy's part, {format_seconds(policy)} "
        f"({policy / cpu:.0%}), runs {operations} PyTorch operators (counted by the "
        f"dispatcher), about {format_seconds(policy / operations)} each (this timing; section 5 "
        "times the step again)."
    )
    for name in costs:
        if name in ("cpu", "env_only"):
            continue
        spread = Spread.of_medians(costs[name], costs["cpu"])
        side = spread.side(1.0)
        verdict = {True: "slower than the CPU", False: "faster than the CPU"}.get(
            side, "no clear effect" + spread.noise()
        )
        text += f" On {name} the step takes {spread} the CPU's time: {verdict} (C1)."
    return text


@judged()
def value_update_sentence(costs: dict[str, dict[str, float]]) -> str:
    """C2 from the value-update timings: each accelerator's speed over the CPU's, or why not."""
    cpu = costs["cpu"]["median_s"]
    others = [name for name in costs if name != "cpu"]
    if not others:
        return (
            f"One update takes {format_seconds(cpu)} on this CPU; C2 compares it with an "
            "accelerator, which this machine lacks."
        )
    lines = []
    for name in others:
        spread = Spread.of_medians(costs["cpu"], costs[name])
        side = spread.side(1.0)
        verdict = {True: "faster than the CPU", False: "slower than the CPU"}.get(
            side, "no clear effect" + spread.noise()
        )
        lines.append(f"{name} runs the update at {spread} the CPU's speed: {verdict} (C2: 1.8x).")
    return " ".join(lines)
