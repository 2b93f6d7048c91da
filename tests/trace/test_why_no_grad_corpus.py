"""why_no_grad on situations people post about, asked before and after their own backward().

Each situation builds the user's code from scratch (``build()``), then is diagnosed twice:
``before`` (a fresh forward, no backward on it yet: what the documentation shows) and ``after``
(the user's own step ran on that same output: ``backward()`` and whatever followed it, which is
when people ask). For each moment the test asserts the case, words that name the cause, and
that no false cause appears (``forbid``). ``specific`` says whether the answer is expected to
name the cause (True) or, honestly, only what the tensors are consistent with (False): after
``backward()`` freed the saved tensors some causes can no longer be read from the graph.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from gradarg import why_no_grad


@dataclass
class Expect:
    cases: tuple[str, ...]
    words: tuple[str, ...] = ()
    specific: bool = True
    node: str | None = None  # a substring of GradDiagnosis.node


@dataclass
class Situation:
    make: Callable[[], torch.Tensor]  # the forward, returns the output
    tensor: torch.Tensor
    before: Expect
    after: Expect
    step: Callable[[torch.Tensor], Any] | None = None  # the user's step (default: backward)
    names: dict = field(default_factory=dict)
    module: nn.Module | None = None
    forbid: tuple[str, ...] = ()


def backward(out: torch.Tensor) -> None:
    """The user's ``out.backward()``; it may raise, as it does for them."""
    with contextlib.suppress(RuntimeError):
        out.backward()


SITUATIONS: dict[str, Callable[[], Situation]] = {}


def situation(fn):
    SITUATIONS[fn.__name__] = fn
    return fn


NONLEAF = Expect(("non-leaf",), ("not a leaf", "retain_grad()"))


@situation
def nonleaf_after_double():
    w = torch.randn(3, requires_grad=True).double()  # "my weight's .grad is None"
    return Situation(lambda: (w ** 2).sum(), w, NONLEAF, NONLEAF, names={"w": w},
                     forbid=("requires_grad=False",))


@situation
def nonleaf_after_to():
    w = torch.randn(3, requires_grad=True).to(torch.float64)
    return Situation(lambda: (w * 3).sum(), w, NONLEAF, NONLEAF, names={"w": w})


@situation
def nonleaf_scaled_init():
    w = torch.randn(4, 2, requires_grad=True) * 0.01  # init scaled after requires_grad
    x = torch.randn(5, 4)
    return Situation(lambda: (x @ w).pow(2).sum(), w, NONLEAF, NONLEAF, names={"w": w})


@situation
def retain_grad_forgotten():
    w = torch.randn(3, requires_grad=True)
    h = torch.tanh(w)
    return Situation(lambda: (h * 2).sum(), h, NONLEAF, NONLEAF, names={"h": h, "w": w})


CUT_AFTER = Expect(("not-reachable",), ("could not be checked", "recompute"), specific=False)


@situation
def detach_weight():
    w, x = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    return Situation(lambda: (w.detach() * x).sum(), w,
                     Expect(("not-reachable",), (".detach() or .data",), node="Mul"),
                     CUT_AFTER, names={"w": w})


@situation
def dot_data():
    w, x = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    return Situation(lambda: (w.data * x).sum(), w,
                     Expect(("not-reachable",), (".detach() or .data",), node="Mul"), CUT_AFTER)


@situation
def numpy_round_trip_in_the_middle():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)

    def make():
        h = w * 2
        h_np = h.detach().numpy() ** 2  # a NumPy step in the middle
        return (torch.from_numpy(h_np) * b).sum()

    return Situation(make, w, Expect(("not-reachable",), ("NumPy",), specific=False),
                     CUT_AFTER, names={"w": w},
                     forbid=("requires_grad=False", "takes an integer tensor"))


@situation
def numpy_copy_of_weight():
    w, x = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    return Situation(lambda: (torch.tensor(w.detach().numpy()) * x).sum(), w,
                     Expect(("not-reachable",), ("NumPy round trip",)), CUT_AFTER)


@situation
def item_makes_a_number():
    s, x = torch.tensor(2.5, requires_grad=True), torch.randn(3, requires_grad=True)
    return Situation(lambda: (x * s.item()).sum(), s,
                     Expect(("not-reachable",), (".item()",)), CUT_AFTER, names={"s": s})


@situation
def integer_cast_on_the_path():
    w, x = torch.rand(3, requires_grad=True), torch.randn(3, requires_grad=True)
    return Situation(lambda: ((w * 10).long() * x).sum(), w,
                     Expect(("not-reachable",), (), specific=False), CUT_AFTER)


@situation
def integer_tensor_itself():
    i, x = torch.tensor([1, 2, 3]), torch.randn(3, requires_grad=True)
    exp = Expect(("integer-dtype",), ("dtype torch.int64",))
    return Situation(lambda: (x * i).sum(), i, exp, exp)


@situation
def whole_forward_under_no_grad():
    w = torch.randn(3, requires_grad=True)

    def make():
        with torch.no_grad():  # left over from an evaluation loop
            return (w ** 2).sum()

    exp = Expect(("output-no-grad",), ("no graph", "torch.no_grad()"))
    return Situation(make, w, exp, exp, forbid=("inference_mode()",))


@situation
def partial_no_grad():
    W = torch.randn(3, 3, requires_grad=True)
    x, v = torch.randn(3), torch.randn(3, requires_grad=True)

    def make():
        h = W @ x
        with torch.no_grad():
            h = torch.tanh(h)
        return (h * v).sum()

    return Situation(make, W, Expect(("not-reachable",), ("torch.no_grad()", "MulBackward0")),
                     CUT_AFTER, names={"W": W})


@situation
def detached_downstream_activation():
    torch.manual_seed(0)
    net = nn.ModuleDict({"fc1": nn.Linear(4, 8), "fc2": nn.Linear(8, 1)})
    x = torch.randn(5, 4)
    seen = {}

    def make():
        h = net["fc1"](x)
        seen["h"] = h
        return net["fc2"](torch.relu(h.detach())).sum()  # detach left from a GAN snippet

    return Situation(make, net["fc1"].weight,
                     Expect(("unused-parameter",), ("fc1", ".detach()", "AddmmBackward0")),
                     Expect(("unused-parameter",), ("fc1", ".detach()")), module=net,
                     forbid=("requires_grad=False",))


@situation
def detached_activation_named():
    w = torch.randn(3, requires_grad=True)
    h = w * 2
    v = torch.randn(3, requires_grad=True)
    return Situation(lambda: (h.detach() * v).sum(), w,
                     Expect(("not-reachable",), ("h", "detached")), CUT_AFTER,
                     names={"w": w, "h": h})


@situation
def parameter_never_used():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 4)
            self.head = nn.Linear(4, 1)
            self.aux_head = nn.Linear(4, 2)  # defined, never called

        def forward(self, x):
            return self.head(torch.relu(self.body(x)))

    net = Net()
    x = torch.randn(3, 4)
    exp = Expect(("unused-parameter",), ("aux_head", "Linear", "not called"))
    return Situation(lambda: net(x).sum(), net.aux_head.weight, exp, exp, module=net)


@situation
def requires_grad_after_forward_partial():
    w = torch.randn(3)
    x = torch.randn(3, requires_grad=True)

    def make():
        out = (w * x).sum()
        w.requires_grad_()  # too late: the graph holds w as a constant
        return out

    return Situation(make, w, Expect(("not-reachable",), ("requires_grad_() came after",)),
                     CUT_AFTER, names={"w": w})


@situation
def requires_grad_after_forward_whole():
    w = torch.randn(3)

    def make():
        out = (w * 2).sum()
        w.requires_grad_()
        return out

    exp = Expect(("output-no-grad",), ("requires_grad_() came after the forward",))
    return Situation(make, w, exp, exp, names={"w": w})


@situation
def torch_tensor_of_losses():
    a = torch.randn(3, requires_grad=True)

    def make():
        l1, l2 = (a ** 2).sum(), a.sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch warns; users miss it
            return torch.tensor([l1, l2]).sum()

    exp = Expect(("output-no-grad",), ("torch.tensor([...])", "torch.autograd.grad"))
    return Situation(make, a, exp, exp, names={"a": a})


@situation
def torch_tensor_of_losses_requires_grad():
    a = torch.randn(3, requires_grad=True)

    def make():
        l1, l2 = (a ** 2).sum(), a.sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            total = torch.tensor([l1, l2], requires_grad=True)
        return total.sum()

    exp = Expect(("not-reachable",), ("new leaf", "torch.stack"), specific=False)
    return Situation(make, a, exp, exp, forbid=("requires_grad=False",))


@situation
def loss_rebuilt_from_numpy():
    w = torch.randn(3, requires_grad=True)

    def make():
        loss_np = ((w * 2) ** 2).sum().detach().numpy()
        return torch.tensor(loss_np, requires_grad=True)  # "loss.backward() does nothing"

    exp = Expect(("new-leaf",), ("new leaf", "values without history"))
    return Situation(make, w, exp, exp, names={"w": w}, forbid=("requires_grad=False",))


@situation
def argmax_accuracy_as_loss():
    net = nn.Linear(4, 3)
    x, t = torch.randn(6, 4), torch.randint(0, 3, (6,))
    exp = Expect(("output-no-grad",), ("argmax",), specific=False)
    return Situation(lambda: (net(x).argmax(1) == t).float().mean(), net.weight, exp, exp,
                     module=net)


@situation
def round_has_zero_derivative():
    w, x = torch.randn(3, requires_grad=True), torch.randn(3)
    return Situation(lambda: (torch.round(w * 4) * x).sum(), w,
                     Expect(("zero",), ("round", "straight-through")),
                     Expect(("zero",), ("round", "every path"), node="round"))


@situation
def inference_mode_output():
    w = torch.randn(3, requires_grad=True)

    def make():
        with torch.inference_mode():
            return (w * 2).sum()

    exp = Expect(("output-no-grad",), ("inference_mode",))
    return Situation(make, w, exp, exp)


@situation
def inference_tensor_input():
    with torch.inference_mode():
        x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    exp = Expect(("inference-mode",), ("inference_mode",))
    return Situation(lambda: (w + x).sum(), x, exp, exp)  # x: data made in an eval loop


@situation
def saved_tensor_modified_in_place():
    w = torch.randn(3, requires_grad=True)

    def make():
        h = torch.sigmoid(w)
        h += 1
        return h.sum()

    exp = Expect(("modified-in-place",), ("in place",), node="Sigmoid")
    return Situation(make, w, exp, exp)


@situation
def slice_assignment_after_sigmoid():
    X, W = torch.randn(4, 3), torch.randn(3, 5, requires_grad=True)

    def make():
        h = torch.sigmoid(X @ W)
        h[:, 0] = 0  # CopySlices: sigmoid saved h for its backward
        return h.sum()

    exp = Expect(("modified-in-place",), ("in place", "CopySlices", "version 1"), node="Sigmoid")
    return Situation(make, W, exp, exp, names={"W": W}, forbid=("zero_grad", "reset"))


@situation
def masked_fill_in_place():
    X, W = torch.randn(4, 3), torch.randn(3, 5, requires_grad=True)

    def make():
        h = torch.exp(X @ W)
        h.masked_fill_(h > 1.0, 0.0)
        return h.sum()

    exp = Expect(("modified-in-place",), ("in place", "MaskedFillBackward0"), node="Exp")
    return Situation(make, W, exp, exp, names={"W": W}, forbid=("zero_grad", "reset"))


@situation
def optimizer_step_between_forward_and_backward():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(5, 3)

    def make():
        out = net(x).pow(2).sum()
        for p in net.parameters():  # the update of a previous step, after this forward
            p.grad = torch.ones_like(p)
        opt.step()
        return out

    exp = Expect(("modified-in-place",), ("2.weight", "optimizer", "before optimizer.step()"))
    return Situation(make, net[0].weight, exp, exp, module=net, forbid=("zero_grad", "reset"))


@situation
def zero_grad_set_to_none_after_backward():
    net = nn.Linear(3, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(4, 3)

    def step(out):
        out.backward()
        opt.zero_grad(set_to_none=True)  # then: print(net.weight.grad) -> None

    exp = Expect(("not-run",), ("zero_grad(set_to_none=True)",))
    return Situation(lambda: net(x).sum(), net.weight, exp, exp, step=step, module=net)


@situation
def forgotten_zero_grad():
    q = torch.tensor([2.0, 1.0], requires_grad=True)
    for _ in range(2):
        (q * q).sum().backward()
    return Situation(lambda: (q * q).sum(), q,
                     Expect(("accumulated",), ("2 times", "zero_grad()")),
                     Expect(("unchecked",), ("could not be checked", "accumulation"), specific=False),
                     names={"q": q})


@situation
def dead_relu():
    layer = nn.Linear(4, 3)
    with torch.no_grad():
        layer.bias.fill_(-10.0)
    x = torch.rand(8, 4)
    return Situation(lambda: torch.relu(layer(x)).sum(), layer.weight,
                     Expect(("zero",), ("dead ReLU",), node="relu"),
                     Expect(("zero",), ("relu", "recompute"), specific=False), module=layer)


class _LoRA(nn.Module):
    """A frozen base layer plus B(A(x)), B initialised to zero as LoRA does."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.base = nn.Linear(4, 4).requires_grad_(False)
        self.A = nn.Linear(4, 2, bias=False)
        self.B = nn.Linear(2, 4, bias=False)
        nn.init.zeros_(self.B.weight)

    def forward(self, x):
        return self.base(x) + self.B(self.A(x))


@situation
def lora_b_zero_at_the_first_step():
    net, x = _LoRA(), torch.randn(8, 4)
    return Situation(lambda: net(x).pow(2).sum(), net.A.weight,
                     Expect(("zero",), ("B.weight, which is all zeros", "expected"), node="mm"),
                     Expect(("zero",), ("B.weight, which is all zeros", "expected")),
                     module=net, forbid=("vanishing", "dead", "recompute"))


@situation
def lora_a_and_b_both_zero():
    net, x = _LoRA(), torch.randn(8, 4)
    nn.init.zeros_(net.A.weight)
    exp = Expect(("zero",), ("A.weight, which is all zeros", "never moves"))
    return Situation(lambda: net(x).pow(2).sum(), net.B.weight, exp, exp, module=net,
                     forbid=("expected", "vanishing"))


class _Gated(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.inner = nn.Linear(4, 4)
        self.gate = nn.Parameter(torch.zeros(4))

    def forward(self, x):
        return x + self.gate * torch.tanh(self.inner(x))


@situation
def zero_gate_after_an_optimizer_step():
    net, x = _Gated(), torch.randn(8, 4)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def step(out):
        out.backward()
        opt.step()  # the gate moves; inner.weight got exactly zero

    return Situation(lambda: net(x).pow(2).sum(), net.inner.weight,
                     Expect(("zero",), ("gate, which is all zeros",), node="mul"),
                     Expect(("zero",), ("gate", "consistent with", "moved")),
                     step=step, module=net, forbid=("vanishing", "dead"))


@situation
def saturated_clamp():
    w = torch.tensor([5.0, 6.0], requires_grad=True)
    return Situation(lambda: (w * 2).clamp(max=1.0).sum(), w,
                     Expect(("zero",), ("saturated clamp",), node="clamp"),
                     Expect(("zero",), ("clamp",), specific=False), names={"w": w})


@situation
def sqrt_at_zero_distance():
    p, q = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0])
    return Situation(lambda: torch.sqrt(((p - q) ** 2).sum()), p,
                     Expect(("nonfinite",), ("sqrt",), node="sqrt"),
                     # after backward: sqrt's saved output is the output itself, still held
                     Expect(("nonfinite",), ("SqrtBackward0", "which the caller still holds"),
                            node="sqrt"), names={"p": p})


@situation
def log_of_zero():
    r = torch.tensor([0.0, 0.5], requires_grad=True)
    return Situation(lambda: torch.log(r).sum(), r,
                     Expect(("nonfinite",), ("log",), node="log"),
                     Expect(("nonfinite",), ("log",)))


@situation
def entropy_p_log_p():
    logits = torch.tensor([0.0, -200.0, 1.0], requires_grad=True)

    def make():
        p = torch.softmax(logits, 0) * torch.tensor([1.0, 0.0, 1.0])  # a masked class: p = 0
        return -(p * torch.log(p)).sum()

    return Situation(make, logits,
                     Expect(("nonfinite",), ("starts at log", "xlogy"), node="log"),
                     Expect(("nonfinite",), ("log",)), forbid=("starts at mul",))


@situation
def nan_made_inside_the_forward():
    torch.manual_seed(0)
    lin, head = nn.Linear(4, 4), nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])

    def make():  # a square root of values that can be negative, two layers before the loss
        return nn.functional.cross_entropy(head(torch.sqrt(lin(x))), y)

    return Situation(make, lin.weight,
                     Expect(("nonfinite",), ("starts at sqrt",), node="sqrt"),
                     Expect(("nonfinite",), ("sqrt",)), forbid=("starts at log_softmax", "starts at mm"))


@situation
def where_sqrt_trap():
    x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)
    return Situation(lambda: torch.where(x > 0, torch.sqrt(x), 0.0).sum(), x,
                     Expect(("nonfinite",), ("torch.where", "double where"), node="sqrt"),
                     Expect(("nonfinite",), ("where", "double where")))


@situation
def nan_in_the_data():
    w = torch.randn(3, requires_grad=True)
    x = torch.tensor([1.0, float("nan"), 2.0])
    return Situation(lambda: (w * x).sum(), w,
                     Expect(("nonfinite",), ("data",)),
                     Expect(("nonfinite",), ("recompute",), specific=False),
                     forbid=("sqrt at 0",))


class DropsGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return None  # forgot to return the gradient


@situation
def custom_function_returns_none():
    a = torch.randn(3, requires_grad=True)
    return Situation(lambda: DropsGradient.apply(a).sum(), a,
                     Expect(("zero",), ("custom Function", "DropsGradient")),
                     Expect(("not-run", "zero"), ("custom Function", "DropsGradient")))


@situation
def gradient_penalty_without_create_graph():
    D = nn.Linear(2, 1)
    x = torch.randn(4, 2, requires_grad=True)

    def make():
        (g,) = torch.autograd.grad(D(x).sum(), x)  # create_graph=True forgotten
        return ((g.norm(dim=1) - 1) ** 2).mean()

    exp = Expect(("output-no-grad",), ("create_graph=True",), specific=False)
    return Situation(make, D.weight, exp, exp, module=D)


@situation
def clip_grad_norm_after_backward():
    torch.manual_seed(0)
    net = nn.Linear(3, 2)
    x = torch.randn(8, 3) * 100

    def step(out):
        out.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 0.01)

    step(net(x).pow(2).sum())  # the previous training step
    net.zero_grad()
    step(net(x).pow(2).sum())
    return Situation(lambda: net(x).pow(2).sum(), net.weight,
                     Expect(("differs",), ("clip_grad_norm_", "scaled by")),
                     Expect(("unchecked",), ("could not be checked",), specific=False), step=step,
                     module=net, forbid=(".grad accumulates", "calls without zero_grad"))


@situation
def weight_decay_added_to_grad():
    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(4)

    def step(out):
        out.backward()
        with torch.no_grad():
            w.grad += 0.1 * w  # L2 by hand

    step((w * x).sum())
    return Situation(lambda: (w * x).sum(), w,
                     Expect(("differs",), ("weight decay", "0.1")),
                     Expect(("unchecked",), ("could not be checked",), specific=False), step=step,
                     names={"w": w}, forbid=(".grad accumulates", "holds 1 times"))


@situation
def sparse_embedding():
    emb = nn.Embedding(10, 3, sparse=True)
    idx = torch.tensor([1, 4, 4])
    return Situation(lambda: emb(idx).pow(2).sum(), emb.weight,
                     Expect(("not-run",), ()), Expect(("unchecked",), ("could not be checked",)),
                     module=emb)


@situation
def unrelated_tensor():
    w, x = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    return Situation(lambda: (w * 2).sum(), x, Expect(("not-reachable",), (), specific=False),
                     CUT_AFTER)


@situation
def complex_parameter():
    z = torch.randn(3, dtype=torch.complex64, requires_grad=True)
    return Situation(lambda: (z * z.conj()).real.sum(), z, Expect(("not-run",), ()),
                     Expect(("unchecked",), ("could not be checked",)))


FALSE_EVERYWHERE = ("graph was freed by an earlier backward(), so its cotangents cannot",)


def diagnose(name: str, when: str):
    s = SITUATIONS[name]()
    out = s.make()
    if when == "after":
        (s.step or backward)(out)
    return s, why_no_grad(out, s.tensor, names=s.names, module=s.module), (
        s.before if when == "before" else s.after)


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("name", sorted(SITUATIONS))
def test_corpus(name, when):
    s, d, exp = diagnose(name, when)
    assert d.case in exp.cases, d
    for word in exp.words:
        assert word in d.message, (word, d.message)
    for word in s.forbid + FALSE_EVERYWHERE:
        assert word not in d.message, (word, d.message)
    if exp.node is not None:
        assert d.node is not None and exp.node in d.node, d


def test_corpus_size():
    assert len(SITUATIONS) >= 30


def test_the_crash_from_the_report():
    x = torch.randn(3, requires_grad=True)
    y = (x ** 2).sum()
    y.backward()
    d = why_no_grad(y, x)
    assert d.case == "unchecked" and d.gradient is None  # .grad is not necessarily one pass


def test_nothing_is_changed():
    w = torch.tensor([0.0, 1.0], requires_grad=True)
    y = torch.sqrt(w).sum()
    why_no_grad(y, w)
    assert w.grad is None
    y.backward()
    before = w.grad.clone()
    why_no_grad(y, w)
    assert torch.equal(w.grad.nan_to_num(), before.nan_to_num())


def test_numpy_input_is_fine():
    w = torch.tensor(np.array([1.0, 2.0]), requires_grad=True)
    assert why_no_grad((w * w).sum(), w).case == "not-run"
