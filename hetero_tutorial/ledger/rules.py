"""The rules that turn one machine's records into a verdict per claim, and the shared vocabulary.

Each rule reads the records it names (``Claim.needs`` in :mod:`~hetero_tutorial.ledger.claims`)
and returns a :class:`Verdict`: ``held`` / ``did not hold`` only when the whole spread of
the measurement's repeats lies on one side of the rule's threshold, ``no clear effect``
when it straddles it, ``no verdict`` with fewer than five repeats (one has no spread),
``not measurable here`` when the machine
cannot answer the claim. A count (copies per step) has no noise, so it is judged as it is.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hetero_tutorial.core.results import Record
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.studies.crossover_grid import crossover_cells, crossover_widths
from hetero_tutorial.studies.ddpg_buffers import unpaired_reason
from hetero_tutorial.studies.sweeps import speedups


class Status(str, enum.Enum):
    HELD = "held"
    NOT_HELD = "did not hold"
    NO_CLEAR_EFFECT = "no clear effect"
    NO_VERDICT = "no verdict"
    NOT_MEASURABLE = "not measurable here"
    MISSING = "not measured yet"


@dataclass(frozen=True)
class Verdict:
    """A claim judged on one machine's measurements."""

    status: Status
    measured: str
    """The measured figure, in words (or why there is none)."""
    ratio: float | None = None
    """The measured counterpart of ``Claim.article_ratio``, when there is one."""


Records = dict[str, list[Record]]
"""One machine's records, by kind (several for kinds saved once per placement or buffer)."""


# ---------------------------------------------------------------------------------------------
# Helpers the rules share
# ---------------------------------------------------------------------------------------------


def _accelerated(record: Record) -> bool:
    """Whether the record's machine had an accelerator."""
    return bool(record.provenance["fingerprint"].get("accelerator"))


def _no_accelerator() -> Verdict:
    return Verdict(Status.NOT_MEASURABLE, "no accelerator: nothing to compare the CPU with")


class _NoMatchingRecord(Exception):
    """A rule's record kind is there, but not the record it needs (e.g. another placement's)."""


def _newest(records: Records, kind: str, **match: Any) -> Record:
    """The newest record of ``kind`` whose fields equal ``match``."""
    found = [r for r in records.get(kind, []) if all(r.data.get(k) == v for k, v in match.items())]
    if not found:
        wanted = ", ".join(f"{k} {v}" for k, v in match.items())
        raise _NoMatchingRecord(f"needs a {kind} record with {wanted}")
    return max(found, key=lambda r: r.provenance["date"])


def _held(condition: bool) -> Status:
    return Status.HELD if condition else Status.NOT_HELD


def _against(spread: Spread, threshold: float, above: bool = True) -> Status:
    """Held (did not hold) only when the whole spread lies on the claim's (other) side of
    ``threshold``; no clear effect when it straddles it; no verdict without a spread (one
    repeat), which cannot tell an effect from noise, or from too few repeats."""
    side = spread.side(threshold, above)
    if side is None:
        return Status.NO_CLEAR_EFFECT if spread.decides else Status.NO_VERDICT
    return _held(side)


def _combined(statuses: Iterable[Status]) -> Status:
    """Did not hold if any part did not; held if every part held; no verdict if a part had
    none; else no clear effect."""
    statuses = set(statuses)
    if Status.NOT_HELD in statuses:
        return Status.NOT_HELD
    if statuses == {Status.HELD}:
        return Status.HELD
    return Status.NO_VERDICT if Status.NO_VERDICT in statuses else Status.NO_CLEAR_EFFECT


def _note(status: Status, spread: Spread, unit: str = "{:.2f}x") -> str:
    """The noise a verdict could not see past (or its absence), where the effect is unclear."""
    return spread.noise(unit) if status in (Status.NO_CLEAR_EFFECT, Status.NO_VERDICT) else ""


def _ratio_verdict(
    spread: Spread, threshold: float, text: str, above: bool = True, after: str = ""
) -> Verdict:
    """A ratio rule's verdict (see :func:`_against`): ``text`` with ``{}`` where the ratio and
    its spread go, then the noise if unclear, then ``after``."""
    status = _against(spread, threshold, above)
    return Verdict(status, text.format(spread) + _note(status, spread) + after, spread.value)


# ---------------------------------------------------------------------------------------------
# The rules, one per claim
# ---------------------------------------------------------------------------------------------


def c1(records: Records) -> Verdict:
    record = _newest(records, "bench.crossover")
    costs = record.data["policy_step"]
    accel = next((name for name in costs if name not in ("cpu", "env_only")), None)
    if accel is None or not _accelerated(record):
        return _no_accelerator()
    cpu_ms, accel_ms = costs["cpu"]["median_s"] * 1e3, costs[accel]["median_s"] * 1e3
    text = f"CPU {cpu_ms:.3f} ms, {accel} {accel_ms:.3f} ms per step: {{}} the CPU's time"
    return _ratio_verdict(Spread.of_medians(costs[accel], costs["cpu"]), 1.0, text)


C1_CPU_S = 0.0003
"""The article's CPU figure for one CartPole step with a 128-unit policy, in seconds."""
C1_CPU_BAND = (0.5, 2.0)
"""C1's CPU half holds when this CPU's step lies within a factor of 2 of the article's."""


def c1_cpu(records: Records) -> Verdict:
    """C1's CPU half, on its own: the CPU's step against the article's 0.3 ms, on any machine.

    A figure compared across runs drifts from run to run more than one run's IQR shows, so
    the range spans every recorded run in ``records`` (its verdict past the article's band
    only when every run lies past it), and says how far apart the runs were. One run that
    timed the step twice spans both timings, widened by the drift between them (a third
    timing could drift as far again); one timing alone gives no verdict.
    """
    runs = sorted(records["bench.crossover"], key=lambda r: r.provenance["date"])
    runs = list({r.provenance["date"]: r for r in runs}.values())  # one copy of each run
    steps = [r.data["policy_step"]["cpu"] for r in runs]
    cpu = steps[-1]
    again = runs[-1].data.get("policy_step_again", {}).get("cpu")
    if len(runs) == 1 and again is not None:  # the run timed its step twice: both count
        both = Spread.of_timings(cpu, again)
        drift, wide = Spread.drift(cpu, again), Spread.across_runs(cpu, again)
        spread = Spread(wide.value / C1_CPU_S, wide.low / C1_CPU_S, wide.high / C1_CPU_S, wide.how)
        figure = (
            f"CPU {cpu['median_s'] * 1e3:.3f} then {again['median_s'] * 1e3:.3f} ms per step, "
            f"timed twice in one run: {both.low * 1e3:.3f}-{both.high * 1e3:.3f} ms, and the "
            f"two drifted {drift:.2f}x apart, so another run could lie that much further out"
        )
    elif len(runs) == 1:  # one timing: notebook 00 shows runs drift past one timing's IQR
        spread = Spread(cpu["median_s"] / C1_CPU_S, how="one timing")
        figure = (
            f"CPU {cpu['median_s'] * 1e3:.3f} ms per step, one timing (IQR "
            f"{cpu.get('iqr_s', 0) * 1e3:.3f} ms), whose drift to another run is unmeasured"
        )
    else:
        medians = [step["median_s"] for step in steps]
        low, high = min(medians), max(medians)
        spread = Spread(cpu["median_s"] / C1_CPU_S, low / C1_CPU_S, high / C1_CPU_S,
                        f"over {len(runs)} recorded runs")  # fmt: skip
        widest = max(step.get("iqr_s", 0.0) for step in steps)
        figure = (
            f"CPU {cpu['median_s'] * 1e3:.3f} ms per step in the newest run; "
            f"{low * 1e3:.3f}-{high * 1e3:.3f} ms over {len(runs)} recorded runs "
            f"({runs[0].provenance['date'][:16]} to {runs[-1].provenance['date'][:16]}): "
            f"{high / low:.1f}x apart, where one run's IQR is at most {widest * 1e3:.3f} ms"
        )
    low_band, high_band = C1_CPU_BAND
    status = _combined((_against(spread, low_band), _against(spread, high_band, above=False)))
    faster = f"{1 / spread.value:.1f}x faster than" if spread.value < 1 else "slower than"
    text = (
        f"{figure}, {{}} the article's 0.3 ms: {faster} the article's CPU (half a claim: the "
        "GPU half needs an accelerator)"
    )
    return Verdict(status, text.format(spread) + _note(status, spread), spread.value)


def c2(records: Records) -> Verdict:
    record = _newest(records, "bench.crossover")
    speedups = record.data["value_update_speedup"]
    if not speedups or not _accelerated(record):
        return _no_accelerator()
    accel, speedup = next(iter(speedups.items()))
    costs = record.data.get("value_update", {})
    spread = Spread.of_medians(costs["cpu"], costs[accel]) if accel in costs else Spread(speedup)
    return _ratio_verdict(spread, 1.0, f"{accel} {{}} the CPU's speed")


C3_BATCH = 256
"""The batch size at which C3's rule of thumb is checked (a typical update minibatch)."""


def c3(records: Records) -> Verdict:
    """C3 from the forward grid: where the accelerator gets cheaper per sample past the noise.

    The crossover lies between the first width the CPU does not clearly win and the first
    the accelerator clearly wins (:func:`crossover_cells`); held only when that whole
    interval lies in 128..512, unclear when the noise leaves it reaching past either end.
    """
    record = _newest(records, "bench.crossover")
    grid = record.data.get("grid", [])
    cells = crossover_cells(grid)
    if not cells or not _accelerated(record):
        return _no_accelerator()
    batch = min(cells, key=lambda b: abs(b - C3_BATCH))
    earliest = next((w for w, wins in cells[batch].items() if wins is not False), None)
    latest = next((w for w, wins in cells[batch].items() if wins), None)
    unclear = [str(w) for w, wins in cells[batch].items() if wins is None]
    others = ", ".join(f"batch {b}: {w or 'never'}" for b, w in crossover_widths(grid).items())
    text = f"accelerator cheaper past the noise from width {latest or 'never'} at batch {batch}"
    text += f" ({others})"
    text += f"; within the noise at width {', '.join(unclear)}" if unclear else ""
    if latest is not None and earliest >= 128 and latest <= 512:
        return Verdict(Status.HELD, text)
    cpu_throughout = earliest is None or earliest > 512
    if cpu_throughout or (latest is not None and latest < 128):
        return Verdict(Status.NOT_HELD, text)
    return Verdict(Status.NO_CLEAR_EFFECT, text)


def _counted(record: Record, placement: str = "all-accelerator") -> dict[str, Any] | None:
    """The copies a record counted for ``placement`` (on an accelerator, or on ``meta``)."""
    counted = record.data.get("counted_copies") or {}
    if "copies_per_env_step" in counted:  # a bench.ppo record: one placement
        return counted if counted.get("placement", placement) == placement else None
    return counted.get(placement)


def _legacy_copies(ppo: Record, ddpg: Record) -> tuple[float, float] | None:
    """Copies per step as records made before copies were counted on ``meta`` held them
    (measured on an accelerator only)."""
    if not _accelerated(ppo) or not _accelerated(ddpg):
        return None
    row = next(r for r in ddpg.data["rows"] if r["placement"] == "all-accelerator")
    return ppo.data["copies_per_env_step"], row["copies_per_1000_samples"] / 1000


def c4(records: Records) -> Verdict:
    """Copies per environment step of all-accelerator PPO and DDPG: counts, so no noise."""
    ppo = _newest(records, "bench.ppo", placement="all-accelerator")
    ddpg = _newest(records, "bench.ddpg_placements")
    counted = _counted(ppo), _counted(ddpg)
    if None not in counted:
        copies = tuple(c["copies_per_env_step"] for c in counted)
        where = {c["counted_on"] for c in counted}
        on = ", ".join(sorted(where))
        on = "meta, a stand-in for an accelerator" if where == {"meta"} else on
    elif (legacy := _legacy_copies(ppo, ddpg)) is not None:
        copies, on = legacy, "the accelerator"
    else:
        return Verdict(
            Status.NOT_MEASURABLE,
            "no accelerator, and no copies counted on the meta device in these records "
            "(notebooks 01 and 04 count them)",
        )
    text = f"PPO {copies[0]:.3f}, DDPG {copies[1]:.3f} copies per environment step, "
    text += f"both all-accelerator, counted on {on}"
    buffer = (counted[1] or {}).get("buffer")
    text += f" (DDPG's {buffer} buffer)" if buffer else ""
    text += (
        "; the counts turn on the environments per forward pass and the buffer's design, "
        "which the claims ledger's C4 section counts at other settings"
    )
    return Verdict(_held(copies[0] > copies[1]), text, copies[0] / max(copies[1], 1e-12))


C5_BAND = (0.37 / 1.5, 0.37 * 1.5)
"""C5 holds when the measured transfer share is within a factor of 1.5 of the article's 37%."""


def c5(records: Records) -> Verdict:
    # Sampled without pausing, though on a CPU such sampling drops some of the rollout's
    # stacks (notebook 02, section 11): a paused host lets the GPU catch up during each pause,
    # which shrinks the very waits C5 counts, while a host blocked in a wait holds its stack
    # still, so the stacks dropped are running Python's and can only make the share read high.
    record = _newest(records, "bench.profile", placement="all-accelerator", nonblocking=True)
    if record.data.get("accelerator_missing") or not _accelerated(record):
        return _no_accelerator()
    data = record.data
    share, stderr = data["transfer_share"], data.get("transfer_share_stderr")
    timer = data.get("timer_sync_share")  # None: an older record, with the timer's syncs inside
    timer_text = "timer's syncs inside" if timer is None else f"+{timer:.0%} in the timer's syncs"
    text = f"{share:.0%} of samples in copies and waits for data ({timer_text}; hidden "
    text += f"{data['hidden']})"
    # +- two standard errors: where another recording of the same run could land
    spread = Spread.about(share, None if stderr is None else 4 * stderr)
    low, high = C5_BAND
    status = _combined((_against(spread, low), _against(spread, high, above=False)))
    return Verdict(status, text + _note(status, spread, "{:.0%}"))


def c6(records: Records) -> Verdict:
    record = _newest(records, "bench.hybrid")
    if not _accelerated(record):
        return _no_accelerator()
    runs = record.data["runs"]
    baseline, hybrid = runs["all-accelerator"], runs["hybrid"]
    speedup = baseline["median_iteration_seconds"] / hybrid["median_iteration_seconds"]
    # The plans' iterations ran interleaved, so they pair up (the first: warm-up, copy count).
    times = [run.get("iteration_seconds", [])[1:] for run in (baseline, hybrid)]
    use = ", ".join(
        f"{name} {run['utilisation']['process_cpu_percent']:.0f}/"
        + (f"{gpu:.0f}" if (gpu := run["utilisation"]["gpu_percent"]) is not None else "n/a")
        for name, run in (("baseline", baseline), ("hybrid", hybrid))
    )
    spread = Spread.of_pairs(*times, value=speedup, per="iteration")
    return _ratio_verdict(
        spread, 1.1, "hybrid {} the baseline's speed", after=f"; CPU %/GPU %: {use}"
    )


def c7(records: Records) -> Verdict:
    record = _newest(records, "bench.ddpg_placements")
    if not _accelerated(record):
        return _no_accelerator()
    rows = {row["placement"]: row for row in record.data["rows"]}
    cpu = rows["all-cpu"]
    switching = max(
        (rows[name] for name in ("hybrid", "all-accelerator")),
        key=lambda row: row["copies_per_1000_samples"],
    )
    # The placements ran in interleaved turns, so each turn's speeds pair up.
    turns = [row.get("chunk_steps_per_s", []) for row in (switching, cpu)]
    ratio = switching["env_steps_per_s"] / cpu["env_steps_per_s"]
    spread = Spread.of_pairs(*turns, value=ratio, per="turn")
    text = (
        f"{switching['placement']}: {switching['copies_per_1000_samples']:.0f} copies per 1000 "
        "environment steps, {} the all-CPU speed"
    )
    return _ratio_verdict(spread, 1.0, text, above=False)


def c8(records: Records) -> Verdict:
    transition = _newest(records, "bench.ddpg", buffer="transition")
    trajectory = _newest(records, "bench.ddpg", buffer="trajectory")
    unpaired = unpaired_reason(transition.data, trajectory.data)
    if unpaired is not None:  # no pairs to read: the two runs answer different questions
        return Verdict(Status.MISSING, f"no paired DDPG runs: {unpaired}; run notebook 04")
    # Speed as notebook 04 reads it: env steps/s, every step timed (a short run has few whole
    # episodes, so their seconds are a noisier figure of the same speed).
    speedup = trajectory.data["env_steps_per_s"] / transition.data["env_steps_per_s"]
    spreads = (transition.data["eval_return_spread"], trajectory.data["eval_return_spread"])
    buffers = (transition, trajectory)
    seeds = min(len(record.data["seeds"]) for record in buffers)
    stability = "one seed, so no spread over seeds to compare"
    if seeds > 1:
        stability = f"spread of greedy returns over {seeds} seeds {spreads[0]:.0f} (transition) vs "
        stability += f"{spreads[1]:.0f} (trajectory)"
    # The designs ran side by side (interleaved) for each seed, so their ratios pair up.
    by_seed = [[run["env_steps_per_s"] for run in r.data["runs"]] for r in buffers[::-1]]
    spread = Spread.of_pairs(*by_seed, value=speedup, per="seed")
    text = "trajectory buffer {} the transition buffer's env steps/s"
    return _ratio_verdict(spread, 1.1, text, after=f"; {stability}")


def _stands_for(row: dict[str, Any]) -> list[str]:
    """The placements a sweep row was measured for (several, where they ran the same code)."""
    return row.get("stands_for", [row["placement"]])


def c9(records: Records) -> Verdict:
    record = _newest(records, "bench.hybrid")
    if not _accelerated(record):
        return _no_accelerator()
    # The hybrid's speed relative to the baseline, each at its fastest CPU thread count.
    rows = record.data["width_sweep"]
    advantage = {w: s["hybrid"] for w, s in speedups(rows).items()}
    small = min(advantage, key=lambda w: abs(w - 128))
    large = min(advantage, key=lambda w: abs(w - 512))
    if small == large:
        return Verdict(Status.MISSING, "the width sweep needs widths near 128 and near 512")
    change = advantage[large] / advantage[small] - 1
    text = (
        f"hybrid vs baseline: {advantage[small]:.2f}x at width {small}, "
        f"{advantage[large]:.2f}x at {large}, {change:+.0%}: the ratio {{}}"
    )
    fastest = [  # the four timings behind the ratio, each plan at its fastest thread count
        min(
            (r for r in rows if r["width"] == width and name in _stands_for(r)),
            key=lambda r: r["seconds_per_iteration"],
        )
        for width in (small, large)
        for name in ("all-accelerator", "hybrid")
    ]
    parts = [(row["seconds_per_iteration"], row.get("iqr_s")) for row in fastest]
    return _ratio_verdict(Spread.of_quotient(1 + change, parts), 0.9, text, above=False)


def _slowdown(row: dict[str, Any]) -> Spread:
    """The allocator's slowdown on one network with the spread of its paired iterations
    (exactly 0..0 where it chose the best fixed configuration itself; unmeasured after one
    iteration). Older records, without paired iterations: exact where the slowdown is 0 (the
    same configuration), else +- half the spread of identical plans."""
    if "slowdown_low" in row:
        if row["slowdown_low"] is None:
            return Spread(row["slowdown"], how="one iteration")
        return Spread(row["slowdown"], row["slowdown_low"], row["slowdown_high"], "per iteration")
    if row["slowdown"] == 0:
        return Spread.about(0.0, 0.0, "the same configuration")
    return Spread.about(row["slowdown"], row.get("same_devices_spread"))


def c10(records: Records) -> Verdict:
    record = _newest(records, "bench.allocator")
    if not _accelerated(record):
        return _no_accelerator()
    rows = [row for row in record.data["criterion"] if row["network"].startswith("mlp")]
    # Held where the whole spread of the allocator's slowdown lies within 5% (exactly 0 where
    # it chose the best fixed configuration itself), did not hold where it lies beyond.
    by_row = {r["network"]: _against(_slowdown(r), 0.05, False) for r in rows}
    worst = max(rows, key=lambda row: row["slowdown"])
    within = sum(status is Status.HELD for status in by_row.values())
    text = f"allocator within 5% of the best fixed plan past the noise on {within} of {len(rows)} "
    text += "MLPs (worst: "
    text += f"{worst['slowdown']:+.0%} on {worst['network']}"
    if worst.get("slowdown_low") is not None:
        text += f", per iteration {worst['slowdown_low']:+.0%}..{worst['slowdown_high']:+.0%})"
    elif worst.get("same_devices_spread") is not None:  # an older record
        text += f", where identical plans differ by {worst['same_devices_spread']:.0%})"
    else:
        text += ")"
    unclear = [name for name, status in by_row.items() if status is Status.NO_CLEAR_EFFECT]
    text += f"; within the measured noise on {', '.join(unclear)}" if unclear else ""
    unjudged = [name for name, status in by_row.items() if status is Status.NO_VERDICT]
    text += f"; no verdict (one iteration) on {', '.join(unjudged)}" if unjudged else ""
    return Verdict(_combined(by_row.values()), text)


def c11(records: Records) -> Verdict:
    record = _newest(records, "bench.allocator")
    if not _accelerated(record):
        return _no_accelerator()
    cnn = [row for row in record.data["criterion"] if row["network"].startswith("cnn")]
    if not cnn:
        return Verdict(Status.MISSING, "the allocator record has no CNN row")
    saved = cnn[0]["saved_vs_fixed_rule"]
    text = f"allocator {saved:+.0%} time saved against the fixed rule on {cnn[0]['network']}"
    ratio = 1 / (1 - saved) if saved < 1 else None
    if saved == 0:  # the fixed rule's own configuration: nothing saved, and no noise in that
        return Verdict(Status.NOT_HELD, text + " (the fixed rule's configuration)", ratio)
    if cnn[0].get("saved_low") is not None:  # the paired iterations' spread
        spread = Spread(saved, cnn[0]["saved_low"], cnn[0]["saved_high"], "per iteration")
    else:  # an older record: +- half of identical plans'
        spread = Spread.about(saved, cnn[0].get("same_devices_spread"))
    status = _against(spread, 0.10)
    return Verdict(status, text + _note(status, spread, "{:.0%}"), ratio)


C12_WIDTH, C12_ROWS = 64, 1_024
"""C12's setting: the article's 64 hidden units, and the series' rows per discriminator
update (:class:`~hetero_tutorial.rl.gail.config.GAILConfig`'s ``disc_rows``)."""


def _c12_spread(sweep: list[dict[str, Any]], accel: str, **setting: Any) -> Spread | None:
    """The CPU's seconds per discriminator update over ``accel``'s, at ``setting``."""
    at = {r["device"]: r for r in sweep if all(r[k] == v for k, v in setting.items())}
    if "cpu" not in at or accel not in at:
        return None
    return Spread.of_medians(at["cpu"], at[accel])


def c12(records: Records) -> Verdict:
    record = _newest(records, "bench.gail")
    sweep, accel = record.data["sweep"], record.data.get("accelerator")
    at_width = sorted((r for r in sweep if r["device"] == "cpu" and r["width"] == C12_WIDTH
                       and not r["penalty"]), key=lambda r: r["rows"])  # fmt: skip
    if accel is None or not _accelerated(record):
        cpu = ", ".join(f"{r['median_s'] * 1e3:.3g} ms at {r['rows']:,}" for r in at_width)
        return Verdict(
            Status.NOT_MEASURABLE,
            f"no accelerator: one update of the CPU's {C12_WIDTH}-unit discriminator (penalty "
            f"off) takes {cpu} rows per side, what an accelerator would have to beat",
        )
    spread = _c12_spread(sweep, accel, width=C12_WIDTH, rows=C12_ROWS, penalty=0.0)
    if spread is None:
        raise _NoMatchingRecord(f"needs a bench.gail sweep at {C12_ROWS} rows, width {C12_WIDTH}")
    status = _against(spread, 1.0)
    settings = sorted({(r["width"], r["penalty"], r["rows"]) for r in sweep})
    faster = [
        f"{rows:,} rows, width {width}{', penalty' if penalty else ''}"
        for width, penalty, rows in settings
        if (found := _c12_spread(sweep, accel, width=width, penalty=penalty, rows=rows)) is not None
        and found.side(1.0) is True
    ]
    text = (
        f"discriminator update at {C12_ROWS:,} rows, width {C12_WIDTH}: {accel} {{}} the "
        f"CPU's speed. Faster on {accel} past the noise at: "
        + ("; ".join(faster) if faster else "no setting measured")
    )
    return Verdict(status, text.format(spread) + _note(status, spread), spread.value)


def c13(records: Records) -> Verdict:
    record = _newest(records, "bench.allocator")
    if not _accelerated(record):
        return _no_accelerator()
    timeline = record.data["curriculum"]["timeline"]
    on_accelerator = [stage["update"] != "cpu" for stage in timeline]
    moved = not on_accelerator[0] and on_accelerator[-1]
    text = " -> ".join(f"{stage['stage']}: {stage['decision']}" for stage in timeline)
    return Verdict(_held(moved), text)
