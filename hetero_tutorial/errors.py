"""The one exception type for mistakes a learner can fix (bad device, bad setting, bad file).

The command line prints these as a one-line error instead of a traceback;
everything else is a bug and keeps its traceback.
"""


class UsageError(ValueError):
    """Bad input: the message says what was wrong and what to do instead."""
