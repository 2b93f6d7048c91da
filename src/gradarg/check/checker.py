"""The steps of one ``check_backward`` run: set-up, determinism and offset checks, random probes,
the full or bounded comparison, the example ``v`` and the result.

The reference is an object of :mod:`.references` (one interface, whatever it is); the bounded
localisation is :class:`~.sampling.Localizer`; tolerances come from :mod:`.tolerance`; the
report's wording from :mod:`.report`.
"""

from __future__ import annotations

import warnings

import torch

from ..core.dense import jacobian
from . import fd_error
from .references import FiniteDifferences, choose
from .results import BackwardCheck, LocalizationCostWarning, PairCheck, ProbeCheck
from .sampling import Localizer
from .setup import Setup
from .tolerance import SAFETY, backward_rtol, entry_tolerance
from .under_test import BLOCK_ENTRIES, CHUNK_ENTRIES

__all__ = ["BLOCK_ENTRIES", "FULL_SIZE", "FULL_WARN_BYTES", "Checker"]

# a backward in float32 (or lower) may lose this many times the forward's relative rounding
# (at least its dtype's eps), norm-wise, before it is said to compute in a lower precision
C_PRECISION = 16.0
FULL_SIZE = 16_384  # Jacobians with at most this many entries are built in full
FD_FULL_COLUMNS = 1_024  # with finite differences, only up to this many input elements
FULL_WARN_BYTES = 1 << 30  # localize="full" warns before it runs when it expects more memory


class Checker(Localizer):
    """One run of ``check_backward``: the backward under test, its reference, the steps."""

    def __init__(self, setup: Setup, reference, probes, localize, rtol, gen, intended=None):
        self.s = setup
        self.reference = reference
        self.n_probes = probes
        self.localize = localize
        self.gen = gen
        self.intended = intended
        self.notes: list[str] = []
        self.affine: dict[str, bool] = {}
        self.state = torch.get_rng_state()
        leaves = tuple(x.clone().requires_grad_(True) for x in setup.xs)
        with torch.enable_grad():
            raw = setup.flat(*leaves)
        names = ["y"] if len(raw) == 1 else [f"y[{k}]" for k in range(len(raw))]
        floating = [k for k, y in enumerate(raw)
                    if isinstance(y, torch.Tensor) and y.is_floating_point()]
        self.dropped_outputs = [
            f"{names[k]} ({getattr(y, 'dtype', type(y).__name__)}): not a floating output"
            for k, y in enumerate(raw) if k not in floating]
        if not floating:
            raise TypeError("fn returned no floating-point tensor: nothing to differentiate")
        flat = setup.flat

        def floating_only(*ts: torch.Tensor) -> tuple[torch.Tensor, ...]:
            out = flat(*ts)
            return tuple(out[k] for k in floating)

        self.s = Setup(setup.names, setup.xs, floating_only, setup.skipped, setup.args,
                        setup.slots)
        self.leaves, self.outs = leaves, tuple(raw[k] for k in floating)
        self.out_names = [names[k] for k in floating]
        self.keep = list(range(len(floating)))
        dtype = setup.xs[0].dtype
        self.rtol = backward_rtol(dtype) if rtol is None else rtol
        self.dtype = dtype
        self.user_rtol = rtol is not None
        self.twin = self._twin()

    # -------------------------------------------------------------- rounding, measured

    def _twin(self):
        """The same function on float64 copies of the inputs, recorded for autograd: its
        backward is the backward under test run in float64, so ``g - g64`` is the rounding the
        backward under test shows in its own dtype.  ``None`` for float64 inputs, when ``fn``
        refuses float64 copies, or when its float64 outputs are not its outputs rounded (random
        draws that differ between the dtypes)."""
        if self.user_rtol or all(x.dtype == torch.float64 for x in self.s.xs):
            return None
        try:
            leaves = tuple(x.detach().double().requires_grad_(True) for x in self.s.xs)
            torch.set_rng_state(self.state)
            with torch.enable_grad():
                outs = self.s.flat(*leaves)
        except (RuntimeError, TypeError, ValueError):
            return None
        rho = 0.0
        for k in self.keep:
            y, y64 = self.outs[k], outs[k]
            if y64.dtype != torch.float64 or y64.shape != y.shape:
                return None
            if not y64.requires_grad:
                continue
            scale = float(y64.detach().norm())
            d = float((y.detach().double() - y64.detach()).norm())
            if not (d <= 1e-2 * scale):  # not the same function (random draws), or NaN
                return None
            rho = max(rho, d / scale if scale > 0 else 0.0)
        eps = torch.finfo(self.dtype).eps
        # the precision a backward in this dtype may have: its dtype's, or the forward's
        self.forward_rounding = max(eps, rho)
        return leaves, outs

    def backward64(self, vs: dict[int, torch.Tensor]) -> list[torch.Tensor] | None:
        """The backward under test run in float64 (on the twin) for the same ``vs``."""
        if self.twin is None:
            return None
        leaves, outs = self.twin
        live = [k for k in vs if outs[k].requires_grad]
        if not live:
            return [torch.zeros_like(x) for x in leaves]
        try:
            with torch.enable_grad():
                grads = torch.autograd.grad([outs[k] for k in live], leaves,
                                            [vs[k].detach().double() for k in live],
                                            retain_graph=True, allow_unused=True)
        except RuntimeError:
            return None
        return [torch.zeros_like(x) if g is None else g.detach()
                for g, x in zip(grads, leaves, strict=True)]

    def probe_rounding(self, g: torch.Tensor, g64: torch.Tensor | None) -> float | None:
        """How far ``g · u`` of a correct backward may be from the exact value, for ``u`` with
        independent standard normal entries: six standard deviations of ``δ · u`` with ``δ =
        g - g64`` the rounding measured on this very product, plus the precision the backward
        may lose against the forward's (``C_PRECISION`` times the forward's relative rounding,
        at least its dtype's eps, of ``‖g64‖``).  ``None`` without a float64 twin."""
        if g64 is None:
            return None
        delta = float((g - g64).norm())
        return 6.0 * (delta + C_PRECISION * self.forward_rounding * float(g64.norm()))

    # -------------------------------------------------------------- steps

    def run(self) -> BackwardCheck:
        s = self.s
        skipped = list(s.skipped) + self.dropped_outputs
        self.ref = choose(self, self.reference, self.intended)
        ref_name = self.ref.name
        self.cost_text, cost_bytes = self.full_cost()
        status_nd = self.determinism()
        if status_nd is not None:
            return self._result("non-deterministic", status_nd, ref_name, skipped, (), (), None)
        self.offset_check()
        probes = self.probe()
        m = sum(self.outs[k].numel() for k in self.keep)
        n = sum(x.numel() for x in s.xs)
        probe_wrong = [p for p in probes if not p.agree]
        mode = self.localize
        if mode == "auto":
            # finite differences take a Richardson table per column: a full Jacobian of many
            # columns (a scalar loss of 4,096 inputs) is left to the probes and the bounded way
            cheap = not isinstance(self.ref, FiniteDifferences) or n <= FD_FULL_COLUMNS
            mode = ("full" if m * n <= FULL_SIZE and cheap else
                    "bounded" if probe_wrong else "none")
        pairs: tuple[PairCheck, ...] = ()
        example = None
        if mode == "full":
            if cost_bytes > FULL_WARN_BYTES:
                warnings.warn(f"localize='full': {self.cost_text}",
                              LocalizationCostWarning, stacklevel=3)
            pairs = self.compare_full()
            example = self.example(pairs)
        elif mode == "bounded":
            pairs = self.compare_bounded(probes)
            example = self.example(pairs)
        wrong = [p for p in pairs if not p.agree]
        if not wrong and not probe_wrong:
            return self._result("agree", "agree: the backward matches the reference for every "
                                "(output, input) pair.", ref_name, skipped, probes, pairs, None)
        if wrong:
            parts = [f"∂{p.output}/∂{p.input}: {p.sentence}" for p in wrong]
            summary = "WRONG: " + "; ".join(parts) + "."
            right = [p for p in pairs if p.agree]
            if right and len({p.input for p in wrong}) < len(s.names):
                bad = {p.input for p in wrong}
                ok_inputs = [n for n in s.names if n not in bad and any(
                    p.input == n for p in right)]
                if ok_inputs:
                    names = (", ".join(ok_inputs[:-1]) + " and " + ok_inputs[-1]
                             if len(ok_inputs) > 1 else ok_inputs[0])
                    probed = all(p.got is None for p in right if p.input in ok_inputs)
                    how = ("agree in every random probe" if probed else
                           "are right" if all(p.n_checked == p.n_entries for p in right
                                              if p.input in ok_inputs) else
                           "agree on every compared entry")
                    summary += f" Only some inputs are wrong: the gradients of {names} {how}."
            if not self.ref.by_rows and any(_surrogate_like(p) for p in wrong):
                summary += (" If that is intended (a straight-through estimator, a "
                            "surrogate gradient, gradient reversal), check it against what "
                            "the backward should compute: "
                            "check_backward(..., expected=lambda grad_output, *args: ...).")
        else:
            seen = dict.fromkeys(f"∂{p.output}/∂{p.input}" for p in probe_wrong)
            summary = ("WRONG: random probes vᵀJu disagree for " + ", ".join(seen)
                       + " (run with localize='bounded' or 'full' to see which entries).")
        return self._result("wrong", summary, ref_name, skipped, probes, pairs, example)

    # -------------------------------------------------------------- cost of the full way

    def full_cost(self) -> tuple[str, int]:
        """What ``localize="full"`` costs: a sentence and the bytes it is expected to take."""
        m = sum(self.outs[k].numel() for k in self.keep)
        ns = [x.numel() for x in self.s.xs]
        n = sum(ns)
        size = 8 * m * n
        ref, mem = self.ref.cost(m, ns, size)
        text = (f"the full Jacobians have {m * n:,} entries: {m:,} backward passes and {ref}, "
                f"about {_bytes(mem)} of memory")
        return text, mem

    def note_uncertain(self, what: str) -> None:
        """Say (once) that finite differences are uncertain for ``what``."""
        note = (f"the finite differences are uncertain for {what} (estimated error above 1% of "
                f"the largest entry): fn may be discontinuous or random there, so agreement "
                f"there says little")
        if note not in self.notes:
            self.notes.append(note)

    def _result(self, status, summary, ref_name, skipped, probes, pairs, example):
        return BackwardCheck(
            status=status, summary=summary, reference=ref_name, inputs=tuple(self.s.names),
            outputs=tuple(self.out_names[k] for k in self.keep), skipped=tuple(skipped),
            probes=tuple(probes), pairs=tuple(pairs), example=example,
            notes=tuple(self.notes), rtol=self.rtol, full_cost=getattr(self, "cost_text", ""))

    def determinism(self) -> str | None:
        vs = self._random_vs()
        torch.set_rng_state(self.state)
        a, _ = self.backward(vs)
        b, _ = self.backward(vs)
        worst, name = 0.0, ""
        for g1, g2, nm in zip(a, b, self.s.names, strict=True):
            d = float((g1 - g2).abs().max()) if g1.numel() else 0.0
            scale = float(g1.abs().max()) if g1.numel() else 0.0
            if d > 0:
                self.notes.append(f"the backward is non-deterministic for {nm}: two runs with "
                                  f"the same v differ by {d:.1e} (e.g. atomic adds)")
            if d > self.rtol * max(scale, 1e-30) * 10 and d > worst:
                worst, name = d, nm
        if worst > 0:
            return (f"NON-DETERMINISTIC: two backward passes with the same v give gradients of "
                    f"{name} that differ by {worst:.2e}; a verdict on right or wrong needs a "
                    f"deterministic backward.")
        return None

    def offset_check(self) -> None:
        zeros = {k: torch.zeros_like(self.outs[k]) for k in self.keep}
        grads, _ = self.backward(zeros)
        for g, nm in zip(grads, self.s.names, strict=True):
            self.affine[nm] = bool(g.numel() and bool((g != 0).any()))
            if self.affine[nm]:
                self.notes.append(
                    f"the backward is not linear in the upstream gradient: with v = 0 it gives "
                    f"a nonzero gradient for {nm} (max {float(g.abs().max()):.3g}), so it adds "
                    f"a term that does not depend on v")

    def probe(self) -> list[ProbeCheck]:
        out: list[ProbeCheck] = []
        if self.n_probes <= 0:
            return out
        nin = len(self.s.xs)
        dirs, vss = [], []
        for _ in range(self.n_probes):
            us = [torch.randn(x.shape, generator=self.gen, dtype=torch.float64).to(x.dtype)
                  for x in self.s.xs]
            vss.append((self._random_vs(), us))
            for j in range(nin):
                dirs.append([us[jj] if jj == j else None for jj in range(nin)])
        if not self.ref.by_rows:
            # a few directions per call: the Richardson tables are steps × directions × outputs
            m = max(1, sum(self.outs[k].numel() for k in self.keep))
            per = max(1, CHUNK_ENTRIES // (2 * m * (fd_error.MAX_STEPS + 2)))
            ref_vals, ref_errs = [], []
            for start in range(0, len(dirs), per):
                v_, e_ = self.ref.directional(dirs[start:start + per])
                ref_vals += v_
                ref_errs += e_
        for p, (vs, us) in enumerate(vss):
            for k in self.keep:
                grads, _ = self.backward({k: vs[k]})
                grads64 = self.backward64({k: vs[k]})
                v64 = vs[k].double()
                if self.ref.by_rows:
                    want = self.ref.vjp({k: vs[k]})
                for j in range(nin):
                    g, u = grads[j].double(), us[j].double()
                    got = float((g * u).sum())
                    if self.ref.by_rows:
                        e = want[j].double()
                        expected = float((e * u).sum())
                        scale = float((g * u).abs().sum()) + float((e * u).abs().sum())
                        out.append(ProbeCheck(self.out_names[k], self.s.names[j], got,
                                              expected, self.rtol * scale + 1e-300))
                        continue
                    jv, je = ref_vals[p * nin + j][k], ref_errs[p * nin + j][k]
                    expected = float((v64 * jv).sum())
                    err = float((v64.abs() * je).sum())
                    rounding = self.probe_rounding(
                        grads[j].double(), None if grads64 is None else grads64[j])
                    if rounding is None:
                        scale = float((g * u).abs().sum()) + float((v64 * jv).abs().sum())
                        rounding = self.rtol * scale
                    tol = SAFETY * err + rounding + 1e-300
                    out.append(ProbeCheck(self.out_names[k], self.s.names[j], got, expected, tol))
        return out

    def compare_full(self) -> tuple[PairCheck, ...]:
        torch.set_rng_state(self.state)
        bwd = jacobian(self.s.flat, self.s.xs, method="reverse")
        ref, err, kinks = self.ref.jacobian()
        shaky = [(self.out_names[k], self.s.names[j]) for k in self.keep
                 for j in range(len(self.s.xs))
                 if err[k][j].numel() and float(err[k][j].max())
                 > 0.01 * max(float(ref[k][j].abs().max()), 1e-300)]
        err = kinks
        if shaky:
            self.note_uncertain(", ".join(f"∂{a}/∂{b}" for a, b in shaky))
        _, none = self.backward(self._random_vs())
        pairs = []
        for k in self.keep:
            yk = self.outs[k]
            for j, x in enumerate(self.s.xs):
                got = bwd[k][j].detach().double().reshape(yk.numel(), x.numel())
                exp, e = ref[k][j], err[k][j]
                pairs.append(self._pair(k, j, got, exp, entry_tolerance(exp, e, self.rtol),
                                        none[j]))
        return tuple(pairs)


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


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"
