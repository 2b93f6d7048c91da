"""One ``check_backward`` run, as steps over its parts.

The parts, each with a small interface: the backward under test
(:class:`~.under_test.BackwardUnderTest`), the reference it is compared with (a class of
:mod:`.references`, picked by :func:`~.references.choose`), the localiser that chooses which
entries of a wrong block to compare within the budget (:class:`~.localize.Localizer`), the
second looks at a wrong block (:class:`~.confirm.Confirm`) and the verdict on each block
(:class:`~.verdict.Verdict`).  The steps: determinism and offset checks, random probes and
linearity probes (:mod:`.probes`), the full or the bounded comparison
(:func:`.budget.comparison` chooses), the example ``v`` and the result.  A new step goes here; what it needs of the backward or the
reference goes in their classes.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import torch

from ..core.dense import jacobian
from .blocks import Block, unchecked_columns, unchecked_nan_columns, unchecked_rows
from .budget import FULL_WARN_BYTES, comparison, full_advice, full_cost, full_fits
from .confirm import Confirm
from .localize import Localizer, unravel
from .probes import linearity_probes, random_probes
from .references import FiniteDifferences, Reference, choose
from .results import BackwardCheck, LocalizationCostWarning, Notes, PairCheck
from .setup import Setup
from .tolerance import (
    C_PRECISION,
    C_SHIFT,
    LOOSE,
    backward_rtol,
    entry_tolerance,
    loose_tolerance,
    shifted_inputs,
    uncertain,
)
from .under_test import BackwardUnderTest
from .verdict import Verdict, ix, summary

__all__ = ["Checker"]


class Checker:
    """One run of ``check_backward`` on ``setup``: the arguments as ``check_backward`` takes
    them (``localize`` as ``"auto"``, ``"bounded"``, ``"full"`` or ``"none"``)."""

    def __init__(self, setup: Setup, reference: str, probes: int, localize: str,
                 rtol: float | None, gen: torch.Generator, intended: Any) -> None:
        self.reference, self.intended = reference, intended
        self.n_probes, self.localize = probes, localize
        self.gen = gen
        self.notes = Notes()
        self.rounded = 0  # entries not counted wrong: within the dtype's rounding
        self.overflows = 0  # entries not counted wrong: not finite in the dtype only
        self.rtol = backward_rtol(setup.xs[0].dtype) if rtol is None else rtol
        # without a given rtol, the probes measure the rounding on a float64 twin
        self.bwd = BackwardUnderTest(setup, gen, self.rtol, twin=rtol is None)
        self.ref = self._reference(self.bwd, self.notes)
        self.localizer = Localizer(self.bwd, self.ref, self.at)
        self.verdict = Verdict(self.bwd, self.ref, Confirm(self.bwd, self.ref, self.at))

    def _reference(self, bwd: BackwardUnderTest, notes: Notes) -> Reference:
        return choose(bwd.s, bwd.outs, bwd.state, notes, self.gen, self.reference,
                      self.intended)

    def at(self, xs: tuple[torch.Tensor, ...]) -> tuple[BackwardUnderTest, Reference]:
        """The backward under test and the reference with the checked inputs at ``xs``
        (for the second looks of :class:`~.confirm.Confirm`; their notes are not kept)."""
        bwd = BackwardUnderTest(self.bwd.s.at(xs), self.gen, self.rtol, twin=False)
        return bwd, self._reference(bwd, Notes())

    # -------------------------------------------------------------- steps

    def run(self) -> BackwardCheck:
        bwd, ref = self.bwd, self.ref
        s = bwd.s
        m = sum(y.numel() for y in bwd.outs)
        ns = [x.numel() for x in s.xs]
        cost_text, cost_bytes = full_cost(m, ns, ref.cost)
        # the advice after a sample never suggests what cannot fit in memory
        self.verdict.advice = full_advice("", cost_bytes, m * sum(ns))
        advice = full_advice(cost_text, cost_bytes, m * sum(ns))
        result: dict[str, Any] = {
            "reference": ref.name, "inputs": tuple(s.names), "outputs": tuple(bwd.out_names),
            "skipped": tuple(list(s.skipped) + bwd.dropped_outputs), "rtol": self.rtol,
            "full_cost": cost_text}
        status_nd = self.determinism()
        if status_nd is not None:
            return BackwardCheck("non-deterministic", status_nd, probes=(), pairs=(),
                                 example=None, notes=tuple(self.notes.items), **result)
        affine = self.offset_check()
        probes = random_probes(bwd, ref, self.n_probes)
        if any(0.0 < abs(p.expected) < bwd.floor for p in probes):
            self.notes.subnormal(bwd.floor)
        if self.n_probes > 0:
            probes += linearity_probes(bwd, probes, affine)
        mode = comparison(self.localize, m, sum(ns), isinstance(ref, FiniteDifferences),
                          any(not p.agree for p in probes))
        pairs: tuple[PairCheck, ...] = ()
        if mode == "full":
            if cost_bytes > FULL_WARN_BYTES:
                warnings.warn(f"localize='full': {cost_text}",
                              LocalizationCostWarning, stacklevel=3)
            pairs = self.compare_full(affine, probes)
        elif mode == "bounded":
            pairs = self.compare_bounded(probes, affine, advice)
        status, text = summary(pairs, probes, s.names, ref.by_rows, full_fits(cost_bytes),
                               unchecked=self.unchecked(probes, pairs),
                               finite_differences=isinstance(ref, FiniteDifferences))
        name = str(bwd.dtype).replace("torch.", "")
        if status == "agree" and self.rounded:
            text = text.rstrip(".") + (f" ({self.rounded} entr"
                                       f"{'y' if self.rounded == 1 else 'ies'} within {name} "
                                       f"rounding: see the note).")
        if status != "wrong" and self.overflows:
            text = text.rstrip(".") + (f" ({self.overflows} entr"
                                       f"{'y is' if self.overflows == 1 else 'ies are'} NaN or "
                                       f"infinite in {name}, right on float64 copies: an "
                                       f"overflow, see the note).")
        example = self.verdict.example(pairs) if status == "wrong" else None
        return BackwardCheck(status, text, probes=tuple(probes), pairs=pairs, example=example,
                             notes=tuple(self.notes.items), **result)

    def determinism(self) -> str | None:
        """The status sentence when two backward passes with the same ``v`` differ by more
        than the rounding allowance; smaller differences become a note."""
        bwd = self.bwd
        vs = bwd.random_vs()
        torch.set_rng_state(bwd.state)
        a, _ = bwd.backward(vs)
        b, _ = bwd.backward(vs)
        worst, name = 0.0, ""
        for g1, g2, nm in zip(a, b, bwd.s.names, strict=True):
            d = float((g1 - g2).abs().max()) if g1.numel() else 0.0
            scale = float(g1.abs().max()) if g1.numel() else 0.0
            if d > 0:
                self.notes.add(f"the backward is non-deterministic for {nm}: two runs with "
                               f"the same v differ by {d:.1e} (e.g. atomic adds)")
            if d > loose_tolerance(max(scale, 1e-30), self.rtol) and d > worst:
                worst, name = d, nm
        if worst > 0:
            return (f"NON-DETERMINISTIC: two backward passes with the same v give gradients of "
                    f"{name} that differ by {worst:.2e}; a verdict on right or wrong needs a "
                    f"deterministic backward.")
        return None

    def unchecked(self, probes, pairs) -> str:
        """The pairs, input elements and entries the reference could not give (an infinite
        tolerance: see :func:`.tolerance.entry_tolerance` and ``ProbeCheck.checked``), as a
        phrase for the summary; ``""`` when every compared entry and probe was checked."""
        s = self.bwd.s
        parts, seen = [], set()
        for p in pairs:
            if p.tolerance is None or not bool(torch.isinf(p.tolerance).any()):
                continue
            seen.add((p.output, p.input))
            j = s.names.index(p.input)
            x = s.xs[j]
            flat = x.detach().reshape(-1)
            inf = torch.isinf(p.tolerance)
            cols = inf.any(0).nonzero().flatten()
            if p.columns is not None:
                cols = p.columns[cols]
            at = [f"{p.input}{ix(unravel(int(c), tuple(x.shape)))} = {float(flat[c]):.4g}"
                  for c in cols[:4]]
            more = f" and {cols.numel() - 4} more" if cols.numel() > 4 else ""
            parts.append(f"∂{p.output}/∂{p.input} at {', '.join(at)}{more} "
                         f"({int(inf.sum())} of {inf.numel()} compared entries)")
        # a pair whose every entry was compared says more than its probes
        seen.update((p.output, p.input) for p in pairs
                    if p.got is not None and p.rows is None and p.columns is None)
        for pr in probes:
            if not pr.checked and (pr.output, pr.input) not in seen:
                seen.add((pr.output, pr.input))
                parts.append(f"∂{pr.output}/∂{pr.input} (its random probes; run with "
                             f"localize='full' to see which entries)")
        return "; ".join(parts)

    def offset_check(self) -> dict[str, bool]:
        """Per input, whether the backward gives a gradient for a zero upstream gradient (a
        term that does not depend on ``v``); each such input becomes a note."""
        bwd = self.bwd
        affine: dict[str, bool] = {}
        grads, _ = bwd.backward({k: torch.zeros_like(y) for k, y in enumerate(bwd.outs)})
        for g, nm in zip(grads, bwd.s.names, strict=True):
            # NaN from v = 0 (0 · NaN at a NaN input) is no term independent of v
            affine[nm] = bool(g.numel() and bool(((g != 0) & ~g.isnan()).any()))
            if affine[nm]:
                self.notes.add(
                    f"the backward is not linear in the upstream gradient: with v = 0 it gives "
                    f"a nonzero gradient for {nm} (max {float(g.abs().max()):.3g}), so it adds "
                    f"a term that does not depend on v")
        return affine

    def compare_full(self, affine: dict[str, bool], probes=()) -> tuple[PairCheck, ...]:
        """Every entry of every block: the backward's Jacobian by reverse mode (its rows)
        against the reference's whole Jacobian.  A block whose probes disagree although no
        entry is beyond the fixed tolerance is compared again against the rounding the
        backward shows on float64 copies (:meth:`.localize.Localizer.rounding_block`)."""
        bad = {(p.output, p.input) for p in probes if not p.agree}
        bwd = self.bwd
        torch.set_rng_state(bwd.state)
        rows = jacobian(bwd.s.flat, bwd.s.xs, method="reverse")
        ref, err, kinks = self.ref.jacobian()
        shaky = [(bwd.out_names[k], bwd.s.names[j]) for k in range(len(bwd.outs))
                 for j in range(len(bwd.s.xs))
                 if err[k][j].numel() and uncertain(float(err[k][j].max()),
                                                    max(float(ref[k][j].abs().max()), 1e-300))]
        if shaky:
            self.notes.uncertain(", ".join(f"∂{a}/∂{b}" for a, b in shaky))
        _, none = bwd.backward(bwd.random_vs())
        pairs = []
        for k, y in enumerate(bwd.outs):
            for j, x in enumerate(bwd.s.xs):
                got = rows[k][j].detach().double().reshape(y.numel(), x.numel())
                exp = ref[k][j]
                tol = unchecked_columns(entry_tolerance(exp, kinks[k][j], self.rtol, bwd.floor), x, None)
                tol = unchecked_nan_columns(unchecked_rows(tol, y, None), got)
                block = Block(got, exp, tol, None, None)
                block = self.overflowed(k, j, self.within_rounding(k, j, block))
                how = "random"
                if (bwd.out_names[k], bwd.s.names[j]) in bad and not bool(
                        block.wrong().any()):
                    fine = self.localizer.rounding_block(k, j, None)
                    if fine is not None and bool(fine.wrong().any()):
                        block, how = fine, "rounding"
                pair = self.verdict.pair(k, j, block, none[j], affine[bwd.s.names[j]],
                                         how=how)
                if how == "rounding" and block.rows is not None:
                    pair = dataclasses.replace(pair, sampled=(
                        f"{block.rows.numel()} of {y.numel()} rows (elements of "
                        f"{bwd.out_names[k]}), all {x.numel()} columns"))
                pairs.append(pair)
        return tuple(pairs)

    def within_rounding(self, k: int, j: int, block: Block) -> Block:
        """Block ``(k, j)`` with the entries that differ from the reference only by what the
        inputs' dtype can resolve no longer counted wrong, and a note naming the dtype.

        A backward in float32 computes from forward values rounded to ``eps·|y|``: the
        derivative of ``tanh`` at ``x = -10``, ``1 - y² = 8.2e-9``, is 0 in float32, where
        ``y`` rounds to -1.  An entry is within that rounding when the same backward run in
        float64 on the twin (:meth:`.under_test.BackwardUnderTest.rows64`) matches the
        reference within the entry's tolerance, and the float32 value is no farther from the
        reference than ``LOOSE`` times its distance to the float64 run, nor than
        the larger of ``C_PRECISION · eps(dtype) · |y_i|`` (what rounding the forward values
        of row ``i`` can do to a derivative that the backward computes from them) and
        ``C_SHIFT`` times the change of the float64 run when the inputs move by one rounding
        step of their dtype (what rounding the intermediates can do: ``cos(x³)`` at 12.2).  A backward wrong in
        float64 too (a factor, a dropped term) is as wrong as before.  Without a twin
        (float64 inputs, ``rtol`` given, ``fn`` refuses float64 copies) nothing changes."""
        bwd = self.bwd
        wrong = block.wrong()
        if bwd.twin is None or not bool(wrong.any()):
            return block
        got64 = bwd.rows64(k, j)
        if got64 is None:
            return block
        got, exp, tol = block.got, block.expected, block.tolerance
        y = bwd.outs[k].detach().double().abs().reshape(-1, 1)
        cap = (C_PRECISION * torch.finfo(bwd.dtype).eps * y).expand_as(got)
        cap = torch.maximum(cap, C_SHIFT * self._shift(k, j, got64))
        allow = torch.minimum(LOOSE * (got - got64).abs(), cap)
        rounding = (wrong & ((got64 - exp).abs() <= tol)
                    & ((got - exp).abs() <= tol + allow))
        if not bool(rounding.any()):
            return block
        x = bwd.s.xs[j]
        flat = x.detach().reshape(-1)
        cols = rounding.any(0).nonzero().flatten()
        at = ", ".join(f"{bwd.s.names[j]}{ix(unravel(int(c), tuple(x.shape)))} = "
                       f"{float(flat[c]):.4g}" for c in cols[:3])
        more = f" and {cols.numel() - 3} more" if cols.numel() > 3 else ""
        worst = float((got - exp).abs()[rounding].max())
        name = str(bwd.dtype).replace("torch.", "")
        self.notes.add(
            f"∂{bwd.out_names[k]}/∂{bwd.s.names[j]}: {int(rounding.sum())} entr"
            f"{'y differs' if int(rounding.sum()) == 1 else 'ies differ'} from the reference "
            f"by up to {worst:.2g} (at {at}{more}), within {name} rounding: the same backward "
            f"on float64 copies matches the reference, and {name} values of y, of the inputs "
            f"and of what is computed from them cannot resolve the difference; not counted "
            f"wrong")
        self.rounded += int(rounding.sum())
        tol = torch.where(rounding, (got - exp).abs() + tol, tol)
        return dataclasses.replace(block, tolerance=tol)

    def overflowed(self, k: int, j: int, block: Block) -> Block:
        """Block ``(k, j)`` with the entries where the backward is NaN or infinite in the
        inputs' dtype while the same backward on float64 copies is finite and within the
        entry's tolerance of a finite reference no longer counted wrong
        (:attr:`.blocks.Block.overflow`), and a note naming them.

        ``exp(100.0)`` is ``inf`` in float32, so the backward of ``tanh(exp(x))`` there is
        ``(1 - tanh(inf)²) · inf = 0 · inf = NaN`` (autograd's own chain rule gives the same),
        where the derivative is 0 and float64 computes it.  The backward's formula is the
        derivative; its float32 arithmetic overflows.  A backward not finite on float64 copies
        too (a division by zero), or far from the reference there, is as wrong as before.
        Only for inputs of a lower precision than float64 (float32, float16, bfloat16)."""
        bwd = self.bwd
        if bwd.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            return block
        got, exp, tol = block.got, block.expected, block.tolerance
        bad = block.wrong() & ~torch.isfinite(got) & torch.isfinite(exp)
        if not bool(bad.any()):
            return block
        rows = torch.arange(bwd.outs[k].numel()) if block.rows is None else block.rows
        try:
            with torch.random.fork_rng(devices=[]):  # fn's draws as in the checked run
                torch.set_rng_state(bwd.state)
                bwd64, _ = self.at(tuple(x.detach().double() for x in bwd.s.xs))
                got64 = bwd64.rows(k, j, rows, block.cols)
        except (RuntimeError, TypeError, ValueError, IndexError):
            return block
        if got64.shape != got.shape:
            return block
        fine = bad & torch.isfinite(got64) & ((got64 - exp).abs() <= tol)
        if not bool(fine.any()):
            return block
        x = bwd.s.xs[j]
        flat = x.detach().reshape(-1)
        at = []
        for r, c in fine.nonzero()[:3].tolist():
            col = c if block.cols is None else int(block.cols[c])
            at.append(f"{bwd.s.names[j]}{ix(unravel(col, tuple(x.shape)))} = "
                      f"{float(flat[col]):.4g} ({float(got[r, c])} where the reference is "
                      f"{float(exp[r, c]):.4g} and float64 gives {float(got64[r, c]):.4g})")
        n = int(fine.sum())
        more = f" and {n - 3} more" if n > 3 else ""
        name = str(bwd.dtype).replace("torch.", "")
        self.notes.add(
            f"∂{bwd.out_names[k]}/∂{bwd.s.names[j]}: the backward is NaN or infinite in "
            f"{name} at {n} entr{'y' if n == 1 else 'ies'} ({'; '.join(at)}{more}), where the "
            f"same backward on float64 copies matches the reference: {name} overflows inside "
            f"the backward or in the forward values it uses (inf · 0 is NaN, as in autograd's "
            f"own chain rule for tanh(exp(x)) at x = 100); not counted wrong, but a {name} "
            f"training step there gets these gradients (compute in float64, or rewrite the "
            f"formula so that no intermediate overflows)")
        self.overflows += n
        over = fine if block.overflow is None else block.overflow | fine
        return dataclasses.replace(block, overflow=over)

    def _shift(self, k: int, j: int, got64: torch.Tensor) -> torch.Tensor:
        """How much block ``(k, j)`` of the backward run in float64 changes when every checked
        input moves by one rounding step of the inputs' dtype (:func:`.tolerance.shifted_inputs`):
        the largest change over the two shifts, ``m × n`` (zeros where a shifted run fails)."""
        out = torch.zeros_like(got64)
        for xs in shifted_inputs(self.bwd.s.xs, self.bwd.dtype):
            try:
                with torch.random.fork_rng(devices=[]):  # fn's draws as in the checked run
                    torch.set_rng_state(self.bwd.state)
                    moved = BackwardUnderTest(self.bwd.s.at(xs), self.gen, self.rtol,
                                              twin=False)
                    rows = moved.rows(k, j, torch.arange(got64.shape[0]))
            except (RuntimeError, TypeError, ValueError):
                continue
            if rows.shape == got64.shape:
                out = torch.maximum(out, (rows - got64).abs().nan_to_num(0.0))
        return out

    def compare_bounded(self, probes, affine: dict[str, bool],
                        advice: str) -> tuple[PairCheck, ...]:
        """The pairs whose probes disagree, each on a sample chosen by the localiser; the
        others as the probes left them."""
        bwd, verdict = self.bwd, self.verdict
        bad = {(p.output, p.input) for p in probes if not p.agree}
        vju_bad = {(p.output, p.input) for p in probes if not p.agree and p.kind == "vJu"}
        _, none = bwd.backward(bwd.random_vs())
        pairs, sampled = [], []
        for k, y in enumerate(bwd.outs):
            for j, x in enumerate(bwd.s.xs):
                yname, xname = bwd.out_names[k], bwd.s.names[j]
                if (yname, xname) not in bad:
                    pairs.append(PairCheck(yname, xname, True, 0.0, 0, y.numel() * x.numel(),
                                           sampled="random probes only", n_checked=0))
                    continue
                block, what, how = self.localizer.block(k, j)
                block = self.overflowed(k, j, block)
                pair = verdict.pair(k, j, block, none[j], affine[xname], sampled=what, how=how)
                if pair.agree:  # the probes disagree, yet no compared entry is wrong
                    pair = verdict.unconfirmed(pair, linearity=(yname, xname) not in vju_bad)
                pairs.append(pair)
                if pair.sampled:
                    sampled.append(f"∂{yname}/∂{xname}: {pair.sampled}")
        if sampled:
            self.notes.add("localised on a sample of the Jacobian (" + "; ".join(sampled)
                           + "); " + advice)
        return tuple(pairs)
