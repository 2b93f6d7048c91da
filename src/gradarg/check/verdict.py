"""The verdict: on one (output, input) block, which entries are wrong, where, their pattern and
the sentence that says it (:meth:`Verdict.pair`); an example upstream gradient ``v`` that shows
the difference (:meth:`Verdict.example`); and the summary of a whole run (:func:`summary`).

The wording of patterns comes from :mod:`.patterns`, of regions from :mod:`.localize`; the
tests that confirm a pattern or a region from :mod:`.confirm`; the table from :mod:`.report`.
A new sentence on a block, or a new hint in the summary, goes here.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import torch

from ..show.render import fmt
from .budget import full_advice
from .localize import WrongEntry, region, supported, threshold, unravel, worst_entries
from .patterns import Pattern, classify
from .results import ExampleV, PairCheck, ProbeCheck

if TYPE_CHECKING:
    from .blocks import Block
    from .confirm import Confirm
    from .references import Reference
    from .under_test import BackwardUnderTest

__all__ = ["Verdict", "summary"]


class Verdict:
    """Verdicts on the blocks of the run of ``bwd`` against ``ref``; ``confirm`` takes the
    second looks."""

    def __init__(self, bwd: BackwardUnderTest, ref: Reference, confirm: Confirm,
                 advice: str = "") -> None:
        self.bwd, self.ref, self.confirm = bwd, ref, confirm
        # what to run when a sample leaves something open (:func:`.budget.full_advice`)
        self.advice = advice or full_advice()

    def pair(self, k: int, j: int, block: Block, dropped: bool, affine: bool,
             sampled: str = "", how: str = "random") -> PairCheck:
        """The verdict on block ``(k, j)`` compared at ``block``; ``dropped``: the backward
        returned ``None`` for input ``j``; ``affine``: it adds a term that does not depend on
        the upstream gradient; ``sampled`` and ``how``: what a bounded localisation compared
        and how it chose it (:meth:`.localize.Localizer.block`)."""
        bwd = self.bwd
        got, exp, tol, rows, cols = (block.got, block.expected, block.tolerance, block.rows,
                                     block.cols)
        yname, xname = bwd.out_names[k], bwd.s.names[j]
        out_shape, in_shape = tuple(bwd.outs[k].shape), tuple(bwd.s.xs[j].shape)
        total = bwd.outs[k].numel() * bwd.s.xs[j].numel()
        diff = (got - exp).abs()
        if block.overflow is not None:  # not finite in the inputs' dtype only: not an error
            diff = diff.masked_fill(block.overflow, 0.0)
        wrong = block.wrong()
        nw = int(wrong.sum())
        max_err = float(diff.nan_to_num(nan=math.inf).max()) if diff.numel() else 0.0
        extra: dict[str, Any] = {"sampled": sampled, "n_checked": got.numel(), "rows": rows,
                 "columns": cols}
        if nw == 0:
            return PairCheck(yname, xname, True, max_err, 0, total, got=got,
                             expected=exp, tolerance=tol, **extra)
        x_flat = bwd.s.xs[j].reshape(-1)
        x_cols = x_flat if cols is None else x_flat[cols]
        wrong_cols = wrong.any(0)
        split = threshold(wrong_cols, x_cols)
        where = None
        # a region is stated only when enough wrong elements support it, it holds again at
        # fresh points, and no right element of the whole input lies inside it
        if (split is not None and supported(wrong_cols)
                and self.confirm.region_holds(k, j, block, split)
                and self.confirm.region_uncontradicted(k, j, block, split)):
            where = region(wrong_cols, x_cols, xname)
            if cols is not None and where:
                where = where.replace(" elements)", " sampled elements)")
        sub = wrong_cols if where is not None else torch.ones_like(wrong_cols)
        full_block = rows is None and cols is None
        # entries not finite in the inputs' dtype only (Block.overflow) take no part in the
        # pattern: as the reference there, since float64 matched it
        seen = got if block.overflow is None else torch.where(block.overflow, exp, got)
        pat = classify(seen[:, sub], exp[:, sub], tol[:, sub], out_shape,
                       in_shape if where is None and full_block else (int(sub.sum()),),
                       dropped=dropped and where is None,
                       dtype=bwd.dtype,
                       names=(yname, xname),
                       partial=not full_block,
                       affine=affine,
                       intended=self.ref.by_rows,
                       forward_rounding=bwd.forward_rounding)
        if pat is None and not full_block and where is None:
            pat = self.confirm.sampled_transpose(k, j, block, (yname, xname))
        worst = tuple(WrongEntry(
            unravel(r if rows is None else int(rows[r]), out_shape),
            unravel(c if cols is None else int(cols[c]), in_shape), e, g)
            for r, c, e, g in worst_entries(got, exp, wrong))
        if not full_block:
            worst = self._as_backward_gives(k, j, worst)
        if pat is not None and pat.kind == "not-derivative":
            pat = self._flat_or_spurious(k, j, block, wrong, worst, (yname, xname))
        systematic = False
        if pat is not None and pat.kind == "precision" and not self.confirm.is_rounding(
                k, j, block, affine):
            pat, systematic = None, True
        # a block compared on a sample says what was sampled, never "only"
        how_many = "" if full_block else self._sample_count(wrong, rows, cols, k, j, how)
        if how == "rounding" and full_block:
            how_many = ("entries compared with the rounding this backward shows on float64 "
                        "copies")
        if pat is not None:
            if where:
                sentence = pat.sentence + (f", only {where}" if full_block else f", {where}")
            else:
                sentence = pat.sentence
        elif where is not None:
            sentence = f"wrong only {where}" if full_block else f"wrong {where}"
        else:
            sentence = (f"{nw} of {got.numel()} {'compared ' if not full_block else ''}entries "
                        f"wrong, with no simple pattern (not a constant factor, sign, "
                        f"transpose or offset)")
            if systematic:
                ok = wrong & (exp.abs() > 0)
                rel = float(((got - exp).abs() / exp.abs())[ok].max()) if bool(
                    ok.any()) else math.inf
                sentence += (f"; small (relative error up to {rel:.2g}) but not rounding: "
                             f"the backward is linear in v to far better than that, so a "
                             f"formula slightly off")
        # no region stated: the wrong elements and their values, when a region was in view
        # (one side of a threshold) or when they are few
        few = int(wrong_cols.sum()) <= 6 and int(wrong_cols.sum()) < wrong_cols.numel()
        if (where is None and (split is not None or (few and (
                pat is None or pat.kind == "non-finite")))
                and (pat is None or pat.kind != "spurious")):
            sentence += self._listed(wrong_cols, cols, in_shape, xname, full_block)
        if how_many:
            sentence += f"; {how_many}"
        return PairCheck(
            yname, xname, False, max_err, nw, total, worst,
            pat.kind if pat else None, where, sentence, got, exp, tol, **extra)

    def _flat_or_spurious(self, k, j, block: Block, wrong, worst, names) -> Pattern:
        """A backward nonzero where the Jacobian is zero: ``"not-derivative"`` (the forward
        is flat there, as under a straight-through estimator) only when the forward is flat
        in a neighbourhood of the wrong entries and not independent of them
        (:meth:`.confirm.Confirm.forward_flat`); else ``"spurious"``, with the entries."""
        yname, xname = names
        err = torch.where(wrong, (block.got - block.expected).abs(),
                          torch.full_like(block.got, -1.0))
        order = torch.argsort(err.reshape(-1), descending=True)[:64]
        c_n = block.got.shape[1]
        entries = []
        for i in order.tolist():
            if err.reshape(-1)[i] < 0:
                break
            r, c = i // c_n, i % c_n
            entries.append((r if block.rows is None else int(block.rows[r]),
                            c if block.cols is None else int(block.cols[c])))
        kind, steps = self.confirm.forward_flat(k, j, entries)
        if kind == "flat":
            return Pattern("not-derivative", (
                f"not the derivative of the forward: the backward passes a gradient where "
                f"∂{yname}/∂{xname} is zero (the forward is flat there: it changes at none "
                f"of the smallest step sizes tried, only at larger ones)"))
        shown = [f"∂{yname}{ix(e.output_index)}/∂{xname}{ix(e.input_index)} = "
                 f"{fmt(e.expected, 4)}, the backward gives {fmt(e.got, 4)}"
                 for e in worst[:3]]
        more = int(wrong.sum()) - len(shown)
        listing = "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
        why = {
            "independent": (f"those outputs do not depend on those elements of {xname} "
                            f"(no change at any of {steps} step sizes, small or large): a "
                            f"gradient sent where the forward has none"),
            "not flat": ("the forward is not flat there (it changes at the smallest step "
                         "sizes): the derivative is zero only at this point"),
        }.get(kind, "")
        return Pattern("spurious", (
            f"the backward is nonzero where the Jacobian is zero ({listing})"
            + (f": {why}" if why else "")))

    def unconfirmed(self, pair: PairCheck, linearity: bool = False) -> PairCheck:
        """A pair whose probes disagree although none of its compared entries is wrong
        (``linearity``: only its linearity probe failed)."""
        probes = ("the backward departs from linearity in v beyond its rounding" if linearity
                  else "the random probes disagree")
        return dataclasses.replace(
            pair, agree=False, sentence=(
                f"{probes}, but none of the compared entries is wrong ({pair.sampled}); "
                f"{self.advice}"))

    def _as_backward_gives(self, k, j, worst):
        """The named entries as ``y.backward(gradient=one-hot)`` gives them.  A sampled block
        may come from differentiating the backward with respect to its upstream gradient,
        which equals the one-hot backward pass up to the rounding of the backward's own
        operations (a cast to a lower precision rounds differently in the two)."""
        out, rows_seen = [], {}
        for e in worst:
            if e.output_index not in rows_seen:
                v = torch.zeros_like(self.bwd.outs[k]).detach()
                v[e.output_index] = 1
                rows_seen[e.output_index] = self.bwd.backward({k: v})[0][j]
            got = float(rows_seen[e.output_index][e.input_index])
            out.append(WrongEntry(e.output_index, e.input_index, e.expected, got))
        return tuple(out)

    def _listed(self, wrong_cols, cols, in_shape, xname, full_block: bool) -> str:
        """The wrong elements of the input with their values (up to six)."""
        idx = wrong_cols.nonzero().reshape(-1)
        if cols is not None:
            idx = cols[idx]
        flat = next(x for x, nm in zip(self.bwd.s.xs, self.bwd.s.names, strict=True)
                    if nm == xname).reshape(-1)
        shown = [f"{xname}[{', '.join(map(str, unravel(int(i), in_shape)))}] = "
                 f"{fmt(float(flat[int(i)]), 4)}" for i in idx[:6].tolist()]
        more = f" and {idx.numel() - 6} more" if idx.numel() > 6 else ""
        if full_block:
            return f" (wrong only at {', '.join(shown)}{more})"
        verb = "is" if idx.numel() == 1 else "are"
        return f" ({', '.join(shown)}{more} {verb} wrong)"

    def _sample_count(self, wrong, rows, cols, k, j, how: str) -> str:
        """What a sampled comparison found, as counts of what was sampled, with an estimate
        of the whole when the sample was a uniform random one (``how``)."""
        m, n = self.bwd.outs[k].numel(), self.bwd.s.xs[j].numel()
        xname, yname = self.bwd.s.names[j], self.bwd.out_names[k]
        parts = []
        if cols is not None:
            kw, c = int(wrong.any(0).sum()), cols.numel()
            if how == "random":
                parts.append(f"{kw} wrong of {c} columns sampled (of {n}, elements of "
                             f"{xname}); estimated {_estimate(kw, c, n)} wrong columns in all")
            elif how == "rounding":
                parts.append(f"{kw} wrong of {c} columns sampled (of {n}, elements of "
                             f"{xname}), compared with the rounding this backward shows on "
                             f"float64 copies")
            else:
                parts.append(f"{kw} wrong of {c} columns that group tests over all {n} "
                             f"(elements of {xname}) pointed to")
        if rows is not None:
            kr, r = int(wrong.any(1).sum()), rows.numel()
            if how == "random" or cols is not None:
                parts.append(f"{kr} wrong of {r} rows sampled (of {m}, elements of {yname})"
                             + (f"; estimated {_estimate(kr, r, m)} wrong rows in all"
                                if cols is None else ""))
            else:
                parts.append(f"{kr} wrong of {r} rows that group tests over all {m} "
                             f"(elements of {yname}) pointed to")
        return "; ".join(parts)

    def example(self, pairs) -> ExampleV | None:
        """The one-hot ``v`` at the worst row of the pair with the largest error, what the
        backward gives for it and what it should give (``None`` when nothing is wrong)."""
        wrong = [p for p in pairs if not p.agree and p.worst]
        if not wrong:
            return None
        p = max(wrong, key=lambda q: q.max_abs_error)
        bwd = self.bwd
        k = bwd.out_names.index(p.output)
        row = p.worst[0].output_index
        v = torch.zeros_like(bwd.outs[k]).detach()
        v[row] = 1
        grads, _ = bwd.backward({k: v})
        got, expected, right = {}, {}, {}
        flat_row = int(sum(i * math.prod(bwd.outs[k].shape[d + 1:])
                           for d, i in enumerate(row)))
        for j, name in enumerate(bwd.s.names):
            q = next(pp for pp in pairs if pp.output == p.output and pp.input == name)
            got[name] = grads[j]
            right[name] = q.agree
            shape, dtype = bwd.s.xs[j].shape, grads[j].dtype
            if q.expected is None:  # agreed in the probes: nothing else known
                expected[name] = grads[j].clone()
                continue
            if q.rows is None:
                r = flat_row
            else:
                hit = (q.rows == flat_row).nonzero()
                r = int(hit[0, 0]) if hit.numel() else -1
            if q.columns is None and r >= 0:
                expected[name] = q.expected[r].reshape(shape).to(dtype)
                continue
            full = torch.full((bwd.s.xs[j].numel(),), math.nan, dtype=dtype)
            if r >= 0:
                full[q.columns if q.columns is not None else slice(None)] = (
                    q.expected[r].to(dtype))
            expected[name] = full.reshape(shape)
        return ExampleV(p.output, row, v, got, expected, right)


def unchecked_sentence(unchecked: str, finite_differences: bool) -> str:
    """What could not be checked (``unchecked``: the pairs and inputs, from the checker), and
    why: the reference's estimates disagree over step sizes, or it is not finite there."""
    why = ("its estimates over step sizes disagree beyond their error bound, or fn is not "
           "finite there: fn may vary on a scale below the smallest step tried (an oscillation "
           "can even look smooth at the steps), jump, overflow or "
           "see a NaN; try other inputs, or reference='forward' (a Function needs a jvp)"
           if finite_differences else "the reference is not finite there (NaN or inf)")
    what = "the finite-difference reference" if finite_differences else "the reference"
    return f"could not check: {what} is unreliable for {unchecked} ({why})"


def summary(pairs: tuple[PairCheck, ...], probes: list[ProbeCheck], names: list[str],
            intended: bool, full_fits: bool = True, unchecked: str = "",
            finite_differences: bool = True) -> tuple[str, str]:
    """``(status, summary)`` of a run: ``"agree"``, ``"wrong"`` or ``"could-not-check"``, and
    the sentence that says which pairs are wrong and how, which inputs are right, what could
    not be checked (``unchecked``, from the checker: the reference could not give those
    entries), and, when a wrong block looks meant (:func:`_surrogate_like`, not against an
    ``intended`` backward), how to check it as such.  ``full_fits``: ``localize="full"`` fits
    in memory, so it may be suggested."""
    probe_wrong = [p for p in probes if not p.agree]
    wrong = [p for p in pairs if not p.agree]
    # probes that disagree on a pair whose compared entries all agree, some of them left
    # unchecked: the disagreement may sit in those entries, so it is not called wrong
    open_pairs = {(p.output, p.input) for p in pairs if p.agree and p.tolerance is not None
                  and bool(torch.isinf(p.tolerance).any())}
    probe_wrong = [p for p in probe_wrong if (p.output, p.input) not in open_pairs]
    if not wrong and not probe_wrong and unchecked:
        return "could-not-check", (unchecked_sentence(unchecked, finite_differences)
                                   + "; every entry it could give agrees.")
    if not wrong and not probe_wrong:
        return "agree", ("agree: the backward matches the reference for every "
                         "(output, input) pair.")
    status, text = _wrong(pairs, probe_wrong, wrong, names, intended, full_fits)
    if unchecked:
        text += " Also " + unchecked_sentence(unchecked, finite_differences) + "."
    return status, text


def _wrong(pairs, probe_wrong, wrong, names, intended, full_fits) -> tuple[str, str]:
    """:func:`summary` of a run with something wrong."""
    if not wrong:
        seen = dict.fromkeys(f"∂{p.output}/∂{p.input}" for p in probe_wrong
                             if p.kind == "vJu")
        lin = dict.fromkeys(f"∂{p.output}/∂{p.input}" for p in probe_wrong
                            if p.kind == "linearity")
        run = "localize='bounded' or 'full'" if full_fits else "localize='bounded'"
        said = []
        if seen:
            said.append("random probes vᵀJu disagree for " + ", ".join(seen))
        if lin:
            said.append("the backward departs from linearity in v beyond its rounding for "
                        + ", ".join(lin) + " (it rounds through a lower precision)")
        return "wrong", ("WRONG: " + "; ".join(said) + f" (run with {run} to see which "
                         f"entries).")
    parts = [f"∂{p.output}/∂{p.input}: {p.sentence}" for p in wrong]
    text = "WRONG: " + "; ".join(parts) + "."
    right = [p for p in pairs if p.agree]
    if right and len({p.input for p in wrong}) < len(names):
        bad = {p.input for p in wrong}
        ok_inputs = [n for n in names if n not in bad and any(p.input == n for p in right)]
        if ok_inputs:
            listed = (", ".join(ok_inputs[:-1]) + " and " + ok_inputs[-1]
                      if len(ok_inputs) > 1 else ok_inputs[0])
            probed = all(p.got is None for p in right if p.input in ok_inputs)
            how = ("agree in every random probe" if probed else
                   "are right" if all(p.n_checked == p.n_entries for p in right
                                      if p.input in ok_inputs) else
                   "agree on every compared entry")
            text += f" Only some inputs are wrong: the gradients of {listed} {how}."
    if not intended and any(_surrogate_like(p) for p in wrong):
        text += (" If that is intended (a straight-through estimator, a "
                 "surrogate gradient, gradient reversal), check it against what "
                 "the backward should compute: "
                 "check_backward(..., expected=lambda grad_output, *args: ...).")
    return "wrong", text


def _surrogate_like(p: PairCheck) -> bool:
    """Does a wrong block look like a gradient that was meant to differ from the derivative?
    Only two shapes do: the forward is flat (zero derivative) on every compared entry while
    the backward passes a gradient (a straight-through or surrogate gradient), or the sign is
    flipped on the whole block (gradient reversal).  A backward wrong where the forward is
    not flat (a missing mask, padded rows that get a gradient) is a bug, not a surrogate."""
    if p.pattern == "sign" and not p.region:
        return True
    if p.pattern != "not-derivative" or p.expected is None or p.tolerance is None:
        return False
    return bool((p.expected.abs() <= p.tolerance).all())


def ix(index: tuple[int, ...]) -> str:
    """``"[1, 0]"``, or nothing for a scalar."""
    return "[" + ", ".join(map(str, index)) + "]" if index else ""


def _estimate(hits: int, sampled: int, total: int) -> str:
    """``"about 2,400 (1,900 to 2,900)"``: the hits in a uniform sample scaled to the whole,
    with a rough 95% range (normal approximation of the binomial, or the rule of three)."""
    if sampled >= total:
        return f"{hits:,}"
    p = hits / sampled
    if hits == 0:
        return f"fewer than {min(total, math.ceil(3 * total / sampled)):,}"
    if hits == sampled:
        return f"most or all (at least {max(hits, total - math.ceil(3 * total / sampled)):,})"
    half = 1.96 * math.sqrt(p * (1 - p) / sampled) * math.sqrt(1 - sampled / total)
    lo = max(hits, math.floor((p - half) * total))
    hi = min(total, math.ceil((p + half) * total))
    return f"about {round(p * total):,} ({lo:,} to {hi:,})"
