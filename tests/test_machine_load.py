"""OtherLoad tells this process tree's CPU use from other programs'."""

import subprocess
import sys
import time

from hetero_tutorial.core.machine_load import OtherLoad

# One second of the child's own CPU time, however long other processes make it take.
BURN_ONE_SECOND = "import time\nwhile time.process_time() < 1.0:\n    pass"


def test_a_busy_child_counts_as_ours_not_as_another_programs():
    with OtherLoad(interval=0.1) as load:
        subprocess.run([sys.executable, "-c", BURN_ONE_SECOND], check=True)
    # the child's second of CPU, sampled while it ran (cores x seconds: a busy machine
    # stretches the wall time, not the CPU time)
    assert load.own_cores * load.wall_seconds > 0.8
    assert load.cores >= 0.0 and load.wall_seconds >= 1.0


def test_sleeping_uses_no_cpu_of_ours():
    with OtherLoad() as load:
        time.sleep(0.3)
    assert load.own_cores < 0.2
