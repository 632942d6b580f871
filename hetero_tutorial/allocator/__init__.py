"""The dynamic device allocator: a workload, the meter that times its phases on each device,
the pricing of placements, the decision and its reasons, the article's fixed rule to beat,
the CNN workload, the trials of the allocator against fixed plans, their criterion per
network and their curriculum."""
