"""What the GPU reference run does, step by step: one command line each, and its time budget.

A step's dry run is its full run with smaller budgets and nothing else changed: the
arguments that choose a code path (``path``: placements, ``--native --blocking``, the
backend, the pieces) are written once and used by both; only the arguments listed in
:data:`BUDGET_OPTIONS` (how many steps, repeats, widths, ...) differ.

The whole schedule is one device call: ``--part all`` ends by :data:`DEADLINE_S`, at least
:data:`CALL_SLACK_S` inside the :data:`CALL_LIMIT_S` one command may run, after one set-up.
Each step's expected seconds on the GPU machine (one H200, 16 cores) come from one rate
(:data:`RATES`): its work in that rate's units times the rate's seconds per unit, plus the
fixed seconds its arithmetic names; its budget is its margin (1.5 or more) times that,
rounded up. A rate is either recorded (read off the reference record it names, of
``data/reference/amd-epyc-2-cores``, one core of which stands for one of the GPU machine's:
servers' cores are seldom slower; a test reads each back from its record) or, where no
record holds it yet, assumed, and then said so; a step that has never run on a GPU gets
a wider margin. The order puts the records the claims ledger reads first (part 1: the
crossover under everything else, C1-C3; the baseline's copies and transfer share, C4, C7,
C5; the hybrid split, C6, C9; the allocator, C10, C11, C13; the DDPG seeds of C8), then
the GPU test slice, then the notebooks' other reference sections (part 2: the native flame
graph, the overlapped pipeline, batched environments, replay buffers, and compile and CUDA
graphs in two halves, each with a record of its own). ``python benchmarks/gpu_reference.py
--schedule`` prints the table below; a test keeps the two equal.

===============  ====  ======  ======  ========  =====================  ============================
step             part  budget  margin  expected  source rate            arithmetic (seconds)
===============  ====  ======  ======  ========  =====================  ============================
setup            0          8    1.5x         5  5 s a process start    pip --no-deps --target of 4
                                                 (assumed)              wheels (6 MiB) and
                                                                        nvidia-smi twice: about one
                                                                        process start
crossover        1         20    1.5x        13  5 s a process start    CPU grid 6 (notebook 00
                                                 (assumed)              here); 49 GPU cells x 12
                                                                        calls launch-bound 1; steps
                                                                        and updates 1; 1 start
ppo              1         15    1.5x        10  10 us a CUDA op        100 iterations x (32 x 45 +
                                                 (assumed)              10 x 130) ops 274,000;
                                                                        25,600 env steps x 15 us
                                                                        0.4; counted first iteration
                                                                        1; evaluations 0.5; a start
                                                                        5
ddpg_placements  1         26    1.5x        17  172 DDPG steps/s       1000 all-CPU updates; hybrid
                                                 (ddpg.tensor)          1000 x 2.5 ms,
                                                                        all-accelerator 1000 x 2.3
                                                                        ms; random steps, counted
                                                                        copies, greedy episodes 1.7;
                                                                        a start 5
profile          1         24    1.5x        15  10 us a CUDA op        160 iterations x 2,740 ops
                                                 (assumed)              (py-spy does not pause it);
                                                                        reading and drawing 1; 2
                                                                        starts 10
hybrid           1         50    1.5x        33  5 s a process start    side by side 5 iterations x
                                                 (assumed)              (0.7 + 0.5) 6 + evaluations
                                                                        1; sweep 2 widths x 2 thread
                                                                        counts x 2 iterations x (0.7
                                                                        + 0.5) 9.6 + all-CPU rows
                                                                        6.2; counted iterations 4;
                                                                        copy costs 1; 1 start
allocator        1         43    1.5x        28  5 s a process start    3 MLPs x (decision 1.5 + 8
                                                 (assumed)              configurations x 3
                                                                        iterations x (128 x 0.5 ms +
                                                                        80 x 1.3 ms)) 15.8; CNN:
                                                                        decision 1.5 + 8 x 3 x 0.2
                                                                        4.8; ROMs 1; 1 start
gail             1         16    1.5x        10  5 s a process start    the discriminator sweep
                                                 (assumed)              alone (no MuJoCo): 3 rows x
                                                                        2 widths x 2 penalties x 7
                                                                        calls, the CPU's side 4.5
                                                                        (0.65 s a pass on one core
                                                                        here), the GPU's 1; a start
                                                                        5
ddpg-seeds       1         25    1.5x        16  172 DDPG steps/s       9 processes at once, one
                                                 (ddpg.tensor)          core each: 2,000 updates;
                                                                        random steps and greedy
                                                                        episodes 0.6; nine starts at
                                                                        once 4
tests            1         52    1.5x        34  2.9 s a compile        the capture tests of
                                                 (compile)              tests/test_compiled.py,
                                                                        started first in a process
                                                                        of their own: 8 cold
                                                                        compiles, 2 x 3 training, a
                                                                        start 5; beside them the
                                                                        slice on 7 xdist workers,
                                                                        shorter (workers start 8, 6
                                                                        learning runs 11, 14 tests
                                                                        11)
profile-native   2         25    2.0x        12  10 us a CUDA op        40 iterations x 2,740 ops x
                                                 (assumed)              1.2 (py-spy pauses for each
                                                                        native sample); reading and
                                                                        drawing 1; 2 starts 10;
                                                                        never timed on a CUDA
                                                                        process (symbol loading):
                                                                        margin 2
overlap          2         46    1.5x        30  5 s a process start    sequential 40 x 60 ms 2.4; 4
                                                 (assumed)              overlapped runs 6 + 10
                                                                        worker starts, 4 at once,
                                                                        16; greedy episodes 0.8; 1
                                                                        start
device_envs      2         75    1.5x        50  12,871 PPO steps/s     PPO to 475, seed 0,
                                                 (ppo.all-accelerator)  SyncVectorEnv 80,000 steps;
                                                                        evaluations 2.5; batched on
                                                                        CPU and on CUDA 256 envs: 2
                                                                        x (37 x 0.22 + 18
                                                                        evaluations x 0.25) 25;
                                                                        throughput 5 sizes x 2
                                                                        repeats x 2 designs x 0.3 6
                                                                        + two 4,096-env
                                                                        SyncVectorEnvs 2; counted
                                                                        iterations 3; a start 5
buffers          2         41    1.5x        27  228,341 tensor adds/s  1e6 transitions (the
                                                 (buffers)              ledger's and the pinned
                                                                        path's capacity; each
                                                                        capacity costs a process
                                                                        start of its own) x 3
                                                                        designs, at the slowest
                                                                        design's rate; the pinned
                                                                        buffer one copy of the
                                                                        filled one; timings to CPU
                                                                        and CUDA 2; batch
                                                                        correlation 2; a start 5;
                                                                        the capacity's own process 5
compile-pieces   2         56    1.5x        37  2.9 s a compile        10 compiles: act 2 sizes,
                                                 (compile)              env step 1 size (64: the
                                                                        65,536 one gave its time to
                                                                        GAIL's sweep) x 2 graphs,
                                                                        update 1 size; each compile
                                                                        and cudagraphs; interleaved
                                                                        timing 3; a start 5
compile-runs     2         46    1.5x        30  2.9 s a compile        8 compiles: all-device PPO's
                                                 (compile)              rollout step and minibatch
                                                                        update, hybrid PPO's update,
                                                                        DDPG's update; each compile
                                                                        and cudagraphs; PPO 6
                                                                        iterations x 3 modes x 33 ms
                                                                        0.6 and DDPG 100 updates x 3
                                                                        modes 1.4; a start 5
total                     568               369                         deadline 570 of 600 s
===============  ====  ======  ======  ========  =====================  ============================

The summary of a run prints each step's measured seconds beside its expectation, so the next
run can replace each assumed rate with a recorded one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CALL_LIMIT_S = 600.0
"""The most one device command may run (seconds)."""
CALL_SLACK_S = 30.0
"""How far inside :data:`CALL_LIMIT_S` the run ends: the archive's last write and the
transfer back need the rest (30 s at least)."""
DEADLINE_S = CALL_LIMIT_S - CALL_SLACK_S
"""When a full ``--part all`` ends at the latest (seconds after it starts)."""
MIN_MARGIN = 1.5
"""The least a step's budget may be over its expected seconds."""
PY_SPY_SLACK_S = 8.0
"""Of a profile step's budget, what py-spy's own timeout leaves to the bench process: its
start and the reading and drawing of the samples (seconds)."""


@dataclass(frozen=True)
class Rate:
    """A unit cost the schedule's expectations are made of, and where it comes from."""

    seconds_per_unit: float
    unit: str
    """what one unit is (a DDPG step, a compile, ...)"""
    shown: str
    """the rate as the table shows it (``172 DDPG steps/s``)"""
    source: str
    """the record it was read from, less the ``bench.`` of its file (``ddpg.tensor``), or
    ``assumed``"""
    record: str | None = None
    """its file under ``data/reference/amd-epyc-2-cores/``, None where assumed"""


RATES = {
    "start": Rate(5.0, "process start", "5 s a process start", "assumed"),
    "op": Rate(10e-6, "CUDA operator", "10 us a CUDA op", "assumed"),
    "ddpg": Rate(1 / 172, "DDPG step", "172 DDPG steps/s", "ddpg.tensor",
                 "bench.ddpg.tensor.json"),
    "ppo": Rate(1 / 12_871, "PPO env step", "12,871 PPO steps/s", "ppo.all-accelerator",
                "bench.ppo.all-accelerator.json"),
    "compile": Rate(2.9, "compile", "2.9 s a compile", "compile", "bench.compile.json"),
    "adds": Rate(1 / 228_341, "tensor add", "228,341 tensor adds/s", "buffers",
                 "bench.buffers.json"),
}  # fmt: skip
"""The unit costs: a fresh Python process that imports PyTorch and this package and starts
CUDA (assumed: no record times it); one eager, launch-bound PyTorch operator on small CUDA
tensors from Python (assumed); all-CPU DDPG's env steps per second with updates (the tensor
buffer's record); PPO's env steps per second on CartPole with everything on the CPU; the mean
of ``bench compile``'s compile seconds over its pieces' rows (cache as found); the tensor
buffer's adds per second at a capacity of 1e6 (the slowest design)."""

BUDGET_OPTIONS = frozenset({
    "--steps", "--repeats", "--widths", "--batch-sizes", "--capacities", "--iterations",
    "--sweep-iterations", "--sweep-threads", "--num-steps", "--epochs", "--cnn-envs",
    "--cnn-steps", "--cnn-minibatch", "--cnn-epochs", "--budget", "--learning-starts",
    "--hidden", "--batch-size", "--workers", "--seeds", "--seed", "--eval-episodes",
    "--num-envs", "--seconds-per-repeat", "--ppo-num-envs", "--ppo-seeds", "--ppo-steps",
    "--numprocesses", "--act-sizes", "--env-step-sizes", "--update-sizes", "--ppo-iterations",
    "--ddpg-steps", "--rows",
})  # fmt: skip
"""Options that say how much work a step does, never which code it runs."""


@dataclass(frozen=True)
class Step:
    """One step: its command's arguments (the code path, then the budgets), and its time."""

    name: str
    part: int
    """0: the set-up; 1: what the claims ledger reads, and the test slice; 2: the notebooks'"""
    bench: str | None
    """the ``bench`` it runs (None: the set-up, the test slice, the DDPG seeds)"""
    path: tuple[str, ...]
    """arguments that choose what code runs: the same in the full and the dry run"""
    full: tuple[str, ...]
    """budget arguments of the full run (:data:`BUDGET_OPTIONS` only)"""
    dry: tuple[str, ...]
    """budget arguments of the dry run, on the CPU"""
    rate: str
    """the key in :data:`RATES` of the unit cost its work is counted in"""
    work: float
    """the full run's work, in units of its rate"""
    fixed_s: float
    """the seconds its arithmetic adds to the work (the other, smaller costs)"""
    margin: float = MIN_MARGIN
    """its budget over its expected seconds"""

    @property
    def expected_s(self) -> float:
        """Seconds it should take on the GPU machine: its work at its rate, plus the rest."""
        return self.work * RATES[self.rate].seconds_per_unit + self.fixed_s

    @property
    def budget_s(self) -> float:
        """Its timeout: its margin times its expected seconds, rounded up."""
        return float(math.ceil(self.margin * self.expected_s))

    def arguments(self, dry: bool) -> list[str]:
        """Its arguments in the full or the dry run: the path, then that run's budgets."""
        return [*self.path, *(self.dry if dry else self.full)]


DDPG_DESIGNS = ("transition", "trajectory", "tensor")
CAPTURE_TESTS = ("tests/test_compiled.py",)
"""The test files whose accelerator tests capture CUDA graphs (cold compiles): the test step
starts them first, in a process of their own, beside the rest of the slice."""
PPO_OPS = 32 * 45 + 10 * 130
"""CUDA operators in one all-accelerator PPO iteration of the series' default (32 rollout
steps of 45 operators, 10 gradient steps of 130)."""

STEPS = (
    Step("setup", 0, None, (), (), (), "start", 1, 0),
    Step("crossover", 1, "crossover", (), (),
         ("--widths", "32", "--batch-sizes", "1", "--repeats", "2"), "start", 1, 8),
    Step("ppo", 1, "ppo", ("--placement", "all-accelerator"), ("--steps", "25600"),
         ("--steps", "512"), "op", 100 * PPO_OPS, 0.4 + 1 + 0.5 + 5),
    Step("ddpg_placements", 1, "ddpg_placements", (),
         ("--steps", "2000", "--learning-starts", "1000"),
         ("--steps", "500", "--learning-starts", "300", "--hidden", "16"), "ddpg", 1000,
         2.5 + 2.3 + 1.7 + 5),
    Step("profile", 1, "profile", ("--placement", "all-accelerator"), ("--steps", "40960"),
         ("--steps", "1024"), "op", 160 * PPO_OPS, 1 + 10),
    Step("hybrid", 1, "hybrid", (),
         ("--steps", "10240", "--widths", "128", "512", "--sweep-iterations", "1"),
         ("--steps", "4096", "--widths", "16", "--sweep-iterations", "1", "--sweep-threads", "1",
          "2"), "start", 1, 6 + 1 + 9.6 + 6.2 + 4 + 1),
    Step("allocator", 1, "allocator", (),
         ("--widths", "64", "256", "1024", "--num-steps", "128", "--iterations", "2"),
         ("--widths", "8", "--num-steps", "16", "--epochs", "1", "--cnn-envs", "1",
          "--cnn-steps", "4", "--cnn-minibatch", "4", "--cnn-epochs", "1", "--iterations", "1",
          "--budget", "0.2"), "start", 1, 15.8 + 1.5 + 4.8 + 1),
    Step("gail", 1, "gail", ("--sweep-only",),
         ("--rows", "1024", "4096", "16384", "--widths", "64", "256", "--repeats", "5"),
         ("--rows", "64", "--widths", "16", "--repeats", "1"), "start", 1, 4.5 + 1),
    Step("ddpg-seeds", 1, "ddpg", (),
         ("--steps", "3000", "--learning-starts", "1000", "--seeds", "0", "1", "2"),
         ("--steps", "260", "--learning-starts", "100", "--hidden", "16", "--batch-size", "32",
          "--seeds", "0"), "ddpg", 2000, 0.6 + 4),
    Step("tests", 1, None, ("-m", "accelerator"), ("--numprocesses", "7"),
         ("--numprocesses", "0"), "compile", 8, 2 * 3 + 5),
    Step("profile-native", 2, "profile",
         ("--placement", "all-accelerator", "--native", "--blocking"), ("--steps", "10240"),
         ("--steps", "512"), "op", 40 * PPO_OPS * 1.2, 1 + 10, margin=2.0),
    Step("overlap", 2, "overlap", ("--backend", "mp", "--max-policy-lag", "0", "1"),
         ("--workers", "1", "4", "--steps", "20480", "--seeds", "0", "--eval-episodes", "3"),
         ("--workers", "1", "2", "--steps", "1024", "--seeds", "0", "--eval-episodes", "1"),
         "start", 1, 2.4 + 6 + 16 + 0.8),
    Step("device_envs", 2, "device_envs", (),
         ("--num-envs", "1", "16", "256", "4096", "65536", "--repeats", "2",
          "--ppo-num-envs", "256", "--ppo-seeds", "0"),
         ("--num-envs", "1", "64", "--repeats", "2", "--seconds-per-repeat", "0.01",
          "--ppo-num-envs", "16", "--ppo-seeds", "0", "--ppo-steps", "2048"),
         "ppo", 80_000, 2.5 + 25 + 6 + 2 + 3 + 5),
    Step("buffers", 2, "buffers", (), ("--capacities", "1000000", "--repeats", "9"),
         ("--capacities", "1000", "--repeats", "2"), "adds", 3 * 1_000_000, 2 + 2 + 5 + 5),
    Step("compile-pieces", 2, "compile", ("--pieces", "act", "env_step", "update", "--no-ppo",
                                          "--tag", "pieces"),
         ("--act-sizes", "8", "1024", "--env-step-sizes", "64", "--update-sizes", "256",
          "--repeats", "5", "--ddpg-steps", "0"),
         ("--act-sizes", "8", "--env-step-sizes", "64", "--update-sizes", "64", "--repeats", "2",
          "--ddpg-steps", "0"), "compile", 10, 3 + 5),
    Step("compile-runs", 2, "compile", ("--pieces", "--tag", "runs"),
         ("--repeats", "5", "--ppo-num-envs", "8", "--ppo-iterations", "5", "--ddpg-steps", "100"),
         ("--repeats", "2", "--ppo-num-envs", "8", "--ppo-iterations", "1", "--ddpg-steps", "10"),
         "compile", 8, 0.6 + 1.4 + 5),
)  # fmt: skip
"""Every step in the order it runs (the set-up first, the ledger's records next).

The ``ddpg-seeds`` step runs ``bench ddpg`` once per buffer design and seed, all at once, each
process on a core of its own; its ``--seeds`` is the list of seeds, not a ``bench`` option."""

PARTS = (1, 2)

ARITHMETIC = {
    "setup": "pip --no-deps --target of 4 wheels (6 MiB) and nvidia-smi twice: about one "
    "process start",
    "crossover": "CPU grid 6 (notebook 00 here); 49 GPU cells x 12 calls launch-bound 1; steps "
    "and updates 1; 1 start",
    "ppo": "100 iterations x (32 x 45 + 10 x 130) ops 274,000; 25,600 env steps x 15 us 0.4; "
    "counted first iteration 1; evaluations 0.5; a start 5",
    "ddpg_placements": "1000 all-CPU updates; hybrid 1000 x 2.5 ms, all-accelerator 1000 x "
    "2.3 ms; random steps, counted copies, greedy episodes 1.7; a start 5",
    "profile": "160 iterations x 2,740 ops (py-spy does not pause it); reading and drawing 1; "
    "2 starts 10",
    "hybrid": "side by side 5 iterations x (0.7 + 0.5) 6 + evaluations 1; sweep 2 widths x 2 "
    "thread counts x 2 iterations x (0.7 + 0.5) 9.6 + all-CPU rows 6.2; counted iterations "
    "4; copy costs 1; 1 start",
    "allocator": "3 MLPs x (decision 1.5 + 8 configurations x 3 iterations x (128 x 0.5 ms + 80 "
    "x 1.3 ms)) 15.8; CNN: decision 1.5 + 8 x 3 x 0.2 4.8; ROMs 1; 1 start",
    "gail": "the discriminator sweep alone (no MuJoCo): 3 rows x 2 widths x 2 penalties x 7 "
    "calls, the CPU's side 4.5 (0.65 s a pass on one core here), the GPU's 1; a start 5",
    "ddpg-seeds": "9 processes at once, one core each: 2,000 updates; random steps and greedy "
    "episodes 0.6; nine starts at once 4",
    "tests": "the capture tests of tests/test_compiled.py, started first in a process of their "
    "own: 8 cold compiles, 2 x 3 training, a start 5; beside them the slice on 7 xdist "
    "workers, shorter (workers start 8, 6 learning runs 11, 14 tests 11)",
    "profile-native": "40 iterations x 2,740 ops x 1.2 (py-spy pauses for each native sample); "
    "reading and drawing 1; 2 starts 10; never timed on a CUDA process (symbol loading): "
    "margin 2",
    "overlap": "sequential 40 x 60 ms 2.4; 4 overlapped runs 6 + 10 worker starts, 4 at once, "
    "16; greedy episodes 0.8; 1 start",
    "device_envs": "PPO to 475, seed 0, SyncVectorEnv 80,000 steps; evaluations 2.5; batched on "
    "CPU and on CUDA 256 envs: 2 x (37 x 0.22 + 18 evaluations x 0.25) 25; throughput 5 sizes "
    "x 2 repeats x 2 designs x 0.3 6 + two 4,096-env SyncVectorEnvs 2; counted iterations 3; "
    "a start 5",
    "buffers": "1e6 transitions (the ledger's and the pinned path's capacity; each capacity "
    "costs a process start of its own) x 3 designs, at the slowest design's rate; the pinned "
    "buffer one copy of the filled one; timings to CPU and CUDA 2; batch correlation 2; a "
    "start 5; the capacity's own process 5",
    "compile-pieces": "10 compiles: act 2 sizes, env step 1 size (64: the 65,536 one gave "
    "its time to GAIL's sweep) x 2 graphs, update 1 size; each compile and cudagraphs; "
    "interleaved timing 3; a start 5",
    "compile-runs": "8 compiles: all-device PPO's rollout step and minibatch update, hybrid "
    "PPO's update, DDPG's update; each compile and cudagraphs; PPO 6 iterations x 3 modes x "
    "33 ms 0.6 and DDPG 100 updates x 3 modes 1.4; a start 5",
}
"""How each step's work and fixed seconds were counted (the module's table prints them)."""


def steps_of(part: str) -> list[Step]:
    """The steps of ``part`` (``"1"``, ``"2"`` or ``"all"``), the set-up first."""
    if part not in ("1", "2", "all"):
        raise ValueError(f"--part is 1, 2 or all, not {part!r}")
    wanted = PARTS if part == "all" else (int(part),)
    return [step for step in STEPS if step.part == 0 or step.part in wanted]


def total(part: str, of: str) -> float:
    """The part's expected (``of="expected_s"``) or budgeted (``"budget_s"``) seconds."""
    return sum(getattr(step, of) for step in steps_of(part))


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line]


WIDTHS = (15, 4, 6, 6, 8, 21, 28)
"""The table's column widths: step, part, budget, margin, expected, source rate, arithmetic."""


def schedule_table() -> str:
    """The schedule as the module docstring's table: each step's budget, margin, expected
    seconds, the rate they come from (and its source) and the arithmetic."""
    rule = "  ".join("=" * width for width in WIDTHS)
    names = ("step", "part", "budget", "margin", "expected", "source rate", "arithmetic (seconds)")
    head = "  ".join(f"{n:<{w}}" for n, w in zip(names, WIDTHS, strict=True)).rstrip()
    lines = [rule, head, rule]
    for step in STEPS:
        rate = RATES[step.rate]
        source = _wrap(f"{rate.shown} ({rate.source})", WIDTHS[5])
        text = _wrap(ARITHMETIC[step.name], WIDTHS[6])
        cells = (step.name, str(step.part), f"{step.budget_s:.0f}", f"{step.margin:.1f}x",
                 f"{step.expected_s:.0f}")  # fmt: skip
        for row in range(max(len(source), len(text))):
            first = cells if row == 0 else ("",) * 5
            line = "".join(f"{c:<{WIDTHS[0]}}  " if i == 0 else
                           f"{c:<{WIDTHS[1]}}  " if i == 1 else f"{c:>{WIDTHS[i]}}  "
                           for i, c in enumerate(first))  # fmt: skip
            more = (source[row] if row < len(source) else "", text[row] if row < len(text) else "")
            lines.append(f"{line}{more[0]:<{WIDTHS[5]}}  {more[1]}".rstrip())
    budget, expected = total("all", "budget_s"), total("all", "expected_s")
    lines.append(f"{'total':<{WIDTHS[0] + 2 + WIDTHS[1]}}  {budget:>{WIDTHS[2]}.0f}  "
                 f"{'':>{WIDTHS[3]}}  {expected:>{WIDTHS[4]}.0f}  {'':<{WIDTHS[5]}}  "
                 f"deadline {DEADLINE_S:.0f} of {CALL_LIMIT_S:.0f} s")  # fmt: skip
    return "\n".join([*lines, rule])
