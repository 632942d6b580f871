"""The algorithms: environments, networks, flat parameters, replay buffers, PPO and DDPG.

They take a placement and run each phase where it says; they import only ``core/``.
"""
