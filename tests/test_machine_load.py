"""LoadMeter tells this process tree's CPU use from other programs'."""

import subprocess
import sys
import time

from hetero_tutorial.core import machine_load
from hetero_tutorial.core.contention import LoadMeter

# One second of the child's own CPU time, however long other processes make it take.
BURN_ONE_SECOND = "import time\nwhile time.process_time() < 1.0:\n    pass"


def test_a_busy_child_counts_as_ours_not_as_another_programs():
    with LoadMeter(interval=0.1) as load:
        subprocess.run([sys.executable, "-c", BURN_ONE_SECOND], check=True)
    # the child's second of CPU, sampled while it ran (cores x seconds: a busy machine
    # stretches the wall time, not the CPU time)
    assert load.own_cores * load.wall_seconds > 0.8
    assert load.other_cores >= 0.0 and load.wall_seconds >= 1.0


def test_sleeping_uses_no_cpu_of_ours():
    with LoadMeter() as load:
        time.sleep(0.3)
    assert load.own_cores < 0.2


# A child that starts twenty grandchildren of 50 ms of CPU each, one after another, and
# waits for each: too short-lived to be sampled, as the compilers Inductor's workers start.
SHORT_GRANDCHILDREN = (
    "import subprocess, sys\n"
    "burn = 'import time\\nwhile time.process_time() < 0.05:\\n    pass'\n"
    "for _ in range(20):\n"
    "    subprocess.run([sys.executable, '-S', '-c', burn], check=True)\n"
)


def test_short_lived_grandchildren_that_were_waited_for_count_as_ours():
    with LoadMeter(interval=0.5) as load:
        subprocess.run([sys.executable, "-c", SHORT_GRANDCHILDREN], check=True)
    ours = load.own_cores * load.wall_seconds
    assert ours > 0.9  # 20 x 50 ms of the grandchildren's CPU, and their starts
    assert ours < 1.2 * (load.own_cores + load.other_cores) * load.wall_seconds + 0.2  # not twice


def test_a_child_seen_running_and_waited_for_is_counted_once():
    with LoadMeter(interval=0.1) as load:
        subprocess.run([sys.executable, "-c", BURN_ONE_SECOND], check=True)
    assert 0.8 < load.own_cores * load.wall_seconds < 1.6  # its second, not two


def test_a_quiet_studys_line_says_when_its_waits_were_its_own():
    """06's quick run waited 0.178 s a second with others at 0.01 cores: its worker, learner
    and Ray on two cores waited for one another, which the line now says."""
    own = machine_load.Busyness(
        "the overlap study", 25.2, {"wait_share": 0.178, "others_on_study_cpus": 0.01}
    )
    assert not own.busy
    assert "0.178 s for a CPU per second they ran (for one another: its own" in own.quiet_line()
    calm = machine_load.Busyness("a study", 2.0, {"wait_share": 0.02, "others_on_study_cpus": 0})
    assert "for one another" not in calm.quiet_line()
