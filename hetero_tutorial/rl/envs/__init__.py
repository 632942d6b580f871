"""The environments, of two kinds, and what an algorithm needs to know about them.

``spec.py``: :class:`~hetero_tutorial.rl.envs.spec.EnvSpec`, an environment's shapes,
checked once, and :class:`~hetero_tutorial.rl.envs.spec.VectorEnvs`, what both kinds offer
PPO. ``vector.py``: Gymnasium's vector environments, Python objects stepped on
the CPU. ``batched.py``: CartPole and Pendulum as batched tensors on any device, step for
step Gymnasium's. A placement's ``batched_envs`` chooses between the two kinds.
"""
