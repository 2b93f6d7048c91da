"""What ``check_backward`` returns: the verdict per (output, input) pair, the probes, an example
``v`` that shows a wrong backward, and the whole result with its report (:mod:`.report`); and
the notes a run collects for it (:class:`Notes`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from . import report
from .localize import WrongEntry
from .tolerance import below_normal

__all__ = ["BackwardCheck", "ExampleV", "LocalizationCostWarning", "Notes", "PairCheck",
           "ProbeCheck"]


class LocalizationCostWarning(UserWarning):
    """``localize="full"`` on a problem whose full Jacobians are expected to be large."""


@dataclass(frozen=True)
class PairCheck:
    """The verdict for one block ``∂output/∂input`` of the Jacobian.

    Attributes
    ----------
    output, input : str
        Names, e.g. ``"y"`` and ``"w"``.
    agree : bool
    max_abs_error : float
        ``max |got - expected|`` over the block.
    n_wrong, n_entries : int
        Entries outside the tolerance, and all entries (``y.numel() * x.numel()``).
    worst : tuple of WrongEntry
        The wrong entries with the largest error (output index, input index, expected, got).
    pattern : str or None
        ``"non-finite"`` (NaN or inf where the reference is finite: an overflow the dtype's
        float64 copies do not resolve, or a formula undefined there; one resolved on float64
        copies is not wrong, see the notes), ``"zero"``, ``"sign"``, ``"factor"``,
        ``"transposed"``, ``"offset"``, ``"precision"``,
        ``"not-derivative"`` (a gradient where the Jacobian is zero and the forward is flat,
        as under a straight-through estimator), ``"spurious"`` (a gradient where the Jacobian
        is zero and the forward is not flat: it does not depend on those elements, or only
        its derivative vanishes there) or ``None`` when no simple pattern fits.
    region : str or None
        ``"where x < 0 (3 of 8 elements)"`` when the wrong columns are the elements of the input
        on one side of a threshold, at least three of them, at this point and at fresh points
        (the input's values shuffled) where the check was repeated, with no right element of
        the input inside it.
    sentence : str
        What is wrong, for a reader.
    got, expected, tolerance : torch.Tensor or None
        The block as an ``m × n`` matrix (float64) from the backward, from the reference, and
        the allowed error per entry; ``None`` when only the random probes ran.  With a sampled
        localisation, only the compared rows and columns (see ``rows`` and ``columns``).
    sampled : str
        What was compared when it was not the whole block (``""`` when it was): e.g.
        ``"64 of 4096 columns of w, all 2048 rows of y"``, or ``"random probes only"``.
    n_checked : int
        Entries compared one by one (``n_entries`` when the whole block was).
    rows, columns : torch.Tensor or None
        Flat indices of the output and input elements compared (``None``: all of them).
    """

    output: str
    input: str
    agree: bool
    max_abs_error: float
    n_wrong: int
    n_entries: int
    worst: tuple[WrongEntry, ...] = ()
    pattern: str | None = None
    region: str | None = None
    sentence: str = ""
    got: torch.Tensor | None = field(default=None, repr=False)
    expected: torch.Tensor | None = field(default=None, repr=False)
    tolerance: torch.Tensor | None = field(default=None, repr=False)
    sampled: str = ""
    n_checked: int = -1
    rows: torch.Tensor | None = field(default=None, repr=False)
    columns: torch.Tensor | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.n_checked < 0:
            object.__setattr__(self, "n_checked", self.n_entries)


@dataclass(frozen=True)
class ExampleV:
    """One upstream gradient that shows the bug: the one-hot of the worst row.

    ``y.backward(gradient=v)`` (with ``v`` zero for the other outputs) gave ``got[name]`` for
    each input and should give ``expected[name]``.  After a sampled localisation
    ``expected[name]`` is known only at the compared input elements and NaN elsewhere.
    """

    output: str
    index: tuple[int, ...]
    v: torch.Tensor
    got: dict[str, torch.Tensor]
    expected: dict[str, torch.Tensor]
    right: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeCheck:
    """The randomized check of one pair: ``vᵀ J u`` from the backward and from the reference
    (``kind="vJu"``); or, for a pair whose ``vᵀ J u`` probes agree, the backward's departure
    from linearity in ``v``, ``‖g(v1) + g(v2) - g(v1 + v2)‖``, against the rounding measured
    on float64 copies (``kind="linearity"``, ``expected`` 0; listed only when it fails)."""

    output: str
    input: str
    got: float
    expected: float
    tolerance: float
    kind: str = "vJu"

    @property
    def checked(self) -> bool:
        """False when the reference could not give this probe (its estimated error is
        infinite: finite differences that do not resolve the derivative, or a reference value
        that is not finite): the probe then says nothing either way."""
        return math.isfinite(self.tolerance) and math.isfinite(self.expected)

    @property
    def agree(self) -> bool:
        """True when ``|got - expected| <= tolerance``, or when the probe was not
        :attr:`checked` (it then says nothing either way: see :attr:`checked`)."""
        return not self.checked or abs(self.got - self.expected) <= self.tolerance


@dataclass(frozen=True, repr=False)
class BackwardCheck:
    """The result of :func:`check_backward`; true when the backward is right.

    Attributes
    ----------
    status : {"agree", "wrong", "could-not-check", "non-deterministic"}
        ``"could-not-check"``: nothing compared is wrong, but the reference could not give
        some entries (finite differences whose estimates over step sizes disagree beyond
        their error bound, or a reference that is not finite there, e.g. at NaN inputs); the
        summary names the inputs and entries.
    summary : str
        One sentence: the verdict, and what is wrong when it is.
    reference : str
        Which independent reference was used.
    inputs, outputs : tuple of str
        Names of the checked inputs and outputs.
    skipped : tuple of str
        Inputs and outputs left out, with the reason.
    probes : tuple of ProbeCheck
        The randomized checks (``vᵀJu`` per pair and probe).
    pairs : tuple of PairCheck
        One per (output, input) pair when the full Jacobians were compared, else empty.
    example : ExampleV or None
        A concrete ``v`` that shows the bug.
    notes : tuple of str
        Anything else worth knowing (non-determinism at rounding level, tolerances).
    rtol : float
        The backward rounding allowance used (:func:`gradarg.backward_rtol`).
    full_cost : str
        What ``localize="full"`` costs (or cost, when it ran) on this problem: backward
        passes, reference columns and the memory the full Jacobians take.
    """

    status: str
    summary: str
    reference: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    skipped: tuple[str, ...]
    probes: tuple[ProbeCheck, ...]
    pairs: tuple[PairCheck, ...]
    example: ExampleV | None
    notes: tuple[str, ...]
    rtol: float
    full_cost: str = ""

    def __bool__(self) -> bool:
        return self.status == "agree"

    @property
    def wrong_pairs(self) -> tuple[PairCheck, ...]:
        """The (output, input) pairs whose probes disagree (:attr:`PairCheck.agree` false),
        in the order of :attr:`pairs`; empty when the backward is right."""
        return tuple(p for p in self.pairs if not p.agree)

    def __str__(self) -> str:
        return report.text(self)

    def __repr__(self) -> str:
        """At the REPL, the same report as ``print`` (not the fields' dump)."""
        return str(self)

    def _repr_html_(self) -> str:
        return report.html_report(self)

    def figure(self, pairs: str = "all") -> Any:
        """Heatmap of ``|got - expected|`` for every (output, input) block, wrong entries outlined.

        One panel per pair (``pairs="wrong"``: only the wrong ones); rows are output elements,
        columns input elements, both flattened.  White background, so it reads on light and
        dark pages.  Needs matplotlib.

        Returns
        -------
        fig : object
            A ``matplotlib.figure.Figure``.

        Raises
        ------
        ValueError
            The full Jacobians were not compared (only random probes ran).
        """
        return report.figure(self, pairs)


class Notes:
    """The notes a run of ``check_backward`` collects for its result, in order."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, note: str) -> None:
        self.items.append(note)

    def once(self, note: str) -> None:
        """Add ``note`` unless it is already there."""
        if note not in self.items:
            self.items.append(note)

    def subnormal(self, floor: float) -> None:
        """Say (once) that some compared values are subnormal: judged to ``floor`` only."""
        self.once(below_normal("some compared values", floor))

    def kinks(self, count: int) -> None:
        """Say (once) that ``count`` Jacobian entries sit at a kink of the forward."""
        self.once(f"{count} Jacobian entr{'y sits' if count == 1 else 'ies sit'} at a kink of "
                  f"the forward (its one-sided slopes differ: relu or abs at 0): there any "
                  f"value between the two slopes agrees (a subgradient; torch's own choice is "
                  f"one of them)")

    def uncertain(self, what: str) -> None:
        """Say (once) that finite differences are uncertain for ``what``."""
        self.once(f"the finite differences are uncertain for {what} (estimated error above 1% "
                  f"of the largest entry): fn may be discontinuous or random there, so "
                  f"agreement there says little")
