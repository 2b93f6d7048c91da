"""Page plumbing for ``docs/questions/compile-support.md``: does an autograd feature work under
``torch.compile``?  Imported by hidden cells only; nothing here is part of ``gradarg``.

Each :class:`Feature` is a small function ``run(wrap)`` that builds its inputs (fixed, float64,
CPU), calls a function through ``wrap`` and returns the gradients (or tangents) it got.
:func:`matrix` runs every feature three ways:

* eagerly (``wrap`` is the identity), and checks the result against an independent formula
  (``expect``) with ``torch.testing.assert_close``; a feature whose eager run must raise names
  the exception type instead;
* compiled, ``wrap = torch.compile(f, backend=<a counting wrapper of "aot_eager">)``: the same
  Dynamo capture and AOTAutograd forward/backward split the default ``"inductor"`` backend uses,
  without generating kernels; the result is compared with eager's (``assert_close``);
* under ``torch._dynamo.explain`` (``wrap`` records ``explain(f)(*args)`` then runs ``f``
  eagerly), for the number of graph breaks and the first break reason.

``torch._dynamo.reset()`` runs between features, so no feature reuses another's cache.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn
from torch.utils.checkpoint import checkpoint

__all__ = ["FEATURES", "Feature", "Outcome", "matrix", "not_captured", "run_feature", "table_rows", "verdict"]

Wrap = Callable[[Callable[..., Any]], Callable[..., Any]]


@dataclass
class Feature:
    """One row: ``run(wrap)`` returns a tuple of tensors; ``expect()`` the same, computed
    independently (a formula), or ``raises`` names the exception eager must raise."""

    key: str
    name: str
    run: Callable[[Wrap], tuple[torch.Tensor, ...]]
    expect: Callable[[], tuple[torch.Tensor, ...]] | None = None
    raises: type[BaseException] | None = None


@dataclass
class Outcome:
    """What one feature did: ``eager`` and ``compiled`` are ``"ok"`` (values in
    ``*_value``), or ``"raise"`` (the exception in ``*_error``); ``same`` is whether the two
    agree (same values, or both raise the same type); ``breaks`` and ``reason`` come from
    ``torch._dynamo.explain``; ``graphs`` is how many graphs the compiled run handed to the
    backend."""

    feature: Feature
    eager: str = ""
    compiled: str = ""
    eager_value: tuple[torch.Tensor, ...] = ()
    compiled_value: tuple[torch.Tensor, ...] = ()
    eager_error: BaseException | None = None
    compiled_error: BaseException | None = None
    same: bool = False
    breaks: int | None = None
    reason: str = ""
    graphs: int = 0
    fullgraph_error: BaseException | None = None


# --------------------------------------------------------------------------- inputs and formulas


def _x(requires_grad: bool = True) -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(5, dtype=torch.float64).add_(0.5).requires_grad_(requires_grad)


def _f(t: torch.Tensor) -> torch.Tensor:
    """The function most rows differentiate: sum(x sin x)."""
    return (t.sin() * t).sum()


def _df(t: torch.Tensor) -> torch.Tensor:
    """Its gradient by hand: sin x + x cos x."""
    t = t.detach()
    return t.sin() + t * t.cos()


def _d2f(t: torch.Tensor) -> torch.Tensor:
    """Its second derivative by hand (diagonal Hessian): 2 cos x - x sin x."""
    t = t.detach()
    return 2 * t.cos() - t * t.sin()


# --------------------------------------------------------------------------- the rows


def _backward(wrap):
    x = _x()
    wrap(_f)(x).backward()
    return (x.grad,)


def _autograd_grad(wrap):
    x = _x()
    return torch.autograd.grad(wrap(_f)(x), x)


def _retain_graph(wrap):
    x = _x()
    out = wrap(_f)(x)
    out.backward(retain_graph=True)
    out.backward()
    return (x.grad,)


def _accumulate(wrap):
    x = _x()
    cf = wrap(_f)
    cf(x).backward()
    cf(x).backward()
    return (x.grad,)


def _double_backward(wrap):
    x = _x()
    g, = torch.autograd.grad(wrap(_f)(x), x, create_graph=True)
    h, = torch.autograd.grad(g.sum(), x)
    return (h,)


def _grad_inside(wrap):
    def step(t):
        g, = torch.autograd.grad(_f(t), t)
        return g
    return (wrap(step)(_x()),)


def _backward_inside(wrap):
    def step(t):
        _f(t).backward()
    x = _x()
    wrap(step)(x)
    return (x.grad,)


def _hook_inside(wrap):
    def f(t):
        s = t.sin()
        s.register_hook(lambda g: 2 * g)          # doubles the gradient reaching s
        return (s * t).sum()
    x = _x()
    wrap(f)(x).backward()
    return (x.grad,)


def _hook_inside_expect():
    x = _x().detach()
    return (2 * x * x.cos() + x.sin(),)


def _hook_store(wrap):
    seen: list[torch.Tensor] = []

    def f(t):
        s = t.sin()
        s.register_hook(lambda g: seen.append(g))  # a side effect outside the function
        return (s * t).sum()
    wrap(f)(_x()).backward()
    return (seen[0],)


def _retain_grad_inside(wrap):
    def f(t):
        s = t.sin()
        s.retain_grad()
        return (s * t).sum(), s
    x = _x()
    out, s = wrap(f)(x)
    out.backward()
    return (s.grad if s.grad is not None else torch.full_like(x, float("nan")),)


def _leaf_hook(wrap):
    x = _x()
    x.register_hook(lambda g: 3 * g)
    wrap(_f)(x).backward()
    return (x.grad,)


def _linear() -> tuple[nn.Linear, torch.Tensor]:
    torch.manual_seed(0)
    lin = nn.Linear(5, 3, dtype=torch.float64)
    return lin, _x()


def _module_backward_hook(wrap):
    lin, x = _linear()
    lin.register_full_backward_hook(lambda m, gi, go: (2 * gi[0],))
    wrap(lin)(x).sum().backward()
    return (x.grad,)


def _module_backward_pre_hook(wrap):
    lin, x = _linear()
    lin.register_full_backward_pre_hook(lambda m, go: (2 * go[0],))
    wrap(lin)(x).sum().backward()
    return (x.grad, lin.weight.grad)


def _post_accumulate_hook(wrap):
    lin, x = _linear()
    seen: list[torch.Tensor] = []
    lin.weight.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    wrap(lin)(x).sum().backward()
    return (seen[0],)


def _per_sample_grads(wrap):
    torch.manual_seed(0)
    w = torch.randn(3, dtype=torch.float64)
    xs = torch.randn(4, 3, dtype=torch.float64)
    loss = lambda w_, x_: (w_ * x_).sum().sin()
    return (wrap(torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0)))(w, xs),)


def _per_sample_expect():
    torch.manual_seed(0)
    w = torch.randn(3, dtype=torch.float64)
    xs = torch.randn(4, 3, dtype=torch.float64)
    return ((xs @ w).cos()[:, None] * xs,)


def _module_forward_hook(wrap):
    lin, x = _linear()
    lin.register_forward_hook(lambda m, args, out: 2 * out)
    wrap(lin)(x).sum().backward()
    return (x.grad, lin.weight.grad)


def _linear_expect(scale_x: float, with_weight: bool):
    lin, x = _linear()
    w = lin.weight.detach()
    gx = scale_x * w.sum(0)
    gw = scale_x * torch.ones(3, 1, dtype=torch.float64) * x.detach()[None, :]
    return (gx, gw) if with_weight else (gx,)


class _Cube(torch.autograd.Function):
    @staticmethod
    def forward(t):
        return t ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        t, = ctx.saved_tensors
        return 3 * t ** 2 * g


class _RoundSTE(torch.autograd.Function):
    """Rounds in forward, passes the gradient through unchanged (straight-through)."""

    @staticmethod
    def forward(ctx, t):
        return t.round()

    @staticmethod
    def backward(ctx, g):
        return g


def _custom_function(wrap):
    x = _x()
    wrap(lambda t: _Cube.apply(t).sum())(x).backward()
    return (x.grad,)


def _ste(wrap):
    x = _x()
    wrap(lambda t: (_RoundSTE.apply(t) * t).sum())(x).backward()
    return (x.grad,)


def _ste_expect():
    x = _x().detach()
    return (x.round() + x,)


def _checkpoint(reentrant: bool):
    def run(wrap):
        x = _x()
        wrap(lambda t: checkpoint(_f, t, use_reentrant=reentrant))(x).backward()
        return (x.grad,)
    return run


def _func_grad(wrap):
    return (wrap(torch.func.grad(_f))(_x(False)),)


def _func_jacrev(wrap):
    return (wrap(torch.func.jacrev(lambda t: t.sin() * t))(_x(False)),)


def _func_jvp(wrap):
    v = torch.ones(5, dtype=torch.float64)
    def f(t):
        return torch.func.jvp(lambda u: u.sin() * u, (t,), (v,))[1]
    return (wrap(f)(_x(False)),)


def _dual_inside(wrap):
    v = torch.ones(5, dtype=torch.float64)
    def f(t):
        with fwAD.dual_level():
            out = fwAD.make_dual(t, v).sin() * fwAD.make_dual(t, v)
            return fwAD.unpack_dual(out).tangent
    return (wrap(f)(_x(False)),)


def _dual_outside(wrap):
    v = torch.ones(5, dtype=torch.float64)
    cf = wrap(lambda t: t.sin() * t)
    with fwAD.dual_level():
        out = cf(fwAD.make_dual(_x(False), v))
        return (fwAD.unpack_dual(out).tangent.clone(),)


def _anomaly(wrap):
    x = _x()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            wrap(_f)(x).backward()
    return (x.grad,)


def _saved_tensors_hooks(wrap):
    x = _x()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 2 * t):
        out = wrap(lambda t: (t * t).sum())(x)   # mul saves t twice
    out.backward()
    return (x.grad,)


def _inplace_saved(wrap):
    x = _x()
    w = torch.ones(5, dtype=torch.float64)
    out = wrap(lambda t, u: (t * u).sum())(x, w)  # saves u for the gradient of t
    w.mul_(3)                                     # edited before backward
    out.backward()
    return (x.grad,)


def _inplace_saved_matmul(wrap):
    torch.manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True) * 1.0   # not a leaf
    w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    out = wrap(lambda a, b: a @ b)(x, w)          # saves x for the gradient of w
    x.add_(1.0)                                   # edited before backward
    out.sum().backward()
    return (w.grad,)


def _requires_grad_inside(wrap):
    def f(t):
        t.requires_grad_()
        return _f(t)
    x = _x(False)
    wrap(f)(x).backward()
    return (x.grad,)


def _branch(wrap):
    def f(t):
        if t.sum() > 0:                           # data-dependent
            return (t * t).sum()
        return t.sum()
    x = _x()
    wrap(f)(x).backward()
    return (x.grad,)


def _item(wrap):
    def f(t):
        s = t.sum().item()                        # a Python number: a constant to autograd
        return (t * t * s).sum()
    x = _x()
    wrap(f)(x).backward()
    return (x.grad,)


def _item_expect():
    x = _x().detach()
    return (2 * x * x.sum(),)


def _no_grad_inside(wrap):
    def f(t):
        with torch.no_grad():
            s = t.sum()                           # a constant to autograd
        return (t * t * s).sum()
    x = _x()
    wrap(f)(x).backward()
    return (x.grad,)


def _enable_grad_inside(wrap):
    def f(t):
        with torch.enable_grad():
            return _f(t)
    x = _x()
    with torch.no_grad():
        out = wrap(f)(x)
    out.backward()
    return (x.grad,)


def _print_break(wrap):
    def f(t):
        s = t.sin()
        print("inside")                           # Dynamo cannot put print in a graph
        return (s * t).sum()
    x = _x()
    with contextlib.redirect_stdout(io.StringIO()):
        wrap(f)(x).backward()
    return (x.grad,)


def _detach_inside(wrap):
    def f(t):
        return (t.sin().detach() * t).sum()
    x = _x()
    wrap(f)(x).backward()
    return (x.grad,)


def _module_params(wrap):
    lin, x = _linear()
    wrap(lin)(x).sum().backward()
    return (x.grad, lin.weight.grad)


def _g(scale=1.0):
    return lambda: (scale * _df(_x()),)


FEATURES: list[Feature] = [
    Feature("backward", "`out.backward()` on the compiled output", _backward, _g()),
    Feature("autograd-grad", "`torch.autograd.grad(out, x)` outside", _autograd_grad, _g()),
    Feature("module", "an `nn.Module`'s parameters (`.grad` of weight and input)",
            _module_params, lambda: _linear_expect(1.0, True)),
    Feature("accumulate", "two calls, two backwards: `.grad` accumulates", _accumulate,
            _g(2.0)),
    Feature("retain-graph", "`retain_graph=True`, backward twice on one output",
            _retain_graph, _g(2.0)),
    Feature("double-backward", "`create_graph=True`, then a second derivative",
            _double_backward, lambda: (_d2f(_x()),)),
    Feature("grad-inside", "`torch.autograd.grad` inside the compiled function",
            _grad_inside, _g()),
    Feature("backward-inside", "`loss.backward()` inside the compiled function",
            _backward_inside, _g()),
    Feature("hook-inside", "`register_hook` on a tensor made inside", _hook_inside,
            _hook_inside_expect),
    Feature("hook-store", "`register_hook` that stores the gradient in an outer list",
            _hook_store, lambda: (_x().detach(),)),
    Feature("retain-grad-inside", "`retain_grad()` inside, `.grad` of the intermediate",
            _retain_grad_inside, lambda: (_x().detach(),)),
    Feature("leaf-hook", "`register_hook` on the input, before the call", _leaf_hook,
            _g(3.0)),
    Feature("module-backward-hook", "`register_full_backward_hook` on a module",
            _module_backward_hook, lambda: _linear_expect(2.0, False)),
    Feature("module-backward-pre-hook", "`register_full_backward_pre_hook` on a module",
            _module_backward_pre_hook, lambda: _linear_expect(2.0, True)),
    Feature("post-accumulate-hook", "`register_post_accumulate_grad_hook` on a parameter",
            _post_accumulate_hook, lambda: _linear_expect(1.0, True)[1:]),
    Feature("module-forward-hook", "`register_forward_hook` that changes the output",
            _module_forward_hook, lambda: _linear_expect(2.0, True)),
    Feature("custom-function", "custom `autograd.Function` (`setup_context`)",
            _custom_function, lambda: (3 * _x().detach() ** 2,)),
    Feature("ste", "custom Function, straight-through backward (not the derivative)",
            _ste, _ste_expect),
    Feature("checkpoint", "`checkpoint(..., use_reentrant=False)`", _checkpoint(False), _g()),
    Feature("checkpoint-reentrant", "`checkpoint(..., use_reentrant=True)`",
            _checkpoint(True), _g()),
    Feature("func-grad", "`torch.func.grad` inside", _func_grad, _g()),
    Feature("func-jacrev", "`torch.func.jacrev` inside", _func_jacrev,
            lambda: (torch.diag(_df(_x())),)),
    Feature("per-sample", "per-sample gradients, `vmap(grad(loss))` inside", _per_sample_grads,
            _per_sample_expect),
    Feature("func-jvp", "`torch.func.jvp` inside", _func_jvp, _g()),
    Feature("dual-inside", "forward AD, `make_dual` inside the compiled function",
            _dual_inside, _g()),
    Feature("dual-outside", "forward AD, a dual tensor passed in", _dual_outside, _g()),
    Feature("anomaly", "`detect_anomaly()` around the call and backward", _anomaly, _g()),
    Feature("saved-tensors-hooks", "`saved_tensors_hooks` around the call",
            _saved_tensors_hooks, lambda: (4 * _x().detach(),)),
    Feature("inplace-saved", "in-place edit of a saved input before backward",
            _inplace_saved, raises=RuntimeError),
    Feature("inplace-saved-matmul", "in-place edit of a saved input of `x @ w` before backward",
            _inplace_saved_matmul, raises=RuntimeError),
    Feature("requires-grad-inside", "`requires_grad_()` on the input inside",
            _requires_grad_inside, _g()),
    Feature("branch", "`if t.sum() > 0:` (data-dependent branch)", _branch,
            lambda: (2 * _x().detach(),)),
    Feature("item", "`.item()` inside", _item, _item_expect),
    Feature("no-grad-inside", "`torch.no_grad()` block inside", _no_grad_inside,
            _item_expect),
    Feature("enable-grad-inside", "`torch.enable_grad()` inside, called under `no_grad`",
            _enable_grad_inside, _g()),
    Feature("detach-inside", "`.detach()` inside", _detach_inside,
            lambda: (_x().detach().sin(),)),
    Feature("print", "`print()` inside (a graph break)", _print_break, _g()),
]


# --------------------------------------------------------------------------- running


class _Counter:
    """A ``torch.compile`` backend: counts the graphs Dynamo hands over, then compiles each
    with ``"aot_eager"`` (looked up by name through ``torch._dynamo.lookup_backend``)."""

    def __init__(self, backend: str = "aot_eager"):
        self.graphs = 0
        self.inner = torch._dynamo.lookup_backend(backend)

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return self.inner(gm, example_inputs)


def _short(err: BaseException, limit: int = 160) -> str:
    """The first line of an exception's message, no addresses or file paths."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"(/[\w.+-]+)+\.py", "<file>", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call(feature: Feature, wrap: Wrap):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", tuple(t.detach().clone() for t in feature.run(wrap)), None
    except Exception as err:                      # noqa: BLE001 - every failure is a result
        return "raise", (), err


def _close(a: tuple[torch.Tensor, ...], b: tuple[torch.Tensor, ...]) -> bool:
    if len(a) != len(b):
        return False
    try:
        for u, v in zip(a, b, strict=True):
            torch.testing.assert_close(u, v)
    except AssertionError:
        return False
    return True


def run_feature(feature: Feature, backend: str = "aot_eager",
                explain: bool = True) -> Outcome:
    """Run ``feature`` eagerly, compiled with ``backend`` and (if ``explain``) under
    ``torch._dynamo.explain``; check eager against the feature's formula (AssertionError if it
    disagrees: the row's plumbing is wrong, not torch)."""
    out = Outcome(feature)
    out.eager, out.eager_value, out.eager_error = _call(feature, lambda f: f)
    if feature.raises is not None:
        assert isinstance(out.eager_error, feature.raises), (feature.key, out.eager_error)
    else:
        assert out.eager == "ok", (feature.key, out.eager_error)
        for got, want in zip(out.eager_value, feature.expect(), strict=True):
            torch.testing.assert_close(got, want, msg=lambda m: f"{feature.key}: {m}")

    torch._dynamo.reset()
    counter = _Counter(backend)
    out.compiled, out.compiled_value, out.compiled_error = _call(
        feature, lambda f: torch.compile(f, backend=counter))
    out.graphs = counter.graphs
    if out.eager == "ok" and out.compiled == "ok":
        out.same = _close(out.eager_value, out.compiled_value)
    else:
        out.same = (out.eager == out.compiled == "raise"
                    and type(out.eager_error) is type(out.compiled_error))

    torch._dynamo.reset()
    _, _, out.fullgraph_error = _call(
        feature, lambda f: torch.compile(f, backend=_Counter(backend), fullgraph=True))
    if out.eager == "raise" and type(out.fullgraph_error) is type(out.eager_error):
        out.fullgraph_error = None                # the feature's own error, not Dynamo's

    if explain:
        torch._dynamo.reset()
        found: list[Any] = []

        def wrap(f):
            def call(*args, **kwargs):
                try:
                    found.append(torch._dynamo.explain(f)(*args, **kwargs))
                except Exception as err:          # noqa: BLE001
                    found.append(err)
                torch._dynamo.reset()
                return f(*args, **kwargs)
            return call

        _call(feature, wrap)
        reports = [r for r in found if not isinstance(r, Exception)]
        if reports:
            reasons = [b.reason for r in reports for b in r.break_reasons]
            out.breaks = len(reasons)
            out.reason = _short(Exception(reasons[0]), 120) if reasons else ""
    torch._dynamo.reset()
    return out


def matrix(features: list[Feature] | None = None, backend: str = "aot_eager",
           explain: bool = True) -> list[Outcome]:
    """Run every feature (:func:`run_feature`); a list of outcomes in the features' order."""
    return [run_feature(f, backend, explain) for f in (features or FEATURES)]


def verdict(o: Outcome) -> str:
    """The "compiled" cell: ✓ same, ≠ different values, ✗ raises (quoted)."""
    if o.eager == "raise":
        if o.compiled == "raise":
            same = "same" if type(o.eager_error) is type(o.compiled_error) else "another"
            return f"✓ raises ({same} type: `{type(o.compiled_error).__name__}`)"
        return "≠ runs, no error (eager raises)"
    if o.compiled == "raise":
        return f"✗ `{type(o.compiled_error).__name__}`: {_md(_short(o.compiled_error))}"
    return "✓ same gradients" if o.same else "≠ runs, different values"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'").replace("*", "\\*").replace("<", "&lt;")


def not_captured(o: Outcome) -> bool:
    """Dynamo left part of the function out of its graphs: a break reason, no graph at all, or
    ``fullgraph=True`` refused it (``Unsupported``) though the compiled call ran."""
    unsupported = (o.fullgraph_error is not None and o.compiled == "ok"
                   and type(o.fullgraph_error).__name__ == "Unsupported")
    return bool(o.breaks) or o.graphs == 0 or unsupported


def breaks_cell(o: Outcome) -> str:
    """The "graph breaks" cell: the break reasons ``explain`` reports, or 0 graphs."""
    if o.graphs == 0:
        return "0 graphs: the whole function ran eagerly"
    if o.breaks:
        return f"{o.breaks} ({_md(o.reason)})"
    if not_captured(o):
        return "none listed by `explain`, yet not in one graph (`fullgraph=True`)"
    return "none"


def fullgraph_cell(o: Outcome) -> str:
    """The ``fullgraph=True`` cell: one graph, or Dynamo's error (quoted)."""
    err = o.fullgraph_error
    if err is None:
        return "✓ one graph"
    if o.compiled_error is not None and type(err) is type(o.compiled_error):
        return "✗ as without it"
    return f"✗ `{type(err).__name__}`: {_md(_short(err, 90))}"


def table_rows(outcomes: list[Outcome]) -> list[list[str]]:
    """Rows for ``pagekit.glue_table``: feature, eager, compiled, graph breaks, fullgraph."""
    rows = []
    for o in outcomes:
        eager = (f"raises `{type(o.eager_error).__name__}`" if o.eager == "raise"
                 else "✓ formula")
        compiled = verdict(o)
        if o.graphs == 0 and o.compiled == "ok":
            compiled += " (ran eagerly)"
        rows.append([o.feature.name, eager, compiled, breaks_cell(o), fullgraph_cell(o)])
    return rows
