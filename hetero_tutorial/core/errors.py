"""The one exception type for mistakes a learner can fix (bad device, bad setting, bad file).

The command line prints these as a one-line error instead of a traceback;
everything else is a bug and keeps its traceback.
"""


class UsageError(ValueError):
    """Bad input: the message says what was wrong and what to do instead."""


def require_positive(**values: int) -> None:
    """Raise a :class:`UsageError` naming the first of ``values`` that is below 1."""
    for name, value in values.items():
        if value < 1:
            raise UsageError(f"{name} must be at least 1, got {value}")


def require_minibatch_fits(minibatch_size: int, num_envs: int, num_steps: int) -> None:
    """A minibatch must fit in one rollout of ``num_envs`` x ``num_steps`` transitions."""
    if minibatch_size > num_envs * num_steps:
        raise UsageError(
            f"minibatch_size {minibatch_size} is larger than a rollout ({num_envs} envs x "
            f"{num_steps} steps); lower it or collect more steps"
        )
