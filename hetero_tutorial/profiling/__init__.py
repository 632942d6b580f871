"""Where the time goes: py-spy flame graphs, cProfile tables, torch.profiler, and the
classification of sampled stacks into transfers and phases."""
