"""The machinery of the edge-case files (``cases.py``, ``cases_blind.py``): a case, its
registry and the oracle helpers the cases' predicates use.

A case file makes ``REG = Registry(globals())`` and registers its cases with ``REG.E`` /
``REG.P``; each case's ``call`` and ``pred`` are evaluated in that file's namespace, so the
inputs it defines and the helpers below (imported there) are visible to them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
from torch.func import jacrev

import gradarg as ga

D = torch.float64
S = torch.float32


@dataclass
class Case:
    name: str
    group: str
    target: str
    call: str
    oracle: str
    kind: str  # "error" or "pred"
    pred: str = ""
    keys: tuple = ()
    allow: tuple = ()
    either: bool = False
    fn: object = field(default=None, repr=False)


class Registry:
    """The cases of one file, evaluated in that file's namespace ``namespace``."""

    def __init__(self, namespace: dict):
        self.namespace = namespace
        self.cases: list[Case] = []
        self.names: set[str] = set()

    def add(self, c: Case) -> None:
        assert c.name not in self.names, c.name
        self.names.add(c.name)
        c.fn = _runner(c, self.namespace)
        self.cases.append(c)

    def E(self, name, target, call, keys, group="misuse", allow=(), oracle=None):
        """A case whose oracle is a refusal naming one of ``keys``."""
        keys = (keys,) if isinstance(keys, str) else tuple(keys)
        self.add(Case(name, group, target, call,
                      oracle or f"a TypeError/ValueError naming {' or '.join(keys)}",
                      "error", keys=keys, allow=tuple(allow)))

    def P(self, name, target, call, pred, oracle, group="values", either=False, allow=(),
          keys=()):
        """A case whose result ``r`` must satisfy ``pred``."""
        keys = (keys,) if isinstance(keys, str) else tuple(keys)
        self.add(Case(name, group, target, call, oracle, "pred", pred=pred, keys=keys,
                      allow=tuple(allow), either=either))


def _runner(c: Case, namespace: dict):
    def fn(c=c):
        ns = dict(namespace)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = eval(c.call, ns)
        ns["r"] = r
        ns["W"] = [f"{w.category.__name__}: {w.message}" for w in caught]
        if c.kind == "error":
            return {"ok": False, "why": "expected a refusal, got a value",
                    "got": _show(r), "expected": f"TypeError/ValueError naming {c.keys}",
                    "warnings": ns["W"]}  # a value with a warning naming the key: WARNED
        try:
            ok = bool(eval(c.pred, ns))
        except Exception as e:  # noqa: BLE001  (the predicate could not even be evaluated)
            return {"ok": False, "why": f"predicate failed: {type(e).__name__}: {e}",
                    "got": _show(r), "expected": c.pred}
        return {"ok": ok, "got": _show(r) + (f"  warnings={ns['W']}" if ns["W"] else ""),
                "warnings": ns["W"],
                "expected": f"{c.pred}  [{c.oracle}]",
                "why": "" if ok else "the oracle's predicate does not hold"}

    return fn


def _show(r):
    try:
        if isinstance(r, torch.Tensor):
            if r.layout != torch.strided:
                return f"{r.layout} {tuple(r.shape)} {r.dtype}: {r.to_dense().tolist()}"[:800]
            if r.device.type == "meta":
                return f"meta tensor {tuple(r.shape)} {r.dtype}"
            return f"{tuple(r.shape)} {r.dtype}: {r.tolist()}"[:800]
        if hasattr(r, "summary") and isinstance(r.summary, str):
            return f"{type(r).__name__}(status={getattr(r, 'status', '?')!r}): {r.summary}"[:800]
        if isinstance(r, ga.VJPComparison):
            return (f"VJPComparison(status={r.status!r}, agree={r.agree}, "
                    f"max_abs={r.max_abs_error:.3g}, atol={r.atol:.3g}, rtol={r.rtol:.3g}, "
                    f"note={r.note!r}, backward={r.backward.tolist()}, "
                    f"reference={r.reference.tolist()})")[:800]
        return repr(r)[:800]
    except Exception as e:  # noqa: BLE001
        return f"<{type(r).__name__}; repr failed: {e}>"


# ----------------------------------------------------------------- oracle helpers
def dense(t):
    if isinstance(t, torch.Tensor) and t.layout != torch.strided:
        return t.to_dense()
    return t


def close(a, b, rtol=1e-7, atol=1e-10):
    """Same structure and shape, values equal within tolerance (NaN where NaN)."""
    if isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and len(a) == len(b)
                and all(close(x, y, rtol, atol) for x, y in zip(a, b, strict=True)))
    if not isinstance(a, torch.Tensor):
        return False
    a, b = dense(a).detach(), dense(torch.as_tensor(b)).detach()
    if tuple(a.shape) != tuple(b.shape):
        return False
    if a.is_complex() or b.is_complex():
        a, b = a.to(torch.complex128), b.to(torch.complex128)
        return bool(torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    a, b = a.to(D), b.to(D)
    return bool(torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def close_notnan(a, b, rtol=1e-7, atol=1e-10):
    """Same shape; equal wherever the oracle ``b`` is not NaN (0 * NaN in its zero entries)."""
    if not isinstance(a, torch.Tensor):
        return False
    a, b = dense(a).detach().to(D), dense(b).detach().to(D)
    if tuple(a.shape) != tuple(b.shape):
        return False
    m = ~torch.isnan(b)
    return bool(torch.allclose(a[m], b[m], rtol=rtol, atol=atol, equal_nan=True))


def covers(pattern, J):
    """A conservative pattern: True wherever J is non-zero, same shape."""
    p = dense(pattern)
    if tuple(p.shape) != tuple(J.shape) or p.dtype != torch.bool:
        return False
    return bool((p | (J == 0)).all())


def same_pattern(pattern, expected):
    p = dense(pattern)
    return tuple(p.shape) == tuple(expected.shape) and bool((p == expected.bool()).all())


def valid_coloring(colors, P, side="rows"):
    """Same-colour rows (columns) share no column (row) of the pattern."""
    Pd = dense(P).reshape(P.shape[0], -1).to(torch.int64)
    if side == "columns":
        Pd = Pd.T
    if colors.shape != (Pd.shape[0],) or colors.dtype != torch.int64:
        return False
    return all(int(Pd[colors == c].sum(0).max()) <= 1 for c in colors.unique())


def jr(f, x, *a, **k):
    return jacrev(f, *a, **k)(x)


def taj(f, x, **k):
    return torch.autograd.functional.jacobian(f, x, **k)


def vjp_ref(f, x, v):
    _, pull = torch.func.vjp(f, x)
    return pull(v)[0]


def tri(n, dtype=torch.bool):
    return torch.ones(n, n).triu(-1).tril(1).to(dtype)


def arrow(n):
    a = torch.eye(n, dtype=torch.bool)
    a[0] = True
    a[:, 0] = True
    return a


def coo(p):
    return p.to_sparse()


def csr(p):
    return p.to_sparse_csr()
