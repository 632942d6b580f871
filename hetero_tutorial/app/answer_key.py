"""The instructor's key: what a seat should find for each question and exercise, in words.

:mod:`hetero_tutorial.app.answers` turns it into ``docs/answers.md``. An entry says what
the reasoning should reach and where a number lands, never the number itself: ``{name}``
stands for a figure of :data:`hetero_tutorial.app.answers.FIGURES`, drawn from a reference
record (which it names) or from the exercise's own solution. A seat's own figure differs
from a reference machine's; what matters is whether it lands on the same side.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    """The expected answer (or range) of one question or exercise, and what a surprise means."""

    expected: str
    surprise: str


A = Answer
QUESTIONS: dict[tuple[str, int], Answer] = {
    ("00", 1): A(
        "lazy initialisation, the allocator's first blocks, kernel selection (and on a GPU "
        "the context and its caches): paid once; only the per-call dispatch is paid every "
        "iteration. Reference: {timers}.",
        "a first call no slower than the median: the network was already warm (a cell run "
        "twice), or the seat's timer resolution hides a sub-millisecond call.",
    ),
    ("00", 2): A(
        "the seat's own table answers it (reference: {timers}); on a CPU only warm-up "
        "separates them, so either may read lower. On a GPU the naive timer stops when the "
        "work is queued, not done, so it reads too fast.",
        "a naive timer far *slower* than the honest one on a CPU: its cold start (the first "
        "calls) is inside its loop; far faster on a GPU is the missing synchronisation.",
    ),
    ("00", 3): A(
        "seconds per sample fall along a row until the fixed per-call cost is shared out, "
        "then flatten; the arithmetic grows with the batch. Reference: {best_batches}.",
        "a row that never flattens: the grid's largest batch is still overhead-bound (a "
        "fast seat); a jagged row: a busy machine (rerun, or see the doctor's load line).",
    ),
    ("00", 4): A(
        "no: where the accelerator wins depends on the batch as much as on the width, so a "
        "rule by width alone is right for one batch size at most. Without an accelerator "
        "there is no crossover to read: the argument comes from GPU reference records.",
        "a seat that finds the CPU winning everywhere on a GPU machine: tiny batches, or the "
        "GPU still clocked down (a laptop on battery).",
    ),
    ("01", 1): A(
        "two per vector step whatever the number of environments, plus three per rollout: "
        "{rollout_copies}.",
        "a prediction that scales with the number of environments: the vectorised env "
        "batches them, one copy each way per step for all.",
    ),
    ("01", 2): A(
        "a copy is a property of the code (which tensor crosses which device boundary), so "
        "PyTorch's `meta` device, which holds shapes and no data, can count it anywhere; its "
        "time needs the real bus and the real device.",
        "a count that differs from the notebook's: the seat changed the config (steps, "
        "environments) after the counting cell ran.",
    ),
    ("01", 3): A(
        "smaller: the forward pass, for a wide network; larger: every per-step launch and "
        "synchronisation, and the two copies, which a small network cannot amortise.",
        "a seat that expects the GPU to speed up the environment's step: Gymnasium's "
        "environments stay on the host whatever the placement.",
    ),
    ("01", 4): A(
        "at CartPole's sizes each call's fixed cost (dispatch, allocation) outweighs its "
        "arithmetic; once a layer's matrix work dominates a call (hundreds to thousands of "
        "units, large batches) fewer calls stop mattering.",
        "a seat where the tricks make no difference: the update is already compute-bound "
        "there (a very fast CPU), or the run was too short to separate them.",
    ),
    ("02", 1): A(
        "by the source line a sample sits on: a line whose text calls `.to`, `.cpu()` or "
        "`.cuda()` (the table `TRANSFER_PATTERNS`) counts as a transfer. It misses a copy "
        "made inside a function called on another line, and overcounts a line that also "
        "computes. Reference: {transfer_share}.",
        "a share of zero on a GPU seat: py-spy ran without native frames, or refused "
        "(see *When a seat shows* below).",
    ),
    ("02", 2): A(
        "launches are asynchronous: the next line that needs a result waits there for all "
        "queued work, and py-spy charges that wait to it; torch.profiler's device timeline "
        "(or native frames) shows the copy apart from the wait.",
        "a GPU seat whose share is below the CPU's: the profile is dominated by the update "
        "(the queue drained elsewhere), which is the point of the question.",
    ),
    ("02", 3): A(
        "the standard error of a share p from n samples is sqrt(p(1-p)/n): "
        "{samples_needed}. A share near 37% would take thousands.",
        "a seat that quotes its ± as exact: it is a sampling error, and a busy machine adds "
        "an error it does not include.",
    ),
    ("02", 4): A(
        "py-spy for the share of time (it samples, with little overhead); cProfile for call "
        "counts (it counts every call, and inflates the time of small, frequent ones).",
        "a seat that trusts cProfile's times: its per-call overhead makes Python-heavy "
        "code (the rollout loop) look far larger than it is.",
    ),
    ("03", 1): A(
        "when a copy costs nothing (one memory, as on the CPU or Apple silicon), when the "
        "rollout's forward is expensive enough to want the accelerator, or when the update "
        "is too small for one batched copy to be the larger cost. Counted per iteration: "
        "all-accelerator 2 per vector step plus 5 (the rollout's 3, the update's 2): 133 at "
        "quick mode's 64 steps, 1,033 at the tuned 512; hybrid 4 in either mode (the "
        "transfer, the update's 2, the weight sync). References (full mode): "
        "{counted_copies}.",
        "the baseline winning on a CPU-only seat is no surprise: every placement is the "
        "same device there, and the differences are the spread.",
    ),
    ("03", 2): A(
        "GPU kernels (reductions, cuDNN) may sum in another order: floating-point drift "
        "changes an action, then every later step. Compare the spread of returns over seeds, "
        "not single points.",
        "curves that part on a CPU seat: the seed or the thread count differed between the "
        "two runs (the notebook fixes both).",
    ),
    ("03", 3): A(
        "the seat's own table answers it, with a verdict only from 5 paired iterations "
        "(fewer print no verdict). On the 2-core references the learner's update gains from "
        "width 256, the actor's rollout later or not at all: {thread_widths}. The actor "
        "multiplies one row per environment, the learner a minibatch; a classmate's job on "
        "the same cores flattens every gain.",
        "all threads slower at every width: another program holds a core (the guard's "
        "line says so), or the seat's container has fewer cores than it reports.",
    ),
    ("03", 4): A(
        "pinning on the fly allocates page-locked memory and copies into it before the "
        "transfer; pin once, where the storage is allocated (the rollout or replay buffer).",
        "no pinned rows at all: the seat has no CUDA device, where pinned memory has no "
        "meaning; the notebook says so.",
    ),
    ("04", 1): A(
        "patterns A and B the same count, one copy per field (six per batch), and the tensor "
        "buffer one packed copy; so any speed-up of pattern B comes from touching a batch's "
        "segments instead of every transition (Python work), not from fewer switches; on a "
        "CPU seat no copy crosses a device and every design counts 0: {buffers}.",
        "pattern B with fewer copies than pattern A: the buffer was built on another device "
        "than the learner's (a changed parameter), or pattern A was rewritten to copy per "
        "sample.",
    ),
    ("04", 2): A(
        "neighbouring steps are correlated: the batch's gradient points the same way more "
        "often, so the critic overfits the latest trajectory. Reference: {buffers}.",
        "pattern B as stable as the others over few seeds: the spread over three seeds is "
        "wide; the ledger's C8 verdict reads it.",
    ),
    ("04", 3): A(
        "72 -> 53 s saves 26% of the time, so the buffer would have to take over a quarter "
        "of a DDPG step; the recorded rates were {ddpg_rates}.",
        "a seat that finds the buffer a large share: a tiny network (the update is then cheap) "
        "or sampling into another device.",
    ),
    ("04", 4): A(
        "a time limit stops the episode in a state that still has a future; bootstrapping "
        "from it keeps the value target honest. Treating it as terminal teaches the critic "
        "that every 200th Pendulum state is worth zero.",
        "a seat that finds no difference in a short run: the error shows as a biased value "
        "near the limit, which the greedy return hides for a while.",
    ),
    ("05", 1): A(
        "it times a cold, unsynchronised call (the naive timer of 00) and leaves out the "
        "copies a placement implies: the first picks on noise, the second picks a device "
        "that loses once its copies are paid.",
        "a seat that names the threshold itself: a threshold is a choice, not a measurement error.",
    ),
    ("05", 2): A(
        "the advantages on a CPU seat's accelerator after a GPU rollout: slower alone, "
        "cheaper than copying the rollout back; in general, a small phase that sits between "
        "two phases on the other device.",
        "an example with no copy in it: the point is that copies are part of a phase's price.",
    ),
    ("05", 3): A(
        "iterations to repay = measuring seconds / seconds its choice saves per iteration "
        "against the best fixed plan. The question's 5% is a what-if: at 5% the references' "
        "measuring would repay in {repaid}. What a seat's run says is 05's last line: on a "
        "CPU-only seat the five plans are one configuration, the choice saves nothing, and "
        "the measuring never repays; with an accelerator it repays only where the choice "
        "beat the best fixed plan past the noise.",
        "a seat that quotes the 5% what-if as what happened: 05's last line says whether the "
        "allocator saved anything per iteration.",
    ),
    ("05", 4): A(
        "without hysteresis a placement flips whenever two plans sit within the noise, and "
        "each flip pays a move; a margin too wide keeps a plan long after it lost.",
        "a curriculum with no switch at all on a CPU seat: every plan is one device there.",
    ),
    ("06", 1): A(
        "sequentially the rollout workers idle during the update and the learner during the "
        "rollout; the ideal is (R + U) / max(R, U) from the sequential run's R and U. Copies "
        "and wake-ups put a run below it; a run above it had faster phases of its own than "
        "the sequential run (the notebook's line names them). Measured: {overlap}.",
        "an overlapped plan slower than the sequential one: fewer free cores than workers + 1 "
        "(a one-core seat, a busy machine), or a lag bound of 0.",
    ),
    ("06", 2): A(
        "PPO's ratio of new to old probabilities and its clipping correct for a policy one "
        "update old; without the acting policy's stored log-probabilities the ratio would "
        "compare the wrong policies and the clip would guard nothing.",
        "lags above the bound: impossible by the schedule; a lag of 0 throughout means the "
        "update was faster than a rollout, so nothing overlapped.",
    ),
    ("06", 3): A(
        "about one: 64 cores over 30 seats leaves two each, one for the learner and one for "
        "a worker (set `HETERO_TUTORIAL_THREADS` or `taskset` per seat).",
        "a seat that answers 64 / 30 rounded up: a worker beside a learner on one core costs both.",
    ),
    ("06", 4): A(
        "when rollouts are long or run on other machines: its start (reference: "
        "{ray_start}) and a copy per rollout through the object store pay off over many "
        "rollouts, or across nodes.",
        "Ray faster than processes on one machine: within the spread, or the processes' "
        "start was inside the timed part.",
    ),
    ("07", 1): A(
        "rounding differs from the first step and a chaotic system (a pole at the tipping "
        "point) grows any difference exponentially; stepped from the same state in float64 "
        "the two agree to rounding, which is the test that matters.",
        "a difference at the first step beyond float32's rounding: a bug in a batched "
        "formula, worth a look.",
    ),
    ("07", 2): A(
        "the environment's step is only part of an iteration: the update (and the actor) "
        "stay; Amdahl's law bounds the gain by the share the step held.",
        "PPO solving sooner by the step's own factor: the run was dominated by the step "
        "(tiny network, many environments).",
    ),
    ("07", 3): A(
        "a step's time is a fixed part plus a part per environment; an accelerator's fixed "
        "part (launches) is larger and its per-environment part smaller, so the lines cross "
        "only at large N.",
        "a fit with a negative fixed part: too few sizes, or a busy run at one of them.",
    ),
    ("07", 4): A(
        "physics that is a fixed formula (CartPole, Pendulum, MuJoCo-like rigid bodies with "
        "a tensor engine) batches; branching, text or external simulators (games, web) do not "
        "and stay on the host with their policy beside them.",
        "a seat that batches an environment with per-episode branching: each branch becomes "
        "a mask, which works until the branches diverge in cost.",
    ),
    ("08", 1): A(
        "the reference gives {compiled_act} and {compiled_env}: one actor call holds a few "
        "small layers, one batched step a few element-wise formulas. A compiled call adds a "
        "guard check on the way in, and gains by fusing operations.",
        "a compiled call slower than eager: at the smallest call the guards can cost more "
        "than the fusion saves; at a larger one they cannot, and the summary's line says the "
        "account broke (the time is in the compiled code); or the cache recompiled.",
    ),
    ("08", 2): A(
        "break-even = compile seconds / seconds saved per call: {break_even}. A two-minute "
        "exercise rarely repays a compile of seconds.",
        "a compile of minutes: a cold cache on a slow disk; the second run reuses it.",
    ),
    ("08", 3): A(
        "a graph replays recorded device work without Python; a value read on the host needs "
        "the work done first and can change the path. The batched CartPole's action check "
        "(`if bad.any():` in `_check_action_values`) would break it: `check_actions=False` "
        "removes that host sync.",
        "a seat with no CUDA: graphs are CUDA-only, so the question is answered from the code.",
    ),
    ("08", 4): A(
        "the loop itself, the environment's reset logic, logging and the optimiser's "
        "scheduling; compiling them needs the whole iteration as one function on device "
        "tensors, as rejax does in JAX.",
        "a seat that compiled the whole loop and found it slower: recompiles per iteration "
        "(a Python number that changes).",
    ),
    ("09", 1): A(
        "the rollout and PPO's update take most of a round at the series' settings (2,048 "
        "steps, 2 updates of 1,024 + 1,024 rows); the discriminator's updates grow with the "
        "rows and updates per round, the generator's update with its width.",
        "the discriminator's updates the largest phase: the seat's CPU is slow at large "
        "matrix products, or another program shared its cores (the guard's line says which).",
    ),
    ("09", 2): A(
        "where the per-row cost flattens, as notebook 00's heat map flattens along a row: "
        "the fixed cost of each call is paid off and the arithmetic dominates; the update "
        "runs three products per layer where a forward pass runs one, so it flattens later.",
        "a cost per row that rises at the largest rows: the matrices left the caches.",
    ),
    ("09", 3): A(
        "the same sweep on the GPU, interleaved with the CPU's: the update at 1,024 rows and "
        "width 64 first (the series' setting), then the rows where the lines cross.",
        "a seat that judges C12 from the whole round only: the rollout, on the CPU anyway, "
        "dilutes what moving the discriminator changes.",
    ),
    ("10", 1): A(
        "running the GPU path on the CPU measures the CPU twice; calling it a GPU result "
        "would put a number on a claim nobody measured.",
        "a seat that finds a CPU-vs-GPU claim judged without an accelerator: the verdict "
        "comes from a reference record, which the ledger names.",
    ),
    ("10", 2): A(
        "the ledger's row names the machine and its figures; most differences are in size "
        "(an overhead smaller on a fast CPU), a few in direction (a placement that wins only "
        "with a GPU), and only those can reverse on another machine.",
        "every claim held on a reference machine: read the spreads; a narrow win may be "
        "within them.",
    ),
    ("10", 3): A(
        "a quieter machine first when the spread is wide from interference (the guard's "
        "line); more repeats when the repeats agree but the effect is small.",
        "a verdict that flips between two runs on one seat: the effect sits inside the "
        "spread, so neither verdict is one.",
    ),
    ("10", 4): A(
        "{speedup_and_saved}: state both, or the speed-up alone with its spread; "
        "percentages of time saved do not compare across ratios.",
        "28% from the exercise: the learner computed (72 - 53) / 72 rounded up, or mixed the two.",
    ),
}
"""Each discussion question's entry, by (notebook number, question number on the page)."""

EXERCISES: dict[str, Answer] = {
    "best_batch_per_width": A(
        "a dict from each width to its cheapest batch size per sample, from the seat's own "
        "grid (quick mode measures fewer batch sizes); reference, full mode: {best_batches}.",
        "the largest batch for every width on a slow seat is normal; the wrong device's rows "
        "kept in means the filter on `device` is missing.",
    ),
    "rollout_copies": A("{rollout_copies}.", "a product with `num_envs`: see 01's Q1."),
    "inclusive_share": A(
        "a fraction between 0 and 1; on the baseline's samples the environments' step is "
        "part of the rollout's share ({transfer_share}).",
        "a share above 1: a recursive function's sample counted twice.",
    ),
    "rollout_bytes": A(
        "{rollout_bytes} (float32: per transition the observation, the action (one number, "
        "for CartPole's discrete action and Pendulum's torque) and six scalars: 4 bytes x "
        "steps x environments x (observation + 1 + 6)).",
        "a factor of 4 off: numbers instead of bytes; off by the action width: a discrete "
        "action counted as its number of choices.",
    ),
    "ring_slots": A(
        "the slots from `next_slot` on, wrapped to 0 after the last: exact.",
        "off by one at the wrap: `capacity` used where `capacity - 1` is the last slot.",
    ),
    "td_target": A(
        "reward + gamma x (1 - terminated) x next_q: exact; `truncated` plays no part.",
        "a target that ignores the bootstrap at a time limit: the mask built from "
        "`terminated or truncated` (see 04's Q4).",
    ),
    "plan_seconds": A(
        "the sum of the phases' rows, plus the transfer and weight sync when the devices "
        "differ: the allocator's own estimate of that plan.",
        "the same price for every plan on a CPU seat is right: one device, no copies.",
    ),
    "ideal_speedup": A(
        "(R + U) / max(R / W_eff, U) with W_eff = min(workers, cores - 1, lag bound): between "
        "1 and 2 for one worker, exactly 1 for a lag bound of 0 or a one-core seat; compare "
        "it with the measured {overlap}.",
        "above 2 with one worker: W_eff not capped by the cores.",
    ),
    "predicted_lags": A(
        "a count of rollouts per lag, none above the bound; with a bound of 0 every rollout "
        "has lag 0.",
        "a lag above the bound: the schedule's rule that rollout k waits for k - L is missing.",
    ),
    "wrap_angle": A(
        "angles in [-pi, pi): exact to float32 rounding.",
        "wrong for negative angles: C's `fmod` sign used where `torch.remainder` is needed.",
    ),
    "pendulum_cost": A(
        "wrap(theta)² + 0.1 theta_dot² + 0.001 u², the torque clipped first: exact.",
        "wrong only in the torque case: clipping forgotten.",
    ),
    "largest_gain": A(
        "the piece whose range's low end is highest: {largest_gain} on the reference "
        "record; `'update'` on the corner case.",
        "`'act'` on the corner case: ranked by the median, not by what every repeat agreed on.",
    ),
    "speedup_and_time_saved": A(
        "{speedup_and_saved}; a slowdown gives a speed-up below 1 and a negative saving.",
        "the two numbers swapped, or a saving of 28%: see 09's Q4.",
    ),
}
"""Each notebook exercise's entry, by its name (the name its cell passes to ``check``)."""


@dataclass(frozen=True)
class SeatSign:
    """Something a seat shows in class, and what it means there."""

    shows: str
    means: str


SEAT_SIGNS = (
    SeatSign(
        "py-spy refused (`py-spy is installed but could not sample a process here`).",
        "the container forbids ptrace (Docker without `--cap-add SYS_PTRACE` on an old "
        "kernel, or `kernel.yama.ptrace_scope` 2 or 3: `cat /proc/sys/kernel/yama/"
        "ptrace_scope`), or macOS, where py-spy needs root. Notebook 02 says so and its "
        "cProfile and torch.profiler sections still run; pair the seat with a neighbour's "
        "flame graph.",
    ),
    SeatSign(
        "Ray slow, or refused to start.",
        "Ray's start took {ray_start} on two idle cores and grows on a loaded seat; the "
        "series gives each user its own temp folder ({ray_temp}), so another user's "
        "`/tmp/ray` no longer stops it (`python -m hetero_tutorial doctor` prints the Ray "
        "line). In a container a small `/dev/shm` makes Ray's object store fall back to "
        "disk (Ray warns): start it with `--shm-size=2g`. Without Ray installed, notebook "
        "06 skips its Ray part and the processes' part teaches the same lesson.",
    ),
    SeatSign(
        "a GPU.",
        "expected, and welcome: the placements resolve to different devices, so more "
        "configurations run (longer than the run-time table) and the CPU-vs-GPU claims "
        "become measurable there. Its figures will not match the CPU references; ask the "
        "seat to record them (`benchmarks/gpu_reference.py`, see the hardware page).",
    ),
    SeatSign(
        "one usable core.",
        "the thread sweeps have one point, overlapping cannot help (06's ideal is 1.0 with "
        "no core beside the learner), and a worker competes with the learner. The doctor's "
        "Threads line says what caps the cores (affinity, a container quota, "
        "`HETERO_TUTORIAL_THREADS`); pair the seat, or run that block from the book.",
    ),
    SeatSign(
        "a busy machine (a study's line says `measured on a busy machine ...: not judged`).",
        "the busy-machine guard withheld the verdict: the study's threads waited for CPUs "
        "that other programs held (more than {wait_share} s per second they ran, while "
        "others kept its CPUs busy; a study that waits only for its own processes, as 06's "
        "workers beside its learner, is still judged), the "
        "hypervisor or a container quota held them back (the line names which), or its "
        "figures sat far from this CPU's reference. Others busy on cores the study does not "
        "use do not count. Close other kernels (a notebook left running keeps its threads), "
        "browser tabs and classmates' jobs on a shared server, or pin the kernel to free "
        "cores; `python -m hetero_tutorial doctor` shows the reading; then rerun the cell. "
        "The numbers printed stay, only the verdict is withheld.",
    ),
)
"""The symptoms the sheet's "When a seat shows" section explains."""
