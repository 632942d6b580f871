"""Pictures of sampled stacks: an SVG flame graph, and a speedscope file to explore them.

A flame graph draws every sampled stack as a column of boxes, the outermost
frame at the bottom; a box's width is its share of the samples, and boxes with
the same caller merge. Wide boxes at the top are where the time went.

The package draws the SVG itself from py-spy's raw samples (rather than asking
py-spy for its own SVG) for two reasons: one recording then gives the picture,
the numbers and the speedscope file, so they always agree; and the boxes can be
coloured by how much of their time was host<->device transfer (red). Open the
speedscope file at https://www.speedscope.app to zoom and search.
"""

from __future__ import annotations

import html
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from hetero_tutorial.profiling.stacks import Frame, Stack, Stacks

ROW = 20
"""height of one frame's box, in SVG pixels"""
WIDTH = 960
"""width of the drawing, in SVG pixels (the SVG scales to its container: about a
notebook's output width, so a 13 px label stays 13 px on screen)"""
HEADER = 44
"""room above the flames for the title and the legend, in SVG pixels"""
FONT = 13
"""the labels' font size, in SVG pixels"""
CHAR = 7.9
"""approximate width of one character of the label font, in SVG pixels"""
TRANSFER_RED = (214, 39, 40)


@dataclass
class _Node:
    samples: int = 0
    marked: int = 0
    children: dict[str, _Node] = field(default_factory=dict)


def _tree(stacks: Stacks, marked: Collection[Stack]) -> _Node:
    root = _Node()
    for stack, count in stacks.items():
        hot = count if stack in marked else 0
        node = root
        node.samples += count
        node.marked += hot
        for frame in stack:
            node = node.children.setdefault(frame, _Node())
            node.samples += count
            node.marked += hot
    return root


def _depth(node: _Node) -> int:
    return 1 + max((_depth(child) for child in node.children.values()), default=0)


def _colour(frame: str, red: float) -> str:
    """A pale blue-green set by the function name, blended towards red by ``red`` (0..1)."""
    seed = zlib.crc32(Frame.parse(frame).function.encode())
    base = (150 + seed % 50, 190 + (seed >> 8) % 40, 215 + (seed >> 16) % 35)
    mixed = (round(b + (r - b) * red) for b, r in zip(base, TRANSFER_RED, strict=True))
    return "rgb({},{},{})".format(*mixed)


def _boxes(node: _Node, x: float, level: int, total: int, height: int, out: list[str]) -> None:
    """Append the boxes of ``node``'s children (at ``level``, from ``x``) and their descendants."""
    for frame, child in sorted(node.children.items()):
        width = child.samples * WIDTH / total
        if width >= 0.5:  # narrower boxes (and everything above them) would not be visible
            out.append(_box(frame, child, x, height - (level + 1) * ROW, width, total))
            _boxes(child, x, level + 1, total, height, out)
        x += width


MIN_LABEL = 8
"""the fewest characters a cut label keeps (with its ".."): a shorter stub ("r..", "C..")
says nothing, so a box narrower than that shows its name only in its tooltip"""


def fitting_label(label: str, chars: int) -> str:
    """What of ``label`` a box ``chars`` characters wide shows: all of it; else, for a phase's
    box (``"rollout: PPOTrainer.iteration (...)"``), the phase's name; else the function
    without its file; else the label cut to fit, if at least :data:`MIN_LABEL` characters
    remain; else nothing (the tooltip still names it)."""
    phase, colon, _ = label.partition(": ")
    function = label.split(" (")[0]
    for candidate in (label, phase if colon else "", function):
        if candidate and len(candidate) <= chars:
            return candidate
    return label[: chars - 2] + ".." if chars >= MIN_LABEL else ""


def _box(frame: str, node: _Node, x: float, y: float, width: float, total: int) -> str:
    """One frame's box: its rectangle, a label that fits, and a tooltip."""
    label = Frame.parse(frame).label
    tip = (
        f"{label}: {node.samples} samples ({node.samples / total:.1%}), "
        f"{node.marked / node.samples:.0%} of them in transfers"
    )
    text = ""
    shown = fitting_label(label, int((width - 4) / CHAR))
    if shown:
        text = f'<text x="{x + 2:.1f}" y="{y + ROW - 6:.1f}">{html.escape(shown)}</text>'
    return (
        f"<g><title>{html.escape(tip)}</title>"
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{ROW - 1}" '
        f'fill="{_colour(frame, node.marked / node.samples)}" rx="2"/>{text}</g>'
    )


def flamegraph_svg(stacks: Stacks, title: str, marked: Collection[Stack] = ()) -> str:
    """An SVG flame graph of ``stacks``; boxes redden with the share of their samples in ``marked``.

    Hover over a box for its frame, samples and transfer share.
    """
    root = _tree(stacks, set(marked))
    height = HEADER + (_depth(root) - 1) * ROW
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'font-family="monospace" font-size="{FONT}">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="4" y="17" font-size="{FONT + 2}">{html.escape(title)}</text>',
        f'<text x="4" y="36">{root.samples} samples. Width: share of samples. Red: share of a '
        "box's samples in host&lt;-&gt;device transfers and waits.</text>",
    ]
    if root.samples:
        _boxes(root, 0.0, 0, root.samples, height, out)
    out.append("</svg>")
    return "\n".join(out)


def speedscope(stacks: Stacks, name: str) -> dict[str, Any]:
    """The stacks in speedscope's file format (https://www.speedscope.app), as a JSON object."""
    index: dict[str, int] = {}
    frames: list[dict[str, Any]] = []
    samples = []
    for stack in stacks:
        for text in stack:
            if text not in index:
                index[text] = len(frames)
                frame = Frame.parse(text)
                entry = {"name": frame.function, "file": frame.file, "line": frame.line}
                frames.append({k: v for k, v in entry.items() if v is not None})
        samples.append([index[text] for text in stack])
    weights = list(stacks.values())
    return {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": frames},
        "profiles": [
            {
                "type": "sampled",
                "name": name,
                "unit": "none",
                "startValue": 0,
                "endValue": sum(weights),
                "samples": samples,
                "weights": weights,
            }
        ],
        "name": name,
        "exporter": "hetero_tutorial",
    }


def stacked(svgs: Mapping[str, str]) -> str:
    """HTML that shows several SVGs one under the other, each under its label, at full width
    (side by side, each would shrink to half and its labels could not be read)."""
    return "".join(
        f'<div style="margin-bottom:12px"><b>{html.escape(label)}</b>{svg}</div>'
        for label, svg in svgs.items()
    )
