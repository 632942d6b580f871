"""Solutions to the notebooks' exercises, one module per notebook topic, each tested."""
