"""The verdict on one (output, input) block: wrong entries, where they are, their pattern, and
an example upstream gradient ``v`` that shows the difference.

The wording comes from :mod:`.localize` (patterns, regions) and :mod:`.report` (the table).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .localize import WrongEntry, _unravel, classify, region, threshold, worst_entries
from .references import choose
from .results import ExampleV, PairCheck
from .tolerance import entry_tolerance
from .under_test import BackwardUnderTest

__all__ = ["Verdicts"]


class Verdicts(BackwardUnderTest):
    """The verdict steps of :class:`~gradarg.check.checker.Checker` (a mixin)."""

    def _pair(self, k, j, got, exp, tol, dropped, rows=None, cols=None,
              sampled="") -> PairCheck:
        yname, xname = self.out_names[k], self.s.names[j]
        out_shape, in_shape = tuple(self.outs[k].shape), tuple(self.s.xs[j].shape)
        total = self.outs[k].numel() * self.s.xs[j].numel()
        diff = (got - exp).abs()
        wrong = diff > tol
        nw = int(wrong.sum())
        max_err = float(diff.max()) if diff.numel() else 0.0
        extra = {"sampled": sampled, "n_checked": got.numel(), "rows": rows,
                 "columns": cols}
        if nw == 0:
            return PairCheck(yname, xname, True, max_err, 0, total, got=got,
                             expected=exp, tolerance=tol, **extra)
        x_flat = self.s.xs[j].reshape(-1)
        x_cols = x_flat if cols is None else x_flat[cols]
        wrong_cols = wrong.any(0)
        split = threshold(wrong_cols, x_cols)
        where = None
        if split is not None and self._split_holds(k, j, cols, rows, split):
            where = region(wrong_cols, x_cols, xname)
            if cols is not None and where:
                where = where.replace(" elements)", " sampled elements)")
        sub = wrong_cols if where is not None else torch.ones_like(wrong_cols)
        full_block = rows is None and cols is None
        pat = classify(got[:, sub], exp[:, sub], tol[:, sub], out_shape,
                       in_shape if where is None and full_block else (int(sub.sum()),),
                       dropped=dropped and where is None,
                       dtype=self.dtype,
                       names=(yname, xname),
                       partial=not full_block,
                       affine=self.affine.get(xname, False),
                       intended=self.ref.by_rows,
                       forward_rounding=getattr(self, "forward_rounding", None))
        if pat is None and not full_block and where is None:
            pat = self._sampled_transpose(k, j, got, exp, tol, rows, cols)
        systematic = False
        if pat is not None and pat.kind == "precision" and self._error_is_smooth(
                k, j, got - exp, wrong, rows, cols):
            pat, systematic = None, True
        # a block compared on a sample says what was sampled, never "only"
        how_many = "" if full_block else self._sample_count(wrong, rows, cols, k, j)
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
                rel = float(((got - exp).abs() / exp.abs().clamp_min(1e-300))[wrong].max())
                sentence += (f"; small (relative error up to {rel:.2g}) but no rounding: the "
                             f"same error at a nearby point, so a formula slightly off")
            if int(wrong_cols.sum()) <= 6 and int(wrong_cols.sum()) < wrong_cols.numel():
                sentence += self._listed(wrong_cols, cols, in_shape, xname, full_block)
        if pat is not None and where is None and split is not None:
            sentence += self._listed(wrong_cols, cols, in_shape, xname, full_block)
        if how_many:
            sentence += f"; {how_many}"
        worst = worst_entries(got, exp, wrong, (got.shape[0],), (got.shape[1],))
        worst = tuple(WrongEntry(
            _unravel(int(e.output_index[0]) if rows is None else int(rows[e.output_index[0]]),
                     out_shape),
            _unravel(int(e.input_index[0]) if cols is None else int(cols[e.input_index[0]]),
                     in_shape),
            e.expected, e.got) for e in worst)
        if not full_block:
            worst = self._as_backward_gives(k, j, worst)
        return PairCheck(
            yname, xname, False, max_err, nw, total, worst,
            pat.kind if pat else None, where, sentence, got, exp, tol, **extra)

    def _as_backward_gives(self, k, j, worst):
        """The named entries as ``y.backward(gradient=one-hot)`` gives them.  A sampled block
        may come from differentiating the backward with respect to its upstream gradient,
        which equals the one-hot backward pass up to the rounding of the backward's own
        operations (a cast to a lower precision rounds differently in the two)."""
        out, rows_seen = [], {}
        for e in worst:
            if e.output_index not in rows_seen:
                v = torch.zeros_like(self.outs[k]).detach()
                v[e.output_index] = 1
                rows_seen[e.output_index] = self.backward({k: v})[0][j]
            got = float(rows_seen[e.output_index][e.input_index])
            out.append(WrongEntry(e.output_index, e.input_index, e.expected, got))
        return tuple(out)

    @staticmethod
    def _listed(wrong_cols, cols, in_shape, xname, full_block: bool = True) -> str:
        idx = wrong_cols.nonzero().reshape(-1)
        if cols is not None:
            idx = cols[idx]
        shown = [f"{xname}[{', '.join(map(str, _unravel(int(i), in_shape)))}]"
                 for i in idx[:6].tolist()]
        more = f" and {idx.numel() - 6} more" if idx.numel() > 6 else ""
        if full_block:
            return f" (wrong only at {', '.join(shown)}{more})"
        verb = "is" if idx.numel() == 1 else "are"
        return f" ({', '.join(shown)}{more} {verb} wrong)"

    def _sample_count(self, wrong, rows, cols, k, j) -> str:
        """What a sampled comparison found, as counts of what was sampled, with an estimate
        of the whole when the sample was a uniform random one."""
        m, n = self.outs[k].numel(), self.s.xs[j].numel()
        xname, yname = self.s.names[j], self.out_names[k]
        parts = []
        if cols is not None:
            kw, c = int(wrong.any(0).sum()), cols.numel()
            how = getattr(self, "_how_sampled", {}).get((k, j), "random")
            if how == "random":
                parts.append(f"{kw} wrong of {c} columns sampled (of {n}, elements of "
                             f"{xname}); estimated {_estimate(kw, c, n)} wrong columns in all")
            else:
                parts.append(f"{kw} wrong of {c} columns that group tests over all {n} "
                             f"(elements of {xname}) pointed to")
        if rows is not None:
            kr, r = int(wrong.any(1).sum()), rows.numel()
            how = getattr(self, "_how_sampled", {}).get((k, j), "random")
            if how == "random" or cols is not None:
                parts.append(f"{kr} wrong of {r} rows sampled (of {m}, elements of {yname})"
                             + (f"; estimated {_estimate(kr, r, m)} wrong rows in all"
                                if cols is None else ""))
            else:
                parts.append(f"{kr} wrong of {r} rows that group tests over all {m} "
                             f"(elements of {yname}) pointed to")
        return "; ".join(parts)

    def _sampled_transpose(self, k, j, got, exp, tol, rows, cols):
        """The transposition patterns, tested on a sampled block: the backward's sampled
        columns against the reference's columns at the transposed indices (two equally long
        input dimensions swapped), or, for a square block, the backward's rows at the sampled
        indices against the reference's columns there (rows and columns exchanged)."""
        from .localize import Pattern

        yname, xname = self.out_names[k], self.s.names[j]
        x = self.s.xs[j]
        m, n = self.outs[k].numel(), x.numel()
        if cols is None or self.ref.by_rows:
            return None
        wrong = (got - exp).abs() > tol
        if not bool(wrong.any()):
            return None
        try:
            shape = tuple(x.shape)
            for a in range(len(shape)):
                for b in range(a + 1, len(shape)):
                    if shape[a] != shape[b] or shape[a] < 2:
                        continue
                    perm = list(range(len(shape)))
                    perm[a], perm[b] = perm[b], perm[a]
                    flat = torch.arange(n).reshape(shape).permute(perm).reshape(-1)
                    swapped = flat[cols]
                    vals, errs = self.ref.columns(j, swapped)
                    ref_t = vals[k] if rows is None else vals[k][rows]
                    err_t = errs[k] if rows is None else errs[k][rows]
                    tol_t = entry_tolerance(ref_t, err_t, self.rtol)
                    if bool(((got - ref_t).abs() <= torch.maximum(tol, tol_t)).all()):
                        return Pattern("transposed", (
                            f"transposed: the backward gives ∂{yname}/∂{xname} with its input "
                            f"dimensions {a} and {b} swapped (a matrix used where its "
                            f"transpose belongs; tested on the sampled columns)"))
            if m == n and rows is None:
                g_rows = self.got_rows(k, j, cols)  # (c × n): the backward's rows at cols
                # rows of the backward = columns of the reference: J given where Jᵀ belongs
                if bool(((g_rows.T - exp).abs() <= tol).all()):
                    return Pattern("transposed", (
                        f"transposed: the backward gives ∂{yname}/∂{xname} with rows and "
                        f"columns exchanged (a matrix used where its transpose belongs; "
                        f"tested on the sampled columns)"))
        except (RuntimeError, ValueError, IndexError):
            return None
        return None

    def _error_is_smooth(self, k, j, err, wrong, rows, cols) -> bool:
        """Is an error that looks like rounding really a small, systematic one?  Rounding
        in a lower precision changes at random when the inputs move by more than its unit
        (here 2⁻⁶ relative); the error of a formula that is slightly off moves with them, so
        errors that stay correlated (> 0.9) at a nearby point are systematic."""
        xs = list(self.s.xs)
        x = xs[j]
        noise = torch.randn(x.shape, generator=self.gen, dtype=torch.float64)
        xs[j] = (x.double() * (1 + 2.0 ** -6 * noise)).to(x.dtype)
        idx = torch.arange(x.numel()) if cols is None else cols
        try:
            checker: Any = type(self)
            sub = checker(self.s.at(tuple(xs)), self.reference, 0, "none", self.rtol,
                          self.gen, self.intended)
            sub.ref = choose(sub, sub.reference, sub.intended)
            ridx = torch.arange(sub.outs[k].numel()) if rows is None else rows
            if self.ref.by_rows:
                got = sub.got_rows(k, j, ridx)[:, idx]
                exp = sub.ref.rows(k, ridx)[j][:, idx]
            else:
                r2, got = sub.got_columns(k, j, idx)
                vals, _ = sub.ref.columns(j, idx)
                exp = vals[k] if r2 is None else vals[k][r2]
                if r2 is not None and rows is not None and not torch.equal(r2, rows):
                    return False
        except (RuntimeError, ValueError, TypeError, IndexError):
            return False
        e1, e2 = err[wrong], (got - exp)[wrong]
        if e1.numel() < 3:
            return False
        c = float((e1 * e2).sum()) / max(float(e1.norm() * e2.norm()), 1e-300)
        return c > 0.9

    def _split_holds(self, k, j, cols, rows, split, points: int = 2) -> bool:
        """Does "wrong exactly where x op t" hold again with the input's values shuffled?"""
        op, t = split
        x = self.s.xs[j]
        n = x.numel()
        idx = torch.arange(n) if cols is None else cols
        for _ in range(points):
            perm = torch.randperm(n, generator=self.gen)
            xs = list(self.s.xs)
            xs[j] = x.reshape(-1)[perm].reshape(x.shape).clone()
            try:
                checker: Any = type(self)  # a Checker: the mixins run inside one
                sub = checker(self.s.at(tuple(xs)), self.reference, 0, "none", self.rtol,
                              self.gen, self.intended)
                sub.ref = choose(sub, sub.reference, sub.intended)
                if self.ref.by_rows:
                    ridx = torch.arange(sub.outs[k].numel()) if rows is None else rows
                    got = sub.got_rows(k, j, ridx)[:, idx]
                    exp = sub.ref.rows(k, ridx)[j][:, idx]
                    err = torch.zeros_like(exp)
                else:
                    r2, got = sub.got_columns(k, j, idx)
                    vals, errs = sub.ref.columns(j, idx)
                    exp, err = vals[k], errs[k]
                    if r2 is not None:
                        exp, err = exp[r2], err[r2]
                tol = entry_tolerance(exp, err, self.rtol)
                wrong = ((got - exp).abs() > tol).any(0)
            except (RuntimeError, ValueError, TypeError, IndexError):
                return False
            xv = xs[j].reshape(-1)[idx].double()
            side = xv < t if op == "<" else xv > t
            if not torch.equal(wrong, side):
                return False
        return True

    def example(self, pairs) -> ExampleV | None:
        wrong = [p for p in pairs if not p.agree and p.worst]
        if not wrong:
            return None
        p = max(wrong, key=lambda q: q.max_abs_error)
        k = self.out_names.index(p.output)
        row = p.worst[0].output_index
        v = torch.zeros_like(self.outs[k]).detach()
        v[row] = 1
        grads, _ = self.backward({k: v})
        got, expected, right = {}, {}, {}
        flat_row = int(sum(i * math.prod(self.outs[k].shape[d + 1:])
                           for d, i in enumerate(row)))
        for j, name in enumerate(self.s.names):
            q = next(pp for pp in pairs if pp.output == p.output and pp.input == name)
            got[name] = grads[j]
            right[name] = q.agree
            shape, dtype = self.s.xs[j].shape, grads[j].dtype
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
            full = torch.full((self.s.xs[j].numel(),), math.nan, dtype=dtype)
            if r >= 0:
                full[q.columns if q.columns is not None else slice(None)] = (
                    q.expected[r].to(dtype))
            expected[name] = full.reshape(shape)
        return ExampleV(p.output, row, v, got, expected, right)


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
