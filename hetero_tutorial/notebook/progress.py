"""Progress that renders in JupyterLab and prints one short line everywhere else.

``tqdm.auto`` draws a widget in a notebook, but a front end that cannot render widgets
(nbclient, nbmake, a notebook viewer) shows the widget's text fallback instead: a
frozen ``0%| 0/391`` line in the executed notebook. :func:`progress` uses the widget
only where a Jupyter server started the kernel (JupyterLab, Jupyter Notebook: they set
``JPY_SESSION_NAME``) and ipywidgets is installed; elsewhere it counts silently and
prints one line when the work is done. ``HETERO_TUTORIAL_PROGRESS=widget`` or ``plain``
overrides the guess.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Callable
from typing import Any

PROGRESS_ENV_VAR = "HETERO_TUTORIAL_PROGRESS"


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
        self.started = time.perf_counter()

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

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
