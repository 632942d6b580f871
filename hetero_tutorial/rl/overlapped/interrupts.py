"""Ctrl-C while an overlapped run stops its workers: held back until they are stopped.

Both engines (:mod:`~hetero_tutorial.rl.overlapped.process_engine`,
:mod:`~hetero_tutorial.rl.overlapped.ray_engine`) stop their workers inside
:func:`interrupts_deferred`, so that no worker outlives a run, however often the stop
button is pressed.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C back until the block is done, then raise it: for stopping the workers.

    A second press of a notebook's stop button while an engine stops its workers would
    otherwise cut the stopping short and leave a worker running; here it waits the few
    seconds that stopping takes. Outside the main thread (where Python delivers no
    signals) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: pressed.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt
