"""Bounded localisation: which entries of a wrong (output, input) block are wrong, within a budget.

A block whose random probes disagree is compared on a random sample of its columns (or, against
an intended backward, its rows); when the sample shows nothing, group tests over the columns
(:meth:`Localizer.screen_columns`) find the ones that hold the errors.  The sample is stated in
the result (``PairCheck.sampled``).
"""

from __future__ import annotations

import dataclasses

import torch

from . import fd_error
from .results import PairCheck
from .tolerance import SAFETY, entry_tolerance
from .under_test import BLOCK_ENTRIES, CHUNK_ENTRIES, MAX_COLUMNS, MIN_COLUMNS
from .verdict import Verdicts

__all__ = ["BLOCK_ENTRIES", "CHUNK_ENTRIES", "MAX_COLUMNS", "MIN_COLUMNS", "Localizer"]

class Localizer(Verdicts):
    """The localisation steps of :class:`~gradarg.check.checker.Checker` (a mixin)."""

    def compare_bounded(self, probes) -> tuple[PairCheck, ...]:
        bad = {(p.output, p.input) for p in probes if not p.agree}
        self._how_sampled = {}
        _, none = self.backward(self._random_vs())
        pairs, sampled = [], []
        for k in self.keep:
            for j in range(len(self.s.xs)):
                yname, xname = self.out_names[k], self.s.names[j]
                total = self.outs[k].numel() * self.s.xs[j].numel()
                if (yname, xname) not in bad:
                    pairs.append(PairCheck(yname, xname, True, 0.0, 0, total,
                                           sampled="random probes only", n_checked=0))
                    continue
                pair = self.localize_pair(k, j, none[j])
                if pair.agree:  # the probes disagree, yet no compared entry is wrong
                    pair = dataclasses.replace(
                        pair, agree=False, sentence=(
                            f"the random probes disagree, but none of the compared entries "
                            f"is wrong ({pair.sampled}); localize='full' compares every "
                            f"entry"))
                pairs.append(pair)
                if pair.sampled:
                    sampled.append(f"∂{yname}/∂{xname}: {pair.sampled}")
        if sampled:
            self.notes.append("localised on a sample of the Jacobian (" + "; ".join(sampled)
                              + "); localize='full' compares every entry: " + self.cost_text)
        return tuple(pairs)

    def localize_pair(self, k: int, j: int, dropped: bool) -> PairCheck:
        y, x = self.outs[k], self.s.xs[j]
        m, n = y.numel(), x.numel()
        if self.ref.by_rows:
            r = min(m, max(MIN_COLUMNS, BLOCK_ENTRIES // max(n, 1)))
            rows = None if r == m else torch.randperm(m, generator=self.gen)[:r].sort().values
            idx = torch.arange(m) if rows is None else rows
            got = self.got_rows(k, j, idx)
            exp = self.ref.rows(k, idx)[j]
            tol = entry_tolerance(exp, 0.0, self.rtol)
            cols = None
            if rows is not None and not bool(((got - exp).abs() > tol).any()):
                # a random sample of rows missed errors confined to a few: group tests
                found = self.screen_rows(k, j, r)
                if found is not None:
                    rows = found
                    got = self.got_rows(k, j, rows)
                    exp = self.ref.rows(k, rows)[j]
                    tol = entry_tolerance(exp, 0.0, self.rtol)
        else:
            c = min(n, max(MIN_COLUMNS, min(MAX_COLUMNS, BLOCK_ENTRIES // max(m, 1))))
            perm = torch.randperm(n, generator=self.gen)
            cols = None if c == n else perm[:c].sort().values
            rows, got, exp, _, tol = self._columns_block(k, j, cols)
            if cols is not None and not bool(((got - exp).abs() > tol).any()):
                # a random sample missed sparse errors: find the columns by group tests
                found = self.screen_columns(k, j, c)
                if found is not None:
                    cols = found
                    rows, got, exp, _, tol = self._columns_block(k, j, cols)
        parts = []
        if cols is not None:
            parts.append(f"{cols.numel()} of {n} columns (elements of {self.s.names[j]})")
        if rows is not None:
            parts.append(f"{rows.numel()} of {m} rows (elements of {self.out_names[k]})")
        elif cols is not None:
            parts.append(f"all {m} rows")
        return self._pair(k, j, got, exp, tol, dropped, rows=rows, cols=cols,
                          sampled=", ".join(parts))

    def _columns_block(self, k, j, cols):
        idx = torch.arange(self.s.xs[j].numel()) if cols is None else cols
        rows, got = self.got_columns(k, j, idx)
        vals, errs = self.ref.columns(j, idx)
        exp, err = vals[k], errs[k]
        if rows is not None:
            exp, err = exp[rows], err[rows]
        tol = entry_tolerance(exp, err, self.rtol)
        return rows, got, exp, err, tol

    def screen_columns(self, k: int, j: int, c: int, groups: int = 16):
        """Input elements of ``j`` whose columns hold the errors, by group tests.

        A group of candidate columns gets one random direction ``u`` supported on it, and
        ``J u`` from the backward is compared with the reference's: a group whose products
        differ holds a wrong column.  Groups that differ are halved and tested again
        (:func:`halving`), so ``k`` wrong columns among ``n`` take ``O(k log n)`` products.
        ``None`` when no group differs.
        """
        x = self.s.xs[j]
        n = x.numel()
        nin = len(self.s.xs)

        def test(parts: list[torch.Tensor]) -> list[bool]:
            dirs = torch.zeros(len(parts), n, dtype=x.dtype)
            for i, p in enumerate(parts):
                dirs[i, p] = torch.randn(p.numel(), generator=self.gen,
                                         dtype=torch.float64).to(x.dtype)
            rows, got = self.got_columns(k, j, None, dirs)
            m = max(1, self.outs[k].numel())
            per = max(1, CHUNK_ENTRIES // (2 * m * (fd_error.MAX_STEPS + 2)))
            vals, errs = [], []
            for start in range(0, len(parts), per):
                v_, e_ = self.ref.directional(
                    [[dirs[i].reshape(x.shape) if jj == j else None for jj in range(nin)]
                     for i in range(start, min(len(parts), start + per))])
                vals += [v[k].reshape(-1) for v in v_]
                errs += [e[k].reshape(-1) for e in e_]
            exp, err = torch.stack(vals).T, torch.stack(errs).T
            if rows is not None:
                exp, err = exp[rows], err[rows]
            scale = exp.abs().amax(0) + got.abs().amax(0)
            bad = ((got - exp).abs() > SAFETY * err + self.rtol * scale * 10 + 1e-300).any(0)
            return bad.tolist()

        found = halving(n, test, c, self.gen, groups)
        if found is not None:
            self._how_sampled[(k, j)] = "screened"
        return found

    def screen_rows(self, k: int, j: int, r: int, groups: int = 16):
        """Output elements of ``k`` whose rows (against the intended backward) hold the
        errors, by group tests: an upstream gradient ``v`` supported on a group, the
        backward's ``vᵀJ`` against the intended one.  ``None`` when no group differs."""
        y = self.outs[k]
        m = y.numel()

        def test(parts: list[torch.Tensor]) -> list[bool]:
            bad = []
            for p in parts:
                v = torch.zeros(m, dtype=y.dtype)
                v[p] = torch.randn(p.numel(), generator=self.gen,
                                   dtype=torch.float64).to(y.dtype)
                v = v.reshape(y.shape)
                got = self.backward({k: v})[0][j].double()
                exp = self.ref.vjp({k: v})[j].double()
                scale = float(exp.abs().max()) + float(got.abs().max())
                bad.append(bool(((got - exp).abs() > 10 * self.rtol * scale + 1e-300).any()))
            return bad

        found = halving(m, test, r, self.gen, groups)
        if found is not None:
            self._how_sampled[(k, j)] = "screened"
        return found


def halving(n: int, test, want: int, gen: torch.Generator, groups: int = 16,
            keep: int = 8) -> torch.Tensor | None:
    """Adaptive group testing: indices among ``range(n)`` for which ``test`` says "bad".

    ``test(parts)`` gets a list of index tensors (groups) and says for each whether it holds
    a bad index.  The indices are shuffled into ``groups`` groups; the bad ones are halved and
    tested again, at most ``keep`` of them per level (a random choice when more are bad), until
    single indices are left: ``k`` bad indices among ``n`` take about ``2 min(k, keep)
    log2(n / groups)`` tests.  Returns up to ``want`` bad indices (sorted), or ``None`` when no
    group of the first level is bad.
    """
    perm = torch.randperm(n, generator=gen)
    level = [p for p in perm.chunk(min(groups, n)) if p.numel()]
    found: list[torch.Tensor] = []
    first = True
    while level and len(found) < want:
        bad = [p for p, b in zip(level, test(level), strict=True) if b]
        if first and not bad:
            return None
        first = False
        single = [p for p in bad if p.numel() == 1]
        found += single
        rest = [p for p in bad if p.numel() > 1]
        if len(rest) > keep:
            pick = torch.randperm(len(rest), generator=gen)[:keep].tolist()
            rest = [rest[i] for i in pick]
        level = [h for p in rest for h in p.chunk(2) if h.numel()]
    if not found:
        return None
    return torch.cat(found)[:want].sort().values
