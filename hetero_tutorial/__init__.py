"""hetero-tutorial: where each part of deep RL should run, CPU or GPU, measured on your machine."""
