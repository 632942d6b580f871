"""Measurements that answer one question each, built on the algorithms and timed honestly.

``crossover`` and ``crossover_grid``: where the accelerator starts to beat the CPU for a
forward pass, over width x batch (C1-C3). ``copies``: host<->device copies per environment
step, counted on any machine (C4). ``interleave``: configurations timed side by side,
iteration by iteration. ``sweeps``: seconds per PPO iteration over widths, placements and
CPU threads; ``threads``: what one thread against all cores does to the actor and the
learner (C9). ``ppo_tricks``: what each of PPO's speed tricks buys. ``buffer_designs``:
the three replay buffer designs timed alone, their rows typed in ``buffer_rows``;
``ddpg_buffers``: DDPG trained with each (C7, C8). ``ddpg_placements``: DDPG under each
placement (C4, C7). ``overlap`` and ``overlap_findings``: what the
overlapped engine buys over the sequential hybrid placement, and the sentences it
supports. ``env_agreement``, ``env_throughput`` and ``device_ppo``: the batched
environments against Gymnasium's, their steps per second, and PPO trained on them.
``compiling``: where compiling pays, per piece and end to end, its rows typed in
``compile_rows``; ``compile_breakdown``: where a compiled step's time goes.
"""
