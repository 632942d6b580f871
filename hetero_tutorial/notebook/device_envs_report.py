"""Notebook 07's conclusions, written from the measured rows: who wins where, and why (its
two figures are :mod:`~hetero_tutorial.notebook.device_envs_figures`).

Every sentence, table and figure here is built from numbers passed in (the rows of
:mod:`hetero_tutorial.studies.env_throughput` and :mod:`hetero_tutorial.studies.device_ppo`),
so another machine prints its own conclusions (which implementation is fastest at which
number of environments, where the lines cross, what a step costs whatever its size, which
configuration solved CartPole first).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.results import Record
from hetero_tutorial.core.timing import MIN_REPEATS
from hetero_tutorial.notebook import peer_races
from hetero_tutorial.notebook.env_rates import environments, throughput_findings
from hetero_tutorial.notebook.exercises import UNSOLVED, prediction_line
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies import device_ppo
from hetero_tutorial.studies.env_throughput import throughput_ratios


def _label(entry: dict[str, Any]) -> str:
    return f"{entry['implementation']} with {entry['num_envs']} envs ({entry['placement']})"


def _seconds_range(entry: dict[str, Any]) -> str:
    """Seconds to solve over the seeds that solved: "median M s (seeds L-H s)", or one
    seed's ("M s (one seed)")."""
    low, high = entry["seconds_to_475_low"], entry["seconds_to_475_high"]
    median = entry["median_seconds_to_475"]
    if entry["solved"] < 2:
        return f"{median:.2g} s (one seed)"
    return f"median {median:.2g} s (seeds {low:.2g}-{high:.2g} s)"


def interval_seconds(entry: dict[str, Any]) -> float:
    """One evaluation interval in training seconds, at the configuration's median speed."""
    return entry["eval_every"] / entry["median_env_steps_per_s"]


def rule_words(streak: int = device_ppo.SOLVED_STREAK, goal: float = device_ppo.SOLVED_RETURN):
    """The series' one meaning of "solved", in words."""
    return f"the first of {streak} greedy evaluations in a row at {goal:g} or more"


@judged()
def grid_sentence(summary: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]] = ()) -> str:
    """What the evaluation grid resolves: one interval of training, where a policy held
    between evaluations; where one reached the goal and fell back before it solved
    (``rows``' ``fell_back``), not when it first got there."""
    grids = " or ".join(f"{g:,}" for g in sorted({s["eval_every"] for s in summary}))
    seconds = [interval_seconds(s) for s in summary]
    lines = [
        f"- Evaluations every {grids} env steps: a time to solve is known to one interval, "
        f"{min(seconds):.2g}-{max(seconds):.2g} s of training here, where the policy held "
        "between evaluations."
    ]
    back = [
        f"{r['implementation']} x{r['num_envs']} seed {r['seed']} ("
        + ", ".join(f"{step:,}" for step in r["fell_back"])
        + ")"
        for r in rows
        if r.get("fell_back")
    ]
    if back:
        lines.append(
            f"- Reached {device_ppo.SOLVED_RETURN:g} and fell back before solving: "
            + "; ".join(back)
            + ": when these first got there, evaluations this far apart do not resolve."
        )
    return "\n".join(lines)


@judged()
def ppo_findings(summary: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]) -> str:
    """The configuration that solved CartPole first (its range over seeds); each
    implementation's best beside the hybrid plan (time, env steps/s, env steps needed);
    seeds not solved; the rule of "solved" and what the evaluation grid resolves; the
    update's share."""
    solved = [s for s in summary if s["median_seconds_to_475"] is not None]
    if not solved:
        return f"- No configuration solved it ({rule_words()}) within its budget."
    best = min(solved, key=lambda s: s["median_seconds_to_475"])
    lines = [
        f"- Fastest to solve: {_label(best)}: {_seconds_range(best)}, "
        f"{best['solved']} of {counted(best['seeds'], 'seed')} solved."
    ]
    seeds = max(s["solved"] for s in solved)
    if seeds < MIN_REPEATS:  # too few seeds each: an order, not a verdict
        lines[0] += (
            f" From {counted(seeds, 'seed')} per configuration this order is no verdict (a verdict "
            f"needs {MIN_REPEATS}): another seed can reorder it."
        )
    hybrid = next((s for s in solved if s["implementation"] == "gymnasium-sync"), None)
    for name in dict.fromkeys(s["implementation"] for s in summary):
        if name == "gymnasium-sync":
            continue
        mine = [s for s in solved if s["implementation"] == name]
        if not mine:
            lines.append(f"- {name} solved it in no configuration within its budget.")
        elif hybrid is not None:
            counts = len({s["num_envs"] for s in summary if s["implementation"] == name})
            lines.append(
                _beside_hybrid(min(mine, key=lambda s: s["median_seconds_to_475"]), hybrid, counts)
            )
    if not any(s["implementation"] == "gymnasium-sync" for s in solved):
        lines.append("- The hybrid plan on SyncVectorEnv did not solve it within its budget.")
    for entry in summary:
        missed = entry["seeds"] - entry["solved"]
        if missed:
            lines.append(f"- {_label(entry)}: {missed} of {entry['seeds']} seeds not solved.")
    lines.append(grid_sentence(summary, rows))
    lines.append(_update_share(best, rows))
    return "\n".join(lines)


def batching_guess_line(
    guess: float | None, rows: Sequence[dict[str, Any]], env_id: str = "CartPole-v1"
) -> str:
    """The learner's predicted speed-up of the batched environments over ``SyncVectorEnv``
    beside the measured one, at the largest N where both were measured."""
    both = [
        n
        for n in {r["num_envs"] for r in rows if r["env_id"] == env_id}
        if {"gymnasium-sync", "batched-cpu"}
        <= {
            r["implementation"]
            for r in rows
            if (r["env_id"], r["num_envs"]) == (env_id, n) and r["env_steps_per_s"]
        }
    ]
    if not both:
        return prediction_line(f"{env_id}: batched-cpu over gymnasium-sync", guess, None)
    n = max(both)
    found = throughput_ratios(rows, env_id, n, "gymnasium-sync")["batched-cpu"]
    what = f"{env_id} at N = {environments(n)}: batched-cpu's env steps/s over gymnasium-sync's"
    return prediction_line(what, guess, found, lambda x: f"{x:.3g}x", tolerance=0.5)


def solve_guess_line(guess: float | None, summary: Sequence[dict[str, Any]]) -> str:
    """The learner's predicted "times sooner" beside the hybrid plan's median time to 475
    over the batched CPU environments' fastest (None where either did not solve it)."""
    times = {
        name: min(
            (s["median_seconds_to_475"] for s in summary
             if s["implementation"] == name and s["median_seconds_to_475"] is not None),
            default=None,
        )
        for name in ("gymnasium-sync", "batched-cpu")
    }  # fmt: skip
    hybrid, batched = times["gymnasium-sync"], times["batched-cpu"]
    found = None if hybrid is None or batched is None else hybrid / batched
    seeds = min((s["seeds"] for s in summary), default=0)
    what = (
        "The hybrid plan's time to solve CartPole over batched-cpu's (above 1: batched-cpu "
        f"solved sooner; the inverse of the ratio above; medians of {counted(seeds, 'seed')}"
        + (f", no verdict below {MIN_REPEATS})" if seeds < MIN_REPEATS else ")")
    )
    return prediction_line(what, guess, found, lambda x: f"{x:.2f}x", tolerance=0.25)


def cost_guess_lines(
    guess: tuple[float, float] | None, hanging: Any, turned: Any, solved: bool
) -> str:
    """Once both exercises are ``solved`` (``check`` returned answers): why the two costs
    differ, and the learner's predicted step costs at theta = pi and theta = 7 (at rest, no
    torque) beside what the batched Pendulum charged (numbers or one-element tensors)."""
    if not solved:
        return UNSOLVED
    first, second = (None, None) if guess is None else guess
    shown = "{:.4f}".format
    return "\n".join(
        (
            f"Why: pi squared is {math.pi**2:.4f}; 7 rad wraps to 7 - 2 pi = "
            f"{7 - 2 * math.pi:.4f}.",
            prediction_line(
                "Hanging down at rest (theta = pi)", first, float(hanging), shown, 0.05
            ),
            prediction_line("At theta = 7 rad, at rest", second, float(turned), shown, 0.05),
        )
    )


def _beside_hybrid(entry: dict[str, Any], hybrid: dict[str, Any], counts: int = 1) -> str:
    """``entry`` (the fastest to solve of ``counts`` environment counts run) beside the
    hybrid plan: time, env steps/s and env steps needed."""
    seconds, base = entry["median_seconds_to_475"], hybrid["median_seconds_to_475"]
    speed = entry["median_env_steps_per_s"] / hybrid["median_env_steps_per_s"]
    steps, base_steps = entry["median_env_steps_to_475"], hybrid["median_env_steps_to_475"]
    grid = max(entry["eval_every"], hybrid["eval_every"])
    if abs(steps - base_steps) <= grid:
        needed = f"the same env steps to within one interval ({steps:,.0f} to {base_steps:,.0f})"
    else:
        needed = f"{steps / base_steps:.2g}x its env steps ({steps:,.0f} to {base_steps:,.0f})"
    # either run's streak may have begun up to one interval earlier: the ratio the grid allows
    low = max(seconds - interval_seconds(entry), 0.0) / base
    shorter = base - interval_seconds(hybrid)
    high = f"{seconds / shorter:.2g}x" if shorter > 0 else "unbounded"
    which = (
        f"at its best ({entry['num_envs']} envs)"
        if counts > 1
        else f"at {entry['num_envs']} envs, the one count run"
    )
    return (
        f"- {entry['implementation']} {which}: "
        f"{_seconds_range(entry)}, {seconds / base:.2g}x the hybrid plan's time ({low:.2g}-{high} "
        f"if either streak began up to one interval earlier), at {speed:.2g}x its env steps/s "
        f"and {needed}."
    )


def _update_share(best: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    runs = [
        r
        for r in rows
        if (r["implementation"], r["num_envs"]) == (best["implementation"], best["num_envs"])
    ]
    total = sum(sum(r["phase_seconds"].values()) for r in runs)
    share = sum(r["phase_seconds"].get("update", 0.0) for r in runs) / total
    return (
        f"- In the fastest configuration the update took {share:.0%} of training: faster "
        f"environments can shorten only the other {1 - share:.0%}."
    )


def gaps_table(gaps: Sequence[dict[str, Any]]) -> Markdown:
    """One row per environment of :func:`~hetero_tutorial.studies.env_agreement.one_step_gaps`."""
    columns = {
        "env_id": "environment",
        "num_envs": "envs",
        "steps": "steps",
        "obs": "largest obs gap",
        "reward": "largest reward gap",
        "ends_disagreed": "episode ends that disagree",
        "episodes_ended": "episodes ended",
    }
    return markdown_table(
        gaps, columns, {"obs": "{:.1e}".format, "reward": "{:.1e}".format}, timed=False
    )


SETTINGS_COLUMNS = {
    "implementation": "implementation",
    "placement": "placement",
    "num_envs": "envs",
    "num_steps": "steps per env",
    "minibatch_size": "minibatch",
    "update_epochs": "epochs",
    "total_steps": "budget (env steps)",
}
"""The PPO settings notebook 07 shows per configuration (field: header)."""
CONFIG_FIELDS = ("num_envs", "num_steps", "minibatch_size", "update_epochs", "total_steps")
"""Of those, the PPOConfig fields."""


def settings_table(num_envs: Sequence[int]) -> Markdown:
    """The PPO settings and budget of every configuration :func:`device_ppo.measure_ppo`
    trains: each batched implementation at each of ``num_envs``, Gymnasium's at its tuned N."""
    rows = []
    for design in device_ppo.implementations():
        sizes = list(num_envs) if design.batched else [None]
        for n in sizes:
            config = device_ppo.config_for(design, n)
            rows.append(
                {"implementation": design.name, "placement": design.placement.name}
                | {key: getattr(config, key) for key in CONFIG_FIELDS}
            )
    return markdown_table(rows, SETTINGS_COLUMNS, {"total_steps": "{:,}".format}, timed=False)


def ppo_table(summary: Sequence[dict[str, Any]]) -> Markdown:
    """One row per configuration of :func:`device_ppo.ppo_summary`: seeds solved (by
    :func:`rule_words`' rule), median seconds to solve and their range over seeds, env
    steps/s and host<->device copies per env step."""

    def spread(entry: dict[str, Any]) -> str | None:
        if entry["solved"] < 2:
            return "one seed" if entry["solved"] else None
        return f"{entry['seconds_to_475_low']:.3g}-{entry['seconds_to_475_high']:.3g}"

    rows = [entry | {"range": spread(entry)} for entry in summary]
    columns = {
        "implementation": "implementation",
        "placement": "placement",
        "num_envs": "envs",
        "solved": f"seeds solved ({device_ppo.SOLVED_STREAK} in a row)",
        "seeds": "seeds",
        "median_seconds_to_475": "median s to solve",
        "range": "seeds' range (s)",
        "median_env_steps_per_s": "env steps/s",
        "copies_per_env_step": "host<->device copies per step",
    }
    formats = {
        "median_seconds_to_475": "{:.3g}".format,
        "median_env_steps_per_s": "{:,.0f}".format,
        "copies_per_env_step": "{:.2g}".format,
    }
    return markdown_table(rows, columns, formats)


def reference_findings(record: Record, env_ids: Sequence[str]) -> str:
    """A ``bench.device_envs`` record's conclusions: its machine, the throughput findings per
    environment, and PPO's findings where the record has a PPO study."""
    parts = [record.hardware]
    parts += [throughput_findings(record.data["rows"], env_id) for env_id in env_ids]
    ppo = record.data.get("ppo")
    if ppo:  # the summary recomputed from the rows: a record older than its fields has them
        parts.append(ppo_findings(device_ppo.ppo_summary(ppo["rows"]), ppo["rows"]))
    return "\n".join(parts)


def folded(shown: Markdown, summary: str) -> Markdown:
    """A Markdown output (a source listing) folded under ``summary``: optional detail."""
    return Markdown(f"<details><summary>{summary}</summary>\n\n{shown.data}\n\n</details>")


def cleanrl_line(record: Record | None, point: str = "8 envs") -> str:
    """Our all-device PPO against CleanRL in the device PPO race, with the settings it ran at,
    and where notebook 01's other race against CleanRL (``bench.ppo_peers``) differs."""
    found = record and peer_races.pair(record, point, "ours", "cleanrl", "steps_per_s")
    if not found:
        return "No race against CleanRL recorded at these settings."
    setting = record.data.get("setting", {})
    ratio = peer_races.round_ratio(found)
    return (
        f"- CleanRL at RL Zoo's settings ({point} x {setting.get('num_steps')} steps, "
        f"{setting.get('update_epochs')} epochs, minibatches of {setting.get('minibatch_size')}) "
        f"against our all-device PPO: ours {ratio:.2f}x its env steps/s (rounds "
        f"{found['low']:.2f}-{found['high']:.2f}x). Notebook 01's race is another: CleanRL's own "
        "settings, our PPO on Gymnasium's environments."
    )


def solved_line(record: Record | None) -> str:
    """Per point of the rejax race, how many rounds each learner solved (three evaluations in
    a row at 475): its seconds to solve compare only the rounds both sides solved."""
    if record is None:
        return ""
    data, parts = record.data, []
    for point, runs in data.get("runs", {}).items():
        counted = {
            who: (sum(bool(r.get("solved")) for r in rounds), len(rounds))
            for who, rounds in runs.items()
            if rounds and "evaluations" in rounds[0]  # SB3 and CleanRL race speed only
        }
        if not counted:
            continue
        size = point.split()[0]
        budget = data["points"][size]["eval_every"] * data["points"][size]["spans"]
        if not any(solved for solved, _ in counted.values()):
            parts.append(f"at {point} none of {', '.join(counted)} solved within {budget:,} steps")
            continue
        shown = ", ".join(f"{who} {solved} of {n}" for who, (solved, n) in counted.items())
        parts.append(f"at {point}, rounds solved: {shown}")
    if not parts:
        return ""
    return (
        f"- Solved ({data.get('hold', 3)} evaluations in a row at {data.get('goal', 475):.0f}): "
        + "; ".join(parts)
        + ". Seconds to solve compare only the rounds both sides solved."
    )
