"""PPO, one module per step of an iteration, read in the order an iteration runs.

1. ``config.py``: :class:`~hetero_tutorial.rl.ppo.config.PPOConfig`, every knob of a run;
2. ``policy.py``: the actor-critic, placed as a learner and a rollout copy;
3. ``storage.py``: the rollout, preallocated once on the storage device;
4. ``collectors.py``: the rollout, stepping Gymnasium's or batched tensor environments
   behind one ``Collector`` interface;
5. ``advantages.py``: GAE, where the rollout is stored;
6. ``learner.py``: the clipped-surrogate loss and the update's epochs of minibatches;
7. ``trainer.py``: :class:`~hetero_tutorial.rl.ppo.trainer.PPOTrainer`, the iteration that
   runs them, each a timed phase (rollout, advantages, transfer, update, weight sync);

and ``runs.py``: :func:`~hetero_tutorial.rl.ppo.runs.train` and ``train_side_by_side``,
which run trainers to the end and measure them. ``trainer.py`` is the page to start from.
"""
