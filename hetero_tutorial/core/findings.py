"""A finding: a measurement set beside what it was expected to be, and the words for how it
came out.

Wherever the series puts a measured figure next to an expectation (an ideal, a bound, a
model's prediction, a rule's threshold, a reference machine's figure, another notebook's
figure), the sentence is a :class:`Finding`'s. Its words come from the outcome, and every
outcome has words:

* ``held``: the measured range lies inside the expected one;
* ``did not hold``: the measured range lies wholly outside it; the sentence says so, by how much,
  and lists the differences this run shows that could cause it (:class:`Check`), or says
  none does;
* ``no clear effect``: the measured range reaches both sides of the expectation's edge;
* ``no verdict``: one repeat (one seed, one round) measured no range, or fewer repeats than
  :data:`~hetero_tutorial.core.timing.MIN_REPEATS` measured one; the sentence still says
  where the figure fell;
* ``not judged``: the study that measured it waited for a CPU that others held (the busy
  guard, :func:`~hetero_tutorial.core.machine_load.withheld`).

"No verdict" and "no clear effect" mean one thing each across the series: no spread was
measured, against a spread that straddles. The words are the ledger's verdicts' too
(:class:`~hetero_tutorial.ledger.rules.Status`): "held" and "did not hold" say the same of a
claim as of a finding.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from hetero_tutorial.core.machine_load import Busyness, withheld
from hetero_tutorial.core.timing import Spread


class Outcome(str, enum.Enum):
    HELD = "held"
    NOT_HELD = "did not hold"
    UNCLEAR = "no clear effect"
    NO_VERDICT = "no verdict"
    NOT_JUDGED = "not judged"


def _range(low: float, high: float, unit: str) -> str:
    """``1.00-1.06x`` for ratios, ``85.5 ms to 90.1 ms`` for figures with a unit after."""
    if unit.endswith("x"):
        return f"{unit.format(low)[:-1]}-{unit.format(high)}"
    return f"{unit.format(low)} to {unit.format(high)}"


def _percent(share: float) -> str:
    """``8%``; below one percent, ``0.4%``: a gap is never printed as 0%."""
    return f"{share:.0%}" if share >= 0.01 else f"{share:.1%}"


@dataclass(frozen=True)
class Expectation:
    """What a figure was expected to be: the range ``low`` to ``high`` (either end open),
    and what set it (``what``: "the ideal speed-up", "the sampling model")."""

    what: str
    low: float = -math.inf
    high: float = math.inf

    @classmethod
    def at_most(cls, value: float, what: str) -> Expectation:
        return cls(what, high=value)

    @classmethod
    def at_least(cls, value: float, what: str) -> Expectation:
        return cls(what, low=value)

    @classmethod
    def between(cls, low: float, high: float, what: str) -> Expectation:
        return cls(what, min(low, high), max(low, high))

    def words(self, unit: str) -> str:
        """``at most 1.36x``, ``at least 1.00x``, ``1.00-1.06x``."""
        if self.low == -math.inf:
            return f"at most {unit.format(self.high)}"
        if self.high == math.inf:
            return f"at least {unit.format(self.low)}"
        return _range(self.low, self.high, unit)

    def place(self, value: float) -> str:
        """Where ``value`` lies: ``inside``, ``above`` or ``below``."""
        return "above" if value > self.high else "below" if value < self.low else "inside"

    def gap(self, value: float) -> float:
        """How far ``value`` lies outside, relative to the edge it passed (0 inside)."""
        edge = self.high if value > self.high else self.low if value < self.low else value
        return abs(value - edge) / abs(edge) if edge else abs(value - edge)

    def gap_words(self, value: float) -> str:
        """:meth:`gap` as every finding prints it: ``8%``, ``0.6%`` (never 0%)."""
        return _percent(self.gap(value))


NEAR_END = 0.5
"""A broken expectation's sentence gives the distance of the range's nearer end too, where
that is under this share of the median's: a verdict that rests on a thin margin says so."""


@dataclass(frozen=True)
class Check:
    """A cause, which the run itself can check, of an expectation that did not hold:
    ``applies`` is what this run's own figures say (a separate run set the expectation, a
    different column was read, one seed was measured)."""

    cause: str
    applies: bool


@dataclass(frozen=True)
class Finding:
    """``subject``'s measured figure (``measured``: the value and the range of its repeats)
    against ``expected``. ``figures``: what the studies returned, for the busy guard.
    ``recorded``: the figure comes from a committed record, not from a study of this run, so
    this run's busy guard has nothing to say about it."""

    subject: str
    measured: Spread
    expected: Expectation
    unit: str = "{:.2f}x"
    checks: tuple[Check, ...] = ()
    figures: tuple[object, ...] = ()
    recorded: bool = False

    def _withheld(self) -> Busyness | None:
        return None if self.recorded else withheld(*self.figures)

    @property
    def outcome(self) -> Outcome:
        if self._withheld():
            return Outcome.NOT_JUDGED
        if not self.measured.decides:
            return Outcome.NO_VERDICT
        low, high = sorted((self.measured.low, self.measured.high))
        if low >= self.expected.low and high <= self.expected.high:
            return Outcome.HELD
        if high < self.expected.low or low > self.expected.high:
            return Outcome.NOT_HELD
        return Outcome.UNCLEAR

    def _figure(self) -> str:
        spread, unit = self.measured, self.unit
        if not spread.measured:
            return f"{unit.format(spread.value)} ({spread.how})"
        low, high = sorted((spread.low, spread.high))
        return f"{unit.format(spread.value)} ({spread.how} {_range(low, high, unit)})"

    def _against(self) -> str:
        return f"{self.expected.what} ({self.expected.words(self.unit)})"

    def _causes(self) -> str:
        found = [c.cause for c in self.checks if c.applies]
        if not found:
            return "no cause this run can check explains it"
        return "differences this run shows but does not isolate: " + "; ".join(found)

    def sentence(self) -> str:
        """The finding in words: the figure, the expectation, and how it came out."""
        outcome, figure = self.outcome, self._figure()
        if outcome is Outcome.NOT_JUDGED:
            return f"{self.subject}: {figure}; {self._withheld().line()}"
        if outcome is Outcome.HELD:
            return f"{self.subject}: {figure}, inside {self._against()}: held"
        if outcome is Outcome.UNCLEAR:
            low, high = sorted((self.measured.low, self.measured.high))
            edges = [e for e in (self.expected.low, self.expected.high) if low <= e <= high]
            place = self.expected.place(self.measured.value)
            median = f"its median lies {place} it, but " if place != "inside" else ""
            return (
                f"{self.subject}: {figure} against {self._against()}: no clear effect, "
                f"{median}its range reaches both sides of "
                f"{' and '.join(map(self.unit.format, edges))}"
            )
        value = self.measured.value
        place, gap = self.expected.place(value), self.expected.gap_words(value)
        if outcome is Outcome.NOT_HELD:
            # the verdict reads the range: where its nearer end lies much closer, say how close
            near = min((self.measured.low, self.measured.high), key=self.expected.gap)
            if self.expected.gap(near) < NEAR_END * self.expected.gap(value):
                gap += f", its whole range by {self.expected.gap_words(near)} or more"
            return (
                f"{self.subject}: {figure}, {place} {self._against()} by {gap}: "
                f"the expectation did not hold; {self._causes()}"
            )
        if place == "inside":
            where = f"inside {self._against()}"
        else:  # no verdict to explain: the differences only where the run shows some
            causes = f"; {self._causes()}" if any(c.applies for c in self.checks) else ""
            where = f"{place} {self._against()} by {gap}{causes}"
        why = (
            self.measured.too_few_words()
            if self.measured.too_few
            else ("one figure measures no spread")
        )
        return f"{self.subject}: {figure}, {where}: no verdict, {why}"

    def __str__(self) -> str:
        return self.sentence()
