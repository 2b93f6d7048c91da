"""The references a backward is checked against, one class each, with one interface.

A reference answers, for the function under check: Jacobian–vector products along given
directions (:meth:`Reference.directional`), the whole Jacobian (:meth:`Reference.jacobian`),
some of its columns (:meth:`Reference.columns`) and what the full comparison would cost
(:meth:`Reference.cost`).  Values and errors come as float64; an error is the reference's own
estimated uncertainty (zero for forward mode).  A reference is given only what it needs: the
function and the checked inputs (a :class:`~.setup.Setup`), the outputs of the recorded forward
pass (for their shapes and dtypes), the random state every evaluation replays, and the run's
:class:`~.results.Notes`.  :func:`choose` picks one the way ``check_backward`` documents.  A new
kind of reference is one more class here, returned by :func:`choose`.

- :class:`ForwardMode`: ``torch.func.jvp`` / forward-mode Jacobians, independent of the
  backward formulas;
- :class:`DualForwardMode`: the same products with dual tensors (``torch.autograd.forward_ad``),
  for a custom ``autograd.Function`` that defines ``jvp`` in the classic style
  (``forward(ctx, ...)``, no ``setup_context``), which ``torch.func`` refuses;
- :class:`FiniteDifferences`: central differences with error estimates
  (:mod:`gradarg.check.fd_error`), on float64 copies when ``fn`` computes in float64;
- :class:`IntendedBackward`: the backward the user meant, given as ``expected=`` (a
  straight-through estimator, gradient reversal); it gives VJPs, so the checker compares rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from ..core.dense import jacobian
from ..core.graph import call
from . import fd_error
from .budget import chunk, directions_per_call
from .tolerance import uncertain

if TYPE_CHECKING:
    from .results import Notes
    from .setup import Setup

__all__ = ["DualForwardMode", "FiniteDifferences", "ForwardMode", "IntendedBackward", "Reference",
           "choose"]


class Reference:
    """The interface; see the module docstring."""

    name: str = ""
    by_rows = False  # True: compared through VJPs (rows), not JVPs (columns)

    def __init__(self, s: Setup, outs: Sequence[torch.Tensor], state: torch.Tensor,
                 notes: Notes) -> None:
        self.s, self.outs, self.state, self.notes = s, outs, state, notes

    def directional(self, dirs: list[list[torch.Tensor | None]]):
        """``J u`` per direction ``dirs[c]`` (one tensor or None per input): values[c][k] and
        errors[c][k]."""
        raise NotImplementedError

    def directional_chunked(self, dirs: list[list[torch.Tensor | None]], m: int):
        """:meth:`directional`, a few directions per call (:func:`.budget.directions_per_call`
        for ``m`` output elements), so that a finite difference's tables stay bounded."""
        per = directions_per_call(m)
        vals, errs = [], []
        for start in range(0, len(dirs), per):
            v_, e_ = self.directional(dirs[start:start + per])
            vals += v_
            errs += e_
        return vals, errs

    def jacobian(self):
        """Blocks ``[k][j]`` as ``m × n`` float64 matrices: values, errors, and errors with
        kinks (where one-sided slopes differ) counted in."""
        raise NotImplementedError

    def columns(self, j: int, cols: torch.Tensor):
        """Columns ``cols`` of input ``j``: per output ``m_k × c`` values and errors."""
        raise NotImplementedError

    def cost(self, m: int, ns: list[int], size: int) -> tuple[str, int]:
        """What computing the full Jacobians takes: a phrase and the bytes expected."""
        raise NotImplementedError

    # the row-wise side of the interface (``by_rows`` references: VJPs, not JVPs)
    def vjp(self, vs: dict[int, torch.Tensor]) -> list[torch.Tensor]:
        """The reference's VJP for upstream gradients ``vs`` (``by_rows`` references)."""
        raise NotImplementedError

    def rows(self, k: int, rows: torch.Tensor) -> list[torch.Tensor]:
        """Rows ``rows`` of output ``k``'s Jacobian, per input (``by_rows`` references)."""
        raise NotImplementedError


class ForwardMode(Reference):
    name = "forward mode (Jacobian–vector products)"

    @staticmethod
    def jvp(flat, xs: Sequence[torch.Tensor], tangents: Sequence[torch.Tensor]
            ) -> Sequence[torch.Tensor]:
        """``J u`` of ``flat`` at ``xs`` along ``tangents``, one tensor per output."""
        return torch.func.jvp(flat, tuple(xs), tuple(tangents))[1]

    def directional(self, dirs):
        s = self.s
        vals = []
        for us in dirs:
            tangents = tuple(torch.zeros_like(x) if u is None else u
                             for x, u in zip(s.xs, us, strict=True))
            torch.set_rng_state(self.state)
            t = self.jvp(s.flat, s.xs, tangents)
            vals.append([tk.detach().double() for tk in t])
        return vals, [[torch.zeros_like(v) for v in row] for row in vals]

    def jacobian(self):
        ms = [y.numel() for y in self.outs]
        ns = [x.numel() for x in self.s.xs]
        torch.set_rng_state(self.state)
        jac = jacobian(self.s.flat, self.s.xs, method="forward")
        vals = [[jac[k][j].detach().double().reshape(ms[k], ns[j])
                 for j in range(len(ns))] for k in range(len(ms))]
        zeros = [[torch.zeros_like(b) for b in row] for row in vals]
        return vals, zeros, zeros

    def columns(self, j, cols):
        x = self.s.xs[j]
        n = x.numel()
        vals = [[] for _ in self.outs]
        step = chunk(n)
        for start in range(0, cols.numel(), step):
            idx = cols[start:start + step]
            dirs = []
            for i in idx.tolist():
                u = torch.zeros(n, dtype=x.dtype)
                u[i] = 1
                dirs.append([u.reshape(x.shape) if jj == j else None
                             for jj in range(len(self.s.xs))])
            vs, _ = self.directional(dirs)
            for kk in range(len(self.outs)):
                vals[kk].append(torch.stack([v[kk].reshape(-1) for v in vs]))
        vals = [torch.cat(v).T for v in vals]
        return vals, [torch.zeros_like(v) for v in vals]

    def cost(self, m, ns, size):
        return f"{sum(ns):,} Jacobian–vector products", 4 * size


def dual_jvp(flat, xs: Sequence[torch.Tensor], tangents: Sequence[torch.Tensor]
             ) -> tuple[torch.Tensor, ...]:
    """``J u`` of ``flat`` at ``xs`` along ``tangents`` with dual tensors
    (``torch.autograd.forward_ad``, the forward mode of custom Functions written as
    ``forward(ctx, ...)`` with a ``jvp``: `Forward-mode AD
    <https://pytorch.org/tutorials/intermediate/forward_ad_usage.html>`_); an output with no
    tangent (no dependence on ``xs``) gives zeros."""
    from torch.autograd import forward_ad

    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(x.detach(), u) for x, u in zip(xs, tangents, strict=True)]
        outs = flat(*duals)
        return tuple(torch.zeros_like(t) if (tan := forward_ad.unpack_dual(t).tangent) is None
                     else tan.detach().clone() for t in outs)


class DualForwardMode(ForwardMode):
    """:class:`ForwardMode` with dual tensors (:func:`dual_jvp`), one product per direction,
    for a custom Function ``torch.func`` cannot transform (classic ``forward(ctx, ...)`` with
    a ``jvp``): its whole Jacobian is the products along every input element."""

    name = "forward mode (Jacobian–vector products, dual tensors)"
    jvp = staticmethod(dual_jvp)

    def jacobian(self):
        blocks = [self.columns(j, torch.arange(x.numel()))[0] for j, x in enumerate(self.s.xs)]
        vals = [[blocks[j][k] for j in range(len(blocks))] for k in range(len(self.outs))]
        zeros = [[torch.zeros_like(b) for b in row] for row in vals]
        return vals, zeros, zeros


class FiniteDifferences(Reference):
    """Central differences with error estimates, evaluated at ``xs_eval`` (float64 copies
    where ``fn`` computes in float64, else the inputs' own dtype)."""

    def __init__(self, s: Setup, outs: Sequence[torch.Tensor], state: torch.Tensor,
                 notes: Notes) -> None:
        super().__init__(s, outs, state, notes)
        up = fd_error.upcast(s.xs)
        dtype = s.xs[0].dtype
        torch.set_rng_state(state)
        try:
            with torch.no_grad():
                f0 = call(s.flat, up)[0]
            if not all(f0[k].dtype == torch.float64 for k in range(len(outs)) if k < len(f0)):
                raise TypeError("fn does not compute in float64")
            self.xs_eval, self.f0 = up, f0
            self.name = "finite differences (central, with error estimates), on float64 copies"
        except (RuntimeError, TypeError) as err:
            torch.set_rng_state(state)
            with torch.no_grad():
                self.xs_eval = tuple(x.detach() for x in s.xs)
                self.f0 = call(s.flat, self.xs_eval)[0]
            if dtype != torch.float64:
                notes.add(f"finite differences in {dtype}: fn failed on float64 "
                          f"copies ({str(err).splitlines()[0]})")
            self.name = f"finite differences (central, with error estimates), in {dtype}"

    def directional(self, dirs):
        dirs_eval = [[None if u is None else u.to(x.dtype) for u, x in
                      zip(us, self.xs_eval, strict=True)] for us in dirs]
        torch.set_rng_state(self.state)
        est = fd_error.directional(self.s.flat, self.xs_eval, self.f0, dirs_eval)
        n_out = len(self.f0)
        vals = [[est.value[k][i].double() for k in range(n_out)] for i in range(len(dirs))]
        errs = [[est.error[k][i].double() for k in range(n_out)] for i in range(len(dirs))]
        return vals, errs

    def jacobian(self):
        ms = [y.numel() for y in self.outs]
        ns = [x.numel() for x in self.s.xs]
        torch.set_rng_state(self.state)
        est = fd_error.partials(self.s.flat, self.xs_eval, xs_eval=self.xs_eval, f0=self.f0)
        vals = [[est[j][0].value[k].double().reshape(ns[j], ms[k]).T for j in range(len(ns))]
                for k in range(len(ms))]
        # an entry at a kink carries half the gap of its one-sided slopes as its error: that is
        # no uncertainty of the reference, but the set of valid subgradients
        errs = [[torch.where(est[j][0].kink[k], torch.zeros_like(est[j][0].error[k]),
                             est[j][0].error[k]).double().reshape(ns[j], ms[k]).T
                 for j in range(len(ns))] for k in range(len(ms))]
        kinks = [[est[j][0].error[k].double().reshape(ns[j], ms[k]).T
                  for j in range(len(ns))] for k in range(len(ms))]
        at_kinks = sum(int(est[j][0].kink[k].sum()) for j in range(len(ns)) for k in range(len(ms)))
        if at_kinks:  # entries judged against a set of subgradients: said
            self.notes.kinks(at_kinks)
        return vals, errs, kinks

    def columns(self, j, cols):
        torch.set_rng_state(self.state)
        est = fd_error.columns(self.s.flat, self.xs_eval, self.f0, j, cols)
        vals = [v.double().reshape(cols.numel(), -1).T for v in est.value]
        errs = [e.double().reshape(cols.numel(), -1).T for e in est.error]
        plain = [torch.where(kk, torch.zeros_like(e), e).double().reshape(cols.numel(), -1).T
                 for e, kk in zip(est.error, est.kink, strict=True)]
        if any(plain[k].numel() and uncertain(float(plain[k].max()),
                                              max(float(vals[k].abs().max()), 1e-300))
               for k in range(len(self.outs))):
            self.notes.uncertain(f"the sampled columns of {self.s.names[j]}")
        return vals, errs

    def cost(self, m, ns, size):
        steps = [fd_error.steps_for(x) if x.numel() else 0 for x in self.s.xs]
        evals = sum(2 * k * nj for k, nj in zip(steps, ns, strict=True))
        # the Richardson tables of the largest input: about nine (steps × n_j × m) arrays
        big = max((k * nj for k, nj in zip(steps, ns, strict=True)), default=0)
        return f"{evals:,} evaluations of fn (finite differences)", 3 * size + 72 * big * m


class IntendedBackward(Reference):
    """The user's intended backward, ``intended(grad_output, *args)``: compared row by row."""

    name = "the intended backward given as expected=(grad_output, *args)"
    by_rows = True

    def __init__(self, s: Setup, outs: Sequence[torch.Tensor], state: torch.Tensor,
                 notes: Notes, intended: Any) -> None:
        super().__init__(s, outs, state, notes)
        self.intended = intended
        self.vjp({k: torch.zeros_like(y) for k, y in enumerate(outs)})  # fails early

    def vjp(self, vs: dict[int, torch.Tensor]) -> list[torch.Tensor]:
        """What the intended backward gives for upstream gradients ``vs`` (others zero)."""
        gos = [vs[k].detach().clone() if k in vs else torch.zeros_like(y).detach()
               for k, y in enumerate(self.outs)]
        torch.set_rng_state(self.state)
        with torch.no_grad():
            out = self.intended(gos[0] if len(gos) == 1 else tuple(gos), *self.s.call_args())
        return self._grads(out)

    def _grads(self, out) -> list[torch.Tensor]:
        s = self.s
        names, xs = s.names, s.xs
        if isinstance(out, dict):
            unknown = [k for k in out if k not in names]
            if unknown:
                raise ValueError(f"expected returned gradients for {unknown}; the checked "
                                 f"inputs are {names}")
            picked = [out.get(n) for n in names]
        elif isinstance(out, (tuple, list)):
            if len(out) == len(s.args):  # like backward: one per argument of fn
                picked = [out[key] if kind == "arg" else None for kind, key in s.slots]
            elif len(out) == len(names):
                picked = list(out)
            else:
                raise ValueError(
                    f"expected returned {len(out)} gradients; give one per argument of fn "
                    f"({len(s.args)}, None where there is none, like backward) or one per "
                    f"checked input ({', '.join(names)})")
        elif isinstance(out, torch.Tensor) or out is None:
            if len(names) != 1:
                raise ValueError(f"expected returned one tensor, but {len(names)} inputs are "
                                 f"checked ({', '.join(names)}): return a tuple")
            picked = [out]
        else:
            raise TypeError(f"expected must return tensors, got {type(out).__name__}")
        grads = []
        for g, x, n in zip(picked, xs, names, strict=True):
            if g is None:
                grads.append(torch.zeros_like(x))
                continue
            g = torch.as_tensor(g)
            if g.shape != x.shape:
                raise ValueError(f"expected returned a gradient of shape {tuple(g.shape)} for "
                                 f"{n}, whose shape is {tuple(x.shape)}")
            grads.append(g.detach().to(x.dtype))
        return grads

    def rows(self, k: int, rows: torch.Tensor) -> list[torch.Tensor]:
        """Rows of the intended backward's Jacobian, per input: ``len(rows) × n_j``."""
        y = self.outs[k]
        per: list[list[torch.Tensor]] = [[] for _ in self.s.xs]
        for i in rows.tolist():
            v = torch.zeros(y.numel(), dtype=y.dtype)
            v[i] = 1
            for j, g in enumerate(self.vjp({k: v.reshape(y.shape)})):
                per[j].append(g.reshape(-1).double())
        return [torch.stack(p) if p else torch.zeros(0, x.numel(), dtype=torch.float64)
                for p, x in zip(per, self.s.xs, strict=True)]

    def jacobian(self):
        ms = [y.numel() for y in self.outs]
        vals = [[self.rows(k, torch.arange(ms[k]))[j] for j in range(len(self.s.xs))]
                for k in range(len(ms))]
        zeros = [[torch.zeros_like(b) for b in row] for row in vals]
        return vals, zeros, zeros

    def cost(self, m, ns, size):
        return f"{m:,} calls of expected", 3 * size


def choose(s: Setup, outs: Sequence[torch.Tensor], state: torch.Tensor, notes: Notes,
           gen: torch.Generator, reference: str, intended: Any) -> Reference:
    """The reference ``check_backward(reference=..., expected=...)`` asks for: the intended
    backward when given; else forward mode where ``fn`` supports it (unless
    ``reference="finite-difference"``; tried along a direction drawn from ``gen``), else finite
    differences."""
    if intended is not None:
        return IntendedBackward(s, outs, state, notes, intended)
    if reference == "finite-difference":
        return FiniteDifferences(s, outs, state, notes)
    us = [torch.randn(x.shape, generator=gen, dtype=x.dtype) for x in s.xs]
    kind: type[ForwardMode] = ForwardMode
    t: Sequence[torch.Tensor] | None = None
    try:
        torch.set_rng_state(state)
        t = kind.jvp(s.flat, s.xs, us)
    except (RuntimeError, NotImplementedError) as err:
        if "setup_context" in str(err):  # a classic Function with a jvp: dual tensors run it
            kind = DualForwardMode
            try:
                torch.set_rng_state(state)
                t = kind.jvp(s.flat, s.xs, us)
            except (RuntimeError, NotImplementedError):
                pass
        if t is None:
            if reference == "forward":
                raise ValueError(f"reference='forward': fn does not support forward mode: "
                                 f"{str(err).splitlines()[0]}") from err
            return FiniteDifferences(s, outs, state, notes)
    if reference == "auto":
        away = _off_the_values(s, outs, state, notes, gen, us, t, kind)
        if away:
            notes.add(away)
            return FiniteDifferences(s, outs, state, notes)
    return kind(s, outs, state, notes)


def _off_the_values(s: Setup, outs: Sequence[torch.Tensor], state: torch.Tensor, notes: Notes,
                    gen: torch.Generator, us: list[torch.Tensor], t: Sequence[torch.Tensor],
                    kind: type[ForwardMode] = ForwardMode) -> str:
    """Why forward mode cannot be the reference, or ``""``: its Jacobian–vector product along
    ``us`` (``t``), and then along a second random direction, is far from two central
    differences of ``fn``'s values that agree with each other (steps ``h`` and ``h/4``).
    Forward mode follows the graph ``fn`` records, as the backward does: a gradient changed
    with ``.detach()`` (``x + (x.round() - x).detach()``) or a custom ``jvp`` that is not the
    derivative moves it with the backward, and only the values show the derivative.  Four
    evaluations of ``fn`` per direction (on float64 copies when it accepts them); the second
    direction only when the first is off.  An entry at a kink or a jump inside the steps
    gives two differences that disagree with each other, and is not counted."""
    probe = FiniteDifferences(s, outs, state, type(notes)())
    at = _far_entry(s, probe, state, us, t)
    if not at:
        return ""
    second = [torch.randn(x.shape, generator=gen, dtype=x.dtype) for x in s.xs]
    torch.set_rng_state(state)
    t2 = kind.jvp(s.flat, s.xs, second)
    if not _far_entry(s, probe, state, second, t2):
        return ""
    return (f"reference: finite differences, not forward mode: fn's forward-mode derivative "
            f"(its graph's Jacobian–vector product) differs from central differences of its "
            f"values along two random directions ({at}), so fn's graph carries a gradient "
            f"that is not the derivative of its values (a .detach() trick such as x + "
            f"(x.round() - x).detach(), a no_grad part, a custom jvp); the backward is checked "
            f"against the values' derivative: if that gradient is what you intend, pass it as "
            f"expected=")


def _far_entry(s: Setup, probe: FiniteDifferences, state: torch.Tensor,
               us: Sequence[torch.Tensor], t: Sequence[torch.Tensor]) -> str:
    """An entry where the tangents ``t`` are far from the central differences along ``us``
    (which agree with each other at two steps), in words; ``""`` when there is none."""
    xs = probe.xs_eval
    eps = max(torch.finfo(x.dtype).eps for x in xs if x.is_floating_point()) if any(
        x.is_floating_point() for x in xs) else 2.0 ** -52
    umax = max((float(u.abs().max()) for u in us if u.numel()), default=1.0) or 1.0
    xmax = max((float(x.detach().abs().max()) for x in xs if x.numel()), default=1.0)
    h = eps ** (1 / 3) * max(1.0, xmax) / umax
    diffs = []
    for step in (h, h / 4):
        vals = []
        for sign in (1.0, -1.0):
            moved = tuple(x + sign * step * u.to(x.dtype) if x.is_floating_point() else x
                          for x, u in zip(xs, us, strict=True))
            torch.set_rng_state(state)
            with torch.no_grad():
                vals.append(call(s.flat, moved)[0])
        diffs.append([(p.double() - m.double()) / (2 * step) for p, m in zip(*vals, strict=True)])
        diffs[-1].append(max(float(p.double().abs().max()) if p.numel() else 0.0
                             for p in vals[0]) * eps / step)  # rounding of the differences
    for k, tk in enumerate(t):
        if k >= len(diffs[1]) - 1 or not tk.dtype.is_floating_point:
            continue
        d1, d2 = diffs[0][k].reshape(-1), diffs[1][k].reshape(-1)
        got = tk.detach().double().reshape(-1)
        if got.shape != d2.shape or not got.numel():
            continue
        scale = float(d2.abs().max()) if d2.numel() else 0.0
        # far: beyond 8 × what the two steps disagree by, the rounding, and 1e-3 of the scale
        # (a derivative of another function, a slope of 0.1 where the values are flat)
        allow = 8 * (d1 - d2).abs() + 4 * diffs[1][-1] + 1e-3 * (d2.abs() + scale) + 1e-12
        far = ((got - d2).abs() > allow) & torch.isfinite(got) & torch.isfinite(d2)
        if bool(far.any()):
            i = int(far.nonzero()[0])
            return (f"{'' if len(t) == 1 else f'output {k}, '}entry {i}: {float(got[i]):.4g} "
                    f"against {float(d2[i]):.4g}")
    return ""
