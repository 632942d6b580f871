"""The dynamic allocator: decisions follow measurements; cache, hysteresis, budget; CNN path."""

from dataclasses import replace

import gymnasium as gym
import pytest
import torch
from torch import nn

from hetero_tutorial.allocator import cnn, criterion, curriculum, trials
from hetero_tutorial.allocator.allocator import Allocator
from hetero_tutorial.allocator.cnn import CNNConfig, workload
from hetero_tutorial.allocator.fixed_rule import fixed_rule_placement, select_device
from hetero_tutorial.allocator.meter import Cell, LiveMeter
from hetero_tutorial.allocator.pricing import candidate_placements, thread_choices
from hetero_tutorial.allocator.workload import Workload, network_kind, ppo_workload
from hetero_tutorial.app import cli
from hetero_tutorial.core import results
from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.notebook.solutions.dynamic_allocator import plan_seconds
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies.interleave import interleaved_iterations

CPU, GPU = torch.device("cpu"), torch.device("cuda", 0)  # a device name only: nothing runs on it
TINY_PPO = {"num_envs": 2, "num_steps": 8, "minibatch_size": 8, "update_epochs": 1}
TINY_CNN = CNNConfig(
    frames="synthetic", num_envs=2, num_steps=4, minibatch_size=4, update_epochs=1, hidden=16,
    channels=4,
)  # fmt: skip


def mlp(hidden: int = 8) -> Workload:
    return ppo_workload(PPOConfig.tuned("CartPole-v1", hidden=hidden, **TINY_PPO))


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeMeter:
    """Returns ``cost(cell)`` as each sample's seconds and moves the fake clock on by as much."""

    def __init__(self, cost, clock: FakeClock) -> None:
        self.cost, self.clock = cost, clock
        self.samples = 0

    def start(self, devices) -> None:
        pass

    def prepare(self, cells) -> None:
        pass

    def sample(self, cell: Cell) -> float:
        self.samples += 1
        seconds = self.cost(cell)
        self.clock.now += seconds
        return seconds


def faked(cost, **options) -> Allocator:
    """An allocator over the CPU and a (named, never used) GPU whose measurements are ``cost``."""
    clock = FakeClock()
    options.setdefault("devices", [CPU, GPU])
    options.setdefault("threads", (1,))
    made = Allocator(meter=lambda workload: FakeMeter(cost, clock), clock=clock, **options)
    made.fake_clock = clock
    return made


def cheaper_on(device_type: str, copy_s: float = 1e-4):
    """Every phase costs 1 ms on ``device_type``, 2 ms elsewhere; copies cost ``copy_s``."""

    def cost(cell: Cell) -> float:
        if cell.target is not None:
            return copy_s
        return 1e-3 if cell.device.startswith(device_type) else 2e-3

    return cost


def test_the_cheaper_device_wins_and_swapping_the_costs_swaps_the_choice():
    on_gpu = faked(cheaper_on("cuda")).decide(mlp())
    assert (on_gpu.placement.rollout_device, on_gpu.placement.update_device) == (GPU, GPU)
    assert on_gpu.chosen.name == "all-accelerator"
    on_cpu = faked(cheaper_on("cpu")).decide(mlp())
    devices = on_cpu.placement.rollout_device, on_cpu.placement.storage_device
    assert (*devices, on_cpu.placement.update_device) == (
        CPU, CPU, CPU
    )  # fmt: skip
    assert on_cpu.placement.name == "allocator"


def test_a_split_wins_when_each_phase_prefers_another_device_and_copies_are_cheap():
    def cost(cell: Cell) -> float:
        if cell.target is not None:
            return 1e-5
        cpu = cell.device == "cpu"
        return {"rollout": 1e-4 if cpu else 1e-3, "update": 1e-2 if cpu else 1e-3}.get(
            cell.phase, 1e-4
        )

    decision = faked(cost).decide(mlp())
    assert decision.chosen.name == "hybrid"
    assert "one batched copy" in decision.reasons["copies"]


def test_a_placement_cheaper_for_two_phases_is_priced_once_in_the_explanation():
    def cost(cell: Cell) -> float:
        if cell.target is not None:
            return 0.1
        if cell.device == "cpu":
            return 1e-3
        return {"update": 0.9e-3, "rollout": 0.8e-3}.get(cell.phase, 0.05)

    reasons = faked(cost).decide(mlp()).reasons
    total = "its best placement (all-accelerator) costs"
    assert total in reasons["rollout"] and total not in reasons["update"]
    assert "not in all (all-accelerator, above)" in reasons["update"]


def test_copies_are_priced_and_the_explanation_says_so():
    def cost(cell: Cell) -> float:
        if cell.target is not None:
            return 0.1  # expensive copies
        if cell.device == "cpu":
            return 1e-3
        return 0.9e-3 if cell.phase == "update" else 5e-3  # the accelerator wins the update only

    decision = faked(cost).decide(mlp())
    assert decision.chosen.name == "all-cpu"
    assert "is lower for this phase alone" in decision.reasons["update"]
    rows = decision.cost_rows()
    assert {row["phase"] for row in rows} == {
        "rollout", "advantages", "transfer", "update", "weight_sync"
    }  # fmt: skip
    assert decision.candidates[0].total <= decision.candidates[-1].total


def test_a_decision_is_remembered_by_signature_and_remeasured_when_it_changes():
    chooser = faked(cheaper_on("cpu"))
    first = chooser.decide(mlp(8))
    again = chooser.decide(mlp(8))  # a new network object with the same architecture
    assert chooser.measured == 1 and again.from_cache and not first.from_cache
    assert first.measure_seconds > 0 and again.measure_seconds == 0.0  # nothing measured again
    assert again.placement == first.placement
    grown = chooser.decide(mlp(16))
    assert chooser.measured == 2 and not grown.from_cache
    assert grown.signature != first.signature


def test_hysteresis_keeps_the_current_placement_on_a_close_call():
    state = {"gpu_factor": 2.0}

    def cost(cell: Cell) -> float:
        return 1e-3 * (state["gpu_factor"] if cell.device.startswith("cuda") else 1.0)

    chooser = faked(cost, margin=0.05)
    assert chooser.decide(mlp(8)).chosen.name == "all-cpu"
    state["gpu_factor"] = 0.97  # the accelerator is now 3% cheaper: within the margin
    close = chooser.decide(mlp(16))
    assert close.chosen.name == "all-cpu" and close.held
    assert close.candidates[0].name == "all-accelerator"
    assert "Kept from the previous decision" in close.reasons["plan"]
    state["gpu_factor"] = 0.5  # clearly cheaper: switch
    clear = chooser.decide(mlp(32))
    assert clear.chosen.name == "all-accelerator" and not clear.held
    state["gpu_factor"] = 0.97
    assert faked(cost, margin=0.0).decide(mlp(8)).chosen.name == "all-accelerator"


def test_measuring_stops_when_the_budget_is_spent():
    chooser = faked(lambda cell: 0.1, devices=[CPU], budget_s=1.0, max_rounds=50)
    decision = chooser.decide(mlp())  # 3 cells: a round costs 0.3 s
    assert decision.rounds == 3 and decision.measure_seconds <= 1.0
    assert all(row["samples"] == 3 for row in decision.cost_rows())
    capped = faked(lambda cell: 0.01, devices=[CPU], budget_s=10.0, max_rounds=4)
    assert capped.decide(mlp()).rounds == 4
    over = faked(lambda cell: 1.0, devices=[CPU], budget_s=0.5)
    assert over.decide(mlp()).rounds == 1  # the first round always runs


def test_a_thread_count_too_slow_to_measure_in_the_budget_is_left_out():
    chooser = faked(lambda cell: 0.4 * cell.threads, devices=[CPU], threads=(1, 2), budget_s=1.0)
    decision = chooser.decide(mlp())  # one thread's three cells already take 1.2 s
    assert decision.threads == 1 and decision.skipped == ("all-cpu, 2 threads",)
    assert "Not measured within the budget" in decision.reasons["plan"]
    order = [
        (str(c.rollout_device), str(c.update_device), c.threads)
        for c in candidate_placements([CPU, GPU], (1, 2))
    ]
    assert order[:4] == [
        ("cpu", "cpu", 1), ("cpu", "cuda:0", 1), ("cuda:0", "cpu", 1), ("cuda:0", "cuda:0", None)
    ]  # fmt: skip
    assert len(order) == 7  # every device pair first, then the extra thread count


class WarmingMeter(FakeMeter):
    """A cell's warm-up costs one call of it, as the live meter's does."""

    def prepare(self, cells) -> None:
        for cell in cells:
            self.clock.now += self.cost(cell)


def test_on_sixteen_cores_the_decision_keeps_within_its_budget():
    """Five thread counts: each new CPU update is priced at the CPU's cost, not the GPU's."""

    def cost(cell: Cell) -> float:  # a CNN whose CPU update more threads do not speed up
        if cell.target is not None:
            return 2e-3
        if cell.device == "cpu":
            return {"rollout": 5e-3, "advantages": 2e-4, "update": 0.15}[cell.phase]
        return {"rollout": 1e-3, "advantages": 5e-4, "update": 3e-3}[cell.phase]

    clock = FakeClock()
    chooser = Allocator(devices=[CPU, GPU], threads=thread_choices(16), budget_s=1.0,
                        meter=lambda workload: WarmingMeter(cost, clock), clock=clock)  # fmt: skip
    assert chooser.threads == (1, 2, 4, 8, 16)
    decision = chooser.decide(workload(TINY_CNN))
    assert decision.measure_seconds <= chooser.budget_s < criterion.DECISION_LIMIT_S
    assert decision.chosen.name == "all-accelerator"  # every device was measured
    assert "all-cpu, 16 threads" in decision.skipped


def test_without_an_accelerator_it_chooses_the_cpu_thread_count():
    decision = faked(lambda cell: 1e-3 / cell.threads, devices=[CPU], threads=(1, 2)).decide(mlp())
    assert decision.threads == 2 and decision.placement.devices == (CPU,)
    assert "No accelerator" in decision.reasons["plan"]
    assert "by thread count" in decision.reasons["threads"]
    assert thread_choices(1) == (1,) and thread_choices(2) == (1, 2)
    assert thread_choices(6) == (1, 2, 4, 6) and thread_choices(8) == (1, 2, 4, 8)


def test_the_live_meter_times_every_phase():
    meter = LiveMeter(mlp(), target_sample_s=1e-4)
    cells = [
        Cell("rollout", "cpu", 1),
        Cell("advantages", "cpu", 1),
        Cell("update", "cpu", 1),
        Cell("transfer", "cpu", None, "cpu"),
        Cell("weight_sync", "cpu", None, "cpu"),
    ]
    meter.prepare(cells)
    assert all(meter.sample(cell) > 0 and meter.sample(cell) > 0 for cell in cells)
    # the update's optimiser still steps the weights the network uses, after the weight sync
    policy = meter.parts(torch.device("cpu")).learner.policy
    weights = torch.cat([p.detach().flatten() for p in policy.parameters()])
    meter.sample(cells[2])
    after = torch.cat([p.detach().flatten() for p in policy.parameters()])
    assert not torch.equal(weights, after)


@pytest.mark.accelerator
def test_a_live_decision_on_this_machine_is_quick_and_explained():
    decision = Allocator(threads=(1,), budget_s=0.3).decide(mlp())
    assert decision.measure_seconds < 2.0
    expected = "all-cpu" if accelerator() is None else decision.candidates[0].name
    assert decision.chosen.name.startswith(expected)
    assert set(decision.reasons) >= {"plan", "rollout", "storage", "copies", "update"}


def test_the_cnn_path_decides_and_runs_a_ppo_shaped_iteration():
    frames_workload = workload(TINY_CNN)
    assert frames_workload.kind == "cnn" and frames_workload.observation_space.dtype == "uint8"
    decision = Allocator(devices=[CPU], threads=(1,), budget_s=0.3).decide(frames_workload)
    assert decision.workload == "cnn-16" and decision.chosen.label == "all-cpu, 1 thread"
    network = trials.cnn_trial(TINY_CNN)
    runs = [(placement("all-cpu"), 1), (decision.placement, 1)]
    timed = interleaved_iterations(lambda p: network.make_trainer(p, 2), runs, timed=1)
    assert [len(run["iteration_seconds"]) for run in timed] == [1, 1]
    trainer = cnn.trainer(TINY_CNN, placement("hybrid"))
    before = [p.clone() for p in trainer.learner.policy.parameters()]
    trainer.run_iteration()
    frames = trainer.storage.tensors[1]
    assert frames.dtype == torch.uint8 and trainer.envs.label == "synthetic"
    after = trainer.learner.policy.parameters()
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    trainer.close()


def test_real_atari_frames_when_ale_py_is_installed():
    pytest.importorskip("ale_py")
    config = CNNConfig(frames="atari", num_envs=1, num_steps=2, minibatch_size=2, hidden=16)
    trainer = cnn.trainer(config, placement("all-cpu"))
    trainer.run_iteration()
    frames = trainer.storage.tensors[1]
    assert trainer.envs.label == "atari:breakout" and frames.float().std() > 0
    trainer.close()


class Recurrent(nn.Module):
    """An actor-critic interface around a layer the allocator cannot describe."""

    def __init__(self) -> None:
        super().__init__()
        self.core = nn.LSTM(4, 8)

    sample_noise = act = evaluate = lambda self, *args: None


def test_bad_input_gets_clear_errors():
    spaces = gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2)
    with pytest.raises(UsageError, match="unknown network type: it has a LSTM"):
        network_kind(Recurrent())
    with pytest.raises(UsageError, match="has no sample_noise, act, evaluate"):
        network_kind(nn.Linear(4, 2))
    config = mlp().config
    with pytest.raises(UsageError, match="num_envs must be at least 1"):
        Workload(mlp().network, *spaces, replace(config, num_envs=0))
    with pytest.raises(UsageError, match="minibatch_size must be at least 1"):
        Workload(mlp().network, *spaces, replace(config, minibatch_size=0))
    with pytest.raises(UsageError, match="larger than a rollout"):
        Workload(mlp().network, *spaces, replace(config, num_envs=1, num_steps=2))
    with pytest.raises(UsageError, match="distinct devices"):
        Allocator(devices=[])
    with pytest.raises(UsageError, match="budget_s > 0"):
        Allocator(budget_s=0)
    with pytest.raises(UsageError, match="frames must be one of"):
        CNNConfig(frames="pixels").validate()
    with pytest.raises(UsageError, match="hidden_dim must be at least 1"):
        select_device(0, False)


def test_the_articles_rule_corrected_is_the_fixed_baseline():
    assert [select_device(w, False) for w in (64, 128, 200, 256, 512)] == [
        "cpu", "cpu", "cpu", "cpu", "accelerator"
    ]  # fmt: skip
    assert select_device(200, True) == "accelerator"
    small, large = fixed_rule_placement(64, False), fixed_rule_placement(512, False)
    assert small.name == large.name == "fixed-rule" and small.devices == (CPU,)
    assert large.accelerator_missing == (accelerator() is None)


def test_solution_prices_every_candidate_as_the_allocator_does():
    def cost(cell: Cell) -> float:
        return {"rollout": 1e-4, "advantages": 3e-4, "update": 2e-3}.get(cell.phase, 5e-4) * (
            (cell.threads or 3) + (cell.device != "cpu")
        )

    decision = faked(cost, threads=(1, 2)).decide(mlp())
    rows = decision.cost_rows()
    for candidate in decision.candidates:
        got = plan_seconds(
            rows, str(candidate.rollout_device), str(candidate.update_device), candidate.threads
        )
        assert got == pytest.approx(candidate.total)


GPU_ALL, SPLIT, CPU_ALL = ("cuda:0",) * 3, ("cpu", "cpu", "cuda:0"), ("cpu",) * 3


def config_row(plans, devices, seconds, threads=1, network="net", spread=0.0):
    """One configuration's row: the plans it ran for, its devices, five paired iterations."""
    iterations = [seconds * (1 + spread * k) for k in (-2, -1, 0, 1, 2)]
    return {"network": network, "plan": plans[0] if plans else "x", "plans": list(plans),
            "label": "x", "threads": threads, "seconds_per_iteration": seconds,
            "iteration_seconds": iterations, "total_seconds": sum(iterations),
            "decision_seconds": 0.5 if "allocator" in plans else None,
            **dict(zip(("rollout", "storage", "update"), devices, strict=True))}  # fmt: skip


def test_criterion_compares_configurations_each_run_once():
    # The allocator chose the hybrid devices: the very configuration of the best fixed plan.
    rows = [
        config_row(["fixed-rule", "all-accelerator"], GPU_ALL, 2.5),
        config_row(["hybrid", "allocator"], SPLIT, 1.0),
        config_row(["all-cpu"], CPU_ALL, 1.2),
    ]
    (row,) = criterion.criterion(rows)
    assert row["best_fixed"] == "hybrid" and row["slowdown"] == 0.0
    assert (row["slowdown_low"], row["slowdown_high"]) == (0.0, 0.0)  # one configuration: exact
    assert row["within_tolerance"] is True and row["decision_ok"] and row["configurations"] == 3
    assert row["saved_vs_fixed_rule"] == pytest.approx(1 - 1.0 / 2.5)
    assert row["threads_verdict"] is None  # no other thread count ran
    # Choosing the CPU when the split is faster is 20% slower: outside the tolerance.
    rows[1]["plans"], rows[2]["plans"] = ["hybrid"], ["all-cpu", "allocator"]
    rows[2]["decision_seconds"] = 0.5
    (slow,) = criterion.criterion(rows)
    assert slow["slowdown"] == pytest.approx(0.2) and slow["within_tolerance"] is False
    assert slow["slowdown_low"] == pytest.approx(0.2)  # iterations scale alike: no spread
    with pytest.raises(UsageError, match="lack some of the plans"):
        criterion.criterion(rows[:1])


def test_a_slightly_faster_allocator_inside_a_wide_paired_spread_is_unclear():
    # 1% faster than the best fixed plan by median, its paired iterations +-20% apart
    rows = [
        config_row(["fixed-rule", "all-accelerator", "hybrid", "all-cpu"], GPU_ALL, 1.0),
        config_row(["allocator"], SPLIT, 0.99, spread=0.1),
    ]
    (row,) = criterion.criterion(rows)
    assert row["slowdown"] < 0 and row["within_tolerance"] is None


def test_the_allocators_thread_choice_is_checked_against_the_others():
    every = ["fixed-rule", "hybrid", "all-cpu", "all-accelerator", "allocator"]
    chosen_one = [config_row(every, CPU_ALL, 1.0, threads=1), config_row([], CPU_ALL, 0.8, 2)]
    (wrong,) = criterion.criterion(chosen_one)
    assert wrong["configurations"] == 1 and wrong["slowdown"] == 0.0  # criterion: trivially
    assert wrong["threads_best"] == 2 and wrong["threads_verdict"].startswith("wrong")
    noisy = [config_row(every, CPU_ALL, 1.0, 1, spread=0.1), config_row([], CPU_ALL, 0.97, 2)]
    (close,) = criterion.criterion(noisy)
    assert close["threads_verdict"].startswith("no clear effect against 2 threads")
    right = [config_row(every, CPU_ALL, 0.8, threads=2), config_row([], CPU_ALL, 1.0, 1)]
    (chose,) = criterion.criterion(right)
    assert chose["threads_verdict"].startswith("right")
    # the chosen count's ratio is against the count it beat, not against itself (was 1.0)
    assert chose["threads_other"] == 1 and chose["threads_ratio"] == pytest.approx(0.8)


def test_compare_runs_each_configuration_once_and_reads_as_a_curriculum():
    networks = [trials.mlp_trial("CartPole-v1", w, **TINY_PPO) for w in (8, 16)]
    chooser = Allocator(devices=[CPU], threads=(1, 2), budget_s=0.2)
    decisions, rows = trials.compare(networks, chooser, iterations=2)
    for network in ("mlp-8", "mlp-16"):
        mine = [r for r in rows if r["network"] == network]
        # one device: the five plans are one configuration, plus the other thread count
        assert len(mine) == 2 and sorted(r["threads"] for r in mine) == [1, 2]
        assert sum(len(r["plans"]) for r in mine) == 5
        assert all(len(r["iteration_seconds"]) == 2 for r in mine)
    summary = curriculum.curriculum(decisions, rows, ["mlp-8", "mlp-16"])
    assert [step["held"] for step in summary["timeline"]] == [d.held for d in decisions]
    spent = sum(r["total_seconds"] for r in rows if "allocator" in r["plans"])
    decided = sum(d.measure_seconds for d in decisions)
    assert summary["totals"]["allocator"] == pytest.approx(spent + decided)
    assert set(summary["saved"]) == set(criterion.FIXED_PLANS)
    assert set(summary["threads"]) == {"1", "2"}
    verdicts = criterion.criterion(rows)
    assert all(row["threads_verdict"] for row in verdicts)


def test_compare_refuses_a_network_given_twice():
    networks = [trials.mlp_trial("CartPole-v1", w, **TINY_PPO) for w in (8, 8)]
    chooser = Allocator(devices=[CPU], threads=(1,), budget_s=0.2)
    with pytest.raises(UsageError, match="each network once, please: mlp-8 given twice"):
        trials.compare(networks, chooser, iterations=1)
    assert chooser.measured == 0  # refused before any measuring


def test_a_decision_measured_before_the_comparison_is_paid_in_it_once():
    networks = [trials.mlp_trial("CartPole-v1", w, **TINY_PPO) for w in (8, 16)]
    chooser = Allocator(devices=[CPU], threads=(1,), budget_s=0.2)
    first = chooser.decide(networks[0].workload)  # as notebook 05 asks before comparing
    assert first.measure_seconds > 0
    decisions, rows = trials.compare(networks, chooser, iterations=1)
    assert decisions[0].from_cache
    chosen = {r["network"]: r["decision_seconds"] for r in rows if "allocator" in r["plans"]}
    assert chosen["mlp-8"] == first.measure_seconds
    summary = curriculum.curriculum(decisions, rows, ["mlp-8", "mlp-16"])
    measuring = sum(step["decision_seconds"] for step in summary["timeline"])
    assert measuring == first.measure_seconds + decisions[1].measure_seconds


def test_bench_allocator_writes_decisions_and_rows(tmp_path):
    path = tmp_path / "allocator.json"
    argv = ["bench", "allocator", "--widths", "8", "--num-steps", "16",
            "--epochs", "1", "--frames", "synthetic", "--cnn-envs", "1", "--cnn-steps", "4",
            "--cnn-minibatch", "4", "--cnn-epochs", "1", "--iterations", "1", "--budget", "0.2",
            "--threads", "1", "--json", str(path)]  # fmt: skip
    assert cli.main(argv) == 0
    record = results.load(path)
    assert record.kind == "bench.allocator" and record.data["frames"] == "synthetic"
    assert [d["network"] for d in record.data["decisions"]] == ["mlp-8", "cnn-512"]
    plans = {plan for row in record.data["rows"] for plan in row["plans"]}
    assert plans == set(criterion.PLANS)
    allocator_rows = [r for r in record.data["rows"] if "allocator" in r["plans"]]
    assert all(r["decision_seconds"] is not None for r in allocator_rows)


class SlowToStartMeter(FakeMeter):
    """A device's first use costs 5 s (a CUDA context loading), wherever it happens."""

    def __init__(self, cost, clock: FakeClock) -> None:
        super().__init__(cost, clock)
        self.started: set[str] = set()

    def _use(self, device: str) -> None:
        if device not in self.started:
            self.started.add(device)
            self.clock.now += 5.0

    def start(self, devices) -> None:
        for device in devices:
            self._use(str(device))

    def prepare(self, cells) -> None:
        for cell in cells:
            self._use(cell.device)


def test_a_device_start_up_is_paid_before_the_budget_not_inside_it():
    clock = FakeClock()
    chooser = Allocator(
        devices=[CPU, GPU],
        threads=(1,),
        budget_s=1.0,
        meter=lambda workload: SlowToStartMeter(cheaper_on("cuda"), clock),
        clock=clock,
    )
    decision = chooser.decide(mlp())
    assert decision.skipped == () and decision.chosen.name == "all-accelerator"
    assert decision.measure_seconds <= 1.0
    for network in (mlp(), workload(TINY_CNN)):
        LiveMeter(network).start([CPU])  # runs the network's layers once, on every device
