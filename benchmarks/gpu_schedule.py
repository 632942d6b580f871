"""What the GPU reference run does, step by step: one command line each, and its time budget.

A step's dry run is its full run with smaller budgets and nothing else changed: the
arguments that choose a code path (``path``: placements, ``--native --blocking``, the
backend, the frames) are written once and used by both; only the arguments listed in
:data:`BUDGET_OPTIONS` (how many steps, repeats, widths, ...) differ. Each step's budget
is 1.5x the seconds it is expected to take on the GPU machine (one H200, 16 cores), and
the arithmetic behind each expectation is written beside it (:data:`STEPS`), from these
unit costs:

* a fresh Python process that imports PyTorch and this package and starts CUDA (context,
  cuBLAS): :data:`START_S`;
* one eager PyTorch operator on small CUDA tensors, launched from Python: :data:`OP_S`
  (launch-bound: the GPU finishes it before the host has launched the next);
* CPU work: what it took on one core of the 2-core machine of ``data/reference/``
  (``amd-epyc-2-cores``: DDPG 170 steps/s, PPO 12,900 steps/s on CartPole), taken as
  the speed of one of the GPU machine's cores (servers' cores are seldom slower).

The steps come in two parts, each one device call of at most :data:`PART_LIMIT_S`
(five minutes) with its set-up: part 1 holds the GPU test slice and every record the
claims ledger reads, most wanted first: the crossover under everything else (C1-C3), the
baseline's copies and transfer share (C4, C7, C5), the hybrid split (C6, C9), the
allocator (C10, C11, C13), and last the DDPG seeds of C8, which run on the CPU alone;
part 2 the notebooks' other reference sections (the native flame graph, the overlapped
pipeline, batched environments, replay buffers, compile and CUDA graphs: notebook 08).
``python benchmarks/gpu_reference.py --schedule`` prints the table below; a test keeps the
two equal.

=====================  ====  ========  ======  ===================================================
step                   part  expected  budget  arithmetic (seconds)
=====================  ====  ========  ======  ===================================================
setup                  1, 2        10      15  pip --no-deps --target of the 12 wheels (8 MiB) ~6;
                                               nvidia-smi twice ~1
tests                  1           30      45  8 xdist workers start 8; 6 learning runs to 475 at
                                               once, the slowest hybrid PPO: at most 391
                                               iterations x (32 CPU steps x 0.25 ms + 10 gradient
                                               steps x 130 ops x OP_S) 8 + evaluations 3; the
                                               other 14 tests beside them 11
crossover              1           13      20  CPU grid 6 (notebook 00 here); 49 GPU cells x 12
                                               calls launch-bound 1; steps and updates 1; START_S
ppo                    1           10      15  100 iterations x (32 x (45 ops x OP_S + 8 envs x 15
                                               us) + 10 x 130 ops x OP_S) = 100 x 33 ms 3.3;
                                               counted first iteration 1; evaluations 0.5; START_S
ddpg_placements        1           18      27  1000 updates each: all-CPU at 170/s 5.9, hybrid
                                               1000 x 2.5 ms, all-accelerator 1000 x 2.3 ms;
                                               random steps, counted copies, greedy episodes 1.7;
                                               START_S
profile                1           17      26  160 iterations x 33 ms 5.3 (py-spy does not pause
                                               it); reading and drawing 1; 2 x START_S
hybrid                 1           38      57  side by side 5 iterations x (0.7 + 0.5) 6 +
                                               evaluations 1; sweep 2 widths x 2 thread counts x 3
                                               iterations x (0.7 + 0.5) 14.4 + all-CPU rows 6.2;
                                               counted iterations 2 x 2; copy costs 1; START_S
allocator              1           35      53  3 MLPs x (decision 1.5 + 8 configurations x 4
                                               iterations x (128 x 0.5 ms + 80 x 1.3 ms)) 21; CNN:
                                               decision 1.5 + 8 x 4 x 0.2 6.4; START_S + ROMs 1
ddpg-seeds             1           17      26  9 processes at once, one core each: 2000 updates at
                                               170/s 11.8, random steps and greedy episodes 0.6;
                                               start without CUDA, nine at once 4
profile-native         2           13      20  40 iterations x 33 ms x 1.2 (py-spy pauses for each
                                               native sample) 1.6; reading and drawing 1; 2 x
                                               START_S
pipeline               2           30      45  sequential 40 x 60 ms 2.4; 4 overlapped runs 6 + 10
                                               worker starts, 4 at once, 16; greedy episodes 0.8;
                                               START_S
device_envs            2           56      84  throughput 36 cells x 0.3 + two 4,096-env
                                               SyncVectorEnvs 2; PPO to 475, seed 0: SyncVectorEnv
                                               80k steps 7 + evaluations 2.5, batched on CPU and
                                               on CUDA 256 envs: 2 x (37 x 0.22 + 18 evaluations x
                                               0.25) 25; counted iterations 3; START_S
buffers                2           28      42  fill 1e6 transitions, two Python designs 2 x 8 +
                                               tensor 1; 1e4 and 1e5 2; timings to CPU and CUDA 2;
                                               batch correlation and pinned sampling 2; START_S
compile                2           62      93  16 Inductor compiles (act 2 sizes, env step 2 sizes
                                               x 2 graphs, update, PPO's rollout and minibatch
                                               steps, DDPG's update; each in compile and
                                               cudagraphs) x COMPILE_S 48; interleaved timing 3;
                                               PPO 6 iterations x 3 modes x 33 ms 0.6; DDPG 1,000
                                               random and 100 updating steps x 3 modes 1.4;
                                               fallback to eager if Triton is missing; START_S
part 1 total                      188     284
part 2 total                      199     299
=====================  ====  ========  ======  ===================================================

``OP_S`` is 10 us, ``START_S`` 5 s and ``COMPILE_S`` (one small torch.compile) 3 s. The
summary of a run prints each step's measured seconds beside its expectation, so the next
run can correct these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

START_S = 5.0
"""A fresh Python process: import PyTorch and the package, start CUDA (seconds)."""
COMPILE_S = 3.0
"""One torch.compile of a small graph with Triton kernels, cache cold, on a 16-core server
(seconds; a 2-core laptop takes 5-15 s for the first)."""
OP_S = 10e-6
"""One eager, launch-bound PyTorch operator on CUDA, from Python (seconds)."""
MARGIN = 1.5
"""A step's budget over its expected seconds."""
PART_LIMIT_S = 300.0
"""The most one part (one device call) may budget, its set-up included (seconds)."""

BUDGET_OPTIONS = frozenset({
    "--steps", "--repeats", "--widths", "--batch-sizes", "--capacities", "--iterations",
    "--sweep-iterations", "--sweep-threads", "--num-steps", "--epochs", "--cnn-envs",
    "--cnn-steps", "--cnn-minibatch", "--cnn-epochs", "--budget", "--learning-starts",
    "--hidden", "--batch-size", "--workers", "--seeds", "--seed", "--eval-episodes",
    "--num-envs", "--seconds-per-repeat", "--ppo-num-envs", "--ppo-seeds", "--ppo-steps",
    "--numprocesses", "--act-sizes", "--env-step-sizes", "--update-sizes", "--ppo-iterations",
    "--ddpg-steps",
})  # fmt: skip
"""Options that say how much work a step does, never which code it runs."""


@dataclass(frozen=True)
class Step:
    """One step: its command's arguments (the code path, then the budgets), and its time."""

    name: str
    part: int
    bench: str | None
    """the ``bench`` it runs (None: the set-up, the test slice, the DDPG seeds)"""
    path: tuple[str, ...]
    """arguments that choose what code runs: the same in the full and the dry run"""
    full: tuple[str, ...]
    """budget arguments of the full run (:data:`BUDGET_OPTIONS` only)"""
    dry: tuple[str, ...]
    """budget arguments of the dry run, on the CPU"""
    expected_s: float
    """seconds it should take on the GPU machine (see the module's table)"""

    @property
    def budget_s(self) -> float:
        """Its timeout: :data:`MARGIN` times its expected seconds, rounded up."""
        return float(math.ceil(MARGIN * self.expected_s))

    def arguments(self, dry: bool) -> list[str]:
        """Its arguments in the full or the dry run: the path, then that run's budgets."""
        return [*self.path, *(self.dry if dry else self.full)]


DDPG_DESIGNS = ("transition", "trajectory", "tensor")

STEPS = (
    Step("setup", 0, None, (), (), (), 10),
    Step("tests", 1, None, ("-m", "accelerator"), ("--numprocesses", "8"),
         ("--numprocesses", "0"), 30),
    Step("crossover", 1, "crossover", (), (),
         ("--widths", "32", "--batch-sizes", "1", "--repeats", "2"), 13),
    Step("ppo", 1, "ppo", ("--placement", "all-accelerator"), ("--steps", "25600"),
         ("--steps", "512"), 10),
    Step("ddpg_placements", 1, "ddpg_placements", (),
         ("--steps", "2000", "--learning-starts", "1000"),
         ("--steps", "500", "--learning-starts", "300", "--hidden", "16"), 18),
    Step("profile", 1, "profile", ("--placement", "all-accelerator"), ("--steps", "40960"),
         ("--steps", "1024"), 17),
    Step("hybrid", 1, "hybrid", (),
         ("--steps", "10240", "--widths", "128", "512", "--sweep-iterations", "2"),
         ("--steps", "4096", "--widths", "16", "--sweep-iterations", "1", "--sweep-threads", "1"),
         38),
    Step("allocator", 1, "allocator", (),
         ("--widths", "64", "256", "1024", "--num-steps", "128", "--iterations", "3"),
         ("--widths", "8", "--num-steps", "16", "--epochs", "1", "--cnn-envs", "1",
          "--cnn-steps", "4", "--cnn-minibatch", "4", "--cnn-epochs", "1", "--iterations", "1",
          "--budget", "0.2"), 35),
    Step("ddpg-seeds", 1, "ddpg", (),
         ("--steps", "3000", "--learning-starts", "1000", "--seeds", "0", "1", "2"),
         ("--steps", "260", "--learning-starts", "100", "--hidden", "16", "--batch-size", "32",
          "--seeds", "0"), 17),
    Step("profile-native", 2, "profile",
         ("--placement", "all-accelerator", "--native", "--blocking"), ("--steps", "10240"),
         ("--steps", "512"), 13),
    Step("pipeline", 2, "pipeline", ("--backend", "mp", "--max-policy-lag", "0", "1"),
         ("--workers", "1", "4", "--steps", "20480", "--seeds", "0", "--eval-episodes", "3"),
         ("--workers", "1", "--steps", "1024", "--seeds", "0", "--eval-episodes", "1"), 30),
    Step("device_envs", 2, "device_envs", (),
         ("--num-envs", "1", "16", "256", "4096", "65536", "--repeats", "3",
          "--ppo-num-envs", "256", "--ppo-seeds", "0"),
         ("--num-envs", "1", "64", "--repeats", "2", "--seconds-per-repeat", "0.01",
          "--ppo-num-envs", "16", "--ppo-seeds", "0", "--ppo-steps", "2048"), 56),
    Step("buffers", 2, "buffers", (), ("--capacities", "10000", "100000", "1000000",
                                       "--repeats", "9"),
         ("--capacities", "1000", "--repeats", "2"), 28),
    Step("compile", 2, "compile", (),
         ("--act-sizes", "8", "1024", "--env-step-sizes", "64", "65536", "--update-sizes", "256",
          "--repeats", "5", "--ppo-num-envs", "8", "--ppo-iterations", "5", "--ddpg-steps", "100"),
         ("--act-sizes", "8", "--env-step-sizes", "64", "--update-sizes", "64", "--repeats", "2",
          "--ppo-num-envs", "8", "--ppo-iterations", "1", "--ddpg-steps", "10"), 62),
)  # fmt: skip
"""Every step in the order it runs (the set-up starts each part; the test slice opens part 1).

The ``ddpg-seeds`` step runs ``bench ddpg`` once per buffer design and seed, all at once, each
process on a core of its own; its ``--seeds`` is the list of seeds, not a ``bench`` option."""

PARTS = (1, 2)


def steps_of(part: str) -> list[Step]:
    """The steps of ``part`` (``"1"``, ``"2"`` or ``"all"``), the set-up first."""
    if part not in ("1", "2", "all"):
        raise ValueError(f"--part is 1, 2 or all, not {part!r}")
    wanted = PARTS if part == "all" else (int(part),)
    return [step for step in STEPS if step.part == 0 or step.part in wanted]


def total(part: int, of: str) -> float:
    """The part's expected (``of="expected_s"``) or budgeted (``"budget_s"``) seconds."""
    return sum(getattr(step, of) for step in steps_of(str(part)))


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line]


ARITHMETIC = {
    "setup": "pip --no-deps --target of the 12 wheels (8 MiB) ~6; nvidia-smi twice ~1",
    "tests": "8 xdist workers start 8; 6 learning runs to 475 at once, the slowest hybrid PPO: "
    "at most 391 iterations x (32 CPU steps x 0.25 ms + 10 gradient steps x 130 ops x OP_S) 8 "
    "+ evaluations 3; the other 14 tests beside them 11",
    "crossover": "CPU grid 6 (notebook 00 here); 49 GPU cells x 12 calls launch-bound 1; steps "
    "and updates 1; START_S",
    "ppo": "100 iterations x (32 x (45 ops x OP_S + 8 envs x 15 us) + 10 x 130 ops x OP_S) = "
    "100 x 33 ms 3.3; counted first iteration 1; evaluations 0.5; START_S",
    "profile": "160 iterations x 33 ms 5.3 (py-spy does not pause it); reading and drawing 1; "
    "2 x START_S",
    "hybrid": "side by side 5 iterations x (0.7 + 0.5) 6 + evaluations 1; sweep 2 widths x 2 "
    "thread counts x 3 iterations x (0.7 + 0.5) 14.4 + all-CPU rows 6.2; counted iterations "
    "2 x 2; copy costs 1; START_S",
    "ddpg_placements": "1000 updates each: all-CPU at 170/s 5.9, hybrid 1000 x 2.5 ms, "
    "all-accelerator 1000 x 2.3 ms; random steps, counted copies, greedy episodes 1.7; START_S",
    "ddpg-seeds": "9 processes at once, one core each: 2000 updates at 170/s 11.8, random steps "
    "and greedy episodes 0.6; start without CUDA, nine at once 4",
    "allocator": "3 MLPs x (decision 1.5 + 8 configurations x 4 iterations x (128 x 0.5 ms + 80 "
    "x 1.3 ms)) 21; CNN: decision 1.5 + 8 x 4 x 0.2 6.4; START_S + ROMs 1",
    "profile-native": "40 iterations x 33 ms x 1.2 (py-spy pauses for each native sample) 1.6; "
    "reading and drawing 1; 2 x START_S",
    "pipeline": "sequential 40 x 60 ms 2.4; 4 overlapped runs 6 + 10 worker starts, 4 at once, "
    "16; greedy episodes 0.8; START_S",
    "device_envs": "throughput 36 cells x 0.3 + two 4,096-env SyncVectorEnvs 2; PPO to 475, "
    "seed 0: SyncVectorEnv 80k steps 7 + evaluations 2.5, batched on CPU and on CUDA 256 envs: "
    "2 x (37 x 0.22 + 18 evaluations x 0.25) 25; counted iterations 3; START_S",
    "buffers": "fill 1e6 transitions, two Python designs 2 x 8 + tensor 1; 1e4 and 1e5 2; "
    "timings to CPU and CUDA 2; batch correlation and pinned sampling 2; START_S",
    "compile": "16 Inductor compiles (act 2 sizes, env step 2 sizes x 2 graphs, update, PPO's "
    "rollout and minibatch steps, DDPG's update; each in compile and cudagraphs) x COMPILE_S 48; "
    "interleaved timing 3; PPO 6 iterations x 3 modes x 33 ms 0.6; DDPG 1,000 random and 100 "
    "updating steps x 3 modes 1.4; fallback to eager if Triton is missing; START_S",
}
"""How each step's expected seconds were reached (the module's table prints them)."""


def schedule_table() -> str:
    """The schedule as the module docstring's table: step, part, expected, budget, arithmetic."""
    rule = f"{'=' * 21}  {'=' * 4}  {'=' * 8}  {'=' * 6}  {'=' * 51}"
    lines = [rule, f"{'step':<21}  part  expected  budget  arithmetic (seconds)", rule]
    for step in STEPS:
        part = "1, 2" if step.part == 0 else str(step.part)
        text = _wrap(ARITHMETIC[step.name], 51)
        lines.append(
            f"{step.name:<21}  {part:<4}  {step.expected_s:>8.0f}  {step.budget_s:>6.0f}  {text[0]}"
        )
        lines += [f"{'':<47}{more}" for more in text[1:]]
    for part in PARTS:
        expected, budget = total(part, "expected_s"), total(part, "budget_s")
        lines.append(f"{f'part {part} total':<27}  {expected:>8.0f}  {budget:>6.0f}")
    return "\n".join([*lines, rule])
