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
                       intended=self.ref.by_rows)
        if pat is not None:
            sentence = pat.sentence + (f", only {where}" if where else "")
        elif where is not None:
            sentence = f"wrong only {where}"
        else:
            sentence = (f"{nw} of {got.numel()} entries wrong, with no simple pattern (not a "
                        f"constant factor, sign, transpose or offset)")
            if int(wrong_cols.sum()) <= 6 and int(wrong_cols.sum()) < wrong_cols.numel():
                sentence += self._listed(wrong_cols, cols, in_shape, xname)
        if pat is not None and where is None and split is not None:
            sentence += self._listed(wrong_cols, cols, in_shape, xname)
        worst = worst_entries(got, exp, wrong, (got.shape[0],), (got.shape[1],))
        worst = tuple(WrongEntry(
            _unravel(int(e.output_index[0]) if rows is None else int(rows[e.output_index[0]]),
                     out_shape),
            _unravel(int(e.input_index[0]) if cols is None else int(cols[e.input_index[0]]),
                     in_shape),
            e.expected, e.got) for e in worst)
        return PairCheck(
            yname, xname, False, max_err, nw, total, worst,
            pat.kind if pat else None, where, sentence, got, exp, tol, **extra)

    @staticmethod
    def _listed(wrong_cols, cols, in_shape, xname) -> str:
        idx = wrong_cols.nonzero().reshape(-1)
        if cols is not None:
            idx = cols[idx]
        shown = [f"{xname}[{', '.join(map(str, _unravel(int(i), in_shape)))}]"
                 for i in idx[:6].tolist()]
        more = f" and {idx.numel() - 6} more" if idx.numel() > 6 else ""
        return f" (wrong only at {', '.join(shown)}{more})"

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
