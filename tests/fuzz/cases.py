"""Edge cases for every public callable of gradarg (issue 44), written before any was run.

Each case is one line of code (``call``) evaluated in this module's namespace, and an oracle
written from the public documentation (docstrings, ``docs/``) and from torch's own tools:

* ``E(...)``: the oracle is a refusal, a ``TypeError`` / ``ValueError`` (or an exception
  the docstring names, ``allow=``) whose message names one of ``keys``.  A call that
  returns is SILENTLY-WRONG (a refusal that did not come).
* ``P(...)``: the call returns ``r`` and the predicate ``pred`` (a Python expression in
  ``r`` and ``W``, the messages of the warnings the call issued) must hold; the oracle
  column says where the expected value comes from (``torch.func``,
  ``torch.autograd.functional``, a formula).  A clear refusal is counted CLEAR-ERROR when
  the case says ``either=True`` (the documentation allows it), else UNCLEAR-ERROR
  ("refused an input the documentation accepts").

Run by hand (``python tests/fuzz/run.py``); not part of the pytest run.
"""

from __future__ import annotations

import math  # noqa: F401  (the calls use it)

import numpy as np  # noqa: F401  (used in the calls, evaluated as text)
import torch
import torch.nn.functional as F
from casekit import (  # noqa: F401  (the predicates use them)
    Registry,
    arrow,
    close,
    close_notnan,
    coo,
    covers,
    csr,
    dense,
    jr,
    same_pattern,
    taj,
    tri,
    valid_coloring,
    vjp_ref,
)
from torch.func import grad, hessian, jacfwd, jacrev, vmap  # noqa: F401  (the calls use them)

import gradarg as ga
import gradarg.plot
import gradarg.sparse

D = torch.float64
S = torch.float32
REG = Registry(globals())
CASES = REG.cases
E, P = REG.E, REG.P

# ----------------------------------------------------------------- inputs
x3 = torch.tensor([0.3, -1.2, 2.0], dtype=D)
x3f = x3.float()
x3h = x3.half()
x3b = x3.bfloat16()
z3 = torch.tensor([0.3 + 0.5j, -1.2 + 0.1j, 2.0 - 1.0j], dtype=torch.complex128)
z3f = z3.to(torch.complex64)
xbig = torch.tensor([1.0e4, 2.0e4 + 0.3, -1.5e4 + 0.7], dtype=D)
x7k = torch.tensor([7.0e3 + 0.1, 8.5e3 + 0.2, -9.9e3], dtype=D)
x1e3f = torch.tensor([1.0e3, 1.5e3 + 0.25, -2.0e3 + 0.5], dtype=S)
xmix = torch.tensor([1e-300, 1.0, 1e300], dtype=D)
xsub = torch.tensor([5e-324, 1e-310, -2e-320], dtype=D)
xnan = torch.tensor([0.5, float("nan"), -1.0], dtype=D)
xinf = torch.tensor([0.5, float("inf"), -float("inf")], dtype=D)
x5 = torch.linspace(-1, 1, 5, dtype=D)
x6 = torch.linspace(-1.3, 1.1, 6, dtype=D)
xnc = torch.arange(24, dtype=D).reshape(4, 6)[:, ::2] / 10  # non-contiguous
xexp = torch.tensor([1.0, 2.0], dtype=D).expand(3, 2)  # expanded view, stride 0
x0 = torch.tensor(0.7, dtype=D)
xempty = torch.empty(0, dtype=D)
xint = torch.arange(3)
xbool = torch.tensor([True, False, True])
xmeta = torch.empty(3, device="meta", dtype=D)
xcoo = x3.to_sparse()
xcsr = torch.eye(3, dtype=D).to_sparse_csr()
xcl = torch.arange(8, dtype=D).reshape(1, 2, 2, 2).contiguous(memory_format=torch.channels_last) / 7
xb = torch.linspace(-1, 1, 6, dtype=D).reshape(2, 3)  # batch of 2 samples of 3
v3 = torch.tensor([1.0, -2.0, 0.5], dtype=D)
J33 = torch.tensor([[1.0, 2.0, 0.0], [0.0, 3.0, 4.0], [5.0, 0.0, 6.0]], dtype=D)


def sq(t):
    return t * t


def cube(t):
    return t**3


def stencil(u):
    up = F.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u)


def energy(u):
    return ((u[1:] - u[0]) ** 4).sum() + torch.cos(u).sum()


def f_item(t):
    return t * t.sum().item()


def f_tuple(t):
    return t.sin(), t * 2


def f_list(t):
    return [t.sin(), t * 2]


def f_int(t):
    return 3


def f_none(t):
    return None


def f_np(t):
    return t.detach().numpy()


def f_const(t):
    return torch.ones(2, dtype=D)


def f_intout(t):
    return (t > 0).long()


def f_cplx(t):
    return t * (1 + 2j)


def f_inplace(t):
    return t.mul_(2)


def arrow_f(u):
    return torch.cat([u.sum().reshape(1), u[1:] ** 2 + u[0] * u[1:]])


def f_f32(t):
    return torch.sin(t).float()


# custom Functions: correct, wrong by a factor, planted relative errors
def _make_sin(err=0.0, factor=1.0, nan=False):
    class Sin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            out = g * torch.cos(x) * factor * (1 + err)
            if nan:
                out = out * float("nan")
            return out

    return Sin.apply


sin_ok = _make_sin()
sin_half = _make_sin(factor=0.5)
sin_e6 = _make_sin(err=1e-6)  # 10^4 times float64's backward_rtol (1e-10)
sin_e13 = _make_sin(err=1e-13)  # 1/1000 of it
sin_e4 = _make_sin(err=1e-4)  # 10 times float32's (1e-5)
sin_e9 = _make_sin(err=1e-9)
sin_nan = _make_sin(nan=True)


class _Round(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g


ste = _Round.apply


def rg(t):
    return t.detach().clone().requires_grad_(True)


def _lin():
    torch.manual_seed(0)
    return torch.nn.Linear(3, 2).double()


# ----------------------------------------------------------------- helper scenarios
def jac_side_effects():
    x = x3.clone().requires_grad_(True)
    J = ga.jacobian(lambda t: t**2, x)
    return {"J": J, "grad": x.grad, "x": x.detach()}


def jac_inplace():
    x = x3.clone()
    J = ga.jacobian(f_inplace, x)
    return {"J": J, "x_unchanged": torch.equal(x, x3)}


def vjp_side_effects():
    x = x3.clone().requires_grad_(True)
    g = ga.backward_vjp(torch.sin, x, v3)
    return {"g": g, "grad": x.grad, "rg": x.requires_grad}


def compare_output_tensor():
    x = x3.clone().requires_grad_(True)
    y = x**2
    r = ga.compare_vjp(y, x, v3, reference=torch.diag(2 * x3))
    return {"agree": r.agree, "grad": x.grad}


def jac_nograd():
    with torch.no_grad():
        return ga.jacobian(torch.sin, x3)


def jac_inference():
    with torch.inference_mode():
        x = x3.clone()
        return ga.jacobian(torch.sin, x)


def vjp_inference():
    with torch.inference_mode():
        x = x3.clone()
        return ga.backward_vjp(torch.sin, x, v3)


def sj_tri(n=6, **kw):
    return ga.SparseJacobian(tri(n), **kw)


def sj_coo_contract():
    x = x6.clone()
    J = sj_tri()(stencil, x)
    return ga.contract(torch.ones(6, dtype=D), J)


def sj_csr_contract():
    x = x6.clone()
    J = sj_tri()(stencil, x, layout=torch.sparse_csr)
    return ga.contract(torch.ones(6, dtype=D), J)


def huge_pattern():
    idx = torch.tensor([[0], [0]])
    p = torch.sparse_coo_tensor(idx, torch.ones(1, dtype=torch.bool), (1, 2_000_000_000))
    return ga.SparseJacobian(p)


def hess_arrow(x, **kw):
    return ga.SparseHessian(arrow(x.numel()), **kw)


def missing_tri():
    p = torch.eye(6, dtype=torch.bool)  # the stencil's Jacobian is tridiagonal
    return ga.SparseJacobian(p)


def _trace(gradient=None, **kw):
    a = torch.tensor([1.0, 2.0], dtype=D, requires_grad=True)
    y = (a * a).sum() if gradient is None else a * a
    t = ga.trace_backward(y, gradient, names={"a": a}, **kw)
    return {"trace": t, "a_grad": a.grad}


def trace_twice():
    a = torch.tensor([1.0, 2.0], dtype=D, requires_grad=True)
    y = (a.exp()).sum()
    y.backward()
    return ga.trace_backward(y)


def trace_nan_svg():
    a = torch.tensor([0.0, 4.0], dtype=D, requires_grad=True)
    y = torch.sqrt(a).sum()
    return ga.trace_backward(y, names={"a": a}).to_svg()


def trace_meta_svg():
    a = torch.ones(2, device="meta", requires_grad=True)
    y = (a * a).sum()
    return ga.trace_backward(y).to_svg()


def trace_inputs_norg():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([1.0, 2.0])
    return ga.trace_backward((a * b).sum(), inputs=[b])


def trace_names_bad():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    return ga.trace_backward((a * a).sum(), names={"a": 3})


def trace_complex_gradient():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    return ga.trace_backward(a * a, torch.tensor([1 + 1j, 2 + 0j]))


def trace_wrong_shape():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    return ga.trace_backward(a * a, torch.ones(3))


def trace_missing_gradient():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    return ga.trace_backward(a * a)


def trace_nograd_output():
    return ga.trace_backward(torch.ones(2).sum())


def a_trace():
    return _trace()["trace"]


def watch_step(model, loss_fn, inp, step=False, frozen=None):
    if frozen is not None:
        for p in frozen(model):
            p.requires_grad_(False)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1) \
        if step and any(p.requires_grad for p in model.parameters()) else None
    with ga.watch(model) as w:
        out = model(inp)
        loss = loss_fn(out)
        loss.backward()
        if opt is not None:
            opt.step()
            opt.zero_grad()
    return w.summary()


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


class _Unused(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 1)
        self.b = torch.nn.Linear(3, 1)

    def forward(self, x):
        return self.a(x)


def watched():
    net = _net()
    with ga.watch(net) as w:
        net(torch.randn(5, 4)).pow(2).mean().backward()
    return w


def wng(case):
    """why_no_grad scenarios; returns the GradDiagnosis."""
    if case == "dead-relu":
        w = torch.tensor([-1.0, -2.0], requires_grad=True)
        y = torch.relu(w).sum()
        return ga.why_no_grad(y, w, names={"w": w})
    if case == "sqrt0":
        x = torch.tensor([0.0, 4.0], requires_grad=True)
        y = torch.sqrt(x).sum()
        return ga.why_no_grad(y, x)
    if case == "int":
        x = torch.tensor([1.0], requires_grad=True)
        return ga.why_no_grad((x * 2).sum(), torch.tensor([1, 2]))
    if case == "nrg":
        x = torch.tensor([1.0], requires_grad=True)
        c = torch.tensor([2.0])
        return ga.why_no_grad((x * c).sum(), c)
    if case == "nonleaf":
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        h = w * 3
        return ga.why_no_grad((h**2).sum(), h)
    if case == "detached":
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        h = (w * 3).detach().requires_grad_(True)
        y = (w * 2).sum()
        return ga.why_no_grad(y, h)
    if case == "bad-names":
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        return ga.why_no_grad((w * 2).sum(), w, names=[w])
    if case == "bad-module":
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        return ga.why_no_grad((w * 2).sum(), w, module="model")
    if case == "ok":
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (w * 2).sum()
        return ga.why_no_grad(y, w)
    if case == "callable":
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        return ga.why_no_grad(lambda: (w**2).sum(), w)
    raise KeyError(case)


def heat(jac, shape, **kw):
    import matplotlib

    matplotlib.use("Agg")
    ax = gradarg.plot.jacobian_heatmap(jac, shape, **kw)
    import matplotlib.pyplot as plt

    plt.close("all")
    return ax


def cb_grad():
    return grad(lambda t: torch.as_tensor(bool(ga.check_backward(torch.sin, t))).double()
                * t.sum())(rg(x3))


def sh_float_pattern():
    return ga.SparseHessian(arrow(5).double())


def compiled_sj():
    sj = sj_tri()
    c = sj.compile(stencil, backend="aot_eager")
    return c(x6.clone())


# ================================================================== CASES
# ---- jacobian: dtypes
P("jac.f64", "jacobian", "ga.jacobian(torch.sin, x3)", "close(r, jr(torch.sin, x3))",
  "torch.func.jacrev", "dtype")
P("jac.f32", "jacobian", "ga.jacobian(torch.sin, x3f)",
  "close(r, jr(torch.sin, x3f), 1e-6) and r.dtype == torch.float32", "jacrev, float32", "dtype")
P("jac.f16", "jacobian", "ga.jacobian(torch.sin, x3h)",
  "close(r, torch.diag(torch.cos(x3)), 2e-3, 2e-3)", "formula diag(cos x), float16 rounding",
  "dtype", either=True, keys=("x", "float16", "dtype"))
P("jac.bf16", "jacobian", "ga.jacobian(torch.sin, x3b)",
  "close(r, torch.diag(torch.cos(x3)), 2e-2, 2e-2)", "formula diag(cos x), bfloat16 rounding",
  "dtype", either=True, keys=("x", "bfloat16", "dtype"))
P("jac.c128", "jacobian", "ga.jacobian(lambda t: t * t, z3)",
  "close(r, taj(lambda t: t * t, z3, vectorize=True))",
  "torch.autograd.functional.jacobian(vectorize=True): conj(2z)", "dtype")
P("jac.c64", "jacobian", "ga.jacobian(lambda t: t * t, z3f)",
  "close(r, taj(lambda t: t * t, z3f, vectorize=True), 1e-5, 1e-6)",
  "torch.autograd.functional.jacobian", "dtype")
E("jac.int-x", "jacobian", "ga.jacobian(torch.sin, xint)", ("x",), "dtype")
E("jac.bool-x", "jacobian", "ga.jacobian(lambda t: t * 1.0, xbool)", ("x",), "dtype")
E("jac.int-out", "jacobian", "ga.jacobian(f_intout, x3)", ("fn", "output", "integer"), "dtype")
E("jac.real-to-complex.auto", "jacobian", "ga.jacobian(f_cplx, x3)", ("complex",), "dtype",
  oracle="ValueError (jacrev refuses a complex output of a real input)")
E("jac.real-to-complex.reverse", "jacobian", "ga.jacobian(f_cplx, x3, method='reverse')",
  ("complex",), "dtype")
E("jac.real-to-complex.fd", "jacobian",
  "ga.jacobian(f_cplx, x3, method='finite-difference')", ("complex",), "dtype")
P("jac.real-to-complex.forward", "jacobian", "ga.jacobian(f_cplx, x3, method='forward')",
  "close(r, (1 + 2j) * torch.eye(3, dtype=D))", "formula (1+2j) I (torch's forward mode)", "dtype")
E("jac.complex.forward", "jacobian", "ga.jacobian(lambda t: t * t, z3, method='forward')",
  ("forward", "complex"), "dtype")
P("jac.f64-to-f32-out", "jacobian", "ga.jacobian(f_f32, x3)",
  "close(r, torch.diag(torch.cos(x3)), 1e-6) and r.dtype == torch.float64",
  "formula; x's dtype", "dtype")
# ---- jacobian: layouts
E("jac.coo-x", "jacobian", "ga.jacobian(torch.sin, xcoo)", ("x", "sparse"), "layout")
E("jac.csr-x", "jacobian", "ga.jacobian(torch.sin, xcsr)", ("x", "sparse"), "layout")
P("jac.noncontig", "jacobian", "ga.jacobian(torch.sin, xnc)",
  "close(r, jr(torch.sin, xnc.contiguous()))", "jacrev on a contiguous copy", "layout")
P("jac.expanded", "jacobian", "ga.jacobian(sq, xexp)",
  "close(r, jr(sq, xexp.contiguous()))", "jacrev on a contiguous copy (6 independent inputs)",
  "layout")
P("jac.channels-last", "jacobian", "ga.jacobian(torch.sin, xcl)",
  "close(r, jr(torch.sin, xcl.contiguous()))", "jacrev", "layout")
P("jac.0d", "jacobian", "ga.jacobian(torch.sin, x0)", "close(r, torch.cos(x0))",
  "formula cos(x), 0-d", "layout")
P("jac.empty", "jacobian", "ga.jacobian(lambda t: t * 2, xempty)",
  "tuple(r.shape) == (0, 0)", "jacrev shape y.shape + x.shape", "layout")
P("jac.empty-x-nonempty-y", "jacobian", "ga.jacobian(lambda t: t.sum() + torch.ones(2, dtype=D), xempty)",
  "tuple(r.shape) == (2, 0)", "jacrev shape (2, 0)", "layout")
E("jac.meta", "jacobian", "ga.jacobian(torch.sin, xmeta)", ("meta",), "device")
# ---- jacobian: values
P("jac.nan", "jacobian", "ga.jacobian(torch.sin, xnan)",
  "close_notnan(r, jr(torch.sin, xnan)) and any('nan' in w.lower() for w in W)",
  "jacrev (NaN where cos(NaN)); a RuntimeWarning (documented)", "values")
P("jac.inf", "jacobian", "ga.jacobian(torch.exp, xinf)",
  "close_notnan(r, jr(torch.exp, xinf)) and len(W) > 0", "jacrev; a RuntimeWarning", "values")
P("jac.subnormal", "jacobian", "ga.jacobian(torch.sin, xsub)",
  "close(r, torch.eye(3, dtype=D))", "formula cos(~0) = 1", "values")
P("jac.mixed-mag", "jacobian", "ga.jacobian(lambda t: 3 * t, xmix)",
  "close(r, 3 * torch.eye(3, dtype=D))", "formula 3 I", "values")
P("jac.1e300-square", "jacobian", "ga.jacobian(sq, torch.tensor([1e300, 1e-300], dtype=D))",
  "close(r, jr(sq, torch.tensor([1e300, 1e-300], dtype=D)))", "jacrev (inf, 2e-300)", "values")
P("jac.tanh-sat-f32", "jacobian", "ga.jacobian(torch.tanh, torch.tensor([20.0, -30.0, 0.1]))",
  "close(r, jr(torch.tanh, torch.tensor([20.0, -30.0, 0.1])), 1e-6, 1e-7)",
  "jacrev (0 where saturated)", "values")
P("jac.sigmoid-sat-f32", "jacobian", "ga.jacobian(torch.sigmoid, torch.tensor([-100.0, 100.0, 3.0]))",
  "close(r, jr(torch.sigmoid, torch.tensor([-100.0, 100.0, 3.0])), 1e-6, 1e-30)",
  "jacrev", "values")
P("jac.exp-overflow-f32", "jacobian", "ga.jacobian(torch.exp, torch.tensor([100.0, 1.0]))",
  "close_notnan(r, jr(torch.exp, torch.tensor([100.0, 1.0])), 1e-6)", "jacrev (inf entry)", "values")
P("jac.fd.sin-1e3-f32", "jacobian", "ga.jacobian(torch.sin, x1e3f, method='finite-difference')",
  "close(r, torch.diag(torch.cos(x1e3f.double())), 0.05, 0.05) or len(W) > 0",
  "formula cos(x) within 5% (or a warning that the reference cannot resolve it)", "fd-magnitude")
P("jac.fd.sin-1e4-f64", "jacobian", "ga.jacobian(torch.sin, xbig, method='finite-difference')",
  "close(r, torch.diag(torch.cos(xbig)), 1e-5, 1e-6) or len(W) > 0",
  "formula cos(x) (or a warning)", "fd-magnitude")
P("jac.fd.sin-1e8-f64", "jacobian",
  "ga.jacobian(torch.sin, torch.tensor([1e8 + 0.3, -3e8], dtype=D), method='finite-difference')",
  "close(r, torch.diag(torch.cos(torch.tensor([1e8 + 0.3, -3e8], dtype=D))), 1e-3, 1e-3) or len(W) > 0",
  "formula cos(x) (or a warning)", "fd-magnitude")
P("jac.fd.exp-f64", "jacobian", "ga.jacobian(torch.exp, x3, method='finite-difference')",
  "close(r, torch.diag(torch.exp(x3)), 1e-7, 1e-8)", "formula exp(x)", "fd-magnitude")
P("jac.fd.exp-40-f64", "jacobian",
  "ga.jacobian(torch.exp, torch.tensor([40.0, -40.0], dtype=D), method='finite-difference')",
  "close(r, torch.diag(torch.exp(torch.tensor([40.0, -40.0], dtype=D))), 1e-6, 0)",
  "formula exp(x), relative", "fd-magnitude")
P("jac.fd.tanh-sat-f32", "jacobian",
  "ga.jacobian(torch.tanh, torch.tensor([9.0, 0.2]), method='finite-difference')",
  "close(r, jr(torch.tanh, torch.tensor([9.0, 0.2], dtype=D)), 1e-2, 1e-4)",
  "jacrev in float64", "fd-magnitude")
P("jac.fd.mixed-row", "jacobian",
  "ga.jacobian(lambda t: torch.stack([t[0] * t[1], torch.sin(t[1])]), torch.tensor([1e6, 0.5], dtype=D), method='finite-difference')",
  "close(r, jr(lambda t: torch.stack([t[0] * t[1], torch.sin(t[1])]), torch.tensor([1e6, 0.5], dtype=D)), 1e-6, 1e-6)",
  "jacrev", "fd-magnitude")
# ---- jacobian: options
E("jac.fd+create_graph", "jacobian",
  "ga.jacobian(torch.sin, x3, create_graph=True, method='finite-difference')",
  ("create_graph", "finite"), "options")
E("jac.method-bogus", "jacobian", "ga.jacobian(torch.sin, x3, method='bogus')", ("method",), "options")
E("jac.method-None", "jacobian", "ga.jacobian(torch.sin, x3, method=None)", ("method",), "options")
E("jac.strategy-contradicts", "jacobian",
  "ga.jacobian(torch.sin, x3, strategy='forward-mode', method='reverse')", ("strategy",), "options")
P("jac.strategy-forward", "jacobian", "ga.jacobian(torch.sin, x3, strategy='forward-mode')",
  "close(r, jr(torch.sin, x3))", "jacrev", "options")
E("jac.strategy-bogus", "jacobian", "ga.jacobian(torch.sin, x3, strategy='sideways')",
  ("strategy",), "options")
E("jac.create_graph-str", "jacobian", "ga.jacobian(torch.sin, x3, create_graph='yes')",
  ("create_graph",), "options")
E("jac.strict-int", "jacobian", "ga.jacobian(torch.sin, x3, strict=1)", ("strict",), "options")
E("jac.vectorize-str", "jacobian", "ga.jacobian(torch.sin, x3, vectorize='no')",
  ("vectorize",), "options")
E("jac.certify-neg", "jacobian", "ga.jacobian(stencil, x6, sparsity=tri(6), certify=-1)",
  ("certify",), "options")
E("jac.certify-no-sparsity", "jacobian", "ga.jacobian(stencil, x6, certify=2)", ("certify",),
  "options")
E("jac.certify-float", "jacobian", "ga.jacobian(stencil, x6, sparsity=tri(6), certify=1.5)",
  ("certify",), "options")
P("jac.sparsity-right", "jacobian", "ga.jacobian(stencil, x6, sparsity=tri(6))",
  "r.layout == torch.sparse_coo and close(r, jr(stencil, x6))", "jacrev, as sparse COO",
  "options")
P("jac.sparsity-coo", "jacobian", "ga.jacobian(stencil, x6, sparsity=coo(tri(6)))",
  "close(r, jr(stencil, x6))", "jacrev", "options")
P("jac.sparsity-csr", "jacobian", "ga.jacobian(stencil, x6, sparsity=csr(tri(6)))",
  "close(r, jr(stencil, x6))", "jacrev", "options")
E("jac.sparsity-missing-certified", "jacobian",
  "ga.jacobian(stencil, x6, sparsity=torch.eye(6, dtype=torch.bool), certify=3)",
  ("pattern", "certif", "miss", "sparsity"), "options",
  oracle="CertificateError (a ValueError): the pattern misses the off-diagonals")
E("jac.sparsity-wrong-shape", "jacobian", "ga.jacobian(stencil, x6, sparsity=tri(5))",
  ("sparsity", "pattern", "shape"), "options")
E("jac.sparsity-float", "jacobian", "ga.jacobian(stencil, x6, sparsity=tri(6, D))",
  ("sparsity", "pattern", "bool"), "options")
E("jac.sparsity-fd", "jacobian",
  "ga.jacobian(stencil, x6, sparsity=tri(6), method='finite-difference')",
  ("method", "sparsity"), "options")
E("jac.sparsity-tuple-x", "jacobian",
  "ga.jacobian(lambda a, b: a * b, (x3, x3), sparsity=torch.eye(3, dtype=torch.bool))",
  ("sparsity", "tuple", "x"), "options")
E("jac.sparsity-str", "jacobian", "ga.jacobian(stencil, x6, sparsity='tridiagonal')",
  ("sparsity",), "options")
P("jac.batch_dim0", "jacobian", "ga.jacobian(lambda t: t.sin() * t.sum(), xb, batch_dim=0)",
  "close(r, vmap(jacrev(lambda t: t.sin() * t.sum()))(xb))", "vmap(jacrev)", "options")
P("jac.batch_dim1", "jacobian", "ga.jacobian(lambda t: t.sin() * t.sum(), xb, batch_dim=1)",
  "close(r, vmap(jacrev(lambda t: t.sin() * t.sum()), in_dims=1)(xb))", "vmap(jacrev, in_dims=1)",
  "options")
P("jac.batch_dim-neg", "jacobian", "ga.jacobian(lambda t: t.sin() * t.sum(), xb, batch_dim=-1)",
  "close(r, vmap(jacrev(lambda t: t.sin() * t.sum()), in_dims=-1)(xb))",
  "vmap(jacrev, in_dims=-1)", "options", either=True, keys=("batch_dim",))
E("jac.batch_dim-out", "jacobian", "ga.jacobian(torch.sin, xb, batch_dim=5)", ("batch_dim",),
  "options")
E("jac.batch_dim-str", "jacobian", "ga.jacobian(torch.sin, xb, batch_dim='0')", ("batch_dim",),
  "options")
E("jac.batch_dim-float", "jacobian", "ga.jacobian(torch.sin, xb, batch_dim=0.0)", ("batch_dim",),
  "options")
P("jac.batch_dim-item", "jacobian", "ga.jacobian(f_item, xb, batch_dim=0)",
  "close(r, torch.stack([s.sum() * torch.eye(3, dtype=D) for s in xb]))",
  "formula: per sample J = sum(x_b) I (.item() is a constant)", "options")
E("jac.batch_dim+sparsity", "jacobian",
  "ga.jacobian(torch.sin, xb, batch_dim=0, sparsity=torch.eye(3, dtype=torch.bool))",
  ("batch_dim", "sparsity"), "options")
E("jac.batch_dim-0d", "jacobian", "ga.jacobian(torch.sin, x0, batch_dim=0)", ("batch_dim",),
  "options")
P("jac.vectorize-False", "jacobian", "ga.jacobian(torch.sin, x3, vectorize=False)",
  "close(r, jr(torch.sin, x3))", "jacrev", "options")
E("jac.vectorize-True-item-forward", "jacobian",
  "ga.jacobian(f_item, x3, vectorize=True, method='forward')", ("vector", "batch", "item"),
  "options", allow=(ga.VectorizationError,), oracle="VectorizationError (documented)")
P("jac.item-reverse", "jacobian", "ga.jacobian(f_item, x3)",
  "close(r, x3.sum() * torch.eye(3, dtype=D) + 0 * x3)",
  "formula: .item() is a constant, J = sum(x) I", "options")
P("jac.create_graph-hessian", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(lambda s: (s**3).sum(), t, create_graph=True), x3)",
  "close(r, torch.diag(6 * x3))", "formula diag(6x)", "options")
P("jac.strict-independent", "jacobian", "ga.jacobian(f_const, x3, strict=True)", "False",
  "RuntimeError (documented; torch.autograd.functional's strict)", "options",
  allow=(RuntimeError,), keys=("independent", "does not require", "output"))
E("jac.strict+create+forward", "jacobian",
  "ga.jacobian(torch.sin, x3, strict=True, create_graph=True, method='forward')",
  ("forward", "strict", "create_graph"), "options")
# ---- jacobian: misuse
P("jac.const-out", "jacobian", "ga.jacobian(f_const, x3)", "close(r, torch.zeros(2, 3, dtype=D))",
  "zero block (documented)", "misuse")
P("jac.tuple-out", "jacobian", "ga.jacobian(f_tuple, x3)", "close(r, taj(f_tuple, x3))",
  "torch.autograd.functional.jacobian nesting", "misuse")
P("jac.list-out", "jacobian", "ga.jacobian(f_list, x3)", "close(r, taj(f_tuple, x3))",
  "as a tuple (or a clear refusal naming fn)", "misuse", either=True, keys=("fn", "list"))
E("jac.int-out-py", "jacobian", "ga.jacobian(f_int, x3)", ("fn", "returned"), "misuse")
E("jac.none-out", "jacobian", "ga.jacobian(f_none, x3)", ("fn", "returned"), "misuse")
E("jac.numpy-out", "jacobian", "ga.jacobian(f_np, x3)", ("fn", "returned"), "misuse")
E("jac.x-list", "jacobian", "ga.jacobian(torch.sin, [0.1, 0.2])", ("x",), "misuse")
E("jac.x-float", "jacobian", "ga.jacobian(torch.sin, 0.5)", ("x",), "misuse")
E("jac.x-tuple-int", "jacobian", "ga.jacobian(lambda a, b: a * b, (x3, 2))", ("x",), "misuse")
E("jac.fn-tensor", "jacobian", "ga.jacobian(x3, x3)", ("fn",), "misuse")
P("jac.tuple-in", "jacobian", "ga.jacobian(lambda a, b: a * b.sin(), (x3, v3))",
  "close(r, taj(lambda a, b: a * b.sin(), (x3, v3)))", "torch.autograd.functional.jacobian",
  "misuse")
P("jac.side-effects", "jacobian", "jac_side_effects()",
  "r['grad'] is None and close(r['J'], torch.diag(2 * x3)) and torch.equal(r['x'], x3)",
  "no .grad, x unchanged", "misuse")
P("jac.inplace-fn", "jacobian", "jac_inplace()",
  "r['x_unchanged'] and close(r['J'], 2 * torch.eye(3, dtype=D))",
  "documented: fn receives private copies; J = 2I (or torch's in-place refusal)", "misuse",
  either=True, keys=("in-place", "fn"), allow=(RuntimeError,))
P("jac.no_grad", "jacobian", "jac_nograd()", "close(r, jr(torch.sin, x3))", "jacrev (documented)",
  "misuse")
P("jac.inference", "jacobian", "jac_inference()", "close(r, jr(torch.sin, x3))",
  "jacrev (documented)", "misuse")
E("jac.huge-dense", "jacobian", "ga.jacobian(lambda t: 2 * t, torch.zeros(200_000))",
  ("memory", "GB"), "memory", allow=(MemoryError,),
  oracle="MemoryError with the estimate (160 GB), before allocating")
P("jac.create_graph-differentiable", "jacobian",
  "ga.jacobian(torch.sin, rg(x3), create_graph=True).requires_grad", "r is True",
  "documented: differentiable", "options")
P("jac.vectorize-True-item-reverse", "jacobian", "ga.jacobian(f_item, x3, vectorize=True)",
  "close(r, x3.sum() * torch.eye(3, dtype=D))",
  "documented: reverse mode evaluates fn once, unbatched (.item() fine)", "options")
P("jac.sparsity-sj", "jacobian", "ga.jacobian(stencil, x6, sparsity=sj_tri())",
  "close(r, jr(stencil, x6))", "jacrev", "options")
P("jac.certify-bool", "jacobian", "ga.jacobian(stencil, x6, sparsity=tri(6), certify=True)",
  "close(r, jr(stencil, x6))", "jacrev (or a refusal naming certify: a bool)", "options",
  either=True, keys=("certify",))
# ---- jacobian: composition with torch.func
P("jac.grad", "jacobian", "grad(lambda t: ga.jacobian(torch.sin, t))(torch.tensor(0.5, dtype=D))",
  "close(r, -torch.sin(torch.tensor(0.5, dtype=D)))", "formula -sin(0.5)", "compose")
P("jac.vmap", "jacobian", "vmap(lambda t: ga.jacobian(torch.sin, t))(xb)",
  "close(r, vmap(jacrev(torch.sin))(xb))", "vmap(jacrev)", "compose")
P("jac.jacrev", "jacobian", "jacrev(lambda t: ga.jacobian(cube, t))(x3)",
  "close(r, jacrev(jacrev(cube))(x3))", "jacrev(jacrev)", "compose")
P("jac.jacfwd", "jacobian", "jacfwd(lambda t: ga.jacobian(cube, t))(x3)",
  "close(r, jacfwd(jacrev(cube))(x3))", "jacfwd(jacrev)", "compose")
P("jac.hessian", "jacobian",
  "hessian(lambda t: ga.jacobian(lambda s: (s**3).sum(), t).sum())(x3)",
  "close(r, 6 * torch.eye(3, dtype=D))", "formula: d²/dx² Σ3x² = 6I", "compose")
P("jac.grad-fd", "jacobian",
  "grad(lambda t: ga.jacobian(torch.sin, t, method='finite-difference'))(torch.tensor(0.5, dtype=D))",
  "close(r, -torch.sin(torch.tensor(0.5, dtype=D)), 1e-5, 1e-7)", "formula -sin(0.5)", "compose")
P("jac.grad-forward", "jacobian",
  "grad(lambda t: ga.jacobian(torch.sin, t, method='forward'))(torch.tensor(0.5, dtype=D))",
  "close(r, -torch.sin(torch.tensor(0.5, dtype=D)))", "formula -sin(0.5)", "compose")
E("jac.vmap-strict", "jacobian", "vmap(lambda t: ga.jacobian(torch.sin, t, strict=True))(xb)",
  ("strict", "vmap"), "compose")
E("jac.vmap-sparsity", "jacobian",
  "vmap(lambda t: ga.jacobian(torch.sin, t, sparsity=torch.eye(3, dtype=torch.bool)))(xb)",
  ("vmap", "sparsity"), "compose")
E("jac.grad-real-to-complex", "jacobian", "jacrev(lambda t: ga.jacobian(f_cplx, t).real)(x3)",
  ("complex",), "compose", allow=(RuntimeError,))
P("jac.vmap-batch_dim", "jacobian",
  "vmap(lambda t: ga.jacobian(torch.sin, t, batch_dim=0))(torch.stack([xb, xb]))",
  "close(r, vmap(vmap(jacrev(torch.sin)))(torch.stack([xb, xb])))", "vmap(vmap(jacrev))",
  "compose", either=True, keys=("batch_dim", "vmap"))

# ---- backward_vjp
P("vjp.f64", "backward_vjp", "ga.backward_vjp(torch.sin, x3, v3)",
  "close(r, vjp_ref(torch.sin, x3, v3))", "torch.func.vjp", "dtype")
P("vjp.f16", "backward_vjp", "ga.backward_vjp(torch.sin, x3h, v3.half())",
  "close(r, v3 * torch.cos(x3), 2e-3, 2e-3) and r.dtype == torch.float16", "formula v cos(x)",
  "dtype")
P("vjp.bf16", "backward_vjp", "ga.backward_vjp(torch.sin, x3b, v3.bfloat16())",
  "close(r, v3 * torch.cos(x3), 2e-2, 2e-2)", "formula", "dtype")
P("vjp.c128", "backward_vjp", "ga.backward_vjp(lambda t: t * t, z3, z3.conj())",
  "close(r, vjp_ref(lambda t: t * t, z3, z3.conj()))",
  "torch.func.vjp (conjugate Wirtinger)", "dtype")
E("vjp.complex-v-real-y", "backward_vjp", "ga.backward_vjp(torch.sin, x3, v3 * (1 + 1j))",
  ("v", "complex"), "dtype", oracle="torch raises; a ValueError/TypeError naming v")
P("vjp.int-v", "backward_vjp", "ga.backward_vjp(torch.sin, x3, torch.tensor([1, -2, 3]))",
  "close(r, torch.tensor([1.0, -2, 3], dtype=D) * torch.cos(x3))",
  "formula (or a clear refusal naming v)", "dtype", either=True, keys=("v",))
E("vjp.int-x", "backward_vjp", "ga.backward_vjp(torch.sin, xint, v3)", ("x",), "dtype")
E("vjp.coo-x", "backward_vjp", "ga.backward_vjp(torch.sin, xcoo, v3)", ("x", "sparse"), "layout")
E("vjp.meta-x", "backward_vjp", "ga.backward_vjp(torch.sin, xmeta, v3)", ("x", "meta"), "device")
P("vjp.0d", "backward_vjp", "ga.backward_vjp(torch.sin, x0, 2.0)", "close(r, 2 * torch.cos(x0))",
  "formula", "layout")
P("vjp.empty", "backward_vjp", "ga.backward_vjp(lambda t: t * 2, xempty, torch.empty(0, dtype=D))",
  "tuple(r.shape) == (0,)", "shape x.shape", "layout")
P("vjp.noncontig", "backward_vjp", "ga.backward_vjp(torch.sin, xnc, torch.ones(4, 3, dtype=D))",
  "close(r, torch.cos(xnc))", "formula", "layout")
P("vjp.expanded", "backward_vjp", "ga.backward_vjp(sq, xexp, torch.ones(3, 2, dtype=D))",
  "close(r, 2 * xexp)", "formula 2x on a (contiguous) leaf copy", "layout")
P("vjp.number-v-vector-y", "backward_vjp", "ga.backward_vjp(torch.sin, x3, 2.0)",
  "close(r, 2 * torch.cos(x3))", "v broadcast (or a clear refusal naming v)", "misuse",
  either=True, keys=("v", "shape"))
E("vjp.v-shape", "backward_vjp", "ga.backward_vjp(torch.sin, x3, torch.ones(4, dtype=D))",
  ("v", "shape"), "misuse")
P("vjp.v-numpy", "backward_vjp", "ga.backward_vjp(torch.sin, x3, np.ones(3))",
  "close(r, torch.cos(x3))", "formula (or a refusal naming v)", "misuse", either=True, keys=("v",))
E("vjp.v-str", "backward_vjp", "ga.backward_vjp(torch.sin, x3, 'ones')", ("v",), "misuse")
E("vjp.tuple-out", "backward_vjp", "ga.backward_vjp(f_tuple, x3, v3)", ("fn", "tuple"), "misuse")
E("vjp.int-out", "backward_vjp", "ga.backward_vjp(f_int, x3, v3)", ("fn", "returned"), "misuse")
E("vjp.independent", "backward_vjp", "ga.backward_vjp(f_const, x3, torch.ones(2, dtype=D))",
  ("require", "depend"), "misuse")
E("vjp.x-list", "backward_vjp", "ga.backward_vjp(torch.sin, [1.0, 2.0], 1.0)", ("x",), "misuse")
P("vjp.nan-v", "backward_vjp", "ga.backward_vjp(torch.sin, x3, torch.tensor([1.0, float('nan'), 0.0], dtype=D))",
  "close(r, vjp_ref(torch.sin, x3, torch.tensor([1.0, float('nan'), 0.0], dtype=D)))",
  "torch.func.vjp (NaN propagates)", "values")
P("vjp.huge-values", "backward_vjp", "ga.backward_vjp(sq, xmix, v3)",
  "close(r, vjp_ref(sq, xmix, v3))", "torch.func.vjp", "values")
P("vjp.side-effects", "backward_vjp", "vjp_side_effects()",
  "r['grad'] is None and r['rg'] and close(r['g'], v3 * torch.cos(x3))",
  "x.grad untouched (documented)", "misuse")
P("vjp.inference", "backward_vjp", "vjp_inference()", "close(r, v3 * torch.cos(x3))",
  "formula", "misuse", either=True, keys=("inference",))
P("vjp.grad", "backward_vjp", "grad(lambda t: ga.backward_vjp(torch.sin, t, 1.0))(torch.tensor(0.5, dtype=D))",
  "close(r, -torch.sin(torch.tensor(0.5, dtype=D)))", "formula", "compose")
P("vjp.vmap-v", "backward_vjp", "vmap(lambda v: ga.backward_vjp(torch.sin, x3, v))(torch.eye(3, dtype=D))",
  "close(r, torch.diag(torch.cos(x3)))", "formula: rows of J", "compose")
P("vjp.jacrev-x", "backward_vjp", "jacrev(lambda t: ga.backward_vjp(cube, t, v3))(x3)",
  "close(r, torch.diag(6 * x3 * v3))", "formula diag(6 x v)", "compose")
P("vjp.jacfwd-x", "backward_vjp", "jacfwd(lambda t: ga.backward_vjp(cube, t, v3))(x3)",
  "close(r, torch.diag(6 * x3 * v3))", "formula", "compose")
P("vjp.hessian", "backward_vjp", "hessian(lambda t: ga.backward_vjp(lambda s: (s**3).sum(), t, 1.0).sum())(x3)",
  "close(r, 6 * torch.eye(3, dtype=D))", "formula: d²/dx² Σ3x² = 6I", "compose")

# ---- contract
P("contract.basic", "contract", "ga.contract(v3, J33)", "close(r, v3 @ J33)", "formula v @ J",
  "values")
P("contract.numpy", "contract", "ga.contract(v3.numpy(), J33.numpy())", "close(r, v3 @ J33)",
  "formula", "dtype")
E("contract.v-list", "contract", "ga.contract([1.0, 2.0, 3.0], J33)", ("v",), "misuse")
E("contract.jac-None", "contract", "ga.contract(v3, None)", ("jac",), "misuse")
E("contract.shape", "contract", "ga.contract(torch.ones(4, dtype=D), J33)", ("jac", "shape", "v"),
  "misuse")
E("contract.meta", "contract", "ga.contract(torch.ones(3, device='meta'), J33)", ("meta",),
  "device")
P("contract.coo-from-sj", "contract", "sj_coo_contract()",
  "close(r, torch.ones(6, dtype=D) @ jr(stencil, x6))", "formula with jacrev", "layout")
P("contract.csr-from-sj", "contract", "sj_csr_contract()",
  "close(r, torch.ones(6, dtype=D) @ jr(stencil, x6))", "formula", "layout")
E("contract.csr-wrong-v", "contract", "ga.contract(torch.ones(2, 3, dtype=D), J33.to_sparse_csr())",
  ("v", "shape", "jac"), "layout")
P("contract.coo-jac", "contract", "ga.contract(v3, J33.to_sparse())", "close(r, v3 @ J33)",
  "formula", "layout")
P("contract.sparse-v", "contract", "ga.contract(v3.to_sparse(), J33)", "close(r, v3 @ J33)",
  "formula (a sparse v is densified)", "layout")
P("contract.complex-v", "contract", "ga.contract(v3 * 1j, J33)", "close(r, (v3 * 1j) @ J33.to(torch.complex128))",
  "promoted dtype", "dtype")
P("contract.int-v", "contract", "ga.contract(torch.tensor([1, 2, 3]), J33)",
  "close(r, torch.tensor([1.0, 2, 3], dtype=D) @ J33)", "promoted", "dtype")
P("contract.bf16-f32", "contract", "ga.contract(v3.bfloat16(), J33.float())",
  "close(r, v3.bfloat16().float() @ J33.float(), 1e-6)", "promoted to float32", "dtype")
P("contract.0d-v", "contract", "ga.contract(torch.tensor(2.0, dtype=D), v3)", "close(r, 2 * v3)",
  "y 0-d: J has shape x.shape", "layout")
P("contract.empty", "contract", "ga.contract(torch.empty(0, dtype=D), torch.empty(0, 3, dtype=D))",
  "close(r, torch.zeros(3, dtype=D))", "empty sum = 0", "layout")
P("contract.nan", "contract", "ga.contract(v3, torch.where(J33 == 0, float('nan'), J33))",
  "close(r, v3 @ torch.where(J33 == 0, float('nan'), J33))", "NaN propagates as in @", "values")
P("contract.noncontig", "contract", "ga.contract(v3, J33.T)", "close(r, v3 @ J33.T)", "formula",
  "layout")
P("contract.grad-v", "contract", "grad(lambda v: ga.contract(v, J33).sum())(v3)",
  "close(r, J33.sum(1))", "formula", "compose")
P("contract.vmap", "contract", "vmap(lambda v: ga.contract(v, J33))(torch.eye(3, dtype=D))",
  "close(r, J33)", "formula: rows", "compose")
E("contract.str", "contract", "ga.contract('v', 'J')", ("v",), "misuse")

# ---- fd_step, fd_tolerance, backward_rtol
EPS64 = torch.finfo(D).eps
P("fd_step.f64", "fd_step", "ga.fd_step(torch.tensor([0.0, 10.0, -1e5], dtype=D))",
  "close(r, EPS64 ** (1 / 3) * torch.tensor([1.0, 10.0, 1e5], dtype=D), 1e-12)",
  "formula eps^(1/3) max(1, |x|)", "values")
P("fd_step.f32", "fd_step", "ga.fd_step(torch.tensor([0.5, -4.0]))",
  "close(r, torch.finfo(S).eps ** (1 / 3) * torch.tensor([1.0, 4.0]), 1e-6)", "formula", "dtype")
P("fd_step.f16", "fd_step", "ga.fd_step(torch.tensor([0.5, 8.0]).half())",
  "close(r, torch.finfo(torch.float16).eps ** (1 / 3) * torch.tensor([1.0, 8.0]), 1e-3)",
  "formula", "dtype", either=True, keys=("x", "float16"))
P("fd_step.c128", "fd_step", "ga.fd_step(torch.tensor([3 + 4j], dtype=torch.complex128))",
  "not r.is_complex() and close(r, EPS64 ** (1 / 3) * torch.tensor([5.0], dtype=D), 1e-12)",
  "formula with |x| = 5, real", "dtype")
E("fd_step.int", "fd_step", "ga.fd_step(torch.arange(3))", ("x",), "dtype")
E("fd_step.float", "fd_step", "ga.fd_step(1.0)", ("x",), "misuse")
P("fd_step.1e300", "fd_step", "ga.fd_step(torch.tensor([1e300], dtype=D))",
  "close(r, EPS64 ** (1 / 3) * torch.tensor([1e300], dtype=D), 1e-12)", "formula", "values")
P("fd_step.inf", "fd_step", "ga.fd_step(torch.tensor([float('inf')], dtype=D))",
  "bool(torch.isinf(r).all())", "formula gives inf (or a refusal naming x)", "values", either=True,
  keys=("x", "inf", "finite"))
P("fd_step.empty", "fd_step", "ga.fd_step(xempty)", "tuple(r.shape) == (0,)", "shape", "layout")
P("fd_step.meta", "fd_step", "ga.fd_step(xmeta)", "r.shape == xmeta.shape",
  "shape only (or a refusal naming meta)", "device", either=True, keys=("meta",))
P("fd_tol.f64", "fd_tolerance", "ga.fd_tolerance(D)", "abs(r - 100 * EPS64 ** (2 / 3)) < 1e-12",
  "formula 100 eps^(2/3)", "dtype")
P("fd_tol.f32", "fd_tolerance", "ga.fd_tolerance(S)",
  "abs(r - 100 * torch.finfo(S).eps ** (2 / 3)) < 1e-6", "formula", "dtype")
P("fd_tol.c128", "fd_tolerance", "ga.fd_tolerance(torch.complex128)",
  "abs(r - 100 * EPS64 ** (2 / 3)) < 1e-12", "real dtype's value (or a refusal naming dtype)",
  "dtype", either=True, keys=("dtype",))
E("fd_tol.str", "fd_tolerance", "ga.fd_tolerance('float64')", ("dtype",), "misuse")
E("fd_tol.int", "fd_tolerance", "ga.fd_tolerance(torch.int64)", ("dtype",), "dtype")
P("rtol.f64", "backward_rtol", "ga.backward_rtol(D)", "r == 1e-10", "documented value", "dtype")
P("rtol.c64", "backward_rtol", "ga.backward_rtol(torch.complex64)", "r == 1e-5", "documented",
  "dtype")
P("rtol.bf16", "backward_rtol", "ga.backward_rtol(torch.bfloat16)", "r == 1.6e-2", "documented",
  "dtype")
P("rtol.f16", "backward_rtol", "ga.backward_rtol(torch.float16)", "r == 1e-3", "documented",
  "dtype")
E("rtol.str", "backward_rtol", "ga.backward_rtol('float64')", ("dtype",), "misuse")
E("rtol.int", "backward_rtol", "ga.backward_rtol(torch.int32)", ("dtype",), "dtype")
E("rtol.None", "backward_rtol", "ga.backward_rtol(None)", ("dtype",), "misuse")

# ---- check_backward: finite differences at large magnitudes, tolerances
P("cb.sin-1e4", "check_backward", "ga.check_backward(sin_ok, rg(xbig))", "r.status != 'wrong'",
  "a correct backward is never WRONG (agree or could-not-check)", "fd-magnitude")
P("cb.sin-7e3-seed1", "check_backward", "ga.check_backward(sin_ok, rg(x7k), seed=1)",
  "r.status != 'wrong'", "correct backward", "fd-magnitude")
P("cb.sin-7e3-seed2", "check_backward", "ga.check_backward(sin_ok, rg(x7k), seed=2)",
  "r.status != 'wrong'", "correct backward", "fd-magnitude")
P("cb.sin-1e3-f32", "check_backward", "ga.check_backward(sin_ok, rg(x1e3f))",
  "r.status != 'wrong'", "correct backward", "fd-magnitude")
P("cb.torch-sin-1e4-fd", "check_backward",
  "ga.check_backward(torch.sin, rg(xbig), reference='finite-difference')",
  "r.status != 'wrong'", "torch's own sin backward is correct", "fd-magnitude")
P("cb.mixed-mag", "check_backward",
  "ga.check_backward(sin_ok, rg(torch.tensor([1e-8, 1.0, 1e5 + 0.3], dtype=D)))",
  "r.status != 'wrong'", "correct backward", "fd-magnitude")
P("cb.sin-30", "check_backward",
  "ga.check_backward(_make_sin(), rg(torch.tensor([30.0, -30.0, 0.5], dtype=D)))",
  "r.status != 'wrong'", "correct backward", "fd-magnitude")
P("cb.half", "check_backward", "ga.check_backward(sin_half, rg(x3))",
  "r.status == 'wrong' and not bool(r)", "formula: backward is 1/2 cos", "tolerance")
P("cb.planted-1e-6-f64", "check_backward", "ga.check_backward(sin_e6, rg(x3))",
  "r.status == 'wrong'", "error 1e-6 relative >> backward_rtol(float64)=1e-10", "tolerance")
P("cb.planted-1e-6-f64-fd", "check_backward",
  "ga.check_backward(sin_e6, rg(x3), reference='finite-difference')",
  "r.status == 'wrong'", "1e-6 relative >> FD error at |x|~1 in float64 (~1e-10)", "tolerance")
P("cb.planted-1e-13-f64", "check_backward", "ga.check_backward(sin_e13, rg(x3))",
  "r.status == 'agree'", "1e-13 relative << 1e-10", "tolerance")
P("cb.planted-1e-4-f32", "check_backward", "ga.check_backward(sin_e4, rg(x3f))",
  "r.status == 'wrong'", "1e-4 relative = 10x backward_rtol(float32)", "tolerance")
P("cb.planted-1e-9-f32", "check_backward", "ga.check_backward(sin_e9, rg(x3f))",
  "r.status == 'agree'", "1e-9 relative is below float32 rounding", "tolerance")
P("cb.nan-backward", "check_backward", "ga.check_backward(sin_nan, rg(x3))",
  "r.status == 'wrong'", "NaN gradient of a finite derivative", "values")
P("cb.nan-input", "check_backward", "ga.check_backward(torch.sin, rg(xnan))",
  "r.status != 'wrong'", "torch.sin's backward is correct (could-not-check at NaN)", "values")
P("cb.nan-input-fd", "check_backward", "ga.check_backward(sin_ok, rg(xnan))",
  "r.status != 'wrong'", "correct backward", "values")
P("cb.inf-input", "check_backward", "ga.check_backward(sin_ok, rg(xinf))",
  "r.status != 'wrong'", "correct backward", "values")
P("cb.f16", "check_backward", "ga.check_backward(torch.sin, rg(x3h))", "r.status != 'wrong'",
  "torch's sin is correct", "dtype")
P("cb.bf16", "check_backward", "ga.check_backward(torch.sin, rg(x3b))", "r.status != 'wrong'",
  "torch's sin is correct", "dtype")
P("cb.complex-only", "check_backward", "ga.check_backward(lambda t: t * t, rg(z3))",
  "r.status != 'agree' or len(r.skipped) > 0",
  "no 'agree' about nothing: complex inputs are skipped (or a clear refusal)", "dtype",
  either=True, keys=("complex", "requires", "input"))
P("cb.int-passthrough", "check_backward", "ga.check_backward(lambda a, n: a * n, rg(x3), torch.tensor([1, 2, 3]))",
  "r.status == 'agree' and len(r.skipped) > 0", "correct; the int input skipped", "dtype")
P("cb.noncontig", "check_backward", "ga.check_backward(sin_ok, rg(xnc))", "r.status == 'agree'",
  "correct", "layout")
P("cb.0d", "check_backward", "ga.check_backward(sin_ok, rg(x0))", "r.status == 'agree'",
  "correct", "layout")
E("cb.empty", "check_backward", "ga.check_backward(torch.sin, rg(xempty))", ("empty",), "layout")
E("cb.meta", "check_backward",
  "ga.check_backward(torch.sin, torch.empty(3, device='meta', dtype=D, requires_grad=True))",
  ("meta",), "device")
P("cb.sparse", "check_backward", "ga.check_backward(torch.sin, x3.to_sparse().requires_grad_())",
  "r.status != 'wrong'", "torch's sin is correct: densified (said) or refused naming sparse",
  "layout", either=True, keys=("sparse",))
P("cb.tanh-sat-f32", "check_backward", "ga.check_backward(torch.tanh, rg(torch.tensor([10.0, -20.0, 0.3])))",
  "r.status != 'wrong'", "torch's tanh is correct", "values")
P("cb.module", "check_backward", "ga.check_backward(_lin(), rg(x3))", "r.status == 'agree'",
  "nn.Linear is correct", "misuse")
E("cb.parameters-str", "check_backward", "ga.check_backward(_lin(), rg(x3), parameters='yes')",
  ("parameters",), "options")
E("cb.probes0", "check_backward", "ga.check_backward(torch.sin, rg(x3), probes=0)", ("probes",),
  "options")
E("cb.probes0-nolocalize", "check_backward",
  "ga.check_backward(torch.sin, rg(x3), probes=0, localize=False)", ("probes",), "options")
E("cb.probes-neg", "check_backward", "ga.check_backward(torch.sin, rg(x3), probes=-2)",
  ("probes",), "options")
E("cb.probes-float", "check_backward", "ga.check_backward(torch.sin, rg(x3), probes=2.5)",
  ("probes",), "options")
E("cb.probes-bool", "check_backward", "ga.check_backward(torch.sin, rg(x3), probes=True)",
  ("probes",), "options")
E("cb.rtol-neg", "check_backward", "ga.check_backward(torch.sin, rg(x3), rtol=-1.0)", ("rtol",),
  "options")
E("cb.rtol-nan", "check_backward", "ga.check_backward(torch.sin, rg(x3), rtol=float('nan'))",
  ("rtol",), "options")
E("cb.rtol-inf", "check_backward", "ga.check_backward(torch.sin, rg(x3), rtol=float('inf'))",
  ("rtol",), "options")
E("cb.rtol-str", "check_backward", "ga.check_backward(torch.sin, rg(x3), rtol='1e-3')", ("rtol",),
  "options")
P("cb.rtol-huge-wrong", "check_backward", "ga.check_backward(sin_half, rg(x3), rtol=0.1)",
  "r.status == 'wrong'", "a factor 2 exceeds rtol 0.1", "options")
E("cb.seed-str", "check_backward", "ga.check_backward(torch.sin, rg(x3), seed='a')", ("seed",),
  "options")
E("cb.seed-huge", "check_backward", "ga.check_backward(torch.sin, rg(x3), seed=2**70)", ("seed",),
  "options")
E("cb.localize-bogus", "check_backward", "ga.check_backward(torch.sin, rg(x3), localize='some')",
  ("localize",), "options")
E("cb.localize-int", "check_backward", "ga.check_backward(torch.sin, rg(x3), localize=3)",
  ("localize",), "options")
P("cb.localize-False", "check_backward", "ga.check_backward(sin_half, rg(x3), localize=False, probes=1)",
  "r.status == 'wrong'", "a factor 1/2 shows in any probe", "options")
P("cb.localize-bounded", "check_backward", "ga.check_backward(sin_half, rg(x3), localize='bounded')",
  "r.status == 'wrong'", "wrong", "options")
E("cb.reference-bogus", "check_backward", "ga.check_backward(torch.sin, rg(x3), reference='exact')",
  ("reference",), "options")
E("cb.reference-int", "check_backward", "ga.check_backward(torch.sin, rg(x3), reference=3)",
  ("reference",), "options")
E("cb.reference-forward-nojvp", "check_backward",
  "ga.check_backward(sin_ok, rg(x3), reference='forward')", ("forward", "jvp", "reference"),
  "options")
E("cb.fn-tensor", "check_backward", "ga.check_backward(torch.sin(x3), rg(x3))", ("fn",), "misuse")
E("cb.no-requires-grad", "check_backward", "ga.check_backward(torch.sin, x3)", ("requires",),
  "misuse")
E("cb.fn-int", "check_backward", "ga.check_backward(f_int, rg(x3))", ("fn",), "misuse")
E("cb.fn-none", "check_backward", "ga.check_backward(f_none, rg(x3))", ("fn",), "misuse")
P("cb.tuple-out", "check_backward", "ga.check_backward(f_tuple, rg(x3))", "r.status == 'agree'",
  "torch's sin and *2 are correct", "misuse")
P("cb.ste-expected", "check_backward", "ga.check_backward(ste, rg(x3), expected=lambda g, x: g)",
  "r.status == 'agree'", "the backward is the expected identity", "options")
E("cb.expected-shape", "check_backward",
  "ga.check_backward(ste, rg(x3), expected=lambda g, x: torch.ones(4, dtype=D))",
  ("expected", "shape"), "options")
P("cb.ste-no-expected", "check_backward", "ga.check_backward(ste, rg(x3 + 0.1))",
  "r.status == 'wrong'", "round's derivative is 0; an identity backward is not it", "values")
E("cb.in-grad", "check_backward", "cb_grad()", ("grad", "transform"), "compose")

# ---- compare_vjp
P("cv.sin-1e4", "compare_vjp", "ga.compare_vjp(sin_ok, xbig, v3)", "r.status != 'DISAGREE'",
  "a correct backward never DISAGREEs", "fd-magnitude")
P("cv.torch-sin-1e4", "compare_vjp", "ga.compare_vjp(torch.sin, xbig, v3)", "r.status != 'DISAGREE'",
  "correct", "fd-magnitude")
P("cv.sin-1e3-f32", "compare_vjp", "ga.compare_vjp(torch.sin, x1e3f, v3.float())",
  "r.status != 'DISAGREE'", "correct", "fd-magnitude")
P("cv.mixed-mag", "compare_vjp",
  "ga.compare_vjp(torch.sin, torch.tensor([1e-8, 1.0, 1e4 + 0.3], dtype=D), v3)",
  "r.status != 'DISAGREE'", "correct", "fd-magnitude")
P("cv.exp-50", "compare_vjp", "ga.compare_vjp(torch.exp, torch.tensor([50.0, -50.0, 0.1], dtype=D), v3)",
  "r.status != 'DISAGREE'", "correct", "fd-magnitude")
P("cv.tanh-sat-f32", "compare_vjp", "ga.compare_vjp(torch.tanh, torch.tensor([10.0, -9.0, 0.2]), torch.ones(3))",
  "r.status != 'DISAGREE'", "correct", "fd-magnitude")
P("cv.basic", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3)", "r.agree and r.status == 'agree'",
  "correct", "values")
P("cv.half", "compare_vjp", "ga.compare_vjp(sin_half, x3, v3)", "not r.agree and r.status == 'DISAGREE'",
  "factor 1/2", "tolerance")
P("cv.planted-1e-6-fd", "compare_vjp", "ga.compare_vjp(sin_e6, x3, v3)", "r.status == 'DISAGREE'",
  "1e-6 relative >> FD error and backward_rtol", "tolerance")
P("cv.planted-1e-6-forward", "compare_vjp", "ga.compare_vjp(sin_e6, x3, v3, reference='forward')",
  "r.status == 'DISAGREE'", "1e-6 > assert_close float64 (1e-7, 1e-7)", "tolerance", either=True,
  keys=("forward", "jvp"))
P("cv.planted-1e-13-fd", "compare_vjp", "ga.compare_vjp(sin_e13, x3, v3)", "r.agree",
  "1e-13 below any tolerance", "tolerance")
P("cv.planted-1e-2-f32", "compare_vjp", "ga.compare_vjp(_make_sin(err=1e-2), x3f, v3.float())",
  "r.status == 'DISAGREE'", "1e-2 relative, far above float32 FD error", "tolerance")
P("cv.planted-1e-6-jacref", "compare_vjp",
  "ga.compare_vjp(sin_e6, x3, v3, reference=torch.diag(torch.cos(x3)))", "r.status == 'DISAGREE'",
  "exact Jacobian; 1e-6 relative > assert_close float64 (rtol 1e-7, atol 1e-7)", "tolerance")
P("cv.planted-1e-9-jacref", "compare_vjp",
  "ga.compare_vjp(sin_e9, x3, v3, reference=torch.diag(torch.cos(x3)))", "r.agree",
  "exact Jacobian; 1e-9 relative < assert_close float64", "tolerance")
P("cv.planted-1e-4-f32-jacref", "compare_vjp",
  "ga.compare_vjp(sin_e4, x3f, v3.float(), reference=torch.diag(torch.cos(x3f)))",
  "r.status == 'DISAGREE'", "exact Jacobian; 1e-4 relative (~7e-5 abs) > assert_close float32 (1.3e-6, 1e-5)",
  "tolerance")
E("cv.rtol-neg", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, rtol=-1.0)", ("rtol",), "options")
E("cv.rtol-nan", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, rtol=float('nan'))", ("rtol",),
  "options")
E("cv.atol-nan", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, atol=float('nan'))", ("atol",),
  "options")
E("cv.atol-neg", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, atol=-1e-3)", ("atol",),
  "options")
E("cv.rtol-str", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, rtol='tight')", ("rtol",),
  "options")
P("cv.atol-inf", "compare_vjp", "ga.compare_vjp(sin_half, x3, v3, atol=float('inf'))",
  "not r.agree", "an infinite atol would make any backward 'agree' (or a refusal naming atol)",
  "options", either=True, keys=("atol",))
P("cv.nan-v", "compare_vjp", "ga.compare_vjp(torch.sin, x3, torch.tensor([1.0, float('nan'), 0.5], dtype=D))",
  "not r.agree and r.status != 'DISAGREE'",
  "NaN v: could not check (or a refusal naming v); never DISAGREE for a correct backward",
  "values", either=True, keys=("v", "nan"))
P("cv.nan-x", "compare_vjp", "ga.compare_vjp(torch.sin, xnan, v3)", "r.status != 'DISAGREE'",
  "correct backward", "values")
P("cv.inf-x", "compare_vjp", "ga.compare_vjp(torch.exp, xinf, v3)", "r.status != 'DISAGREE'",
  "correct backward", "values")
P("cv.v-zero", "compare_vjp", "ga.compare_vjp(torch.sin, x3, torch.zeros(3, dtype=D))", "r.agree",
  "0 = 0", "values")
E("cv.v-shape", "compare_vjp", "ga.compare_vjp(torch.sin, x3, torch.ones(2, dtype=D))",
  ("v", "shape"), "misuse")
E("cv.v-complex", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3 * 1j)", ("v", "complex"),
  "dtype")
E("cv.x-int", "compare_vjp", "ga.compare_vjp(torch.sin, xint, v3)", ("x",), "dtype")
E("cv.x-empty", "compare_vjp", "ga.compare_vjp(torch.sin, xempty, xempty)", ("x", "empty"),
  "layout")
E("cv.x-meta", "compare_vjp", "ga.compare_vjp(torch.sin, xmeta, v3)", ("x", "meta"), "device")
E("cv.x-sparse", "compare_vjp", "ga.compare_vjp(torch.sin, xcoo, v3)", ("x", "sparse"), "layout")
E("cv.fn-tuple", "compare_vjp", "ga.compare_vjp(f_tuple, x3, v3)", ("fn", "tuple"), "misuse")
E("cv.fn-str", "compare_vjp", "ga.compare_vjp('sin', x3, v3)", ("fn",), "misuse")
E("cv.ref-bogus", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, reference='exact')",
  ("reference",), "options")
E("cv.ref-shape", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, reference=torch.eye(2, dtype=D))",
  ("reference", "shape"), "misuse")
E("cv.ref-int", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, reference=5)", ("reference",),
  "misuse")
P("cv.ref-numpy", "compare_vjp",
  "ga.compare_vjp(torch.sin, x3, v3, reference=np.diag(np.cos(x3.numpy())))", "r.agree",
  "hand Jacobian", "options")
P("cv.ref-callable", "compare_vjp",
  "ga.compare_vjp(torch.sin, x3, v3, reference=lambda v: v * torch.cos(x3))", "r.agree",
  "hand VJP", "options")
P("cv.ref-reverse", "compare_vjp", "ga.compare_vjp(torch.sin, x3, v3, reference='reverse')",
  "r.agree", "consistency", "options")
P("cv.output-tensor", "compare_vjp", "compare_output_tensor()", "r['agree'] and r['grad'] is None",
  "agree; .grad restored", "misuse")
E("cv.output-tensor-str-ref", "compare_vjp",
  "ga.compare_vjp(rg(x3) ** 2, x3, v3)", ("reference", "x", "graph"), "misuse")
E("cv.in-grad", "compare_vjp",
  "grad(lambda t: ga.compare_vjp(torch.sin, t, torch.ones((), dtype=D)).backward.sum())(torch.tensor(0.5, dtype=D))",
  ("grad", "transform"), "compose")
P("cv.complex-holo", "compare_vjp", "ga.compare_vjp(lambda t: t * t, z3, z3.conj())",
  "r.status != 'DISAGREE'", "correct backward (torch's own)", "dtype")
P("cv.f16", "compare_vjp", "ga.compare_vjp(torch.sin, x3h, v3.half())", "r.status != 'DISAGREE'",
  "correct", "dtype")
P("cv.bf16", "compare_vjp", "ga.compare_vjp(torch.sin, x3b, v3.bfloat16())",
  "r.status != 'DISAGREE'", "correct", "dtype")
P("cv.subnormal", "compare_vjp", "ga.compare_vjp(torch.sin, xsub, v3)", "r.agree",
  "correct, FD of sin near 0 is exact enough", "values")

# ---- SparseJacobian
P("sj.tri", "SparseJacobian", "sj_tri()(stencil, x6)", "close(r, jr(stencil, x6))", "jacrev",
  "values")
P("sj.certify", "SparseJacobian", "sj_tri()(stencil, x6, certify=2)", "close(r, jr(stencil, x6))",
  "jacrev", "values")
E("sj.missing-certify", "SparseJacobian", "missing_tri()(stencil, x6, certify=3)",
  ("pattern", "certif", "miss"), "values", oracle="CertificateError (ValueError)")
P("sj.f32", "SparseJacobian", "sj_tri()(stencil, x6.float())",
  "close(r, jr(stencil, x6.float()), 1e-5, 1e-6)", "jacrev", "dtype")
P("sj.f16", "SparseJacobian", "sj_tri()(stencil, x6.half())",
  "close(r, jr(stencil, x6), 1e-2, 1e-2)", "jacrev (or a refusal naming x: float32/float64 only)",
  "dtype", either=True, keys=("x", "float16", "dtype"))
P("sj.nan", "SparseJacobian", "sj_tri()(stencil, torch.tensor([0.1, float('nan'), 0.3, 0.4, 0.5, 0.6], dtype=D))",
  "close_notnan(r, jr(stencil, torch.tensor([0.1, float('nan'), 0.3, 0.4, 0.5, 0.6], dtype=D)))",
  "jacrev (NaN only where cos(NaN))", "values")
P("sj.csr", "SparseJacobian", "sj_tri()(stencil, x6, layout=torch.sparse_csr)",
  "r.layout == torch.sparse_csr and close(r, jr(stencil, x6))", "jacrev", "layout")
P("sj.strided", "SparseJacobian", "sj_tri()(stencil, x6, layout=torch.strided)",
  "close(r, jr(stencil, x6))", "jacrev", "layout")
E("sj.layout-str", "SparseJacobian", "sj_tri()(stencil, x6, layout='dense')", ("layout",),
  "options")
E("sj.pattern-float", "SparseJacobian", "ga.SparseJacobian(tri(6, D))", ("pattern", "bool"),
  "dtype")
E("sj.pattern-empty", "SparseJacobian", "ga.SparseJacobian(torch.zeros(4, 4, dtype=torch.bool))",
  ("pattern", "false", "empty"), "values")
E("sj.pattern-meta", "SparseJacobian", "ga.SparseJacobian(torch.ones(3, 3, dtype=torch.bool, device='meta'))",
  ("pattern", "meta"), "device")
E("sj.pattern-list", "SparseJacobian", "ga.SparseJacobian([[True, False], [False, True]])",
  ("pattern",), "misuse")
E("sj.huge", "SparseJacobian", "huge_pattern()", ("memory", "GB"), "memory",
  allow=(MemoryError,), oracle="MemoryError with its estimate (~128 GB), nothing allocated")
E("sj.x_shape-str", "SparseJacobian", "ga.SparseJacobian(tri(6), 'abc')", ("x_shape",), "options")
E("sj.x_shape-wrong", "SparseJacobian", "ga.SparseJacobian(tri(6), (7,))", ("x_shape", "shape"),
  "options")
E("sj.3d-no-x_shape", "SparseJacobian", "ga.SparseJacobian(torch.ones(2, 2, 2, dtype=torch.bool))",
  ("x_shape",), "options")
E("sj.method-bogus", "SparseJacobian", "ga.SparseJacobian(tri(6), method='sideways')", ("method",),
  "options")
E("sj.strategy-bogus", "SparseJacobian", "ga.SparseJacobian(tri(6), strategy='magic')",
  ("strategy",), "options")
P("sj.bidirectional", "SparseJacobian",
  "ga.SparseJacobian(arrow(6), method='bidirectional')(arrow_f, x6)",
  "close(r, jr(arrow_f, x6))", "jacrev", "options")
P("sj.uncoalesced", "SparseJacobian",
  "ga.SparseJacobian(torch.sparse_coo_tensor(torch.tensor([[0, 0, 1, 2], [0, 0, 1, 2]]), torch.ones(4, dtype=torch.bool), (3, 3)))(torch.sin, x3)",
  "close(r, jr(torch.sin, x3))", "jacrev (duplicate indices of an uncoalesced pattern)", "layout",
  either=True, keys=("pattern", "coalesce"))
P("sj.x_shape-2d", "SparseJacobian",
  "ga.SparseJacobian(torch.eye(6, dtype=torch.bool).reshape(2, 3, 2, 3), (2, 3))(torch.sin, xb)",
  "close(r, jr(torch.sin, xb))", "jacrev", "layout")
E("sj.x-shape", "SparseJacobian", "sj_tri()(stencil, x5)", ("x", "shape", "pattern"), "misuse")
E("sj.x-int", "SparseJacobian", "sj_tri()(stencil, torch.arange(6))", ("x",), "dtype")
E("sj.x-sparse", "SparseJacobian", "sj_tri()(stencil, x6.to_sparse())", ("x", "sparse"), "layout")
E("sj.x-meta", "SparseJacobian", "sj_tri()(stencil, torch.empty(6, device='meta', dtype=D))",
  ("x", "meta"), "device")
E("sj.x-complex", "SparseJacobian", "sj_tri()(lambda u: u * 2, x6.to(torch.complex128))",
  ("x", "complex", "real"), "dtype")
E("sj.fn-tuple", "SparseJacobian", "sj_tri()(f_tuple, x6)", ("fn",), "misuse")
E("sj.fn-int-out", "SparseJacobian", "sj_tri()(f_intout, x6)", ("fn", "integer", "output"),
  "dtype")
E("sj.certify-neg", "SparseJacobian", "sj_tri()(stencil, x6, certify=-1)", ("certify",), "options")
E("sj.certify-float", "SparseJacobian", "sj_tri()(stencil, x6, certify=0.5)", ("certify",),
  "options")
E("sj.generator-int", "SparseJacobian", "sj_tri()(stencil, x6, certify=1, generator=3)",
  ("generator",), "options")
E("sj.in-grad", "SparseJacobian", "grad(lambda t: sj_tri()(stencil, t, layout=torch.strided).sum())(x6)",
  ("grad", "transform"), "compose")
E("sj.in-vmap", "SparseJacobian", "vmap(lambda t: ga.SparseJacobian(tri(6))(stencil, t, layout=torch.strided))(torch.stack([x6, x6]))",
  ("vmap", "transform"), "compose")
P("sj.expanded-x", "SparseJacobian", "ga.SparseJacobian(torch.eye(6, dtype=torch.bool))(torch.sin, torch.tensor([0.5], dtype=D).expand(6))",
  "close(r, jr(torch.sin, torch.full((6,), 0.5, dtype=D)))", "jacrev on a contiguous copy",
  "layout")
P("sj.compiled-aot-eager", "SparseJacobian", "compiled_sj()", "close(r, jr(stencil, x6))",
  "jacrev (documented: same as the eager call)", "options", either=True)

# ---- SparseHessian
P("sh.arrow", "SparseHessian", "hess_arrow(x6)(energy, x6)", "close(r, hessian(energy)(x6))",
  "torch.func.hessian", "values")
P("sh.acyclic", "SparseHessian", "ga.SparseHessian(tri(6), method='acyclic')(lambda u: ((u[1:] - u[:-1]) ** 4).sum(), x6)",
  "close(r, hessian(lambda u: ((u[1:] - u[:-1]) ** 4).sum())(x6))", "torch.func.hessian", "options")
E("sh.method-bogus", "SparseHessian", "ga.SparseHessian(tri(6), method='greedy')", ("method",),
  "options")
E("sh.int-out", "SparseHessian", "hess_arrow(x6)(lambda u: (u > 0).sum(), x6)",
  ("f", "integer", "output"), "dtype", oracle="TypeError (documented: an integer output)")
E("sh.complex-out", "SparseHessian", "hess_arrow(x6)(lambda u: (u * 1j).sum(), x6)",
  ("f", "complex", "output"), "dtype")
E("sh.nonscalar", "SparseHessian", "hess_arrow(x6)(lambda u: u * u, x6)", ("scalar", "f"), "misuse")
E("sh.not-square", "SparseHessian", "ga.SparseHessian(torch.ones(3, 4, dtype=torch.bool))",
  ("pattern", "square"), "misuse")
E("sh.pattern-float", "SparseHessian", "sh_float_pattern()", ("pattern", "bool"), "dtype")
E("sh.missing-certify", "SparseHessian",
  "ga.SparseHessian(torch.eye(6, dtype=torch.bool))(energy, x6, certify=3)",
  ("pattern", "certif", "miss"), "values")
E("sh.x-shape", "SparseHessian", "hess_arrow(x6)(energy, x5)", ("x", "pattern", "shape"), "misuse")
E("sh.in-grad", "SparseHessian", "grad(lambda t: hess_arrow(x6)(energy, t, layout=torch.strided).sum())(x6)",
  ("grad", "transform"), "compose")
P("sh.f32", "SparseHessian", "hess_arrow(x6)(energy, x6.float())",
  "close(r, hessian(energy)(x6), 1e-4, 1e-5)", "hessian", "dtype")
P("sh.strided", "SparseHessian", "hess_arrow(x6)(energy, x6, layout=torch.strided)",
  "close(r, hessian(energy)(x6))", "hessian", "layout")
P("sh.csr", "SparseHessian", "hess_arrow(x6)(energy, x6, layout=torch.sparse_csr)",
  "close(r, hessian(energy)(x6))", "hessian", "layout")
P("sh.nan-star", "SparseHessian",
  "ga.SparseHessian(torch.eye(4, dtype=torch.bool))(lambda u: torch.cos(u).sum(), torch.tensor([0.1, float('nan'), 0.3, 0.4], dtype=D))",
  "close_notnan(r, hessian(lambda u: torch.cos(u).sum())(torch.tensor([0.1, float('nan'), 0.3, 0.4], dtype=D)))",
  "torch.func.hessian (NaN only at the NaN entry)", "values")
E("sh.certify-neg", "SparseHessian", "hess_arrow(x6)(energy, x6, certify=-1)", ("certify",),
  "options")
E("sh.x-int", "SparseHessian", "hess_arrow(x6)(energy, torch.arange(6))", ("x",), "dtype")
E("sh.f-tuple", "SparseHessian", "hess_arrow(x6)(lambda u: (u.sum(), u.sum()), x6)", ("f",),
  "misuse")
E("sh.empty-pattern", "SparseHessian", "ga.SparseHessian(torch.zeros(0, 0, dtype=torch.bool))",
  ("pattern",), "layout")

# ---- jacobian_sparsity / hessian_sparsity / sparsity_pattern
P("js.stencil", "jacobian_sparsity", "ga.jacobian_sparsity(stencil, x5, layout=torch.strided)",
  "same_pattern(r, tri(5))", "formula: tridiagonal", "values")
P("js.pad-circular", "jacobian_sparsity",
  "ga.jacobian_sparsity(lambda t: F.pad(t.reshape(1, 1, 6), (1, 2), mode='circular').sin(), x6)",
  "covers(r, jr(lambda t: F.pad(t.reshape(1, 1, 6), (1, 2), mode='circular').sin(), x6))",
  "conservative: covers jacrev's non-zeros", "values")
P("js.conv-valid-stride", "jacobian_sparsity",
  "ga.jacobian_sparsity(lambda t: F.conv2d(t, torch.ones(1, 1, 2, 2, dtype=D), padding='valid', stride=2), torch.rand(1, 1, 5, 5, dtype=D))",
  "covers(r, jr(lambda t: F.conv2d(t, torch.ones(1, 1, 2, 2, dtype=D), padding='valid', stride=2), torch.rand(1, 1, 5, 5, dtype=D)))",
  "conservative (or UnsupportedOpError naming the op)", "values",
  allow=(ga.UnsupportedOpError,), keys=("conv",))
P("js.hfft", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: torch.fft.hfft(t), x6)",
  "covers(r, jr(lambda t: torch.fft.hfft(t), x6))", "conservative (or UnsupportedOpError)",
  "values", allow=(ga.UnsupportedOpError,), keys=("hfft",))
P("js.batch-norm-train", "jacobian_sparsity",
  "ga.jacobian_sparsity(lambda t: F.batch_norm(t, None, None, training=True), torch.rand(4, 2, dtype=D))",
  "covers(r, jr(lambda t: F.batch_norm(t, None, None, training=True), torch.rand(4, 2, dtype=D)))",
  "conservative", "values", allow=(ga.UnsupportedOpError,), keys=("batch_norm",))
P("js.sort", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: t.sort().values, x5)",
  "covers(r, jr(lambda t: t.sort().values, x5.flip(0)))", "conservative", "values")
P("js.cumsum", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: t.cumsum(0), x5, layout=torch.strided)",
  "same_pattern(r, torch.ones(5, 5).tril())", "formula: lower triangular", "values")
P("js.where", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: torch.where(t > 0, t, t.flip(0)), x5)",
  "covers(r, jr(lambda t: torch.where(t > 0, t, t.flip(0)), -x5)) and covers(r, jr(lambda t: torch.where(t > 0, t, t.flip(0)), x5))",
  "conservative for every x", "values")
P("js.data-index", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: t[t.argmax()] * t, x5)",
  "covers(r, jr(lambda t: t[t.argmax()] * t, x5)) and covers(r, jr(lambda t: t[t.argmax()] * t, -x5))",
  "UnsupportedOpError (indices from x's values) or conservative", "values",
  allow=(ga.UnsupportedOpError,), keys=("ind", "value"))
P("js.item", "jacobian_sparsity", "ga.jacobian_sparsity(f_item, x5)", "False",
  "UnsupportedOpError (documented: a tensor depending on x converted to a number)", "misuse",
  allow=(ga.UnsupportedOpError,), keys=("item", "number", "python"))
E("js.int-x", "jacobian_sparsity", "ga.jacobian_sparsity(torch.sin, xint)", ("x",), "dtype")
E("js.complex-x", "jacobian_sparsity", "ga.jacobian_sparsity(torch.sin, z3)", ("x",), "dtype")
E("js.tuple-out", "jacobian_sparsity", "ga.jacobian_sparsity(f_tuple, x3)", ("fn",), "misuse")
E("js.layout-csr", "jacobian_sparsity", "ga.jacobian_sparsity(torch.sin, x3, layout=torch.sparse_csr)",
  ("layout",), "options")
E("js.layout-str", "jacobian_sparsity", "ga.jacobian_sparsity(torch.sin, x3, layout='coo')",
  ("layout",), "options")
P("js.empty", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: t * 2, xempty)",
  "tuple(r.shape) == (0, 0)", "documented shape y.shape + x.shape", "layout")
P("js.meta", "jacobian_sparsity", "ga.jacobian_sparsity(stencil, torch.empty(5, device='meta', dtype=D), layout=torch.strided)",
  "same_pattern(r, tri(5))", "shape and dtype are what matter (or a refusal naming meta)",
  "device", either=True, keys=("meta",))
P("js.f16", "jacobian_sparsity", "ga.jacobian_sparsity(stencil, x5.half(), layout=torch.strided)",
  "same_pattern(r, tri(5))", "tridiagonal (or a refusal naming x)", "dtype", either=True,
  keys=("x", "float16"))
P("js.noncontig", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: t * 2, xnc, layout=torch.strided)",
  "same_pattern(r, torch.eye(12).reshape(4, 3, 4, 3))", "formula: identity", "layout")
P("js.matmul-zeros", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: J33 @ t, x3, layout=torch.strided)",
  "same_pattern(r, J33 != 0)", "formula: the constant's zeros", "values")
P("hs.energy", "hessian_sparsity", "ga.hessian_sparsity(lambda u: ((u[1:] - u[:-1]) ** 2).sum() + torch.cos(u).sum(), torch.zeros(4, dtype=D), layout=torch.strided)",
  "same_pattern(r, tri(4))", "documented example", "values")
P("hs.prod", "hessian_sparsity", "ga.hessian_sparsity(lambda u: u.prod(), x3)",
  "covers(r, hessian(lambda u: u.prod())(x3))", "conservative", "values")
P("hs.relu", "hessian_sparsity", "ga.hessian_sparsity(lambda u: torch.relu(u).sum(), x3)",
  "covers(r, hessian(lambda u: torch.relu(u).sum())(x3)) and bool((dense(r) == dense(r).T).all())",
  "conservative and symmetric", "values")
E("hs.nonscalar", "hessian_sparsity", "ga.hessian_sparsity(lambda u: u * u, x3)", ("f", "element", "scalar"),
  "misuse")
E("hs.int-x", "hessian_sparsity", "ga.hessian_sparsity(lambda u: u.sum(), xint)", ("x",), "dtype")
E("hs.layout", "hessian_sparsity", "ga.hessian_sparsity(lambda u: u.sum(), x3, layout=torch.sparse_csr)",
  ("layout",), "options")
P("sp.bidiag", "sparsity_pattern", "ga.sparsity_pattern(lambda u: u[1:] - u[:-1], torch.zeros(4, dtype=D))",
  "same_pattern(r, torch.tensor([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]))", "documented", "values")
E("sp.points0", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, x3, points=0)", ("points",),
  "options")
E("sp.points-neg", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, x3, points=-1)", ("points",),
  "options")
E("sp.points-float", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, x3, points=1.5)",
  ("points",), "options")
E("sp.generator", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, x3, generator='seed')",
  ("generator",), "options")
E("sp.nan", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, xnan)", ("x", "nan"), "values")
E("sp.meta", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, xmeta)", ("x", "meta"), "device")
E("sp.int", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, xint)", ("x",), "dtype")
E("sp.sparse", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, xcoo)", ("x", "sparse"), "layout")

# ---- color_pattern
RP = torch.rand(12, 9, generator=torch.Generator().manual_seed(1)) < 0.25
RP[0, 0] = True
for _s in gradarg.sparse.STRATEGIES:
    P(f"color.{_s}", "color_pattern", f"ga.color_pattern(RP, strategy={_s!r})",
      "valid_coloring(r, RP)", "definition: same-colour rows share no column", "values")
P("color.columns", "color_pattern", "ga.color_pattern(RP, 'columns')",
  "valid_coloring(r, RP, 'columns')", "definition", "values")
P("color.coo", "color_pattern", "ga.color_pattern(coo(RP))", "valid_coloring(r, RP)", "definition",
  "layout")
P("color.csr", "color_pattern", "ga.color_pattern(csr(RP), 'columns')",
  "valid_coloring(r, RP, 'columns')", "definition", "layout")
P("color.3d", "color_pattern", "ga.color_pattern(RP.reshape(12, 3, 3), x_shape=(3, 3))",
  "valid_coloring(r, RP)", "definition", "layout")
E("color.side", "color_pattern", "ga.color_pattern(RP, 'diagonal')", ("side",), "options")
E("color.strategy", "color_pattern", "ga.color_pattern(RP, strategy='magic')", ("strategy",),
  "options")
E("color.all-false", "color_pattern", "ga.color_pattern(torch.zeros(3, 3, dtype=torch.bool))",
  ("pattern", "false", "empty"), "values")
E("color.float", "color_pattern", "ga.color_pattern(RP.double())", ("pattern", "bool"), "dtype")
E("color.3d-no-x_shape", "color_pattern", "ga.color_pattern(RP.reshape(12, 3, 3))",
  ("x_shape", "shape"), "misuse")
E("color.meta", "color_pattern", "ga.color_pattern(torch.ones(3, 3, dtype=torch.bool, device='meta'))",
  ("pattern", "meta"), "device")

# ---- show: fmt, latex_*, markdown_table, summarize, explorer
P("fmt.float", "fmt", "ga.fmt(0.4000000059604645)", "r == '0.4'", "documented", "values")
P("fmt.nan", "fmt", "ga.fmt(float('nan'))", "'nan' in r.lower()", "NaN shown", "values")
P("fmt.inf", "fmt", "ga.fmt(-float('inf'))", "'inf' in r.lower() or '∞' in r", "-inf shown",
  "values")
P("fmt.tiny", "fmt", "ga.fmt(1e-300)", "'300' in r", "1e-300 not shown as 0", "values")
P("fmt.huge", "fmt", "ga.fmt(1e300)", "'300' in r", "1e+300", "values")
P("fmt.complex", "fmt", "ga.fmt(1 - 2j)", "r == '1 - 2i'", "documented", "values")
P("fmt.sparse", "fmt", "ga.fmt(torch.eye(2).to_sparse())", "r == '[[1, 0], [0, 1]]'",
  "documented: densified", "layout")
P("fmt.bf16", "fmt", "ga.fmt(torch.tensor([0.5, 2.0], dtype=torch.bfloat16))", "r == '[0.5, 2]'",
  "exact values", "dtype")
P("fmt.0d", "fmt", "ga.fmt(torch.tensor(3.0))", "r == '3'", "a number", "layout")
P("fmt.empty", "fmt", "ga.fmt(torch.empty(0))", "r == '[]'", "empty list", "layout")
P("fmt.digits1", "fmt", "ga.fmt(2 / 3, digits=1)", "r == '0.7'", ":.1g", "options")
E("fmt.digits0", "fmt", "ga.fmt(2 / 3, digits=0)", ("digits",), "options")
E("fmt.digits41", "fmt", "ga.fmt(2 / 3, digits=41)", ("digits",), "options")
E("fmt.digits-str", "fmt", "ga.fmt(2 / 3, digits='4')", ("digits",), "options")
E("fmt.None", "fmt", "ga.fmt(None)", ("value",), "misuse")
E("fmt.str", "fmt", "ga.fmt('0.5')", ("value",), "misuse")
E("fmt.meta", "fmt", "ga.fmt(xmeta)", ("meta", "value"), "device")
P("latex.basic", "latex_matrix", "ga.latex_matrix(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))",
  "r == '\\\\begin{bmatrix} 1 & 2 \\\\\\\\ 3 & 4 \\\\end{bmatrix}'", "documented", "values")
P("latex.3d", "latex_matrix", "ga.latex_matrix(torch.arange(8.0).reshape(2, 2, 2))",
  "r.count('\\\\\\\\') == 1 and r.count('&') == 6", "documented: 2 x 4 matrix", "layout")
P("latex.nan", "latex_matrix", "ga.latex_matrix(torch.tensor([float('nan'), 1.0]))",
  "'nan' in r.lower()", "NaN shown", "values")
E("latex.env-space", "latex_matrix", "ga.latex_matrix(torch.eye(2), env='b matrix')", ("env",),
  "options")
E("latex.env-int", "latex_matrix", "ga.latex_matrix(torch.eye(2), env=3)", ("env",), "options")
E("latex.env-inject", "latex_matrix", "ga.latex_matrix(torch.eye(2), env='bmatrix}\\\\foo{')",
  ("env",), "options")
E("latex.digits0", "latex_matrix", "ga.latex_matrix(torch.eye(2), digits=0)", ("digits",), "options")
E("latex.None", "latex_matrix", "ga.latex_matrix(None)", ("t",), "misuse")
E("latex.str", "latex_matrix", "ga.latex_matrix('abc')", ("t",), "misuse")
E("latex.meta", "latex_matrix", "ga.latex_matrix(xmeta)", ("meta", "t"), "device")
P("latexj.basic", "latex_jacobian", "ga.latex_jacobian(torch.eye(2).reshape(1, 2, 1, 2), (1, 2))",
  "r == '\\\\begin{bmatrix} 1 & 0 \\\\\\\\ 0 & 1 \\\\end{bmatrix}'", "documented", "values")
E("latexj.shape", "latex_jacobian", "ga.latex_jacobian(torch.eye(2), (3,))", ("out_shape", "shape", "jac"),
  "misuse")
E("latexj.out-str", "latex_jacobian", "ga.latex_jacobian(torch.eye(2), 'ab')", ("out_shape",), "misuse")
E("latexj.None", "latex_jacobian", "ga.latex_jacobian(None, (2,))", ("jac",), "misuse")
P("latexv.basic", "latex_vjp", "ga.latex_vjp(torch.ones(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([4.0, 6.0]))",
  "'4 & 6' in r and '1 & 2' in r", "documented", "values")
E("latexv.shape", "latex_vjp", "ga.latex_vjp(torch.ones(3), torch.eye(2), torch.ones(2))",
  ("jac", "v", "shape"), "misuse")
E("latexv.None", "latex_vjp", "ga.latex_vjp(None, torch.eye(2), torch.ones(2))", ("v",), "misuse")
P("md.basic", "markdown_table", "ga.markdown_table([['|z|', 1.0]], ['q', 'v'])",
  "'\\\\|z\\\\|' in r and '| 1 |' in r", "documented escaping", "values")
E("md.rows-None", "markdown_table", "ga.markdown_table(None, ['a'])", ("rows",), "misuse")
E("md.digits", "markdown_table", "ga.markdown_table([[1.0]], ['a'], digits=-1)", ("digits",),
  "options")
E("md.max_entries", "markdown_table", "ga.markdown_table([[1.0]], ['a'], max_entries=-1)",
  ("max_entries",), "options")
P("md.ragged", "markdown_table", "ga.markdown_table([[1.0, 2.0, 3.0]], ['a'])",
  "r.splitlines()[0].count('|') == r.splitlines()[2].count('|')",
  "a consistent table (or a refusal naming rows/headers)", "misuse", either=True,
  keys=("rows", "headers", "row"))
P("sum.short", "summarize", "ga.summarize(torch.tensor([1.0, 0.5]))", "r == '[1, 0.5]'",
  "documented", "values")
P("sum.long", "summarize", "ga.summarize(torch.arange(12.0).reshape(3, 4))",
  "r == '[0, 1, 2, …, 10, 11] (shape (3, 4), norm 22.49)'", "documented", "values")
P("sum.nan-long", "summarize", "ga.summarize(torch.tensor([float('nan')] + [1.0] * 20))",
  "'nan' in r.lower()", "the NaN shows (norm nan)", "values")
P("sum.sparse", "summarize", "ga.summarize(torch.eye(2).to_sparse())", "r == '[1, 0, 0, 1]'",
  "documented: densified", "layout")
P("sum.complex", "summarize", "ga.summarize(torch.tensor([1 + 2j, 3 - 1j]))",
  "'2i' in r and '3' in r", "complex entries", "dtype")
E("sum.max_entries", "summarize", "ga.summarize(torch.ones(3), max_entries=-1)", ("max_entries",),
  "options")
E("sum.digits0", "summarize", "ga.summarize(torch.ones(3), digits=0)", ("digits",), "options")
E("sum.None", "summarize", "ga.summarize(None)", ("x", "expects a tensor"), "misuse")
E("sum.meta", "summarize", "ga.summarize(xmeta)", ("x", "meta"), "device")
P("ex.basic", "explorer", "ga.explorer(lambda x: x @ torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[2.0, 1.0]]), v=[[1.0, 0.0]]).vjp()",
  "close(r, torch.tensor([[1.0, 3.0]]))", "documented", "values")
E("ex.v-nan", "explorer", "ga.explorer(torch.sin, x3f, v=[float('nan'), 1.0, 1.0])", ("v", "nan"),
  "values")
E("ex.v-complex", "explorer", "ga.explorer(torch.sin, x3f, v=torch.ones(3) * 1j)", ("v", "complex"),
  "dtype")
E("ex.v-shape", "explorer", "ga.explorer(torch.sin, x3f, v=[1.0, 1.0])", ("v", "shape"), "misuse")
E("ex.y-too-big", "explorer", "ga.explorer(torch.sin, torch.zeros(17))", ("16", "y", "entries"),
  "misuse")
E("ex.x-int", "explorer", "ga.explorer(torch.sin, xint)", ("x",), "dtype")
E("ex.x-meta", "explorer", "ga.explorer(torch.sin, xmeta)", ("x", "meta"), "device")
E("ex.x-empty", "explorer", "ga.explorer(torch.sin, xempty)", ("x", "empty"), "layout")
E("ex.jac-inf", "explorer", "ga.explorer(torch.exp, torch.tensor([1000.0]))", ("inf", "nan", "finite"),
  "values")
E("ex.digits0", "explorer", "ga.explorer(torch.sin, x3f, digits=0)", ("digits",), "options")
E("ex.name-int", "explorer", "ga.explorer(torch.sin, x3f, name=3)", ("name",), "options")
E("ex.fn-tuple", "explorer", "ga.explorer(f_tuple, x3f)", ("fn",), "misuse")

# ---- trace
P("tr.basic", "trace_backward", "_trace()", "close(r['a_grad'], torch.tensor([2.0, 4.0], dtype=D))",
  "as a.backward(): a.grad = 2a", "values")
P("tr.use_grad", "trace_backward", "_trace(use_grad=True)", "r['a_grad'] is None",
  "documented: no .grad touched", "options")
E("tr.gradient-shape", "trace_backward", "trace_wrong_shape()", ("gradient", "shape"), "misuse")
E("tr.gradient-missing", "trace_backward", "trace_missing_gradient()", ("gradient",), "misuse")
E("tr.gradient-complex", "trace_backward", "trace_complex_gradient()", ("gradient", "complex"),
  "dtype")
E("tr.output-nograd", "trace_backward", "trace_nograd_output()", ("output", "require"), "misuse")
E("tr.output-None", "trace_backward", "ga.trace_backward(None)", ("output",), "misuse")
E("tr.output-int", "trace_backward", "ga.trace_backward(3)", ("output",), "misuse")
E("tr.inputs-norg", "trace_backward", "trace_inputs_norg()", ("inputs", "require"), "misuse")
E("tr.names-bad", "trace_backward", "trace_names_bad()", ("names",), "misuse")
P("tr.freed", "trace_backward", "trace_twice()", "False",
  "RuntimeError (documented) saying the graph was freed / retain_graph", "misuse",
  allow=(RuntimeError,), keys=("retain_graph", "freed"))
P("tr.nan-svg", "trace_svg", "trace_nan_svg()", "'nan' in r.lower() or 'inf' in r.lower()",
  "documented: the node where NaN/Inf appears is pointed out", "values")
P("tr.meta-svg", "trace_svg", "trace_meta_svg()", "r.startswith('<svg')",
  "a drawing (or a clear refusal naming meta)", "device", either=True, keys=("meta",))
E("svg.None", "trace_svg", "ga.trace_svg(None)", ("trace",), "misuse")
E("svg.int", "trace_svg", "ga.trace_svg(3)", ("trace",), "misuse")
E("svg.source-int", "trace_svg", "ga.trace_svg(a_trace(), source=3)", ("source",), "options")
P("svg.basic", "trace_svg", "ga.trace_svg(a_trace(), title='T <&>')",
  "r.startswith('<svg') and 'T <&>' not in r", "an <svg>, title escaped", "values")
E("player.int", "BackwardPlayer", "ga.BackwardPlayer(3)", ("trace",), "misuse")
E("player.None", "BackwardPlayer", "ga.BackwardPlayer(None)", ("trace",), "misuse")
P("player.basic", "BackwardPlayer", "ga.BackwardPlayer(a_trace()).steps[-1].sent",
  "'a.grad' in str(r)", "documented: the last step shows the leaves' .grad", "values")
P("player.source-int", "BackwardPlayer", "ga.BackwardPlayer(a_trace(), source=3)",
  "len(r.steps) == 4", "a label: shown as '3', or refused naming source", "options", either=True,
  keys=("source",))
E("sbs.titles", "side_by_side", "ga.side_by_side([a_trace(), a_trace()], titles=['one'])",
  ("titles",), "misuse")
E("sbs.None", "side_by_side", "ga.side_by_side(None)", ("traces",), "misuse")
E("sbs.ints", "side_by_side", "ga.side_by_side([1, 2])", ("traces", "trace"), "misuse")
P("sbs.basic", "side_by_side", "ga.side_by_side([a_trace(), a_trace()]).svg",
  "r.count('<svg') >= 2", "two drawings", "values")
P("watch.relu", "watch", "watch_step(torch.nn.ReLU(), lambda o: o.sum(), torch.randn(3, requires_grad=True))",
  "not r.startswith(('ok', 'gradients ok'))", "no 'ok' about a model without parameters (documented)", "values")
P("watch.ok", "watch", "watch_step(_net(), lambda o: o.pow(2).mean(), torch.randn(5, 4), step=True)",
  "r.startswith(('ok', 'gradients ok'))", "a plain healthy step", "values")
P("watch.nan", "watch", "watch_step(_net(), lambda o: o.pow(2).mean() * float('nan'), torch.randn(5, 4))",
  "not r.startswith(('ok', 'gradients ok')) and ('nan' in r.lower() or 'finite' in r.lower())", "NaN gradients named",
  "values")
P("watch.zero-loss", "watch", "watch_step(_net(), lambda o: o.sum() * 0.0, torch.randn(5, 4))",
  "not r.startswith(('ok', 'gradients ok'))", "all-zero gradients: no 'ok' (finite, nonzero is the claim)", "values")
P("watch.unused", "watch", "watch_step(_Unused(), lambda o: o.sum(), torch.randn(2, 3))",
  "not r.startswith(('ok', 'gradients ok'))", "module b got no gradient: no 'ok'", "values")
P("watch.frozen", "watch", "watch_step(_net(), lambda o: o.sum(), torch.randn(5, 4), frozen=lambda m: m[0].parameters())",
  "'frozen' in r.lower()", "documented: frozen parameters named", "values")
E("watch.int", "watch", "ga.watch(3)", ("model", "nn.Module"), "misuse")
E("watch.None", "watch", "ga.watch(None)", ("model", "nn.Module"), "misuse")
E("watch.function", "watch", "ga.watch(torch.sin)", ("model", "nn.Module"), "misuse")
P("draw.basic", "draw_modules", "ga.draw_modules(watched()).svg.count('<rect class=\"ga-box\"')",
  "r == 3", "documented: one box per module", "values")
E("draw.None", "draw_modules", "ga.draw_modules(None)", ("record",), "misuse")
P("draw.expand-bad", "draw_modules", "ga.draw_modules(watched(), expand=['nope'])", "False",
  "KeyError naming the module (documented)", "misuse", allow=(KeyError,), keys=("nope",))
E("draw.depth-neg", "draw_modules", "ga.draw_modules(watched(), depth=-1)", ("depth",), "options")
E("draw.expand-str", "draw_modules", "ga.draw_modules(watched(), expand='layers')",
  ("expand", "layers"), "options", allow=(KeyError,))
P("wng.dead-relu", "why_no_grad", "wng('dead-relu').case", "r == 'zero'", "documented: dead ReLU",
  "values")
P("wng.sqrt0", "why_no_grad", "wng('sqrt0').case", "r == 'nonfinite'", "sqrt'(0) = inf", "values")
P("wng.int", "why_no_grad", "wng('int').case", "r == 'integer-dtype'", "documented", "dtype")
P("wng.nrg", "why_no_grad", "wng('nrg').case", "r == 'requires-grad-false'", "documented", "misuse")
P("wng.nonleaf", "why_no_grad", "wng('nonleaf').case", "r == 'non-leaf'", "documented", "misuse")
P("wng.detached", "why_no_grad", "wng('detached').case", "r == 'not-reachable'",
  "not in the graph", "misuse")
P("wng.ok", "why_no_grad", "wng('ok').case", "r in ('ok', 'not-run')",
  "a fine gradient, before backward (documented order: not-run)", "values")
P("wng.callable", "why_no_grad", "wng('callable').case", "r in ('ok', 'not-run')",
  "recomputed output; a fine gradient", "misuse")
E("wng.names-list", "why_no_grad", "wng('bad-names')", ("names",), "misuse")
E("wng.module-str", "why_no_grad", "wng('bad-module')", ("module",), "misuse")
E("wng.tensor-int", "why_no_grad", "ga.why_no_grad(torch.ones(1, requires_grad=True).sum(), 3)",
  ("tensor",), "misuse")
E("wng.output-None", "why_no_grad", "ga.why_no_grad(None, torch.ones(1))", ("output",), "misuse")

# ---- plot
P("heat.basic", "jacobian_heatmap", "heat(torch.eye(3), (3,))", "r is not None", "an Axes",
  "values")
E("heat.complex", "jacobian_heatmap", "heat(torch.eye(3) * 1j, (3,))", ("jac", "complex", "real"),
  "dtype")
E("heat.shape", "jacobian_heatmap", "heat(torch.eye(3), (4,))", ("out_shape", "shape", "jac"),
  "misuse")
E("heat.None", "jacobian_heatmap", "heat(None, (3,))", ("jac",), "misuse")
P("heat.nan", "jacobian_heatmap", "heat(torch.tensor([[float('nan'), 1.0]]), (1,))", "r is not None",
  "draws (NaN cell)", "values", either=True, keys=("nan", "jac"))

del _s


# ================================================================== BATCH 2
# Written after the first run of batch 1 (which showed main already handles most of the issue's
# 376-case classes) and before any case below was run: kinks near x, float32-only functions at
# large magnitudes, tolerance boundaries with an exact reference, one block's or tree's largest
# entry setting another entry's error bound, stray .grad on captured tensors, limits of the
# process (RLIMIT_AS) below the machine's free memory, more operators for sparsity detection.
W32 = torch.eye(3)
Wcap = torch.tensor([[1.0, 2.0, 0.0], [0.0, 3.0, 4.0], [5.0, 0.0, 6.0]], dtype=D)


def _make_sinj(err=0.0):
    """sin with a jvp (so the reference is forward mode, exact) and a backward off by ``err``."""

    class SinJ(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return torch.sin(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)
            ctx.x = x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.cos(x) * (1 + err)

        @staticmethod
        def jvp(ctx, t):
            return t * torch.cos(ctx.x)

    return SinJ.apply


sinj_ok = _make_sinj()
sinj_e9 = _make_sinj(1e-9)  # 10x backward_rtol(float64)
sinj_e11 = _make_sinj(1e-11)  # 0.1x
sinj_3e7 = _make_sinj(3e-7)  # above assert_close float64 for compare_vjp(reference='forward')
sinj_3e8 = _make_sinj(3e-8)  # below it


def _make_abs():
    class Abs(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.abs()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.sign(x)

    return Abs.apply


abs_ok = _make_abs()


class _Scale2(torch.autograd.Function):
    """y = [1e6 x0, sin(x1)]; the backward of the second entry is off by 1e-5 (relative)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.stack([1e6 * x[0], torch.sin(x[1])])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return torch.stack([1e6 * g[0], g[1] * torch.cos(x[1]) * (1 + 1e-5)])


scale2_bad = _Scale2.apply


def _make_noisy():
    class Noisy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.cos(x) * (1 + 1e-3 * torch.randn_like(x))

    return Noisy.apply


noisy = _make_noisy()


def _make_wrong_at(n, k):
    class WrongAt(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            out = g * torch.cos(x)
            out = out.clone()
            out[k] = out[k] * 2
            return out

    return WrongAt.apply


def f32only(t):
    """A function that only runs in float32 (captured float32 weights): FD runs in float32."""
    return torch.sin(t @ W32)


def f32only_ok(t):
    return sin_ok(t @ W32)


def captured_grad(which):
    W = Wcap.clone().requires_grad_(True)
    if which == "jacobian":
        ga.jacobian(lambda t: W @ t, x3)
    elif which == "backward_vjp":
        ga.backward_vjp(lambda t: W @ t, x3, v3)
    elif which == "compare_vjp":
        ga.compare_vjp(lambda t: W @ t, x3, v3)
    elif which == "check_backward":
        ga.check_backward(lambda t: sin_ok(W @ t), rg(x3), parameters=False)
    elif which == "sparse":
        ga.SparseJacobian(torch.ones(3, 3, dtype=torch.bool))(lambda t: W @ t, x3)
    elif which == "explorer":
        ga.explorer(lambda t: W.float() @ t, x3f)
    elif which == "sparsity_pattern":
        ga.sparsity_pattern(lambda t: W @ t, x3)
    return W.grad


def cb_module_grad():
    lin = _lin()
    ga.check_backward(lin, rg(x3))
    return lin.weight.grad


def wng_leaves_grad():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    ga.why_no_grad((w * 2).sum(), w)
    return w.grad


def acyclic_mixed():
    n = 6
    x = torch.linspace(0.5, 1.5, n)

    def f(u):
        return (1e6 * u[:-1] * u[1:]).sum() + (u**2).sum()

    H = ga.SparseHessian(tri(n), method="acyclic")(f, x, layout=torch.strided)
    return H, hessian(f)(x.double())


def star_mixed():
    n = 6
    x = torch.linspace(0.5, 1.5, n)

    def f(u):
        return (1e6 * u[:-1] * u[1:]).sum() + (u**2).sum()

    H = ga.SparseHessian(tri(n))(f, x, layout=torch.strided)
    return H, hessian(f)(x.double())


def entrywise_close(pair, rtol):
    got, ref = pair
    got, ref = got.double(), ref.double()
    return bool(((got - ref).abs() <= rtol * ref.abs() + 1e-30).all())


def sj_detected(f, x):
    P = ga.jacobian_sparsity(f, x)
    return ga.SparseJacobian(P, x.shape)(f, x)


def big_rlimit_jac():
    return ga.jacobian(lambda t: 2 * t, torch.zeros(30_000, dtype=D))


def big_rlimit_sj():
    idx = torch.tensor([[0], [0]])
    p = torch.sparse_coo_tensor(idx, torch.ones(1, dtype=torch.bool), (1, 200_000_000))
    return ga.SparseJacobian(p)


def big_sparsity_pattern():
    return ga.sparsity_pattern(lambda t: 2 * t, torch.zeros(25_000, dtype=D))


def wng_after_backward():
    w = torch.tensor([-1.0, -2.0], requires_grad=True)
    y = torch.relu(w).sum()
    y.backward()
    return ga.why_no_grad(y, w).case


def trace_inputs_subset():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    ga.trace_backward((a * b).sum(), inputs=[a])
    return b.grad


def jac_out_is_input():
    return ga.jacobian(lambda t: t, x3)


# ---- finite differences near kinks and at magnitudes float32 cannot resolve
P("b2.jac.fd.abs-near-kink", "jacobian",
  "ga.jacobian(torch.abs, torch.tensor([1e-12, -1e-9, 2.0], dtype=D), method='finite-difference')",
  "close(r, torch.diag(torch.tensor([1.0, -1.0, 1.0], dtype=D)), 1e-6, 1e-6) or len(W) > 0",
  "formula sign(x) (jacrev), or a warning that the differences straddle a kink", "fd-kink")
P("b2.jac.fd.relu-near-kink", "jacobian",
  "ga.jacobian(torch.relu, torch.tensor([1e-9, 0.5], dtype=D), method='finite-difference')",
  "close(r, torch.eye(2, dtype=D), 1e-6, 1e-6) or len(W) > 0", "jacrev (1 on the diagonal) or a warning",
  "fd-kink")
P("b2.cb.abs-near-kink", "check_backward", "ga.check_backward(abs_ok, rg(torch.tensor([1e-12, -1e-9, 2.0], dtype=D)))",
  "r.status != 'wrong'", "sign(x) is the right backward: never WRONG (could-not-check allowed)", "fd-kink")
P("b2.cb.torch-abs-near-kink", "check_backward",
  "ga.check_backward(torch.abs, rg(torch.tensor([1e-12, -1e-9, 2.0], dtype=D)), reference='finite-difference')",
  "r.status != 'wrong'", "torch's abs is right", "fd-kink")
P("b2.cb.relu-near-kink", "check_backward",
  "ga.check_backward(torch.relu, rg(torch.tensor([1e-9, -1e-10, 0.5], dtype=D)), reference='finite-difference')",
  "r.status != 'wrong'", "torch's relu is right", "fd-kink")
P("b2.cv.abs-near-kink", "compare_vjp", "ga.compare_vjp(torch.abs, torch.tensor([1e-12, -1e-9, 2.0], dtype=D), v3)",
  "r.status != 'DISAGREE'", "torch's abs is right", "fd-kink")
P("b2.cv.relu-near-kink", "compare_vjp", "ga.compare_vjp(torch.relu, torch.tensor([1e-9, -1e-10, 0.5], dtype=D), v3)",
  "r.status != 'DISAGREE'", "torch's relu is right", "fd-kink")
P("b2.cb.sqrt-at-0", "check_backward",
  "ga.check_backward(torch.sqrt, rg(torch.tensor([0.0, 1.0, 4.0], dtype=D)), reference='finite-difference')",
  "r.status != 'wrong'", "torch's sqrt is right (inf at 0)", "fd-kink")
P("b2.cv.sqrt-at-0", "compare_vjp", "ga.compare_vjp(torch.sqrt, torch.tensor([0.0, 1.0, 4.0], dtype=D), v3)",
  "r.status != 'DISAGREE'", "torch's sqrt is right", "fd-kink")
P("b2.cv.sqrt-near-0", "compare_vjp", "ga.compare_vjp(torch.sqrt, torch.tensor([1e-14, 1.0, 4.0], dtype=D), v3)",
  "r.status != 'DISAGREE'", "torch's sqrt is right; the step exceeds x", "fd-kink")
P("b2.cb.sin-1e17", "check_backward", "ga.check_backward(sin_ok, rg(torch.tensor([1e17, 3.0], dtype=D)))",
  "r.status == 'could-not-check'", "documented example: sin at 1e17 could not be checked", "fd-magnitude")
P("b2.cv.sin-1e17", "compare_vjp", "ga.compare_vjp(torch.sin, torch.tensor([1e17, 3.0], dtype=D), torch.ones(2, dtype=D))",
  "r.status == 'could not check'", "documented: could not check", "fd-magnitude")
P("b2.jac.fd.sin-1e17", "jacobian",
  "ga.jacobian(torch.sin, torch.tensor([1e17, 3.0], dtype=D), method='finite-difference')",
  "close(r, torch.diag(torch.cos(torch.tensor([1e17, 3.0], dtype=D))), 1e-3, 1e-3) or len(W) > 0",
  "cos(x), or a warning that the reference cannot resolve it", "fd-magnitude")
P("b2.jac.fd.sin-1e12", "jacobian",
  "ga.jacobian(torch.sin, torch.tensor([1e12 + 0.5, 3.0], dtype=D), method='finite-difference')",
  "close(r, torch.diag(torch.cos(torch.tensor([1e12 + 0.5, 3.0], dtype=D))), 1e-3, 1e-3) or len(W) > 0",
  "cos(x), or a warning", "fd-magnitude")
for _m, _x in (("1e2", 1e2), ("1e3", 1e3), ("1e4", 1e4)):
    _xs = f"torch.tensor([{_x} + 0.25, -{_x} * 0.7, 0.5])"
    P(f"b2.cb.f32only-{_m}", "check_backward", f"ga.check_backward(f32only_ok, rg({_xs}))",
      "r.status != 'wrong'", "a correct backward (float32-only fn: FD in float32)", "fd-magnitude")
    P(f"b2.cv.f32only-{_m}", "compare_vjp", f"ga.compare_vjp(f32only, {_xs}, torch.ones(3))",
      "r.status != 'DISAGREE'", "torch's sin is right (FD in float32)", "fd-magnitude")
    P(f"b2.jac.fd.f32only-{_m}", "jacobian",
      f"ga.jacobian(f32only, {_xs}, method='finite-difference')",
      f"close(r, torch.diag(torch.cos({_xs}.double())), 0.05, 0.05) or len(W) > 0",
      "cos(x) within 5% or a warning", "fd-magnitude")
P("b2.jac.fd.f16", "jacobian", "ga.jacobian(torch.sin, x3h, method='finite-difference')",
  "close(r, torch.diag(torch.cos(x3)), 2e-2, 2e-2) or len(W) > 0",
  "cos(x) within float16's resolution, or a warning (or a refusal naming x)", "fd-magnitude",
  either=True, keys=("x", "float16"))
P("b2.cv.f16-half", "compare_vjp", "ga.compare_vjp(sin_half, x3h, v3.half())", "r.status == 'DISAGREE'",
  "factor 2 >> float16 tolerance", "tolerance")
P("b2.cb.f16-half", "check_backward", "ga.check_backward(sin_half, rg(x3h))", "r.status == 'wrong'",
  "factor 2", "tolerance")
P("b2.cb.bf16-20pct", "check_backward", "ga.check_backward(_make_sin(err=0.2), rg(x3b))",
  "r.status == 'wrong'", "20% >> bfloat16's 1.6e-2", "tolerance")
# ---- tolerance boundaries with an exact (forward-mode) reference
P("b2.cb.fwd-1e-9", "check_backward", "ga.check_backward(sinj_e9, rg(x3))", "r.status == 'wrong'",
  "forward reference (exact); 1e-9 relative = 10x rtol 1e-10", "tolerance")
P("b2.cb.fwd-1e-11", "check_backward", "ga.check_backward(sinj_e11, rg(x3))", "r.status == 'agree'",
  "0.1x rtol", "tolerance")
P("b2.cb.fwd-ok", "check_backward", "ga.check_backward(sinj_ok, rg(x3), reference='forward')",
  "r.status == 'agree'", "correct", "tolerance")
P("b2.cv.fwd-3e-7", "compare_vjp", "ga.compare_vjp(sinj_3e7, x3, v3, reference='forward')",
  "r.status == 'DISAGREE'", "2.9e-7 abs > assert_close float64 1e-7 + 1e-7*0.96", "tolerance")
P("b2.cv.fwd-3e-8", "compare_vjp", "ga.compare_vjp(sinj_3e8, x3, v3, reference='forward')", "r.agree",
  "2.9e-8 abs < 1.96e-7", "tolerance")
P("b2.cv.fd-1e-9", "compare_vjp", "ga.compare_vjp(sinj_e9, x3, v3)", "r.status == 'DISAGREE'",
  "FD reference at |x|~1 in float64 (error ~1e-10 and below); 1e-9 relative = 10x rtol", "tolerance")
P("b2.cb.rtol-explicit-above", "check_backward", "ga.check_backward(sinj_e9, rg(x3), rtol=1e-10)",
  "r.status == 'wrong'", "error 10x the rtol given", "tolerance")
P("b2.cb.rtol-explicit-below", "check_backward", "ga.check_backward(sinj_e9, rg(x3), rtol=1e-8)",
  "r.status == 'agree'", "error 0.1x the rtol given", "tolerance")
P("b2.cv.rtol-explicit-above", "compare_vjp", "ga.compare_vjp(sinj_e9, x3, v3, reference='forward', rtol=1e-10, atol=0.0)",
  "r.status == 'DISAGREE'", "|err| ~1e-9|ref| > rtol 1e-10 |ref|", "tolerance")
P("b2.cv.rtol-explicit-below", "compare_vjp", "ga.compare_vjp(sinj_e9, x3, v3, reference='forward', rtol=1e-8, atol=0.0)",
  "r.agree", "|err| ~1e-9|ref| < 1e-8 |ref|", "tolerance")
P("b2.cb.masked-by-row", "check_backward", "ga.check_backward(scale2_bad, rg(torch.tensor([0.3, 0.7], dtype=D)))",
  "r.status == 'wrong'",
  "a 1e-5 relative error in entry (1,1) is 1e5x the float64 rtol; the 1e6 of another row is no rounding of it",
  "tolerance")
P("b2.cv.masked-by-row", "compare_vjp", "ga.compare_vjp(scale2_bad, torch.tensor([0.3, 0.7], dtype=D), torch.ones(2, dtype=D))",
  "r.status == 'DISAGREE'", "element 1 is off by 1e-5 relative; element 0's 1e6 should not set its bound",
  "tolerance")
P("b2.cv.masked-by-row-fwdref", "compare_vjp",
  "ga.compare_vjp(scale2_bad, torch.tensor([0.3, 0.7], dtype=D), torch.ones(2, dtype=D), reference=torch.tensor([[1e6, 0.0], [0.0, math.cos(0.7)]], dtype=D))",
  "r.status == 'DISAGREE'", "exact Jacobian; 7.6e-6 abs error > 1e-7 + 1e-7*0.76", "tolerance")
P("b2.cb.noisy", "check_backward", "ga.check_backward(noisy, rg(x3))", "r.status in ('wrong', 'non-deterministic')",
  "a backward with 1e-3 random noise is not 'agree'", "tolerance")
P("b2.cb.one-wrong-of-200", "check_backward", "ga.check_backward(_make_wrong_at(200, 137), rg(torch.linspace(-2, 2, 200, dtype=D)))",
  "r.status == 'wrong'", "element 137 doubled: bounded localisation must see it", "tolerance")
P("b2.sh.acyclic-mixed-f32", "SparseHessian", "acyclic_mixed()", "entrywise_close(r, 1e-3)",
  "torch.func.hessian in float64, each entry within 1e-3 of its own size (entries 2 and 1e6 in one tree)",
  "tolerance")
P("b2.sh.star-mixed-f32", "SparseHessian", "star_mixed()", "entrywise_close(r, 1e-3)",
  "hessian, entrywise", "tolerance")
# ---- helpers never change the caller's tensors
for _w in ("jacobian", "backward_vjp", "compare_vjp", "check_backward", "sparse", "explorer",
           "sparsity_pattern"):
    P(f"b2.stray-grad.{_w}", _w if _w != "sparse" else "SparseJacobian", f"captured_grad({_w!r})",
      "r is None", "no .grad on a tensor fn captures (project rule: no stray .grad)", "side-effects")
P("b2.stray-grad.check_backward-module", "check_backward", "cb_module_grad()", "r is None",
  "the module's .grad is left as it was (None)", "side-effects")
P("b2.stray-grad.why_no_grad", "why_no_grad", "wng_leaves_grad()", "r is None",
  "documented: nothing is changed", "side-effects")
P("b2.contract.no-history", "contract", "ga.contract(v3, rg(J33)).requires_grad", "r is False",
  "documented: without autograd history", "side-effects")
P("b2.jac.no-history", "jacobian", "ga.jacobian(torch.sin, rg(x3)).requires_grad", "r is False",
  "documented: a plain tensor without autograd history", "side-effects")
# ---- memory: the process limit (4 GB here) below the machine's free memory
E("b2.mem.jac-7GB", "jacobian", "big_rlimit_jac()", ("memory", "GB"), "memory",
  allow=(MemoryError,), oracle="MemoryError with the estimate (7.2 GB > the process's 4 GB limit)")
E("b2.mem.sj-13GB", "SparseJacobian", "big_rlimit_sj()", ("memory", "GB"), "memory",
  allow=(MemoryError,), oracle="MemoryError with the estimate (~13 GB)")
E("b2.mem.sparsity_pattern-5GB", "sparsity_pattern", "big_sparsity_pattern()", ("memory", "GB"),
  "memory", allow=(MemoryError,), oracle="MemoryError (dense 25000^2 float64 = 5 GB)")
# ---- sparsity detection: more operators (conservative or a clear UnsupportedOpError)
_OPS = {
    "roll": "lambda t: torch.roll(t, 2) * t",
    "scatter_add": "lambda t: torch.zeros(4, dtype=D).scatter_add(0, torch.tensor([0, 1, 1, 3, 2, 0]), t)",
    "index_put-acc": "lambda t: torch.zeros(4, dtype=D).index_put((torch.tensor([0, 1, 1, 3, 2, 0]),), t, accumulate=True)",
    "masked_fill": "lambda t: t.masked_fill(torch.tensor([True, False, True, False, False, True]), 0.0).sin()",
    "cummax": "lambda t: t.cummax(0).values",
    "kthvalue": "lambda t: t.reshape(2, 3).kthvalue(2, dim=1).values",
    "max_pool1d": "lambda t: F.max_pool1d(t.reshape(1, 1, 6), 2)",
    "interpolate": "lambda t: F.interpolate(t.reshape(1, 1, 6), scale_factor=2, mode='linear')",
    "linalg.solve": "lambda t: torch.linalg.solve(t[:4].reshape(2, 2) + 3 * torch.eye(2, dtype=D), t[4:])",
    "unfold": "lambda t: t.unfold(0, 3, 2).prod(-1)",
    "inplace-add": "lambda t: (lambda y: (y[1:].add_(t[:-1]), y)[1])(t.clone())",
    "copy-slice": "lambda t: (lambda y: (y.__setitem__(slice(0, 3), t[3:]), y)[1])(torch.zeros(6, dtype=D))",
    "pad-reflect": "lambda t: F.pad(t.reshape(1, 1, 6), (2, 2), mode='reflect')",
    "pad-circular-2d": "lambda t: F.pad(t.reshape(1, 1, 2, 3), (1, 1, 1, 0), mode='circular')",
    "conv1d-dilated": "lambda t: F.conv1d(t.reshape(1, 1, 6), torch.tensor([[[1.0, 0.0, 2.0]]], dtype=D), dilation=2, padding=1)",
    "conv2d-valid-s2": "lambda t: F.conv2d(t.reshape(1, 1, 2, 3), torch.ones(1, 1, 1, 2, dtype=D), padding='valid', stride=(1, 2))",
    "avg_pool-ceil": "lambda t: F.avg_pool1d(t.reshape(1, 1, 6), 4, stride=3, ceil_mode=True)",
    "fft.hfft": "lambda t: torch.fft.hfft(t.to(torch.complex128))",
    "fft.rfft-real": "lambda t: torch.view_as_real(torch.fft.rfft(t))",
    "where-const": "lambda t: torch.where(torch.tensor([True, False] * 3), t, 0.0) * t.sum()",
    "sdpa": "lambda t: F.scaled_dot_product_attention(t.reshape(1, 2, 3), t.reshape(1, 2, 3), t.reshape(1, 2, 3))",
    "batch_norm-eval": "lambda t: F.batch_norm(t.reshape(2, 3), torch.zeros(3, dtype=D), torch.ones(3, dtype=D))",
    "group_norm": "lambda t: F.group_norm(t.reshape(1, 2, 3), 2)",
    "logsumexp": "lambda t: torch.logsumexp(t.reshape(2, 3), 1)",
    "gather": "lambda t: t.gather(0, torch.tensor([5, 0, 0, 2]))",
    "repeat_interleave": "lambda t: t.repeat_interleave(2)",
    "diff": "lambda t: torch.diff(t, n=2)",
    "tril": "lambda t: t.reshape(2, 3).tril().exp()",
    "cdist": "lambda t: torch.cdist(t.reshape(2, 3), t.reshape(2, 3) * 2)",
    "clamp-tensor": "lambda t: t.clamp(min=t.flip(0))",
}
X6R = torch.tensor([0.3, -1.1, 0.8, 2.0, -0.4, 1.3], dtype=D)
for _k, _f in _OPS.items():
    # cdist: torch 2.13's batched backward of cdist is wrong (jacrev misses entries), so the
    # oracle is the looped torch.autograd.functional.jacobian [corrected after the run]
    _ref = "taj" if _k == "cdist" else "jr"
    P(f"b2.js.{_k}", "jacobian_sparsity", f"ga.jacobian_sparsity({_f}, X6R)",
      f"covers(r, {_ref}({_f}, X6R)) and covers(r, {_ref}({_f}, -X6R * 0.7 + 0.1))",
      "conservative: covers jacrev's non-zeros at two points (or UnsupportedOpError naming the op)",
      "sparsity", allow=(ga.UnsupportedOpError,), keys=(_k.split("-")[0].split(".")[-1],
                                                       "operator", "rule"))
for _k in ("pad-circular-2d", "inplace-add", "copy-slice", "unfold", "conv1d-dilated", "roll"):
    P(f"b2.sj-detected.{_k}", "SparseJacobian", f"sj_detected({_OPS[_k]}, X6R)",
      f"close(r, jr({_OPS[_k]}, X6R))", "jacrev, end to end through the detected pattern",
      "sparsity", allow=(ga.UnsupportedOpError,), keys=(_k.split("-")[0], "operator", "rule"))
for _k, _f in (("prod", "lambda u: u.prod()"), ("softmax", "lambda u: torch.softmax(u, 0)[0]"),
               ("norm", "lambda u: u.norm()"), ("xy", "lambda u: u[0] * u[1] + u[2] ** 2"),
               ("inplace", "lambda u: (lambda y: (y.mul_(u), y.sum())[1])(u.clone())"),
               ("max", "lambda u: u.max() * u[0]"), ("where", "lambda u: torch.where(u > 0, u * u, u).sum()")):
    P(f"b2.hs.{_k}", "hessian_sparsity", f"ga.hessian_sparsity({_f}, X6R)",
      f"covers(r, hessian({_f})(X6R)) and covers(r, hessian({_f})(-X6R + 0.05))",
      "conservative: covers torch.func.hessian at two points", "sparsity",
      allow=(ga.UnsupportedOpError,), keys=(_k, "operator", "rule"))
# ---- composition, more
P("b2.jac.vmap-fd", "jacobian", "vmap(lambda t: ga.jacobian(torch.sin, t, method='finite-difference'))(xb)",
  "close(r, vmap(jacrev(torch.sin))(xb), 1e-6, 1e-8)", "vmap(jacrev)", "compose")
P("b2.jac.grad-batch_dim", "jacobian", "grad(lambda t: ga.jacobian(torch.sin, t, batch_dim=0).sum())(xb)",
  "close(r, -torch.sin(xb))", "formula: d/dx Σ cos(x) = -sin(x)", "compose", either=True,
  keys=("batch_dim", "grad"))
P("b2.vjp.hessian-sin", "backward_vjp", "hessian(lambda t: ga.backward_vjp(torch.sin, t, v3).sum())(x3)",
  "close(r, torch.diag(-v3 * torch.cos(x3)))",
  "formula: d²/dx² Σ v cos(x) = diag(-v cos x) [corrected after the run: was -v sin x]", "compose")
P("b2.contract.grad-sparse", "contract", "grad(lambda v: ga.contract(v, J33.to_sparse()).sum())(v3)",
  "close(r, J33.sum(1))", "formula (or a refusal naming the transform/sparse)", "compose",
  either=True, keys=("sparse", "grad", "transform"))
E("b2.cv.vmap", "compare_vjp", "vmap(lambda t: ga.compare_vjp(torch.sin, t, torch.ones(3, dtype=D)).backward)(xb)",
  ("vmap", "transform"), "compose")
E("b2.cb.vmap", "check_backward", "vmap(lambda t: torch.as_tensor(float(bool(ga.check_backward(torch.sin, t)))))(xb)",
  ("vmap", "transform"), "compose")
P("b2.sp.grad", "sparsity_pattern", "grad(lambda t: ga.sparsity_pattern(torch.sin, t).double().sum() * t.sum())(x3)",
  "close(r, torch.full((3,), 3.0, dtype=D))",
  "a bool pattern is piecewise constant: d/dt [P.sum() t.sum()] = P.sum() = 3 (or a refusal naming the "
  "transform) [corrected after the run: was 'refusal' only]", "compose", either=True,
  keys=("grad", "transform"))
P("b2.js.grad", "jacobian_sparsity", "grad(lambda t: ga.jacobian_sparsity(torch.sin, t, layout=torch.strided).double().sum() * t.sum())(x3)",
  "close(r, torch.full((3,), 3.0, dtype=D))",
  "the diagonal pattern has 3 entries: gradient 3 (or a refusal naming the transform) [corrected "
  "after the run: was 'refusal' only]", "compose", either=True, keys=("grad", "transform"))
# ---- more dtypes / values / misuse
P("b2.jac.out-is-input", "jacobian", "jac_out_is_input()", "close(r, torch.eye(3, dtype=D))",
  "identity", "misuse")
P("b2.jac.detached-out", "jacobian", "ga.jacobian(lambda t: t.detach() * 2, x3)",
  "close(r, taj(lambda t: t.detach() * 2, x3))", "torch.autograd.functional.jacobian (zeros)",
  "misuse")
P("b2.jac.parameter-x", "jacobian", "ga.jacobian(torch.sin, torch.nn.Parameter(x3.clone()))",
  "close(r, jr(torch.sin, x3)) and not r.requires_grad", "jacrev", "misuse")
P("b2.jac.f64-to-f16-out", "jacobian", "ga.jacobian(lambda t: torch.sin(t).half(), x3)",
  "close(r, torch.diag(torch.cos(x3)), 2e-3, 2e-3)", "cos(x) at float16's resolution", "dtype")
P("b2.jac.forward-bf16", "jacobian", "ga.jacobian(torch.sin, x3b, method='forward')",
  "close(r, torch.diag(torch.cos(x3)), 2e-2, 2e-2)", "cos(x) (or a refusal naming x)", "dtype",
  either=True, keys=("x", "bfloat16"))
P("b2.jac.tuple-vectorize-False", "jacobian", "ga.jacobian(f_tuple, x3, vectorize=False)",
  "close(r, taj(f_tuple, x3))", "torch.autograd.functional.jacobian", "options")
E("b2.jac.batch_dim+create_graph", "jacobian", "ga.jacobian(torch.sin, xb, batch_dim=0, create_graph=True)",
  ("batch_dim", "create_graph"), "options")
P("b2.jac.subnormal-f32", "jacobian", "ga.jacobian(lambda t: t * 1e30, torch.tensor([1e-40, 1e-45]))",
  "close(r, 1e30 * torch.eye(2), 1e-6)", "formula 1e30 I (float32; input subnormal)", "values")
P("b2.vjp.v-subnormal", "backward_vjp", "ga.backward_vjp(lambda t: t * 3, x3, torch.full((3,), 5e-324, dtype=D))",
  "close(r, 3 * torch.full((3,), 5e-324, dtype=D), 0, 1e-323)", "formula 3v (subnormal)", "values")
P("b2.fd_step.bf16", "fd_step", "ga.fd_step(torch.tensor([0.5, 64.0], dtype=torch.bfloat16))",
  "close(r, torch.finfo(torch.bfloat16).eps ** (1 / 3) * torch.tensor([1.0, 64.0]), 1e-2)",
  "formula eps^(1/3) max(1,|x|)", "dtype", either=True, keys=("x", "bfloat16"))
P("b2.fd_step.nan", "fd_step", "ga.fd_step(torch.tensor([float('nan')], dtype=D))",
  "bool(torch.isnan(r).all())", "formula gives NaN (or a refusal naming x)", "values", either=True,
  keys=("x", "nan", "finite"))
P("b2.fmt.bool", "fmt", "ga.fmt(True)", "r in ('True', '1', 'true')", "a bool shown (or refused naming value)",
  "misuse", either=True, keys=("value",))
P("b2.fmt.np-f16", "fmt", "ga.fmt(np.array([0.5, 2.0], dtype=np.float16))", "r == '[0.5, 2]'",
  "exact values", "dtype")
P("b2.fmt.digits40", "fmt", "ga.fmt(1 / 3, digits=40)", "r.startswith('0.33333333333333331')",
  "documented range: :.40g", "options")
P("b2.latex.complex", "latex_matrix", "ga.latex_matrix(torch.tensor([1 + 2j, 3 - 1j]))",
  "'2i' in r and '&' in r", "complex entries as fmt shows them", "dtype")
P("b2.md.details", "markdown_table", "ga.markdown_table([['y', torch.arange(10.0)]], ['name', 'value'])",
  "'<details' in r and 'y = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]' in r", "documented", "values")
P("b2.sum.max0", "summarize", "ga.summarize(torch.arange(3.0), max_entries=0)", "'shape (3,)' in r",
  "summarised (max_entries 0)", "options")
E("b2.sum.digits-bool", "summarize", "ga.summarize(torch.ones(2), digits=True)", ("digits",), "options")
P("b2.watch.detached-output", "watch",
  "watch_step(_net(), lambda o: (o.detach() * 0 + torch.ones(1, requires_grad=True)).sum(), torch.randn(5, 4))",
  "not r.startswith(('ok', 'gradients ok'))", "no parameter gets a gradient: no 'ok'", "values")
P("b2.wng.after-backward-dead", "why_no_grad", "wng_after_backward()", "r == 'zero'",
  "dead ReLU after backward: zero", "values")
P("b2.tr.inputs-subset", "trace_backward", "trace_inputs_subset()", "r is None",
  "as backward(inputs=[a]): b.grad stays None", "options")
P("b2.heat.expected-real", "jacobian_heatmap", "heat(torch.eye(3, dtype=D), (3,), annotate=True)",
  "r is not None", "an Axes", "values")
E("b2.heat.out_shape-str", "jacobian_heatmap", "heat(torch.eye(3), 'ab')", ("out_shape",), "misuse")
E("b2.latex_vjp.result-shape", "latex_vjp", "ga.latex_vjp(torch.ones(2), torch.eye(2), torch.ones(3))",
  ("result", "shape"), "misuse")
P("b2.latex_vjp.wrong-result", "latex_vjp", "ga.latex_vjp(torch.ones(2), torch.eye(2), torch.tensor([5.0, 7.0]))",
  "'5' not in r and '7' not in r",
  "an equation vᵀJ = [5, 7] that is false ([1, 1]) is refused, or shows the true product",
  "misuse", either=True, keys=("result",))


# ================================================================== BATCH 3
# Written after the run of batches 1-2, before running any case below: finite differences
# of functions that vary on a scale far below the step (fast oscillation, steep fronts, jumps),
# certificates and verdicts whose bound is set by the largest entry of the row or the block.
def fast_sin(t):
    return torch.sin(1e6 * t)


def _make_fast_sin():
    class FastSin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(1e6 * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 1e6 * torch.cos(1e6 * x)

    return FastSin.apply


fast_sin_ok = _make_fast_sin()
XF = torch.tensor([1e-3, 2.5e-3, -0.7e-3], dtype=D)


def steep(t):
    return torch.tanh(1e8 * t)


class _DropCross(torch.autograd.Function):
    """y = [1e6 x0 + 1e-3 x1, x1]; the backward drops the 1e-3 cross term."""

    @staticmethod
    def forward(ctx, x):
        return torch.stack([1e6 * x[0] + 1e-3 * x[1], x[1]])

    @staticmethod
    def backward(ctx, g):
        return torch.stack([1e6 * g[0], g[1]])


drop_cross = _DropCross.apply


def f_big_diag_small_roll(u):
    return 1e8 * u + 1e-2 * torch.roll(u, 1)


def h_big_small(u):
    return 1e8 * (u**2).sum() + 1e-2 * (u[1:] * u[:-1]).sum()


P("b3.jac.fd.fast-sin", "jacobian", "ga.jacobian(fast_sin, XF, method='finite-difference')",
  "close(r, jr(fast_sin, XF), 1e-3, 1.0) or len(W) > 0",
  "jacrev (1e6 cos(1e6 x)), or a warning: the step 6e-6 spans 6 radians", "fd-scale")
P("b3.cb.fast-sin", "check_backward", "ga.check_backward(fast_sin_ok, rg(XF))", "r.status != 'wrong'",
  "a correct backward is never WRONG", "fd-scale")
P("b3.cv.fast-sin", "compare_vjp", "ga.compare_vjp(fast_sin, XF, v3)", "r.status != 'DISAGREE'",
  "torch's sin is right", "fd-scale")
P("b3.jac.fd.steep-tanh", "jacobian", "ga.jacobian(steep, torch.tensor([0.0, 1e-9], dtype=D), method='finite-difference')",
  "close(r, jr(steep, torch.tensor([0.0, 1e-9], dtype=D)), 1e-3, 1e-3) or len(W) > 0",
  "jacrev (1e8 at 0), or a warning", "fd-scale")
P("b3.cv.steep-tanh", "compare_vjp", "ga.compare_vjp(steep, torch.tensor([0.0, 1e-9], dtype=D), torch.ones(2, dtype=D))",
  "r.status != 'DISAGREE'", "torch's tanh is right", "fd-scale")
P("b3.jac.fd.floor-near-jump", "jacobian",
  "ga.jacobian(torch.floor, torch.tensor([2.0 - 1e-10, 0.5], dtype=D), method='finite-difference')",
  "close(r, torch.zeros(2, 2, dtype=D)) or len(W) > 0",
  "jacrev: 0 (floor is flat where defined), or a warning: the step crosses a jump", "fd-scale")
P("b3.cb.floor-ste-near-jump", "check_backward",
  "ga.check_backward(ste, rg(torch.tensor([2.5 - 1e-10, 0.2], dtype=D)), expected=lambda g, x: g)",
  "r.status == 'agree'", "expected= is the reference (no finite differences)", "fd-scale")
P("b3.cv.sign-near-0", "compare_vjp", "ga.compare_vjp(lambda t: t * torch.sign(t), torch.tensor([1e-12, 0.5], dtype=D), torch.ones(2, dtype=D))",
  "r.status != 'DISAGREE'", "torch's backward of |t| written as t sign(t) is right", "fd-scale")
# the largest entry of a row or block setting another entry's bound
P("b3.cb.drop-cross", "check_backward", "ga.check_backward(drop_cross, rg(torch.tensor([0.3, 0.7], dtype=D)))",
  "r.status == 'wrong'", "the backward drops the 1e-3 entry J[0,1] entirely (100% of it)",
  "tolerance")
P("b3.cv.drop-cross-jacref", "compare_vjp",
  "ga.compare_vjp(drop_cross, torch.tensor([0.3, 0.7], dtype=D), torch.tensor([1.0, 0.0], dtype=D), reference=torch.tensor([[1e6, 1e-3], [0.0, 1.0]], dtype=D))",
  "r.status == 'DISAGREE'", "exact Jacobian: element 1 is 0 where it should be 1e-3 (> atol 1e-7)", "tolerance")
P("b3.cv.mixed-v", "compare_vjp", "ga.compare_vjp(scale2_bad, torch.tensor([0.3, 0.7], dtype=D), torch.tensor([1e-4, 1.0], dtype=D))",
  "r.status == 'DISAGREE'", "with v = [1e-4, 1] the elements are 100 and 0.76: a 7.6e-6 error is 1e5x rtol", "tolerance")
P("b3.jac.certify-small-missing", "jacobian",
  "ga.jacobian(f_big_diag_small_roll, x6, sparsity=torch.eye(6, dtype=torch.bool), certify=3)",
  "close(r, jr(f_big_diag_small_roll, x6), 0, 1e-6)",
  "CertificateError (the pattern misses the 1e-2 entries: 'fails with probability one'), or the right J",
  "tolerance", either=True, keys=("pattern", "certif", "miss"))
P("b3.sj.certify-small-missing", "SparseJacobian",
  "ga.SparseJacobian(torch.eye(6, dtype=torch.bool))(f_big_diag_small_roll, x6, certify=3, generator=torch.Generator().manual_seed(0))",
  "close(r, jr(f_big_diag_small_roll, x6), 0, 1e-6)",
  "CertificateError, or the right J", "tolerance", either=True, keys=("pattern", "certif", "miss"))
P("b3.sh.certify-small-missing", "SparseHessian",
  "ga.SparseHessian(torch.eye(6, dtype=torch.bool))(h_big_small, x6, certify=3, generator=torch.Generator().manual_seed(0))",
  "close(r, hessian(h_big_small)(x6), 0, 1e-6)",
  "CertificateError (the pattern misses the 1e-2 off-diagonals), or the right H", "tolerance",
  either=True, keys=("pattern", "certif", "miss"))
P("b3.sj.certify-missing-f32", "SparseJacobian",
  "ga.SparseJacobian(torch.eye(6, dtype=torch.bool))(lambda u: 1e3 * u + 1e-1 * torch.roll(u, 1), x6.float(), certify=3)",
  "close(r, jr(lambda u: 1e3 * u + 1e-1 * torch.roll(u, 1), x6.float()), 0, 1e-3)",
  "CertificateError (a 1e-4-relative missing entry in float32), or the right J", "tolerance",
  either=True, keys=("pattern", "certif", "miss"))


# ---- batch 3b (written after seeing b3.cv.sign-near-0 say "agree" with a note, before running
# these): is that "agree" a check?  A WRONG backward at the same points.
def _make_abs_wrong():
    class AbsWrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.abs()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * torch.sign(x)  # wrong: twice the derivative

    return AbsWrong.apply


abs_wrong = _make_abs_wrong()
P("b3.cv.kink-wrong", "compare_vjp", "ga.compare_vjp(abs_wrong, torch.tensor([1e-12], dtype=D), torch.ones(1, dtype=D))",
  "not r.agree", "the backward gives 2 where the derivative is 1: never 'agree' (could not check, or DISAGREE)",
  "fd-kink")
P("b3.cb.kink-wrong", "check_backward", "ga.check_backward(abs_wrong, rg(torch.tensor([1e-12], dtype=D)))",
  "r.status != 'agree'", "a wrong backward is never 'agree'", "fd-kink")
P("b3.cv.kink-wrong-2", "compare_vjp", "ga.compare_vjp(abs_wrong, torch.tensor([1e-12, 0.5], dtype=D), torch.tensor([1.0, 0.0], dtype=D))",
  "not r.agree", "never 'agree' for a wrong backward", "fd-kink")


# ================================================================== BATCH 4
# Written after the run of batches 1-3, before running these: what a helper leaves behind
# (dtypes and values of a module checked by finite differences on float64 copies, an existing
# .grad, the random state), caches keyed by content, an output of the wrong size.
class _SinLin(torch.nn.Module):
    """A float32 module whose output goes through a Function without jvp: FD reference."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(3, 2)
        self.register_buffer("scale", torch.tensor(1.5))

    def forward(self, x):
        return sin_ok(self.lin(x) * self.scale)


def cb_module_untouched():
    m = _SinLin()
    before = {k: v.clone() for k, v in m.state_dict().items()}
    r = ga.check_backward(m, rg(x3f))
    same = all(v.dtype == before[k].dtype and torch.equal(v, before[k])
               for k, v in m.state_dict().items())
    return {"status": r.status, "same": same, "grad": m.lin.weight.grad}


def keeps_grad(which):
    x = x3.clone().requires_grad_(True)
    x.grad = torch.full((3,), 7.0, dtype=D)
    if which == "check_backward":
        ga.check_backward(torch.sin, x)
    elif which == "backward_vjp":
        ga.backward_vjp(torch.sin, x, v3)
    elif which == "jacobian":
        ga.jacobian(torch.sin, x)
    elif which == "compare_vjp-output":
        ga.compare_vjp(x * x, x, v3, reference=torch.diag(2 * x3))
    elif which == "trace-use_grad":
        ga.trace_backward((x * x).sum(), use_grad=True)
    return x.grad


def wng_rng():
    torch.manual_seed(123)
    net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.5))
    x = torch.randn(4, 3)
    state = torch.get_rng_state()
    ga.why_no_grad(lambda: net(x).sum(), net[0].weight, module=net)
    return torch.equal(state, torch.get_rng_state())


def sparsity_cache_inplace():
    P = torch.eye(6, dtype=torch.bool)
    ga.jacobian(torch.sin, x6, sparsity=P)
    P |= tri(6)  # the same tensor, edited in place
    return ga.jacobian(stencil, x6, sparsity=P)


def sj_pattern_edited_after():
    P = tri(6).clone()
    sj = ga.SparseJacobian(P)
    P.fill_(True)  # edited after the colouring: the object holds its own copy?
    return sj(stencil, x6)


P("b4.cb.module-untouched", "check_backward", "cb_module_untouched()",
  "r['status'] == 'agree' and r['same'] and r['grad'] is None",
  "the module's parameters and buffers keep dtype and values; no .grad", "side-effects")
for _w in ("check_backward", "backward_vjp", "jacobian", "compare_vjp-output", "trace-use_grad"):
    P(f"b4.keeps-grad.{_w}", _w.split("-")[0] if _w != "trace-use_grad" else "trace_backward",
      f"keeps_grad({_w!r})", "close(r, torch.full((3,), 7.0, dtype=D))",
      "an existing .grad is left as it was", "side-effects")
P("b4.wng.rng", "why_no_grad", "wng_rng()", "r is True", "documented: the random state is left as it was",
  "side-effects")
P("b4.jac.sparsity-cache-inplace", "jacobian", "sparsity_cache_inplace()", "close(r, jr(stencil, x6))",
  "documented: colourings keyed by content, so an edited pattern is coloured again", "options")
P("b4.sj.pattern-edited-after", "SparseJacobian", "sj_pattern_edited_after()",
  "close(r, jr(stencil, x6)) and dense(r).ne(0).sum() <= 16",
  "the pattern as it was when coloured (16 entries), or the new one consistently", "options")
E("b4.sj.output-size", "SparseJacobian", "sj_tri()(lambda u: u[:5] * 2, x6)", ("fn", "output", "shape", "pattern"),
  "misuse")
E("b4.sh.x_shape-mismatch", "SparseHessian", "ga.SparseHessian(arrow(6), (2, 3))(energy, x6)",
  ("x", "shape", "x_shape"), "misuse")
P("b4.jac.forward-item-fallback", "jacobian", "ga.jacobian(f_item, x3, method='forward')",
  "close(r, x3.sum() * torch.eye(3, dtype=D))", "vectorize=None falls back to a loop: sum(x) I",
  "options")
P("b4.cv.grad-pre-existing-x-untouched", "compare_vjp", "keeps_grad('compare_vjp-output')",
  "close(r, torch.full((3,), 7.0, dtype=D))", "documented: .grad restored", "side-effects")
