import torch

# Small networks run fastest on one thread here, and one thread keeps the timing-free tests
# quick even when other processes share the machine's cores.
torch.set_num_threads(1)
