"""A figure a reader cannot trust fails the notebook: matplotlib's inline backend, audited.

``make notebooks`` executes every notebook with ``MPLBACKEND`` set to this module
(``module://hetero_tutorial.notebook.figure_audit``). It is Jupyter's inline backend
(figures shown as PNG in the output, at ``plt.show()`` or at the end of the cell) with
one addition: every figure is checked just before it is drawn for the output, and a
figure that would mislead raises :class:`FigureProblem` in its cell, so nbmake fails
there, naming the figure and what is wrong with it. What a reader relies on, and a
program can check:

* no empty panel: every visible axes draws some data (a line with points, a bar, a
  patch, an image, a collection) or says in a text why it has none;
* numbers on numeric axes: an axis that plots numbers shows tick labels, and they are
  numbers (a category axis may name its categories);
* compared panels on one scale: axes that share a title prefix ending in ``":"``
  (``"timeline: sequential"``, ``"timeline: overlapped"``) span the same x range.

A learner's own notebook server uses the plain inline backend; only the tests audit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib_inline import backend_inline
from matplotlib_inline.backend_inline import (  # the inline backend's API, as matplotlib loads it
    FigureCanvas,
    flush_figures,
    show,
)

__all__ = [
    "FigureCanvas",
    "FigureProblem",
    "flush_figures",
    "new_figure_manager",
    "new_figure_manager_given_figure",
    "problems",
    "show",
]

NUMBER = re.compile(r"^[\u2212\-+]?[\d,.\s]*\d[\d,.\s]*(e[\u2212\-+]?\d+)?\s*[%x×kKMG]?$")
"""A tick label that is a number: 12, 0.5, 1,024, −3, 1e-05, 25%, 2.0x, 10k."""


class FigureProblem(AssertionError):
    """A figure that would mislead a reader (see the module docstring)."""


def _draws_data(ax: Axes) -> bool:
    """Whether ``ax`` draws any data (or a text that may say why it has none)."""
    if any(len(line.get_xdata()) > 0 for line in ax.lines):
        return True
    if any(len(c.get_paths()) > 0 or len(c.get_offsets()) > 0 for c in ax.collections):
        return True
    if ax.images or any(patch.get_visible() for patch in ax.patches):
        return True
    return any(text.get_text().strip() for text in ax.texts)


def _numeric_axis(axis: Any) -> bool:
    """Whether the axis maps numbers (not named categories) to positions."""
    return axis.get_converter() is None and axis.get_scale() in ("linear", "log", "symlog")


def _tick_labels(ax: Axes, which: str) -> list[str]:
    """The visible tick labels of one axis, as the last draw laid them out."""
    labels = ax.get_xticklabels() if which == "x" else ax.get_yticklabels()
    return [label.get_text() for label in labels if label.get_visible()]


def problems(figure: Figure) -> list[str]:
    """What would mislead a reader of ``figure`` (empty when nothing): see the module docstring."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure).draw()  # lays the ticks out, as the PNG will show them
    found = []
    title = figure.get_suptitle() or next((a.get_title() for a in figure.axes if a.get_title()), "")
    name = f"figure {title!r}" if title else "a figure"
    visible = [ax for ax in figure.axes if ax.get_visible() and ax.axison]
    for number, ax in enumerate(visible, start=1):
        panel = f"{name}, panel {number}" + (f" ({ax.get_title()!r})" if ax.get_title() else "")
        if not _draws_data(ax):
            found.append(f"{panel} is empty: it draws no data and says nothing about why")
            continue
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not _numeric_axis(axis) or not axis.get_visible():
                continue
            labels = [text for text in _tick_labels(ax, which) if text]
            if axis.get_major_formatter().__class__.__name__ == "NullFormatter":
                continue  # labels left out on purpose (a shared axis shows them once)
            shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
            if not labels and len(shared.get_siblings(ax)) == 1:
                found.append(f"{panel}: its numeric {which} axis shows no tick labels")
            elif labels and not all(NUMBER.match(text.replace("\u2009", "")) for text in labels):
                found.append(f"{panel}: its numeric {which} axis is labelled {labels}")
    compared: dict[str, list[Axes]] = {}
    for ax in visible:
        prefix, colon, _ = ax.get_title().partition(":")
        if colon:
            compared.setdefault(prefix.strip(), []).append(ax)
    for prefix, group in compared.items():
        spans = {tuple(round(v, 6) for v in ax.get_xlim()) for ax in group}
        if len(group) > 1 and len(spans) > 1:
            found.append(
                f"{name}: the {prefix!r} panels are compared but span different x ranges {spans}"
            )
    return found


def _audited(figure: Figure, print_figure: Callable[..., Any]) -> Callable[..., Any]:
    def print_audited(*args: Any, **kwargs: Any) -> Any:
        found = problems(figure)
        if found:
            raise FigureProblem("; ".join(found))
        return print_figure(*args, **kwargs)

    return print_audited


def new_figure_manager_given_figure(num: int, figure: Figure) -> Any:
    """The inline backend's manager for ``figure``, its canvas audited before every print."""
    manager = backend_inline.new_figure_manager_given_figure(num, figure)
    figure.canvas.print_figure = _audited(figure, figure.canvas.print_figure)
    return manager


def new_figure_manager(num: int, *args: Any, FigureClass: type = Figure, **kwargs: Any) -> Any:
    """A new figure and its audited manager (the function matplotlib calls for ``plt.figure``)."""
    return new_figure_manager_given_figure(num, FigureClass(*args, **kwargs))


def _enable_in_ipython() -> None:
    """What the inline backend does for itself when it is the backend: show figures at the
    end of each cell and as PNG, in interactive mode."""
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    if shell is not None:
        matplotlib.interactive(True)
        backend_inline.configure_inline_support(shell, "module://matplotlib_inline.backend_inline")


_enable_in_ipython()
