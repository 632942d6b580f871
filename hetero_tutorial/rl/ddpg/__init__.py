"""DDPG (Lillicrap et al., 2016), shaped as PPO is: config, learner, trainer, runs.

1. ``config.py``: :class:`~hetero_tutorial.rl.ddpg.config.DDPGConfig`, every knob of a run;
2. ``learner.py``: :class:`~hetero_tutorial.rl.ddpg.learner.DDPGLearner`, the actor, the
   critic and their targets: acting, one update, the weight sync of the acting copy;
3. ``trainer.py``: :class:`~hetero_tutorial.rl.ddpg.trainer.DDPGTrainer`, one environment
   step and one update at a time (phases rollout, store, sample, update, weight sync);

and ``runs.py``: :func:`~hetero_tutorial.rl.ddpg.runs.train` and ``train_side_by_side``,
called as PPO's are (a config, a placement or its name, a seed, options); ``options.py``:
a run's command-line options, written once for every command that trains DDPG.
"""
