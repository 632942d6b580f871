"""Notebook 04's settings line: printed from the DDPG config the runs use, not typed in prose."""

from hetero_tutorial.notebook import buffer_report
from hetero_tutorial.rl.ddpg.config import DDPGConfig


def test_the_ddpg_settings_line_follows_the_config():
    config = DDPGConfig(hidden=64, batch_size=32, buffer_capacity=5_000, segment_length=8)
    line = buffer_report.ddpg_settings(config, seeds=3)
    assert "64 units per hidden layer, batch 32" in line and "3 seed(s)" in line
    assert "buffers of 5,000 transitions (pattern B in segments of 8)" in line
    assert f"{config.total_steps:,} steps per run" in line
