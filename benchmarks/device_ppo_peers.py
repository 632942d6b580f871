"""All-device PPO against rejax's compiled PPO (and SB3, CleanRL for scale): CartPole to 475.

What: PPO on CartPole-v1 with RL Baselines3 Zoo's settings (32 steps per environment,
10 epochs, minibatches of 256, 64x64 Tanh actor and critic, Adam 1e-3, gamma 0.98,
GAE 0.8, clip 0.2 on the policy and the value, no entropy bonus, gradient limit 0.5),
the learning rate constant (rejax has no annealing), at two points: 8 environments
(a budget of 13 evaluation spans of 8,192 steps, 106,496 steps) and 1,024 (20
iterations of 32,768 steps). Contestants, each in a fresh process per round, round ``r``
seeded ``r``:

* ``ours``: the package's PPO under the ``all-device`` placement (batched tensor
  environments; on a machine without an accelerator, all on the CPU), eager;
* ``ours-compiled``: the same with ``compile=True``: every few rollout steps
  (``GRAPH_STEPS``) and every few minibatch steps (``GRAPH_MINIBATCHES``) one graph compiled
  by ``torch.compile`` (its compiling timed apart);
* ``rejax``: rejax 0.1.3's PPO, its whole training loop one jitted program
  (``jax.jit(algo.train)``, lowered and compiled before the clock);
* ``sb3`` and ``cleanrl`` (8 environments only, for scale): ``ppo_peers.py``'s own
  contestants, in its venvs, given the same settings; their speed, not their learning.

Both ours and rejax train the whole budget and evaluate the greedy policy (argmax of the
logits, 10 episodes) every 8,192 steps at 8 environments and every iteration at 1,024;
evaluations are never timed. *Solved*: ``--hold`` evaluations in a row reach 475 (the
series' rule, as notebooks 01 and 07 use it); *seconds to solve*: training seconds up to
the first of the first such streak. Metrics: ``steps_per_s``
(the budget over the training seconds), ``train_s`` (training, no compile), ``total_s``
(with compile: rejax's, or our compiled pieces' first calls over their steady ones;
eager ours has none), ``solve_s`` and ``solve_total_s``
(the same to the solving evaluation; rejax's program cannot stop early, so its seconds
to solve are its training seconds times the share of the budget trained by then).
Rejax's evaluation callback only keeps the actor's weights at each evaluation point (a
copy of a few thousand numbers); they are evaluated greedily after the clock, so that
its clock, like ours, holds training only.

    .venv/bin/python benchmarks/device_ppo_peers.py --quick       # smoke run: 2 spans each
    .venv/bin/python benchmarks/device_ppo_peers.py               # 3 rounds (seeds 0, 1, 2)
    .venv/bin/python benchmarks/device_ppo_peers.py --reference   # also data/reference/<machine>/

The first run builds build/peers/rejax (and ppo_peers.py's sb3 and cleanrl venvs).
Writes data/results/bench.device_ppo_peers.json.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import race

SOLVED = 475.0
EVAL_EPISODES = 10
SETTING = {
    "num_steps": 32,
    "minibatch_size": 256,
    "update_epochs": 10,
    "learning_rate": 1e-3,
    "anneal_lr": False,  # rejax's learning rate is constant
    "anneal_clip": False,  # and so is its clip range
    "gamma": 0.98,
    "gae_lambda": 0.8,
    "ent_coef": 0.0,
    "clip_coef": 0.2,
    "clip_vloss": True,  # rejax clips the value loss with the policy's clip
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "norm_adv": True,
    "hidden": 64,
}
"""RL Baselines3 Zoo's CartPole-v1 PPO (ours is PPOConfig.tuned's), as every contestant takes it."""
POINTS = {8: {"eval_every": 8192, "spans": 13}, 1024: {"eval_every": 32_768, "spans": 20}}
"""num_envs -> evaluation span (env steps) and the budget in spans."""
QUICK_SPANS = 2


# --- the workers -----------------------------------------------------------------------------


def solving(evaluations: list[tuple[int, float]], hold: int) -> int | None:
    """The env step of the first of the first ``hold`` evaluations in a row at 475 or more,
    else None: the series' one rule of "solved" (``studies/device_ppo.py``'s ``solved_at``;
    written out here because the peers' venvs run it without the package, and
    tests/test_peer_races.py checks that the two agree)."""
    streak = 0
    for index, (_, mean) in enumerate(evaluations):
        streak = streak + 1 if mean >= SOLVED else 0
        if streak == hold:
            return evaluations[index - hold + 1][0]
    return None


def outcome(
    evaluations: list[tuple[int, float]], hold: int, budget: int, train_s: float, compile_s: float
) -> race.Metrics:
    """The metrics of a run that trained ``budget`` steps in ``train_s`` seconds."""
    solved_at = solving(evaluations, hold)
    return {
        "steps_per_s": budget / train_s,
        "train_s": train_s,
        "compile_s": compile_s,
        "total_s": train_s + compile_s,
        "solved": solved_at is not None,
        "solve_steps": solved_at,
        "evaluations": evaluations,
    }


def ours(job: dict[str, Any]) -> race.Metrics:
    """Our PPO under the all-device placement; iterations timed, evaluations not."""
    import numpy as np
    import torch
    from our_parts import PPOConfig, PPOTrainer, compile_cache, greedy_returns, placement

    torch.set_num_threads(job["threads"])
    _, cache_warm = compile_cache()  # build/torch-compile-cache, as the notebooks use it
    config = PPOConfig.tuned(
        "CartPole-v1",
        **job["setting"],
        num_envs=job["num_envs"],
        total_steps=job["budget"],
        compile=job["compile"],
    )
    trainer = PPOTrainer(config, placement("all-device"), job["seed"])
    evaluations, seconds_at = [], {}
    while not trainer.done:
        trainer.run_iteration()
        if trainer.global_step % job["eval_every"] == 0:
            mean = float(np.mean(greedy_returns(trainer, EVAL_EPISODES)))
            evaluations.append((trainer.global_step, mean))
            seconds_at[trainer.global_step] = sum(trainer.iteration_seconds)
    trainer.close()
    pieces = trainer.compiled_pieces
    compile_s = sum(piece.compile_seconds for piece in pieces)
    train_s = sum(trainer.iteration_seconds) - compile_s
    metrics = outcome(evaluations, job["hold"], trainer.global_step, train_s, compile_s)
    metrics["first_iteration_s"] = trainer.iteration_seconds[0]
    metrics["compile_modes"] = [piece.mode for piece in pieces]
    if job["compile"] and "eager" in metrics["compile_modes"]:  # fell back
        raise RuntimeError(f"ours-compiled ran eagerly here: {[p.fallback for p in pieces]}")
    metrics["compile_cache_warm"] = cache_warm
    metrics["placement"] = trainer.placement.describe()
    if metrics["solved"]:
        metrics["solve_s"] = seconds_at[metrics["solve_steps"]] - compile_s
        metrics["solve_total_s"] = seconds_at[metrics["solve_steps"]]
    return metrics


def rejax_ppo(job: dict[str, Any]) -> race.Metrics:
    """rejax's PPO, one compiled program; its actor's weights kept at each evaluation point."""
    import jax
    import jax.numpy as jnp
    from rejax import PPO
    from rejax.evaluate import evaluate

    s, n = job["setting"], job["num_envs"]
    batch = n * s["num_steps"]
    algo = PPO.create(
        env="CartPole-v1",
        num_envs=n,
        num_steps=s["num_steps"],
        num_epochs=s["update_epochs"],
        num_minibatches=batch // s["minibatch_size"],
        learning_rate=s["learning_rate"],
        gamma=s["gamma"],
        gae_lambda=s["gae_lambda"],
        clip_eps=s["clip_coef"],
        vf_coef=s["vf_coef"],
        ent_coef=s["ent_coef"],
        max_grad_norm=s["max_grad_norm"],
        total_timesteps=job["budget"],
        eval_freq=job["eval_every"],
        skip_initial_evaluation=True,
        agent_kwargs={"hidden_layer_sizes": (s["hidden"],) * 2, "activation": "tanh"},
    )
    # Its evaluation callback only keeps the actor's weights: they are evaluated after the clock.
    algo = algo.replace(eval_callback=lambda algo, ts, rng: ts.actor_ts.params)
    rng = jax.random.key(job["seed"])
    began = time.perf_counter()
    train = jax.jit(algo.train).lower(rng).compile()
    compile_s = time.perf_counter() - began
    began = time.perf_counter()
    _, actors = jax.block_until_ready(train(rng))  # actors: (evaluations, ...) weights
    train_s = time.perf_counter() - began

    @jax.jit
    def greedy_mean(params: Any, key: jax.Array) -> jax.Array:
        def act(obs: jax.Array, _: jax.Array) -> jax.Array:
            dist = algo.actor.apply(params, obs[None], method="_action_dist")
            return jnp.squeeze(dist.mode())  # the greedy action, as ours is evaluated

        steps = algo.env_params.max_steps_in_episode
        return evaluate(act, key, algo.env, algo.env_params, EVAL_EPISODES, steps)[1].mean()

    key = jax.random.key(10_000 + job["seed"])
    means = jax.device_get(jax.vmap(greedy_mean, in_axes=(0, None))(actors, key)).tolist()
    evaluations = [(job["eval_every"] * (i + 1), float(m)) for i, m in enumerate(means)]
    metrics = outcome(evaluations, job["hold"], job["budget"], train_s, compile_s)
    if metrics["solved"]:  # one program: seconds in proportion to the steps trained
        metrics["solve_s"] = train_s * metrics["solve_steps"] / job["budget"]
        metrics["solve_total_s"] = metrics["solve_s"] + compile_s
    return metrics


def ppo_peer(job: dict[str, Any]) -> race.Metrics:
    """SB3 or CleanRL, run by ppo_peers.py's own contestant for the same settings."""
    import ppo_peers

    setting = {**job["setting"], "num_envs": job["num_envs"], "total_steps": job["budget"]}
    run = getattr(ppo_peers, job["peer"])(setting, job["seed"], job["threads"])
    return {"steps_per_s": run["env_steps"] / run["seconds"], "train_s": run["seconds"]}


WORKERS = {"ours": ours, "rejax": rejax_ppo, "ppo_peer": ppo_peer}


# --- the race --------------------------------------------------------------------------------


def plan(args: Any) -> race.Plan:
    """Ours and rejax at 8 and 1,024 environments; SB3 and CleanRL at 8, for scale."""
    entries, pairs = [], []
    for n, point in POINTS.items():
        spans = QUICK_SPANS if args.quick else point["spans"]
        job = {"setting": SETTING, "num_envs": n, "eval_every": point["eval_every"],
               "budget": spans * point["eval_every"], "hold": args.hold}  # fmt: skip
        name = f"{n} envs"
        entries += [
            race.Entry(name, "ours", "ours", {**job, "compile": False}),
            race.Entry(name, "ours-compiled", "ours", {**job, "compile": True}),
            race.Entry(name, "rejax", "rejax", job, venv="rejax"),
        ]
        for ours_entry in ("ours", "ours-compiled"):
            for metric, higher in (("steps_per_s", True), ("train_s", False), ("total_s", False),
                                   ("solve_s", False), ("solve_total_s", False)):  # fmt: skip
                pairs.append(race.Pair(name, ours_entry, "rejax", metric, higher_is_better=higher))
        pairs.append(race.Pair(name, "ours-compiled", "ours", "steps_per_s"))
        if n == 8:
            for peer in ("sb3", "cleanrl"):
                entries.append(race.Entry(name, peer, "ppo_peer", {**job, "peer": peer}, venv=peer))
                pairs.append(race.Pair(name, "ours", peer, "steps_per_s"))
    return race.Plan(
        kind="bench.device_ppo_peers",
        script=Path(__file__).resolve(),
        entries=entries,
        pairs=pairs,
        fields={
            "env_id": "CartPole-v1",
            "setting": SETTING,
            "points": {str(n): p for n, p in POINTS.items()},
            "goal": SOLVED,
            "hold": args.hold,
            "eval_episodes": EVAL_EPISODES,
            "learning_judged": not args.quick,
        },
        timed={
            "ours": "sum of PPOTrainer.iteration_seconds (every iteration; evaluations apart)",
            "ours-compiled": "the same, less the compiled pieces' compile_seconds (their first "
            "calls over their steady calls), reported as compile_s",
            "rejax": "the compiled train program (compile apart), its evaluation callback "
            "keeping the actor's weights, evaluated greedily after the clock",
            "sb3": "ppo_peers.sb3: env steps / wall time of model.learn",
            "cleanrl": "ppo_peers.cleanrl: the last SPS line of ppo.py, unmodified",
        },
        notes={"learning": "--quick: budgets too short to learn; learning not judged"}
        if args.quick
        else {},
        tag=None if args.threads == 1 else f"{args.threads}-threads",
    )


def arguments(argv: list[str] | None = None) -> Any:
    """The race's options (race.parser's and ``--hold``)."""
    made = race.parser(__doc__.splitlines()[0], rounds=3)
    made.add_argument("--hold", type=int, default=3, help="evaluations in a row at 475 that solve")
    args = race.parse(made, argv)
    if args.hold < 1:
        made.error("--hold must be 1 or more")
    return args


if __name__ == "__main__":
    race.main(arguments, plan, WORKERS)
