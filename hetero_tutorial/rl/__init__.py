"""The algorithms and what they stand on, one folder per concept; they import only ``core/``.

* ``envs/``: Gymnasium's vector environments and the batched tensor environments;
* ``nets.py``: the networks (actor-critics, DDPG's actor and critic, the Nature CNN);
* ``flat.py``: a network's parameters in one tensor (one call to zero, clip, step, copy);
* ``buffers.py``: DDPG's replay buffers, three designs behind one interface;
* ``evaluation.py``: greedy evaluation episodes, with one seed rule for every algorithm;
* ``ppo/``: PPO, one module per step of an iteration;
* ``ddpg/``: DDPG, shaped as PPO is;
* ``overlapped/``: PPO with rollout workers running while the learner updates (the
  overlapped engine: its lag schedule, worker, process and Ray engines, and timeline).

Every algorithm takes a placement and runs each phase where it says.
"""
