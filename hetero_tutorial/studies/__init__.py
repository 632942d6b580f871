"""Measurements that answer one question each: the CPU/accelerator crossover, placement and
width sweeps, the replay buffer study."""
