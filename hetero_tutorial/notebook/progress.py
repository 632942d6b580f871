"""Progress that renders in JupyterLab and prints one short line everywhere else.

``tqdm.auto`` draws a widget in a notebook, but a front end that cannot render widgets
(nbclient, nbmake, a notebook viewer) shows the widget's text fallback instead: a
frozen ``0%| 0/391`` line in the executed notebook. :func:`progress` uses the widget
only where a Jupyter server started the kernel (JupyterLab, Jupyter Notebook: they set
``JPY_SESSION_NAME``) and ipywidgets is installed; elsewhere (nbclient, VS Code,
a terminal, a hosted runtime) it prints a plain line every :data:`PLAIN_EVERY_S`
seconds while the work runs, with the time spent and an estimate of the time left, and
one line when it is done, so no cell is silent for minutes in any front end. Work shorter
than that interval prints the final line only. ``HETERO_TUTORIAL_PROGRESS=widget`` or
``plain`` overrides the guess.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Callable
from typing import Any

PROGRESS_ENV_VAR = "HETERO_TUTORIAL_PROGRESS"
PLAIN_EVERY_S = 15.0
"""Seconds between two plain progress lines (where no widget renders)."""


def _duration(seconds: float) -> str:
    """``45 s``, ``3 min 05 s``: how long, for a person reading a progress line."""
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def plain_line(desc: str, done: int, total: int, elapsed_s: float) -> str:
    """A progress line without a bar (nothing a front end could take for tqdm's fallback):
    the work done, the time spent, and the time left if the rate so far holds."""
    line = f"{desc}: {done:,} of {total:,} after {_duration(elapsed_s)}"
    if 0 < done < total:
        line += f", about {_duration(elapsed_s * (total - done) / done)} left"
    return line


def widgets_render() -> bool:
    """Whether a progress widget will render here (see the module docstring)."""
    asked = os.environ.get(PROGRESS_ENV_VAR, "").strip().lower()
    if asked in ("widget", "plain"):
        return asked == "widget"
    in_kernel = "ipykernel" in sys.modules
    has_widgets = importlib.util.find_spec("ipywidgets") is not None
    return in_kernel and has_widgets and bool(os.environ.get("JPY_SESSION_NAME"))


class Progress:
    """Counts work done; a tqdm widget where it renders, else one line at the end.

    Use as a context manager; ``update(n)`` adds ``n`` done; ``note(text)`` sets a
    short status (the widget shows it at once, the plain line at the end).
    """

    def __init__(self, total: int, desc: str, widget: bool | None = None) -> None:
        self.total, self.desc, self.done, self.text = total, desc, 0, ""
        self.bar: Any = None
        if widgets_render() if widget is None else widget:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc)
        self.started = self.printed = time.perf_counter()

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
            return
        now = time.perf_counter()
        if now - self.printed >= PLAIN_EVERY_S and self.done < self.total:
            self.printed = now
            note = f" ({self.text})" if self.text else ""
            print(
                plain_line(self.desc, self.done, self.total, now - self.started) + note, flush=True
            )

    def follow(self) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` callback for one run inside this bar, as the training
        entry points call it: each call adds what was done since the run's last call."""
        last = 0

        def report(done: int, total: int) -> None:
            nonlocal last
            self.update(done - last)
            last = done

        return report

    def note(self, text: str) -> None:
        self.text = text
        if self.bar is not None:
            self.bar.set_postfix_str(text)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.bar is not None:
            self.bar.close()
        elif exc_info[0] is None:
            seconds = time.perf_counter() - self.started
            print(f"{self.desc}: {self.done:,} of {self.total:,} done in {seconds:.1f} s")


def progress(total: int, desc: str) -> Progress:
    """A :class:`Progress` for ``total`` units of work named ``desc``."""
    return Progress(total, desc)
