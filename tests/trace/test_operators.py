"""Every row of the trace room's operator catalogue, against torch.

For each operator an example here builds the operation on small float64 inputs.  Each row is
checked where it says something: torch records the node under the row's name; the rule the
player shows, written out as code below, equals what autograd computes; the label reads as
stated; the stated zero, singular and gate regions hold (autograd's derivative is zero, not
finite, or exactly zero for some entry at the inputs given); a random forward gives two
different draws.  A row without an example fails ``test_every_row_has_an_example``.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from gradarg import trace_backward
from gradarg.trace.graph.labels import label, names_by_node
from gradarg.trace.graph.nodes import children, op_name, walk
from gradarg.trace.graph.operators import OPERATORS, factors, row, singular

D = torch.float64
T = torch.tensor


def _rand(*shape: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(sum(shape) + len(shape))
    return 0.2 + 0.7 * torch.rand(*shape, dtype=D, generator=g)  # in (0.2, 0.9)


def _grad_of_relu(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.autograd.grad(torch.relu(x), x, v, create_graph=True)[0]


def _grad_of_leaky(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.autograd.grad(F.leaky_relu(x, 0.0), x, v, create_graph=True)[0]


@dataclass
class Example:
    forward: Callable[..., torch.Tensor]
    shapes: tuple[tuple[int, ...], ...] = ((3,),)  # inputs: random values in (0.2, 0.9)
    rule: Callable[..., tuple[torch.Tensor, ...]] | None = None  # (g, *inputs) -> grads
    label: str | None = None  # the label of y = forward(a, b, c)
    at: tuple[Any, ...] | None = None  # inputs where the stated region holds
    dead: tuple[Any, ...] | None = None  # inputs where a unit never fires
    singular: Callable[..., torch.Tensor] | None = None  # forward there (default: forward)
    requires: str | None = None  # a device the operation needs

    inputs: Callable[[], tuple[torch.Tensor, ...]] | None = field(default=None, repr=False)

    def make(self) -> tuple[torch.Tensor, ...]:
        if self.inputs is not None:
            return self.inputs()
        return tuple(_rand(*s).requires_grad_() for s in self.shapes)


def _nested(*shapes: tuple[int, int]) -> torch.Tensor:
    with warnings.catch_warnings():  # "nested tensors are a prototype"
        warnings.simplefilter("ignore", UserWarning)
        return torch.nested.nested_tensor([_rand(*s) for s in shapes], dtype=D,
                                          requires_grad=True)


ZERO, ONE = T([0.0, 0.5], dtype=D), T([1.0, 0.5], dtype=D)
MASK = T([True, False, True])
# a coordinate near 0 with p < 1: float32, 1e-40 a subnormal number
NEAR_ZERO = (T([1e-40, 1.0]),)

EXAMPLES: dict[str, Example] = {
    # arithmetic
    "mul": Example(lambda a, b: a * b, ((3,), (3,)), lambda g, a, b: (g * b, g * a), "a * b",
                   at=(ONE, ZERO)),
    "add": Example(lambda a, b: a + b, ((3,), (3,)), lambda g, a, b: (g, g), "a + b"),
    "sub": Example(lambda a, b: a - b, ((3,), (3,)), lambda g, a, b: (g, -g), "a - b"),
    "rsub": Example(torch.rsub, ((3,), (3,)), lambda g, a, b: (-g, g), "b - a"),
    "neg": Example(lambda a: -a, rule=lambda g, a: (-g,), label="-a"),
    "div": Example(lambda a, b: a / b, ((3,), (3,)), lambda g, a, b: (g / b, -g * a / b**2),
                   "a / b", at=(ONE, ZERO)),
    "pow": Example(lambda a: a ** T(3.0, dtype=D), rule=lambda g, a: (g * 3 * a**2,),
                   label="a ** 3", at=(ZERO,), singular=lambda a: a**0.5),
    "reciprocal": Example(torch.reciprocal, at=(ZERO,)),
    "xlogy": Example(torch.xlogy, ((3,), (3,)), at=(ONE, ZERO)),
    "atan2": Example(torch.atan2, ((3,), (3,)), at=(T([1e-160], dtype=D), T([1e-160], dtype=D))),
    # products
    "mm": Example(lambda a, b: a @ b, ((2, 3), (3, 4)), lambda g, a, b: (g @ b.T, a.T @ g),
                  "a @ b"),
    "matmul": Example(torch.matmul, rule=lambda g, a, b: (g @ b.transpose(-1, -2),
                                                          a.transpose(-1, -2) @ g),
                      label="a @ b", inputs=lambda: (_nested((2, 3), (4, 3)),
                                                      _nested((3, 5), (3, 5)))),
    "bmm": Example(torch.bmm, ((2, 2, 3), (2, 3, 4)), label="a @ b"),
    "mv": Example(lambda a, b: a @ b, ((2, 3), (3,)),
                  lambda g, a, b: (torch.outer(g, b), a.T @ g), "a @ b"),
    "dot": Example(lambda a, b: a @ b, ((3,), (3,)), label="a @ b"),
    "addmm": Example(torch.addmm, ((4,), (2, 3), (3, 4)),
                     lambda g, c, a, b: (g.sum(0), g @ b.T, a.T @ g), "b @ c + a"),
    "addmv": Example(torch.addmv, ((2,), (2, 3), (3,))),
    "baddbmm": Example(torch.baddbmm, ((2, 2, 4), (2, 2, 3), (2, 3, 4))),
    "convolution": Example(F.conv1d, ((1, 2, 5), (3, 2, 2), (3,))),
    "cdist": Example(lambda a, b: torch.cdist(a.view(1, -1), b.view(1, -1), p=0.01),
                     ((2,), (2,)), at=(*NEAR_ZERO, torch.zeros(2))),
    # elementwise
    "exp": Example(torch.exp, rule=lambda g, x: (g * x.exp(),)),
    "log": Example(torch.log, rule=lambda g, x: (g / x,), at=(ZERO,)),
    "log2": Example(torch.log2, at=(ZERO,)),
    "log10": Example(torch.log10, at=(ZERO,)),
    "sqrt": Example(torch.sqrt, rule=lambda g, x: (g / (2 * x.sqrt()),), at=(ZERO,)),
    "rsqrt": Example(torch.rsqrt, at=(ZERO,)),
    "sin": Example(torch.sin, rule=lambda g, x: (g * x.cos(),)),
    "cos": Example(torch.cos, rule=lambda g, x: (-g * x.sin(),)),
    "asin": Example(torch.asin, at=(ONE,)),
    "acos": Example(torch.acos, at=(ONE,)),
    "atanh": Example(torch.atanh, at=(ONE,)),
    "acosh": Example(lambda x: torch.acosh(1 + x), at=(T([0.0, 0.5], dtype=D),),
                     singular=torch.acosh),
    "log1_p": Example(torch.log1p, at=(T([-1.0, 0.5], dtype=D),)),
    "linalg_slogdet": Example(lambda a: torch.linalg.slogdet(a)[1], ((3, 3),),
                              at=(torch.zeros(3, 3, dtype=D),)),
    "tanh": Example(torch.tanh, rule=lambda g, x: (g * (1 - x.tanh() ** 2),)),
    "sigmoid": Example(torch.sigmoid,
                       rule=lambda g, x: (g * x.sigmoid() * (1 - x.sigmoid()),)),
    # gates
    "relu": Example(torch.relu, rule=lambda g, x: (g * (x > 0),), at=(T([-1.0, 0.5]),),
                    dead=(-ONE,)),
    "threshold": Example(lambda x: F.threshold(x, 0.5, 0.0), at=(T([0.1, 0.9], dtype=D),),
                         dead=(T([0.1, 0.4], dtype=D),)),
    "leaky_relu": Example(lambda x: F.leaky_relu(x, 0.0), dead=(-ONE,)),
    "threshold_backward": Example(_grad_of_relu, ((3,), (3,)), dead=(ONE, -ONE)),
    "leaky_relu_backward": Example(_grad_of_leaky, ((3,), (3,)), dead=(ONE, -ONE)),
    "hardtanh": Example(lambda x: F.hardtanh(x, 0.0, 0.5), at=(T([1.0, 0.25]),)),
    "clamp": Example(lambda x: x.clamp(0.3, 0.6), at=(T([0.1, 0.45, 0.9], dtype=D),)),
    "where": Example(lambda a, b: torch.where(MASK, a, b), ((3,), (3,)),
                     at=(T([1.0, 2, 3], dtype=D), T([4.0, 5, 6], dtype=D))),
    "masked_fill": Example(lambda x: x.masked_fill(MASK, 0.0)),
    "max": Example(lambda x: x.max()),
    "min": Example(lambda x: x.min()),
    "index": Example(lambda x: x[[0, 2]]),
    # step functions
    "round": Example(torch.round),
    "floor": Example(torch.floor),
    "ceil": Example(torch.ceil),
    "trunc": Example(torch.trunc),
    "sign": Example(torch.sign),
    "sgn": Example(torch.sgn),
    # reductions
    "sum": Example(torch.sum, ((2, 3),), lambda g, x: (g.expand_as(x),)),
    "mean": Example(torch.mean, ((2, 3),), lambda g, x: ((g / x.numel()).expand_as(x),)),
    # torch.norm records LinalgVectorNormBackward0 now; the legacy op (older torch, scripts)
    # records NormBackward0, reached here through torch._VF
    "norm": Example(lambda x: torch._VF.norm(x, 0.01), ((2,),), at=NEAR_ZERO),
    "linalg_vector_norm": Example(lambda x: torch.linalg.vector_norm(x, 0.01), ((2,),),
                                  at=NEAR_ZERO),
    "logsumexp": Example(lambda x: torch.logsumexp(x, 0),
                         at=(T([float("-inf"), float("-inf")], dtype=D),)),
    "std": Example(torch.std, at=(T([1.0], dtype=D),)),
    "var": Example(torch.var, at=(T([1.0], dtype=D),)),
    # moves and views
    "t": Example(lambda a: a.t(), ((2, 3),), lambda g, a: (g.t(),), "a.T"),
    "transpose": Example(lambda a: a.transpose(0, 1), ((2, 3),), lambda g, a: (g.T,), "a.T"),
    "permute": Example(lambda a: a.permute(1, 0), ((2, 3),), lambda g, a: (g.permute(1, 0),),
                       "a.permute"),
    "view": Example(lambda a: a.view(6), ((2, 3),), lambda g, a: (g.view(2, 3),)),
    "unsafe_view": Example(lambda a: a.t().reshape(6), ((2, 3),),
                           lambda g, a: (g.reshape(3, 2).t(),)),
    "squeeze": Example(torch.squeeze, ((1, 3),)),
    "unsqueeze": Example(lambda a: a.unsqueeze(0)),
    "expand": Example(lambda a: a.expand(4, 3), ((1, 3),),
                      lambda g, a: (g.sum(0, keepdim=True),)),
    "clone": Example(torch.clone, rule=lambda g, a: (g,)),
    # joins without arithmetic (routes): the backward cuts g into the inputs' parts
    "cat": Example(lambda a, b: torch.cat([a, b]), ((2,), (3,)),
                   lambda g, a, b: (g[:2], g[2:])),
    "stack": Example(lambda a, b: torch.stack([a, b]), ((3,), (3,)),
                     lambda g, a, b: (g[0], g[1])),
    # random forwards
    "native_dropout": Example(lambda x: torch.native_dropout(x, 0.5, True)[0], ((64,),)),
    "fused_dropout": Example(lambda x: torch._fused_dropout(x, 0.5)[0], ((64,),),
                             requires="cuda"),
    "bernoulli": Example(torch.bernoulli, ((64,),)),
    "rrelu_with_noise": Example(lambda x: F.rrelu(-x, training=True), ((64,),)),
    "normal": Example(lambda x: torch.normal(x, 1.0), ((64,),)),
}


def _output(op: str, inputs: tuple[torch.Tensor, ...] | None = None) -> torch.Tensor:
    ex = EXAMPLES[op]
    if ex.requires == "cuda" and not torch.cuda.is_available():
        pytest.skip(f"{op} runs only on CUDA")
    return ex.forward(*(inputs if inputs is not None else ex.make()))


def _leaves(values: tuple[Any, ...]) -> tuple[torch.Tensor, ...]:
    return tuple(torch.as_tensor(v).clone().requires_grad_() for v in values)


def _flat(t: torch.Tensor) -> torch.Tensor:
    if t.is_nested:
        return torch.cat([p.reshape(-1) for p in t.unbind()])
    return t.reshape(-1)


def _grads(out: torch.Tensor, inputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """Autograd's gradients of ``out`` (all-ones upstream gradient) for every input."""
    gs = torch.autograd.grad(out, inputs, torch.ones_like(out), allow_unused=True,
                             materialize_grads=True)
    return tuple(gs)


def test_every_row_has_an_example():
    assert set(EXAMPLES) == set(OPERATORS)


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_torch_records_the_node_under_the_rows_name(op):
    assert op_name(_output(op).grad_fn) == op


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.rule))
def test_the_rule_is_what_autograd_computes(op):
    ex = EXAMPLES[op]
    assert ex.rule is not None, f"{op}: the row states a rule; write it out in its example"
    inputs = ex.make()
    out = ex.forward(*inputs)
    g = torch.randn_like(out) if not out.is_nested else torch.nested.nested_tensor(
        [torch.randn_like(p) for p in out.unbind()])
    got = torch.autograd.grad(out, inputs, g)
    with torch.no_grad():
        said = ex.rule(g, *inputs)
    assert len(said) == len(got)
    for a, b in zip(said, got, strict=True):
        assert torch.allclose(_flat(a).to(D), _flat(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.label))
def test_the_label_reads_as_stated(op):
    """As :func:`gradarg.trace_backward` labels the node (which takes no nested tensors, the
    only ones that record ``MatmulBackward0``)."""
    ex = EXAMPLES[op]
    assert ex.label is not None, f"{op}: the row has a label; say how it reads"
    inputs = ex.make()
    out = ex.forward(*inputs)
    names = dict(zip("abc", inputs, strict=False)) | {"y": out}
    order, index = walk(out.grad_fn)
    assert label(order[0], 0, names_by_node(names, index, order), index, {}) == f"y = {ex.label}"
    if not out.is_nested:
        assert trace_backward(out, torch.ones_like(out), names=names).node("y").label == \
            f"y = {ex.label}"


def test_a_constant_factor_is_shown_first():
    b = torch.tensor(2.0, requires_grad=True)
    c = 8 * b
    assert trace_backward(c, names={"b": b, "c": c}).node("c").label == "c = 8 * b"


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.zero_derivative))
def test_a_step_function_has_derivative_zero(op):
    inputs = EXAMPLES[op].make()
    (g,) = _grads(_output(op, inputs), inputs)
    assert bool((g == 0).all())


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.singular))
def test_the_derivative_is_not_finite_in_the_stated_region(op):
    ex = EXAMPLES[op]
    assert ex.at is not None, f"{op}: the row states where it is singular; give that input"
    inputs = _leaves(ex.at)
    with warnings.catch_warnings():  # std and var of one element: "degrees of freedom <= 0"
        warnings.simplefilter("ignore", UserWarning)
        out = (ex.singular or ex.forward)(*inputs)
    assert singular(out.grad_fn)
    grads = _grads(out, inputs)
    assert any(not bool(torch.isfinite(g).all()) for g in grads), (op, grads)


def _condition(domain: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The row's domain text as a test on ``x``: the text itself is evaluated."""
    code = (domain.replace("≥", ">=").replace("≤", "<=").replace("|x|", "x.abs()"))
    assert re.fullmatch(r"x(\.abs\(\))? (>=|<=) -?\d+", code), domain
    return lambda x: eval(code, {}, {"x": x})


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.domain))
def test_the_stated_domain_is_where_the_value_is_a_number(op):
    """The domain the watch prints ("x ≥ 1") holds: NaN exactly outside it, on a grid."""
    ex = EXAMPLES[op]
    fn = ex.singular or ex.forward  # the bare operation (acosh's example shifts its input)
    x = torch.linspace(-3, 3, 601, dtype=D)
    inside = _condition(row(op).domain or "")(x)
    with torch.no_grad():
        assert torch.equal(fn(x).isnan(), ~inside), op


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.limits))
def test_a_squashing_function_at_its_limits_passes_nothing(op):
    """Far from 0 the output is exactly one of the row's limits and the gradient exactly 0;
    near 0 neither (float32 and float64)."""
    for dtype in (torch.float32, torch.float64):
        x = T([-1e4, 1e4, 0.1], dtype=dtype).requires_grad_()
        out = EXAMPLES[op].forward(x)
        (g,) = _grads(out, (x,))
        limits = torch.tensor(row(op).limits, dtype=dtype)
        at = torch.isin(out.detach(), limits)
        assert at.tolist() == [True, True, False] and torch.equal(g == 0, at), (op, dtype)


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.zero_at_zero))
def test_a_norm_at_an_all_zero_input_passes_zeros(op):
    x = torch.zeros(3, dtype=D, requires_grad=True)
    out = {"norm": lambda t: torch._VF.norm(t, 2),  # NormBackward1 (x.norm() is linalg's)
           "linalg_vector_norm": torch.linalg.vector_norm}[op](x)
    assert op_name(out.grad_fn) == op
    (g,) = _grads(out, (x,))
    assert bool((g == 0).all())


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.overflows))
def test_the_stated_overflow_is_where_the_forward_is_infinite(op):
    """"x above about A in float32, B in float64": finite at A - 0.1, infinite at B + 0.1."""
    text = row(op).overflows or ""
    found = re.fullmatch(r"x above about ([\d.]+) in float32, ([\d.]+) in float64", text)
    assert found, text
    for bound, dtype in zip(map(float, found.groups()), (torch.float32, torch.float64),
                            strict=True):
        y = EXAMPLES[op].forward(T([bound - 0.1, bound + 0.1], dtype=dtype))
        assert bool(torch.isfinite(y[0])) and bool(torch.isinf(y[1])), (op, dtype, y)


def test_a_constant_exponent_of_at_least_one_is_not_singular():
    x = _leaves((ZERO,))[0]
    for exponent, expect in ((2.0, False), (1, False), (0.5, True)):
        out = x**exponent
        (g,) = _grads(out, (x,))
        assert singular(out.grad_fn) is expect
        assert bool(torch.isfinite(g).all()) is not expect


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.gate))
def test_a_gate_sends_exact_zeros(op):
    ex = EXAMPLES[op]
    inputs = _leaves(ex.at) if ex.at is not None else ex.make()
    out = ex.forward(*inputs)
    grads = _grads(out, inputs)
    assert any(bool((g == 0).any()) for g in grads), (op, grads)
    assert any(bool((g != 0).any()) for g in grads), (op, grads)  # not all zero: a gate


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.dead_unit))
def test_a_unit_that_never_fires_passes_nothing(op):
    ex = EXAMPLES[op]
    assert ex.dead is not None, f"{op}: the row says units can die; give such an input"
    inputs = _leaves(ex.dead)
    grads = _grads(ex.forward(*inputs), inputs)
    assert bool((grads[0] == 0).all()), (op, grads)


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.saturates))
def test_a_clamp_saturated_everywhere_passes_nothing(op):
    x = _leaves((T([-5.0, 3.0, 7.0], dtype=D),))
    (g,) = _grads(EXAMPLES[op].forward(*x), x)
    assert bool((g == 0).all()), (op, g)
    inside = _leaves(EXAMPLES[op].at)
    (g,) = _grads(EXAMPLES[op].forward(*inside), inside)
    assert bool((g != 0).any()), (op, g)


def test_where_sends_zero_into_the_branch_not_taken():
    (op,) = [o for o, r in OPERATORS.items() if r.masks_branch]
    a, b = _leaves(EXAMPLES[op].at)
    ga, gb = _grads(EXAMPLES[op].forward(a, b), (a, b))
    assert torch.equal(ga == 0, ~MASK) and torch.equal(gb == 0, MASK)


def test_a_product_row_catches_dropout_on_the_cpu():
    x = torch.ones(64, dtype=D, requires_grad=True)
    assert row(op_name(F.dropout(x, 0.5, training=True).grad_fn)).product


def test_the_fix_in_a_product_is_finite_where_the_product_is_not():
    fixes = {o: r.fix_in_product for o, r in OPERATORS.items() if r.fix_in_product}
    assert set(fixes) == {"log"} and "xlogy" in fixes["log"]
    p = torch.tensor([0.0, 0.5], dtype=D)
    assert not bool(torch.isfinite(p * torch.log(p)).all())
    assert torch.special.xlogy(p, p)[0] == 0


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.view))
def test_a_view_shares_its_inputs_memory(op):
    inputs = EXAMPLES[op].make()
    out = _output(op, inputs)
    assert out.untyped_storage().data_ptr() == inputs[0].untyped_storage().data_ptr()


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.operands))
def test_a_product_saves_each_operand_where_the_row_says(op):
    inputs = EXAMPLES[op].make()
    node = _output(op, inputs).grad_fn
    operands = row(op).operands
    assert len(operands) == len(children(node)) == len(inputs)
    for attr, x in zip(operands, inputs, strict=True):
        if attr:
            assert torch.equal(getattr(node, attr), x)


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.operands))
def test_an_all_zero_operand_sends_zeros_to_the_other_factors(op):
    """With one multiplied operand all zero, autograd's gradient is exactly zero for each input
    it is a factor of, and not for the others (an added input, the zero operand itself)."""
    base = EXAMPLES[op].make()
    for zero in (j for j, attr in enumerate(row(op).operands) if attr):
        inputs = tuple(torch.zeros_like(x).requires_grad_() if j == zero else x
                       for j, x in enumerate(base))
        grads = _grads(_output(op, inputs), inputs)
        for i, g in enumerate(grads):
            assert bool((g == 0).all()) is (zero in factors(op, i)), (op, zero, i, g)


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.recompute))
def test_the_forward_recomputed_from_the_saved_values_is_the_output(op):
    inputs = EXAMPLES[op].make()
    out = _output(op, inputs)
    name, *attrs = row(op).recompute
    fn: Any = torch
    for part in name.split("."):  # "linalg.slogdet"
        fn = getattr(fn, part)
    again = fn(*(getattr(out.grad_fn, a) for a in attrs))
    outs = again if isinstance(again, tuple) else (again,)  # slogdet: (sign, logabsdet)
    assert any(a.shape == out.shape and torch.allclose(a, out.detach(), rtol=1e-12, atol=0)
               for a in outs)


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.routes))
def test_a_join_sends_zeros_only_where_zeros_arrived(op):
    """A routing row makes no zeros: the part it sends an input is all zeros exactly when
    the entries of g it takes are (g zero on one input's part, nonzero elsewhere)."""
    inputs = EXAMPLES[op].make()
    out = _output(op, inputs)
    g = torch.rand_like(out) + 0.5  # no zero entries
    part = torch.zeros(out.numel(), dtype=torch.bool)
    part[: inputs[0].numel()] = True  # the first input's part comes first in both joins
    for zero_there in (True, False):
        gg = torch.where(part.view_as(out), 0.0, g) if zero_there else g
        got = torch.autograd.grad(out, inputs, gg, retain_graph=True)
        assert bool((got[0] == 0).all()) == zero_there
        assert bool((got[1] != 0).all())


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.keeps_zero))
def test_an_all_zero_input_gives_an_all_zero_output(op):
    inputs = EXAMPLES[op].make()
    zeros = (torch.zeros_like(inputs[0]).requires_grad_(), *inputs[1:])
    out = _output(op, zeros)
    assert not bool(out.any())
    assert bool(_output(op, inputs).any())


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.random))
def test_a_random_forward_draws_anew(op):
    inputs = EXAMPLES[op].make()
    first, second = _output(op, inputs), _output(op, inputs)
    assert not torch.equal(first, second)


# -- the rule text the player shows, evaluated ----------------------------------------------
# A rule written as a formula ("g × cos(x)", "g / b to a, −g·a / b² to b") is read here into
# Python and evaluated against autograd: changing its text changes what is checked.  A rule in
# words only ("g copied to every summed entry") cannot be evaluated: its text is pinned here,
# beside the example formula of its row that the test above evaluates.
PROSE = {
    "mul": "g × the other factor",
    "add": "g passed on unchanged to each operand",
    "addmm": "to the bias: g summed over the rows; to A: g @ Bᵀ; to B: Aᵀ @ g (y = bias + A @ B)",
    "sum": "g copied to every summed entry",
    "mean": "g / n copied to every averaged entry",
    "transpose": "g transposed back",
    "permute": "g permuted back",
    "view": "g reshaped to the input's shape",
    "unsafe_view": "g reshaped to the input's shape",
    "expand": "g summed over the expanded dimensions",
    "clone": "g passed on unchanged",
    "cat": "g cut into the inputs' parts",
    "stack": "g cut into the inputs' slices",
}
CONSTANTS = {"pow": {"n": 3.0}}  # the example's constant exponent: y = a ** 3
_ORDINAL = {"the first operand": "_0", "the second": "_1"}
_SYMBOLS = [  # (pattern, replacement), in order
    (r"(\w+)²\(([^()]*)\)", r"\1(\2)**2"),  # tanh²(x)
    (r"²", "**2"), (r"ⁿ⁻¹", "**(n-1)"),
    (r"(\d)√(\w)", r"\1*sqrt(\2)"), (r"√", "sqrt"),
    (r"σ", "sigmoid"), (r"\)\(", ")*("),
    (r"(\w)ᵀ (\w)", r"\1.transpose(-1, -2) @ \2"), (r"ᵀ", ".transpose(-1, -2)"),
    (r"(\w) ⊗ (\w)", r"outer(\1, \2)"),
    (r"×", "*"), (r"·", "*"), (r"−", "-"),
]


def read_rule(text: str) -> list[tuple[str | None, str]]:
    """``[(operand name or None, Python expression)]``, one per part ``"EXPR to NAME"``."""
    text = re.sub(r" \([a-z ]+\)", "", text)  # a parenthetical in words: "(an outer product)"
    m = re.fullmatch(r"(.+) where (.+), else 0", text)
    if m:  # a gate: "g where x > 0, else 0"
        text = f"where({m[2]}, {m[1]}, 0 * g)"
    parts = []
    for part in [text] if m else text.split(", "):
        expr, _, name = part.partition(" to ")
        for pattern, repl in _SYMBOLS:
            expr = re.sub(pattern, repl, expr)
        parts.append((_ORDINAL.get(name, name) or None, expr))
    return parts


def evaluate_rule(op: str, g: torch.Tensor, inputs: tuple[torch.Tensor, ...]):
    parts = read_rule(OPERATORS[op].rule)
    named = [n for n, _ in parts]
    if named == [None]:  # one operand, called x in the text (or a, as in the label)
        names = {"x": inputs[0], "a": inputs[0]}
    else:
        assert len(named) == len(inputs) and None not in named, (op, named)
        names = dict(zip(named, inputs, strict=True))
    space = {"g": g, "cos": torch.cos, "sin": torch.sin, "exp": torch.exp, "tanh": torch.tanh,
             "sigmoid": torch.sigmoid, "sqrt": torch.sqrt, "where": torch.where,
             "outer": torch.outer, **CONSTANTS.get(op, {}), **names}
    return tuple(eval(expr, {"__builtins__": {}}, space) for _, expr in parts)


@pytest.mark.parametrize("op", sorted(o for o, r in OPERATORS.items() if r.rule))
def test_the_shown_rule_text_is_what_autograd_computes(op):
    text = OPERATORS[op].rule
    if op in PROSE:  # words: the example's formula is evaluated above; the text is pinned
        assert text == PROSE[op], f"{op}: rule text changed; check it against its example"
        return
    ex = EXAMPLES[op]
    inputs = ex.make()
    out = ex.forward(*inputs)
    g = torch.randn_like(out) if not out.is_nested else torch.nested.nested_tensor(
        [torch.randn_like(p) for p in out.unbind()])
    got = torch.autograd.grad(out, inputs, g)
    with torch.no_grad():
        said = evaluate_rule(op, g, inputs)
    assert len(said) == len(got), (op, read_rule(text))
    for a, b in zip(said, got, strict=True):
        assert torch.allclose(_flat(a).to(D), _flat(b), rtol=1e-10, atol=1e-12), (
            op, text, read_rule(text))


@pytest.mark.parametrize(("op", "wrong"), [
    ("sin", "g × sin(x)"), ("div", "g / b to a, g·a / b² to b"), ("tanh", "g × tanh²(x)"),
    ("mm", "g @ B to A, Aᵀ @ g to B"), ("relu", "g where x < 0, else 0"),
])
def test_a_wrong_rule_text_fails(op, wrong, monkeypatch):
    """The check above, fed a planted wrong text, must fail."""
    monkeypatch.setitem(OPERATORS, op, dataclasses.replace(OPERATORS[op], rule=wrong))
    with pytest.raises((AssertionError, RuntimeError)):
        test_the_shown_rule_text_is_what_autograd_computes(op)
