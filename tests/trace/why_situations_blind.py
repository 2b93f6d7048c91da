"""Blind corpus of real "why is my gradient None / zero / NaN?" situations.

Each entry of ``SITUATIONS`` rebuilds, in a few lines of plain torch, a situation that
someone asked about in a public forum thread or GitHub issue (address in ``source``).
The ground truth (``truth``) was established with torch alone (see the ``# checked:``
comment above each build); no gradarg code was used or read to write it.

``build(after)`` returns ``dict(output=..., tensor=..., names=..., module=...)``:
``after=False`` is the moment before the user's own ``backward()``; ``after=True`` is
the moment after it (and after whatever else the user did: an optimizer step, a
``zero_grad``, a second backward that raised...).  An exception the user's own
``backward()`` raised is caught inside ``build``: the state left behind is the state
people ask about.

``cases``: the labels (from the ``why_no_grad`` docstring) that would be a right answer.
``must``: list of groups; at least one regex of each group must match the message.
``never``: regexes that must not match (statements that are false in the situation).
All regexes are meant to be applied to the message with ``re.search``; they carry
their own ``(?i)`` flag.
"""

import contextlib
import dataclasses
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

SITUATIONS = []

# ---------------------------------------------------------------------------
# shared regexes (statements that are false in a situation go in ``never``)
# ---------------------------------------------------------------------------
NAN = r"(?i)\bnan\b|non-?finite|\binf\b|infinit"
NOT_IN_GRAPH = (
    r"(?i)not (in|part of|reachable|connected)|unreachable|does(n't| not) (depend|reach)"
    r"|no path|\bcut\b|disconnected|not on the path"
)
LEAF = r"(?i)not a leaf|non-?leaf|retain_grad"
RG_FALSE = r"(?i)requires_grad\s*(=|==|is)\s*False|does(n't| not) require grad"
DETACH = r"(?i)detach|\.data\b"
UNUSED = r"(?i)never (used|called)|\bunused\b|not used in (the )?forward|not called"
INPLACE = r"(?i)in-?place|version"
ACCUM = r"(?i)accumulat|\b\d+ (backward )?passes|\btwice\b|previous|earlier|zero_grad"
ACCUM_CLAIM = r"(?i)accumulated (over|across|from) (\d+|two|several|multiple)|\b[2-9] passes|two passes|\btwice\b"
LEAF_CLAIM_NOT_TRUE = r"(?i)not a leaf|non-?leaf"
NEW_LEAF = r"(?i)\bleaf\b|new tensor|no (grad_fn|history)|cut from|rebuilt|re-?wrapped"
NO_GRAPH = (
    r"(?i)no grad_fn|grad_fn (is )?None|does(n't| not) require grad|requires_grad\s*(=|==|is)\s*False"
    r"|no (autograd )?graph|without (a |any )?(autograd )?graph|not require"
)


def situation(name, source, moments, truth, cases, must, never):
    """Register a build function as a situation."""

    def deco(fn):
        SITUATIONS.append(
            dict(
                name=name,
                source=source,
                build=fn,
                moments=tuple(moments),
                truth=truth,
                cases=tuple(cases),
                must=[tuple(g) for g in must],
                never=tuple(never),
            )
        )
        return fn

    return deco


@contextlib.contextmanager
def _seed(k):
    """Deterministic module initialisation without touching the caller's RNG state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(k)
        yield


def _try_backward(t, **kw):
    """The user's own backward(); the error it raises (if any) is what they saw."""
    try:
        t.backward(**kw)
    except RuntimeError:
        pass


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


def _out(output, tensor, names=None, module=None):
    return dict(output=output, tensor=tensor, names=names or {}, module=module)


# ===========================================================================
# Non-leaf tensors, copies and views of leaves
# ===========================================================================


# checked: w = randn(3, requires_grad=True) * 0.01; loss.backward(); w.is_leaf False,
# w.grad None (UserWarning about non-leaf .grad); the leaf behind it got a gradient.
@situation(
    name="scaled_randn_is_not_leaf",
    source="https://discuss.pytorch.org/t/how-to-define-a-leaf-tensor-in-pytorch-0-4-1/28461",
    moments=(False, True),
    truth="w is the result of multiplying a requires_grad leaf by a constant, so it is a "
    "non-leaf whose .grad is never filled (the unnamed leaf before '* 0.01' gets it).",
    cases=("non-leaf",),
    must=[(LEAF,)],
    never=(NAN, RG_FALSE, UNUSED, DETACH),
)
def _b(after):
    with _seed(1):
        w = torch.randn(3, requires_grad=True) * 0.01
        x = torch.randn(5, 3)
    loss = ((x @ w) - 1.0).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, w, {"w": w, "x": x})


# checked: x = torch.tensor(np.array(...), requires_grad=True).to(torch.float64) (CPU
# analogue of .cuda()); after backward x.is_leaf False, x.grad None.
@situation(
    name="numpy_tensor_moved_after_requires_grad",
    source="https://github.com/pytorch/pytorch/issues/7335",
    moments=(False, True),
    truth="The name a holds the copy made by .to(...) after requires_grad=True; that copy is "
    "a non-leaf, so a.grad stays None (the original leaf, no longer named, gets it).",
    cases=("non-leaf",),
    must=[(LEAF,)],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    a = torch.tensor(np.array([1.0, 2.0, 3.0]), dtype=torch.float32, requires_grad=True).to(
        torch.float64
    )
    b = torch.ones(3, dtype=torch.float64)
    loss = a @ b
    if after:
        loss.backward()
    return _out(loss, a, {"a": a})


# checked: x = tensor(..., requires_grad=True); x = x.to("cpu") returns the same object on
# CPU; after backward x.is_leaf True and x.grad == 20 * x.
@situation(
    name="to_same_device_keeps_leaf",
    source="https://github.com/pytorch/pytorch/issues/22860",
    moments=(False, True),
    truth="On CPU x.to('cpu') returns x itself, so x stays the leaf and backward fills "
    "x.grad = 20 x; nothing is wrong.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, LEAF_CLAIM_NOT_TRUE, RG_FALSE, UNUSED),
)
def _b(after):
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], requires_grad=True)
    x = x.to(torch.device("cpu"))
    f = 10 * (x**2).sum()
    if after:
        f.backward()
    return _out(f, x, {"x": x})


# checked: a = tensor([1,2,3.]).to(float64); a.requires_grad = True -> leaf;
# after backward a.grad == 2a/3.
@situation(
    name="requires_grad_after_move_is_leaf",
    source="https://github.com/pytorch/pytorch/issues/13113",
    moments=(False, True),
    truth="requires_grad is set after the copy, so a is a leaf and a.grad = 2a/3 after "
    "backward; nothing is wrong.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, LEAF_CLAIM_NOT_TRUE, UNUSED),
)
def _b(after):
    a = torch.tensor([1.0, 2.0, 3.0]).to(torch.float64)
    a.requires_grad = True
    c = (a**2).mean(0)
    if after:
        c.backward()
    return _out(c, a, {"a": a})


# checked: loss = model(x)**2 with model an nn.Linear; after loss.backward() loss.grad is
# None, loss.is_leaf False, loss.retains_grad False.
@situation(
    name="loss_grad_is_none",
    source="https://discuss.pytorch.org/t/loss-grad-is-constant-1/130964",
    moments=(False, True),
    truth="loss is a non-leaf (the output of the model) and retain_grad() was not called, "
    "so backward does not store loss.grad; its gradient with respect to itself is 1.",
    cases=("non-leaf", "ok", "unchecked"),
    must=[(LEAF, r"(?i)output itself|is the output|with respect to itself|\b1\b")],
    never=(NAN, UNUSED, DETACH),
)
def _b(after):
    with _seed(2):
        model = nn.Linear(1, 1)
        x = torch.randn(1, 1)
    out = model(x)
    loss = (out**2).sum()
    if after:
        loss.backward()
    return _out(loss, loss, {"loss": loss}, model)


# checked: x = randn(1, 1) (no requires_grad); after backward x.grad None,
# x.requires_grad False, model.weight.grad filled.
@situation(
    name="input_without_requires_grad",
    source="https://discuss.pytorch.org/t/loss-grad-is-constant-1/130964",
    moments=(False, True),
    truth="x was created without requires_grad=True, so autograd never computes a gradient "
    "for it (the model's parameters do get theirs).",
    cases=("requires-grad-false",),
    must=[(r"(?i)requires_grad",)],
    never=(NAN, LEAF_CLAIM_NOT_TRUE, UNUSED),
)
def _b(after):
    with _seed(3):
        model = nn.Linear(1, 1)
        x = torch.randn(1, 1)
    loss = (model(x) ** 2).sum()
    if after:
        loss.backward()
    return _out(loss, x, {"x": x}, None)


# checked: out = (inp + 1).pow(2); out.retain_grad(); after backward out.grad == ones.
@situation(
    name="retain_grad_on_non_leaf_works",
    source="https://github.com/pytorch/tutorials/issues/3652",
    moments=(False, True),
    truth="out is a non-leaf but retain_grad() was called, so backward fills out.grad with "
    "ones; nothing is wrong (before backward it is simply not computed yet).",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED, DETACH),
)
def _b(after):
    inp = torch.eye(5, requires_grad=True)
    out = (inp + 1).pow(2)
    out.retain_grad()
    loss = out.sum()
    if after:
        loss.backward()
    return _out(loss, out, {"out": out, "inp": inp})


# checked: s = sigmoid(x); total = s.sum(); after backward s.grad None, x.grad filled.
@situation(
    name="sigmoid_output_not_retained",
    source="https://github.com/pytorch/pytorch/issues/3890",
    moments=(False, True),
    truth="s is the non-leaf output of sigmoid; without s.retain_grad() backward does not "
    "store its gradient (x.grad is filled).",
    cases=("non-leaf",),
    must=[(LEAF,)],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    x = torch.zeros(3, 3, requires_grad=True)
    s = torch.sigmoid(x)
    total = s.sum()
    if after:
        total.backward()
    return _out(total, s, {"s": s, "x": x})


# checked: means2d = means3d[:, :2] / means3d[:, 2:]; after backward means2d.grad None,
# means3d.grad filled.
@situation(
    name="projected_means_need_retain_grad",
    source="https://github.com/nerfstudio-project/gsplat/issues/390",
    moments=(False, True),
    truth="means2d is computed from the leaf means3d (a non-leaf), so its .grad is only "
    "filled if means2d.retain_grad() is called before backward.",
    cases=("non-leaf",),
    must=[(LEAF,)],
    never=(NAN, RG_FALSE, UNUSED, DETACH),
)
def _b(after):
    with _seed(4):
        means3d = (torch.rand(6, 3) + torch.tensor([0.0, 0.0, 1.0])).requires_grad_(True)
        target = torch.rand(6, 2)
    means2d = means3d[:, :2] / means3d[:, 2:]
    loss = (means2d - target).abs().sum()
    if after:
        loss.backward()
    return _out(loss, means2d, {"means2d": means2d, "means3d": means3d})


# checked: Ws = W[:2, :3]; after backward Ws.grad None, Ws.is_leaf False, W.grad nonzero
# only in the [:2, :3] block.
@situation(
    name="slice_of_weight_is_not_leaf",
    source="https://github.com/chunhuizhang/llm_aigc",
    moments=(False, True),
    truth="W[:2, :3] is a view of the leaf W, hence a non-leaf: its .grad stays None; the "
    "gradient lands in W.grad (zero outside the slice).",
    cases=("non-leaf",),
    must=[(LEAF, r"(?i)\bview\b|slice")],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    with _seed(5):
        W = torch.randn(4, 4, requires_grad=True)
        x = torch.randn(3, 2)
    Ws = W[:2, :3]
    y = (Ws @ x).sum()
    if after:
        y.backward()
    return _out(y, Ws, {"Ws": Ws, "W": W})


# ===========================================================================
# The path is cut: detach / .data / torch.tensor / numpy / integer casts / argmax
# ===========================================================================


# checked: fake = G(z).detach(); d_loss.backward(); every G parameter .grad None;
# torch.autograd.grad(d_loss, G.parameters(), allow_unused=True) -> all None.
@situation(
    name="gan_discriminator_step_detaches_generator",
    source="https://jishuzhan.net/article/1706211350813872129",
    moments=(False, True),
    truth="In the discriminator step the generator output is .detach()-ed, so d_loss does "
    "not depend on the generator's weights and their .grad stays None (by design).",
    cases=("not-reachable",),
    must=[(DETACH, NOT_IN_GRAPH)],
    never=(NAN, RG_FALSE, LEAF_CLAIM_NOT_TRUE, r"(?i)never (used|called)"),
)
def _b(after):
    with _seed(6):
        G = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))
        D = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
        real = torch.randn(8, 1)
        noise = torch.randn(8, 10)
    fake = G(noise).detach()
    bce = nn.BCELoss()
    d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(fake), torch.zeros(8, 1))
    if after:
        d_loss.backward()
    return _out(d_loss, G[0].weight, {"G.0.weight": G[0].weight, "fake": fake})


# checked: D's fake prediction detached in a relativistic loss; after backward
# D[0].weight.grad is finite and nonzero (equal to the real-branch gradient).
@situation(
    name="relativistic_d_loss_detached_fake_term",
    source="https://github.com/open-mmlab/mmagic/issues/53",
    moments=(False, True),
    truth="Only the fake-image term is detached; the real-image term still depends on D's "
    "weights, so D gets a finite nonzero gradient (from the real branch only).",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    with _seed(7):
        D = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        real = torch.randn(6, 4)
        fake = torch.randn(6, 4)
    pred_real = D(real)
    pred_fake = D(fake).detach()
    loss = F.binary_cross_entropy_with_logits(pred_real - pred_fake.mean(), torch.ones(6, 1))
    if after:
        loss.backward()
    return _out(loss, D[0].weight, {"D.0.weight": D[0].weight})


# checked: g_loss = BCE(D(G(z)), 1); after backward D[0].weight.grad finite, nonzero.
@situation(
    name="generator_step_also_fills_discriminator_grads",
    source="https://github.com/eriklindernoren/PyTorch-GAN/issues/179",
    moments=(False, True),
    truth="The generator loss goes through D and D's weights require grad, so backward "
    "fills D's .grad too (the optimizer for G just does not use it).",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED, DETACH),
)
def _b(after):
    with _seed(8):
        G = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
        D = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
        z = torch.randn(4, 5)
    g_loss = F.binary_cross_entropy(D(G(z)), torch.ones(4, 1))
    if after:
        g_loss.backward()
    return _out(g_loss, D[0].weight, {"D.0.weight": D[0].weight})


# checked: D loss on G(z) without detach; after backward G[0].weight.grad finite nonzero.
@situation(
    name="discriminator_step_without_detach_fills_generator_grads",
    source="https://github.com/pytorch/examples/issues/116",
    moments=(False, True),
    truth="Without .detach() the discriminator loss depends on G's weights, so backward "
    "computes (and stores) gradients for G as well.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    with _seed(9):
        G = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
        D = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
        z = torch.randn(4, 5)
    d_loss = F.binary_cross_entropy(D(G(z)), torch.zeros(4, 1))
    if after:
        d_loss.backward()
    return _out(d_loss, G[0].weight, {"G.0.weight": G[0].weight})


# checked: model output -> out.data.clone().requires_grad_() -> generator -> loss;
# after backward model.weight.grad None, chunk.grad filled.
@situation(
    name="chunk_rebuilt_from_data",
    source="https://discuss.pytorch.org/t/grad-is-none-autograd-through-list-of-variables-multigpu-transformer/26372",
    moments=(False, True),
    truth="The chunk fed to the generator is rebuilt from out.data as a new leaf, so the "
    "loss does not reach the layers that produced out; their .grad stays None.",
    cases=("not-reachable",),
    must=[(DETACH, NOT_IN_GRAPH, NEW_LEAF)],
    never=(NAN, RG_FALSE, r"(?i)never (used|called)"),
)
def _b(after):
    with _seed(10):
        encoder = nn.Linear(6, 4)
        generator = nn.Linear(4, 3)
        x = torch.randn(2, 6)
    out = encoder(x)
    chunk = out.data.clone().requires_grad_(True)
    loss = generator(chunk).logsumexp(-1).sum()
    if after:
        loss.backward()
    return _out(loss, encoder.weight, {"encoder.weight": encoder.weight, "chunk": chunk})


# checked: torch.tensor([cos a, cos b]) has requires_grad False and no grad_fn;
# y2.sum().backward() raises "element 0 of tensors does not require grad"; a.grad None.
@situation(
    name="torch_tensor_of_tensors",
    source="https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261",
    moments=(False, True),
    truth="torch.tensor([cosa, cosb]) copies the values into a new tensor without history, "
    "so y2 (and its sum) has no graph back to a; torch.stack would keep it.",
    cases=("output-no-grad",),
    must=[(NO_GRAPH, r"(?i)torch\.tensor|copies|new tensor")],
    never=(NAN, UNUSED, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    q = _quiet()
    try:
        a = torch.tensor(0.0, requires_grad=True)
        b = torch.tensor(0.0, requires_grad=True)
        y2 = torch.tensor([torch.cos(a), torch.cos(b)])
    finally:
        q.__exit__(None, None, None)
    out = y2.sum()
    if after:
        _try_backward(out)
    return _out(out, a, {"a": a, "y2": y2})


# checked: torch.Tensor([p]) has requires_grad False; (t * 3).sum().backward() raises;
# p.grad None.
@situation(
    name="Tensor_constructor_on_parameter_list",
    source="https://github.com/pytorch/pytorch/issues/61410",
    moments=(False, True),
    truth="torch.Tensor([p]) builds a new tensor from the parameter's value with no "
    "history, so the result (and the loss) does not depend on p.",
    cases=("output-no-grad",),
    must=[(NO_GRAPH,)],
    never=(NAN, UNUSED),
)
def _b(after):
    p = nn.Parameter(torch.tensor([1.0]))
    t = torch.Tensor([p])
    loss = (t * 3).sum()
    if after:
        _try_backward(loss)
    return _out(loss, p, {"p": p})


# checked: total = main + torch.tensor(balance_list).sum(); after backward gate.weight.grad
# None, expert.weight.grad filled.
@situation(
    name="balance_losses_through_torch_tensor",
    source="https://github.com/laekov/fastmoe/issues/49",
    moments=(False, True),
    truth="The balance losses are packed with torch.tensor(loss_list), which keeps only "
    "their values; the gate that produced them is no longer in the graph of the total loss.",
    cases=("not-reachable",),
    must=[(NOT_IN_GRAPH, r"(?i)torch\.tensor")],
    never=(NAN, RG_FALSE, r"(?i)never (used|called)"),
)
def _b(after):
    with _seed(11):
        gate = nn.Linear(4, 2)
        expert = nn.Linear(4, 1)
        x = torch.randn(5, 4)
    balance = [gate(x).softmax(-1).pow(2).mean() for _ in range(2)]
    q = _quiet()
    try:
        bal = torch.tensor(balance).sum()
    finally:
        q.__exit__(None, None, None)
    total = expert(x).pow(2).mean() + 0.01 * bal
    if after:
        total.backward()
    return _out(total, gate.weight, {"gate.weight": gate.weight, "expert.weight": expert.weight})


# checked: ab = torch.as_tensor((a, b)); ab.requires_grad = True; ab.sum().backward()
# works; a.grad None, ab.grad == ones.
@situation(
    name="as_tensor_then_requires_grad",
    source="https://github.com/lululxvi/deepxde/pull/1318",
    moments=(False, True),
    truth="as_tensor((a, b)) copies the values into a tensor without history; setting "
    "requires_grad on it makes a new leaf, so backward stops there and a never gets a grad.",
    cases=("not-reachable",),
    must=[(NOT_IN_GRAPH, NEW_LEAF, r"(?i)as_tensor")],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([2.0], requires_grad=True)
    q = _quiet()
    try:
        ab = torch.as_tensor((a, b))
    finally:
        q.__exit__(None, None, None)
    ab.requires_grad = True
    out = ab.sum()
    if after:
        out.backward()
    return _out(out, a, {"a": a, "ab": ab})


class _CompressList(torch.autograd.Function):
    """A Function whose only argument is a Python list: autograd sees no tensor input."""

    @staticmethod
    def forward(ctx, col_list):
        out = torch.ones((len(col_list), 1))
        for i in range(len(col_list)):
            out[i] = col_list[i]
        return out

    @staticmethod
    def backward(ctx, grad):
        return None


# checked: out = _CompressList.apply([1, t]); out.requires_grad False, grad_fn None;
# out.sum().backward() raises; t.grad None.
@situation(
    name="function_with_tensor_inside_list",
    source="https://github.com/pytorch/pytorch/issues/103155",
    moments=(False, True),
    truth="autograd.Function only tracks tensors passed directly as arguments; the tensor "
    "inside the list is invisible to it, and forward runs without grad mode, so the output "
    "has no graph back to t.",
    cases=("output-no-grad",),
    must=[(NO_GRAPH, r"(?i)\blist\b|Function")],
    never=(NAN, UNUSED),
)
def _b(after):
    t = torch.tensor(2.0, requires_grad=True)
    out = _CompressList.apply([1, t])
    loss = out.sum()
    if after:
        _try_backward(loss)
    return _out(loss, t, {"t": t})


# checked: Variable(loss0, requires_grad=True) returns a new leaf (grad_fn None) in torch
# 2.13; after loss.backward() model.weight.grad None, loss.grad == 1.
@situation(
    name="loss_rewrapped_as_variable",
    source="https://github.com/speechbrain/speechbrain/issues/735",
    moments=(False, True),
    truth="Re-wrapping the loss with Variable(loss, requires_grad=True) creates a new leaf "
    "with the same value and no history, so backward stops at it and the model gets nothing.",
    cases=("new-leaf",),
    must=[(NEW_LEAF,)],
    never=(NAN, UNUSED, r"(?i)never (used|called)"),
)
def _b(after):
    with _seed(12):
        model = nn.Linear(3, 1)
        feats = torch.randn(4, 3)
        y = torch.randn(4, 1)
    loss0 = F.mse_loss(model(feats), y)
    q = _quiet()
    try:
        loss = torch.autograd.Variable(loss0, requires_grad=True)
    finally:
        q.__exit__(None, None, None)
    if after:
        loss.backward()
    return _out(loss, model.weight, {"model.weight": model.weight, "loss": loss}, model)


# checked: z = torch.tensor(y.item(), requires_grad=True) with y = sin(x); after
# z.backward(): x.grad None, z.grad == 1.
@situation(
    name="loss_rebuilt_from_item",
    source="https://deepinout.com/pytorch/pytorch-questions/75_pytorch_runtime_error_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html",
    moments=(False, True),
    truth="y.item() turns the value into a Python float; the tensor rebuilt from it is a new "
    "leaf with no link to x, so x.grad stays None.",
    cases=("new-leaf",),
    must=[(NEW_LEAF, r"(?i)item")],
    never=(NAN, UNUSED),
)
def _b(after):
    x = torch.tensor([1.0], requires_grad=True)
    y = torch.sin(x)
    z = torch.tensor(y.item(), requires_grad=True)
    if after:
        z.backward()
    return _out(z, x, {"x": x, "z": z})


# checked: forward under torch.no_grad(), then loss.requires_grad = True; after backward
# loss.is_leaf True, every model parameter .grad None.
@situation(
    name="requires_grad_set_on_loss_after_no_grad_forward",
    source="https://github.com/ronghuaiyang/arcface-pytorch/issues/56",
    moments=(False, True),
    truth="The forward ran under torch.no_grad(), so the loss had no graph; setting "
    "loss.requires_grad = True only makes it a new leaf, and the model never gets a gradient.",
    cases=("new-leaf",),
    must=[(NEW_LEAF, r"(?i)no_grad|grad mode")],
    never=(NAN, UNUSED, r"(?i)never (used|called)"),
)
def _b(after):
    with _seed(13):
        model = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 3))
        x = torch.randn(5, 8)
        label = torch.tensor([0, 1, 2, 1, 0])
    with torch.no_grad():
        output = model(x)
        loss = F.cross_entropy(output, label)
    loss.requires_grad = True
    if after:
        loss.backward()
    return _out(loss, model[0].weight, {"model.0.weight": model[0].weight}, model)


# checked: out computed under no_grad, then out.requires_grad = True;
# autograd.grad(out, x0, allow_unused=True) -> (None,).
@situation(
    name="autograd_grad_on_flagged_no_grad_result",
    source="https://github.com/pytorch/pytorch/issues/45405",
    moments=(False, True),
    truth="out was computed with grad mode off (as inside a custom backward) and only "
    "flagged requires_grad afterwards: it is a new leaf, unconnected to x0, so "
    "autograd.grad returns None.",
    cases=("new-leaf",),
    must=[(NEW_LEAF, r"(?i)no_grad|grad mode")],
    never=(NAN, UNUSED),
)
def _b(after):
    with _seed(14):
        x0 = torch.rand(2, 3, requires_grad=True)
        w = torch.rand(2, 3, requires_grad=True)
    with torch.no_grad():
        out = torch.sum(x0 * w)
    out.requires_grad = True
    if after:
        torch.autograd.grad(out, x0, allow_unused=True)
    return _out(out, x0, {"x0": x0, "out": out})


class _NetPlainWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.rand(2, 3)  # a plain tensor, not an nn.Parameter

    def forward(self, x):
        return torch.sum(x * self.w)


# checked: self.w = torch.rand(2, 3) (plain tensor); after backward net.w.grad None,
# net.w.requires_grad False, list(net.parameters()) == [].
@situation(
    name="module_weight_is_plain_tensor",
    source="https://github.com/pytorch/pytorch/issues/45405",
    moments=(False, True),
    truth="self.w is a plain tensor, not an nn.Parameter, so it has requires_grad=False "
    "and no gradient is ever computed for it.",
    cases=("requires-grad-false",),
    must=[(r"(?i)requires_grad|Parameter",)],
    never=(NAN, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(15):
        net = _NetPlainWeight()
        data = torch.rand(2, 3, requires_grad=True)
    loss = net(data) - 5
    if after:
        loss.backward()
    return _out(loss, net.w, {"net.w": net.w}, net)


# checked: labels built as torch.max(1 * (w == w.max(2)), 2)[1]: dtype int64,
# requires_grad False; cross-entropy backward works and fills the logits' grad.
@situation(
    name="labels_from_argmax_are_integer",
    source="https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1",
    moments=(False, True),
    truth="wp holds class indices (int64) computed by comparisons and max indices; integer "
    "tensors cannot carry gradients, so wp.grad is always None (the loss still reaches the "
    "logits through w).",
    cases=("integer-dtype",),
    must=[(r"(?i)int|integer|long|dtype",)],
    never=(NAN, UNUSED),
)
def _b(after):
    with _seed(16):
        logits = torch.rand(2, 4, 3, requires_grad=True)
    w = torch.softmax(logits, dim=2)
    wa = 1 * (w == torch.max(w, dim=2)[0].unsqueeze(-1))
    wp = torch.max(wa, dim=2)[1]
    loss = nn.CrossEntropyLoss()(w.transpose(1, 2), wp)
    if after:
        loss.backward()
    return _out(loss, wp, {"wp": wp, "w": w})


# checked: z, _ = torch.max(x, 1); z.backward(); x.grad == one-hot at the argmax.
@situation(
    name="max_value_passes_gradient",
    source="https://discuss.pytorch.org/t/confused-about-torch-max-and-gradient/14283",
    moments=(False, True),
    truth="max is differentiable almost everywhere: its gradient is 1 at the selected "
    "element and 0 elsewhere, so x.grad is a one-hot vector; nothing is wrong.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH),
)
def _b(after):
    x = torch.tensor([[0.3, -1.2, 0.1]], requires_grad=True)
    z, _ = torch.max(x, 1)
    z = z.sum()
    if after:
        z.backward()
    return _out(z, x, {"x": x})


# checked: val, idx = h.max(1, keepdim=True); idx.dtype int64, requires_grad False.
@situation(
    name="max_indices_have_no_grad",
    source="https://discuss.pytorch.org/t/confused-about-torch-max-and-gradient/14283",
    moments=(False, True),
    truth="The indices returned by max are int64; integer tensors cannot require or "
    "receive gradients.",
    cases=("integer-dtype",),
    must=[(r"(?i)int|integer|long|dtype",)],
    never=(NAN, UNUSED),
)
def _b(after):
    with _seed(17):
        h = torch.randn(1, 2, 5, requires_grad=True)
    val, idx = h.max(1, keepdim=True)
    loss = val.sum()
    if after:
        loss.backward()
    return _out(loss, idx, {"idx": idx, "h": h})


# checked: assign = argmin(cdist(X, C)); loss = ((X - C[assign])**2).sum(); after backward
# C.grad finite and nonzero.
@situation(
    name="centroids_indexed_by_argmin_get_grad",
    source="https://newbedev.com/how-does-pytorch-backprop-through-argmax",
    moments=(False, True),
    truth="The argmin only selects which centroid each point uses; the loss still depends "
    "smoothly on the selected centroids, so C gets a finite nonzero gradient.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH),
)
def _b(after):
    with _seed(18):
        X = torch.randn(10, 2)
        C = torch.randn(3, 2, requires_grad=True)
    assign = torch.cdist(X, C).argmin(1)
    loss = ((X - C[assign]) ** 2).sum()
    if after:
        loss.backward()
    return _out(loss, C, {"C": C})


# checked: idx = argmax(first(x), 1); second(idx.float()); after backward first.weight.grad
# None, second.weight.grad filled.
@situation(
    name="argmax_between_two_modules",
    source="https://github.com/pytorch/pytorch/issues/1339",
    moments=(False, True),
    truth="argmax returns integer indices with no gradient, so the second module's loss "
    "has no path back to the first module's weights.",
    cases=("not-reachable",),
    must=[(r"(?i)argmax|integer|\bint", NOT_IN_GRAPH)],
    never=(NAN, RG_FALSE, r"(?i)never (used|called)"),
)
def _b(after):
    with _seed(19):
        first = nn.Linear(4, 3)
        second = nn.Linear(1, 1)
        x = torch.randn(6, 4)
    y_p = torch.max(first(x), 1)[1]
    out = second(y_p.float().unsqueeze(1))
    loss = out.pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, first.weight, {"first.weight": first.weight})


# checked: t.to(torch.long) has requires_grad False (dtype int64).
@situation(
    name="to_long_drops_requires_grad",
    source="https://github.com/pytorch/pytorch/pull/150913",
    moments=(False, True),
    truth="Converting to an integer dtype returns a tensor that cannot require gradients, "
    "so the int64 copy never gets a .grad.",
    cases=("integer-dtype",),
    must=[(r"(?i)int|integer|long|dtype",)],
    never=(NAN, UNUSED),
)
def _b(after):
    t = torch.tensor([1.7, 2.2, 3.9], requires_grad=True)
    tl = t.to(torch.long)
    loss = (t * tl).sum()
    if after:
        loss.backward()
    return _out(loss, tl, {"tl": tl, "t": t})


# checked: res = argmax(t) + 2; res.requires_grad False; res.sum().backward() raises;
# t.grad None.
@situation(
    name="argmax_result_used_as_loss",
    source="https://github.com/pytorch/pytorch/issues/37680",
    moments=(False, True),
    truth="argmax returns an int64 index without a graph; everything built from it has no "
    "history, so backward cannot reach t.",
    cases=("output-no-grad", "integer-dtype"),
    must=[(r"(?i)argmax|int|integer|long", NO_GRAPH)],
    never=(NAN, UNUSED),
)
def _b(after):
    with _seed(20):
        t = torch.rand(10, requires_grad=True)
    res = torch.argmax(t) + 2
    out = res.sum()
    if after:
        _try_backward(out)
    return _out(out, t, {"t": t})


# checked: q = lin1(x).long().float(); after backward lin1.weight.grad None,
# lin2.weight.grad filled.
@situation(
    name="integer_cast_in_the_middle",
    source="https://imaddabbura.github.io/posts/dl/why-autograd-needs-floats.html",
    moments=(False, True),
    truth="The .long() cast produces an integer tensor without history; the float copy "
    "made from it starts a new branch, so nothing reaches lin1.",
    cases=("not-reachable",),
    must=[(r"(?i)long|int|integer|dtype", NOT_IN_GRAPH)],
    never=(NAN, RG_FALSE, r"(?i)never (used|called)"),
)
def _b(after):
    with _seed(21):
        lin1 = nn.Linear(3, 2)
        lin2 = nn.Linear(2, 1)
        x = torch.randn(4, 3) * 5
    q = lin1(x).long().float()
    loss = lin2(q).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, lin1.weight, {"lin1.weight": lin1.weight})


# checked: mask = (|t-x| < |t-y|).float(); z = (x*mask + y*(1-mask)*10).sum();
# x.grad == mask (finite, partly zero), y.grad == 10*(1-mask).
@situation(
    name="float_mask_from_comparison",
    source="https://discuss.pytorch.org/t/is-the-type-conversion-differentiable/45436",
    moments=(False, True),
    truth="The mask itself carries no gradient, but x enters the loss through x * mask, so "
    "x.grad equals the mask; nothing is broken.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    target = torch.tensor([0.2, 0.9])
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = torch.tensor([1.0, 0.0], requires_grad=True)
    mask = (torch.abs(target - x) < torch.abs(target - y)).float()
    z = (x * mask + y * (1 - mask) * 10).sum()
    if after:
        z.backward()
    return _out(z, x, {"x": x, "y": y})


# checked: h.detach().numpy() -> numpy math -> torch.from_numpy(...).sum(); loss has no
# grad_fn; backward raises; lin.weight.grad None.
@situation(
    name="loss_computed_in_numpy",
    source="https://stackoverflow.com/questions/63582590/why-do-we-call-detach-before-calling-numpy-on-a-pytorch-tensor",
    moments=(False, True),
    truth="The loss was computed on a NumPy copy (via .detach().numpy()) and converted back, "
    "so it has no autograd history at all.",
    cases=("output-no-grad",),
    must=[(NO_GRAPH, r"(?i)numpy")],
    never=(NAN, UNUSED),
)
def _b(after):
    with _seed(22):
        lin = nn.Linear(3, 2)
        x = torch.randn(4, 3)
    h = lin(x)
    arr = h.detach().numpy()
    loss = torch.from_numpy(arr**2).sum()
    if after:
        _try_backward(loss)
    return _out(loss, lin.weight, {"lin.weight": lin.weight}, lin)


# checked: lin1 -> .detach().numpy() -> from_numpy -> lin2; after backward lin1.weight.grad
# None, lin2.weight.grad filled.
@situation(
    name="numpy_helper_inside_model",
    source="https://github.com/delira-dev/delira/issues/40",
    moments=(False, True),
    truth="The round trip through NumPy in the middle of the model cuts the graph: the "
    "loss reaches lin2 but not lin1.",
    cases=("not-reachable",),
    must=[(NOT_IN_GRAPH, DETACH, r"(?i)numpy")],
    never=(NAN, RG_FALSE, r"(?i)never (used|called)"),
)
def _b(after):
    with _seed(23):
        lin1 = nn.Linear(3, 4)
        lin2 = nn.Linear(4, 1)
        x = torch.randn(5, 3)
    h = torch.from_numpy(lin1(x).detach().numpy())
    loss = lin2(torch.relu(h)).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, lin1.weight, {"lin1.weight": lin1.weight})


# checked: trained = w.detach().clone().requires_grad_(); loss from trained; after backward
# w.grad None, trained.grad filled.
@situation(
    name="training_updates_a_clone",
    source="https://github.com/pytorch/executorch/pull/6039",
    moments=(False, True),
    truth="The loss is computed from a detached clone of the weight, so the original weight "
    "is not in the graph; the clone receives the gradient instead.",
    cases=("not-reachable",),
    must=[(NOT_IN_GRAPH, r"(?i)clone|copy")],
    never=(NAN, RG_FALSE, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(24):
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(6, 3)
    trained = w.detach().clone().requires_grad_(True)
    loss = (x @ trained).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, w, {"w": w, "trained": trained})


# ===========================================================================
# Grad mode: no_grad, inference_mode, checkpoint
# ===========================================================================


# checked: loss computed under torch.inference_mode(); loss.requires_grad False,
# loss.is_inference() True; backward raises; model.weight.grad None.
@situation(
    name="backward_inside_inference_mode",
    source="https://github.com/Lightning-AI/pytorch-lightning/issues/19910",
    moments=(False, True),
    truth="The test step runs under inference mode, so the loss is an inference tensor with "
    "no graph and backward cannot reach the model.",
    cases=("output-no-grad", "inference-mode"),
    must=[(r"(?i)inference",)],
    never=(NAN, UNUSED, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(25):
        model = nn.Linear(4, 1)
        x = torch.randn(3, 4)
        y = torch.randn(3, 1)
    with torch.inference_mode():
        loss = F.mse_loss(model(x), y)
    if after:
        _try_backward(loss)
    return _out(loss, model.weight, {"model.weight": model.weight}, model)


# checked: img requires grad, forward under torch.no_grad(); out.requires_grad False;
# backward raises; img.grad None.
@situation(
    name="server_runs_model_under_no_grad",
    source="https://github.com/triton-inference-server/pytorch_backend/pull/146",
    moments=(False, True),
    truth="The model is called under torch.no_grad(), so nothing is recorded and the "
    "output has no graph back to the input image.",
    cases=("output-no-grad",),
    must=[(r"(?i)no_grad|grad mode|grad(ient)? (recording |tracking )?(was |is )?disabled",)],
    never=(NAN, UNUSED, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(26):
        model = nn.Sequential(nn.Linear(6, 4), nn.Tanh(), nn.Linear(4, 1))
        img = torch.randn(2, 6, requires_grad=True)
    with torch.no_grad():
        out = model(img)
    loss = out.sum()
    if after:
        _try_backward(loss)
    return _out(loss, img, {"img": img}, None)


# checked: every parameter requires_grad False, plain input; out.grad_fn None; backward
# raises; weight.grad None.
@situation(
    name="all_parameters_frozen",
    source="https://duoke360.com/post/35061",
    moments=(False, True),
    truth="Every parameter was frozen (requires_grad=False) and the input does not require "
    "grad, so the output has no graph at all.",
    cases=("output-no-grad", "requires-grad-false"),
    must=[(r"(?i)requires_grad|frozen", NO_GRAPH)],
    never=(NAN, UNUSED, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(27):
        model = nn.Linear(1, 1)
    for p in model.parameters():
        p.requires_grad = False
    out = model(torch.tensor([1.0])).sum()
    if after:
        _try_backward(out)
    return _out(out, model.weight, {"weight": model.weight}, model)


# checked: checkpoint(fn, x, use_reentrant=True) with x not requiring grad: output
# requires_grad False (warning "None of the inputs have requires_grad=True"); backward
# raises; m.weight.grad None. (use_reentrant=False gives requires_grad True.)
@situation(
    name="reentrant_checkpoint_without_grad_inputs",
    source="https://github.com/pytorch/pytorch/issues/7617",
    moments=(False, True),
    truth="Reentrant checkpoint runs the function without grad and only reconnects through "
    "its tensor inputs; none requires grad, so the output has no graph and the Linear's "
    "parameters never get a gradient.",
    cases=("output-no-grad",),
    must=[(r"(?i)checkpoint|reentrant", NO_GRAPH)],
    never=(NAN, r"(?i)never (used|called)", LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(28):
        m = nn.Linear(4, 3)
        x = torch.randn(10, 4)
    q = _quiet()
    try:
        z = checkpoint(lambda inp: m(inp), x, use_reentrant=True)
    finally:
        q.__exit__(None, None, None)
    loss = z.pow(2).mean()
    if after:
        _try_backward(loss)
    return _out(loss, m.weight, {"m.weight": m.weight}, m)


@dataclasses.dataclass
class _Pair:
    s: torch.Tensor
    y: torch.Tensor


# checked: checkpoint(fn returning a dataclass, a, use_reentrant=True): r.s.requires_grad
# False (tuple output keeps True); backward raises; a.grad None.
@situation(
    name="reentrant_checkpoint_returns_dataclass",
    source="https://github.com/pytorch/pytorch/issues/124725",
    moments=(False, True),
    truth="The reentrant checkpoint only attaches tensors it returns directly (or in a "
    "tuple); tensors inside a dataclass come out of the no-grad forward without history.",
    cases=("output-no-grad",),
    must=[(r"(?i)checkpoint|dataclass", NO_GRAPH)],
    never=(NAN, UNUSED),
)
def _b(after):
    with _seed(29):
        a = torch.randn(40, requires_grad=True)
    q = _quiet()
    try:
        r = checkpoint(lambda t: _Pair(s=t.mean(), y=torch.ones_like(t)), a, use_reentrant=True)
    finally:
        q.__exit__(None, None, None)
    loss = r.s * 2
    if after:
        _try_backward(loss)
    return _out(loss, a, {"a": a})


# ===========================================================================
# requires_grad, frozen layers, modules never used, optimizers
# ===========================================================================


# checked: frozen model[0] (requires_grad False) in the middle; after backward
# model[0]... layer1.weight.grad finite nonzero, layer2.weight.grad None.
@situation(
    name="freezing_middle_layer_keeps_flow_to_first",
    source="https://discuss.pytorch.org/t/will-freezing-an-intermediate-block-influence-the-gradient-flow/88859/4",
    moments=(False, True),
    truth="Freezing layer2 only stops its own weight from getting a gradient; the gradient "
    "still flows through it, so layer1.weight.grad is finite and nonzero.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, UNUSED, r"(?i)\blayer1\b.{0,40}requires_grad\s*(=|is)\s*False"),
)
def _b(after):
    layer1 = nn.Linear(1, 1, bias=False)
    layer2 = nn.Linear(1, 1, bias=False)
    layer3 = nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        layer1.weight.fill_(1.0)
        layer2.weight.fill_(2.0)
        layer3.weight.fill_(3.0)
    layer2.weight.requires_grad = False
    out = layer3(layer2(layer1(torch.ones(1, 1)))).sum()
    if after:
        out.backward()
    model = nn.Sequential(layer1, layer2, layer3)
    return _out(out, layer1.weight, {"layer1.weight": layer1.weight}, model)


# checked: same three layers; layer2.weight.grad None after backward, requires_grad False.
@situation(
    name="frozen_layer_has_no_grad",
    source="https://discuss.pytorch.org/t/freezing-the-updates-without-freezing-the-gradients/7358",
    moments=(False, True),
    truth="layer2.weight has requires_grad=False, so backward does not store a gradient "
    "for it (the gradient still passes through it to layer1).",
    cases=("requires-grad-false",),
    must=[(r"(?i)requires_grad|frozen",)],
    never=(NAN, LEAF_CLAIM_NOT_TRUE, UNUSED),
)
def _b(after):
    with _seed(30):
        layer1 = nn.Linear(3, 3)
        layer2 = nn.Linear(3, 3)
        layer3 = nn.Linear(3, 1)
        x = torch.randn(4, 3)
    for p in layer2.parameters():
        p.requires_grad = False
    model = nn.Sequential(layer1, nn.ReLU(), layer2, nn.ReLU(), layer3)
    out = model(x).pow(2).mean()
    if after:
        out.backward()
    return _out(out, layer2.weight, {"layer2.weight": layer2.weight}, model)


# checked: backbone and heads frozen, the new neck layer trainable; after backward
# neck_new.weight.grad finite nonzero.
@situation(
    name="frozen_heads_still_pass_gradient_to_neck",
    source="https://github.com/open-mmlab/mmdetection/issues/4040",
    moments=(False, True),
    truth="Freezing the heads does not block the gradient: it flows through their frozen "
    "weights to the trainable neck layer, whose .grad is finite and nonzero.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, UNUSED),
)
def _b(after):
    with _seed(31):
        backbone = nn.Linear(6, 5)
        neck_new = nn.Linear(5, 5)
        head = nn.Linear(5, 2)
        x = torch.randn(3, 6)
    for p in list(backbone.parameters()) + list(head.parameters()):
        p.requires_grad = False
    loss = head(torch.relu(neck_new(backbone(x)))).pow(2).sum()
    if after:
        loss.backward()
    model = nn.Sequential(backbone, neck_new, head)
    return _out(loss, neck_new.weight, {"neck_new.weight": neck_new.weight}, model)


# checked: step 1 fills fc1.weight.grad; fc1 then frozen (requires_grad False);
# zero_grad(set_to_none=False) leaves a zero tensor; the step-2 backward does not touch it
# (fc1.weight.grad stays all zeros) and SGD(momentum) still moves fc1.weight.
@situation(
    name="frozen_after_first_step_keeps_stale_grad",
    source="https://discuss.pytorch.org/t/why-there-is-still-a-small-change-in-frozen-layer-parameters/153740",
    moments=(False, True),
    truth="fc1 was frozen (requires_grad=False) after the first step; backward no longer "
    "computes its gradient, so .grad is the stale zero tensor left by "
    "zero_grad(set_to_none=False), and momentum keeps moving the weight.",
    cases=("requires-grad-false",),
    must=[(r"(?i)requires_grad|frozen",)],
    never=(NAN, LEAF_CLAIM_NOT_TRUE, UNUSED),
)
def _b(after):
    with _seed(32):
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
        x = torch.randn(8, 4)
        y = torch.randn(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
    opt.step()
    for p in model[0].parameters():
        p.requires_grad = False
    opt.zero_grad(set_to_none=False)  # keeps zero tensors in .grad (the old default)
    loss = F.mse_loss(model(x), y)
    if after:
        loss.backward()
        opt.step()
    return _out(loss, model[0].weight, {"fc1.weight": model[0].weight}, model)


# checked: params frozen via requires_grad=False; after backward rnn weight .grad None.
@situation(
    name="frozen_params_have_none_grad",
    source="https://github.com/lcswillems/torch-ac/pull/5",
    moments=(False, True),
    truth="The recurrent layer's parameters were frozen with requires_grad=False, so their "
    ".grad stays None (code that reads p.grad for every parameter breaks).",
    cases=("requires-grad-false",),
    must=[(r"(?i)requires_grad|frozen",)],
    never=(NAN, LEAF_CLAIM_NOT_TRUE, UNUSED),
)
def _b(after):
    with _seed(33):
        rnn = nn.GRUCell(3, 4)
        actor = nn.Linear(4, 2)
        obs = torch.randn(5, 3)
    for p in rnn.parameters():
        p.requires_grad = False
    h = rnn(obs)
    loss = -F.log_softmax(actor(h), -1)[:, 0].mean()
    if after:
        loss.backward()
    model = nn.ModuleDict({"rnn": rnn, "actor": actor})
    return _out(loss, rnn.weight_ih, {"rnn.weight_ih": rnn.weight_ih}, model)


# checked: freeze loop then a later loop setting requires_grad True on all params;
# after backward model[0].weight.grad finite nonzero.
@situation(
    name="freeze_overwritten_by_later_loop",
    source="https://github.com/ultralytics/yolov5/issues/1213",
    moments=(False, True),
    truth="A later loop sets requires_grad=True on every parameter, undoing the freeze; "
    "the 'frozen' layer is trainable again and gets a finite nonzero gradient.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    with _seed(34):
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
        x = torch.randn(6, 4)
    for p in model[0].parameters():
        p.requires_grad = False
    for p in model.parameters():
        p.requires_grad = True
    loss = model(x).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, model[0].weight, {"model.0.weight": model[0].weight}, model)


class _UNetTail(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.outc = nn.Linear(4, 2)

    def forward(self, x):
        return self.outc(torch.relu(self.body(x)))


# checked: model.outc.requires_grad = False sets a plain attribute on the Module;
# outc.weight.requires_grad stays True; after backward outc.weight.grad finite nonzero.
@situation(
    name="module_attribute_requires_grad_does_nothing",
    source="https://github.com/CSCYQJ/MICCAI23-ProtoContra-SFDA/issues/18",
    moments=(False, True),
    truth="Assigning requires_grad = False on the Module only sets an attribute; its "
    "parameters still require grad and receive a finite nonzero gradient "
    "(requires_grad_(False) would freeze them).",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, UNUSED),
)
def _b(after):
    with _seed(35):
        model = _UNetTail()
        x = torch.randn(3, 4)
    model.outc.requires_grad = False
    loss = model(x).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, model.outc.weight, {"outc.weight": model.outc.weight}, model)


class _NetWithExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_linear = nn.Linear(4, 8)
        self.middle_linear = nn.Linear(8, 8)
        self.extra_linear = nn.Linear(8, 8)
        self.output_linear = nn.Linear(8, 2)

    def forward(self, x):
        h = self.input_linear(x).clamp(min=0)
        h = self.middle_linear(h).clamp(min=0)
        return self.output_linear(h)


# checked: extra_linear registered but not called in forward; after backward its weight
# and bias .grad None; autograd.grad(..., allow_unused=True) -> None for both.
@situation(
    name="layer_defined_but_not_used_in_forward",
    source="https://discuss.pytorch.org/t/relationship-between-the-net-structure-and-forward/17826",
    moments=(False, True),
    truth="extra_linear is registered in __init__ but never called in forward, so no "
    "parameter of it is in the graph and its .grad stays None.",
    cases=("unused-parameter", "not-reachable"),
    must=[(r"(?i)extra_linear", UNUSED)],
    never=(NAN, DETACH, RG_FALSE, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(36):
        model = _NetWithExtra()
        x = torch.randn(5, 4)
    loss = model(x).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, model.extra_linear.weight, {}, model)


class _ListModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(6, 4), nn.Linear(4, 2)]  # plain list: not registered

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


# checked: list(model.parameters()) == []; after backward layers[0].weight.grad finite
# nonzero (the layers are used, just not registered).
@situation(
    name="layers_in_plain_python_list",
    source="https://www.engineermaxxing.com/micro/lessons/pytorch-internals.html",
    moments=(False, True),
    truth="The layers run in forward and receive finite nonzero gradients; they are only "
    "invisible to model.parameters() (a plain list instead of nn.ModuleList), so an "
    "optimizer built from the model never updates them.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, r"(?i)never (used|called)", NOT_IN_GRAPH),
)
def _b(after):
    with _seed(37):
        model = _ListModel()
        x = torch.randn(3, 6)
    loss = model(x).pow(2).mean()
    if after:
        loss.backward()
    w = model.layers[0].weight
    return _out(loss, w, {"layers[0].weight": w}, model)


# checked: optimizer created from model.parameters(), then model.head added; after
# backward head.weight.grad finite nonzero; head.weight not in opt.param_groups.
@situation(
    name="layer_added_after_optimizer_creation",
    source="https://github.com/LaurentMazare/ocaml-torch/issues/36",
    moments=(False, True),
    truth="The new head gets a finite nonzero gradient; it does not train only because the "
    "optimizer was created before the layer existed and does not hold its parameters.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH),
)
def _b(after):
    with _seed(38):
        model = nn.Sequential(nn.Linear(2, 3))
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        model.add_module("head", nn.Linear(3, 1))
        xs = torch.ones(1, 2)
    opt.zero_grad()
    loss = ((model(xs) - 10.0) ** 2).sum()
    if after:
        loss.backward()
        opt.step()
    return _out(loss, model.head.weight, {"head.weight": model.head.weight}, model)


# ===========================================================================
# Zero gradients: round / floor, dead ReLU, saturated sigmoid, zero input, zero norm
# ===========================================================================


# checked: b = round(a); b.sum().backward(); a.grad == zeros (exactly).
@situation(
    name="round_has_zero_gradient",
    source="https://discuss.pytorch.org/t/torch-round-gradient/28628/4",
    moments=(False, True),
    truth="round is a step function; its derivative is defined as 0, so a.grad is exactly "
    "zero.",
    cases=("zero",),
    must=[(r"(?i)round",)],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, DETACH),
)
def _b(after):
    a = torch.tensor([1.5, 0.2, -2.7])
    a.requires_grad_()
    b = torch.round(a).sum()
    if after:
        b.backward()
    return _out(b, a, {"a": a})


# checked: y = floor(w * x).sum(); w.grad == zeros.
@situation(
    name="floor_blocks_learning",
    source="https://codemia.io/knowledge-hub/path/what_is_the_gradient_of_pytorch_floor_gradient_method",
    moments=(False, True),
    truth="floor has derivative 0 everywhere in autograd, so the weight in front of it gets "
    "an exactly zero gradient.",
    cases=("zero",),
    must=[(r"(?i)floor",)],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, DETACH),
)
def _b(after):
    w = torch.tensor([0.7, 1.3], requires_grad=True)
    x = torch.tensor([2.0, 3.0])
    y = torch.floor(w * x).sum()
    if after:
        y.backward()
    return _out(y, w, {"w": w})


# checked: x all zeros into nn.Linear; lin.weight.grad == zeros, lin.bias.grad nonzero.
@situation(
    name="zero_input_gives_zero_weight_grad",
    source="https://discuss.pytorch.org/t/why-the-grad-is-chagnging/153422",
    moments=(False, True),
    truth="The weight gradient of a linear layer is the upstream gradient times the input; "
    "with an all-zero input it is exactly zero (the bias gradient is not).",
    cases=("zero",),
    must=[(r"(?i)input|\bx\b|addmm|\bmm\b|linear|matmul",)],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, DETACH),
)
def _b(after):
    with _seed(39):
        lin = nn.Linear(4, 2)
    x = torch.zeros(3, 4)
    loss = lin(x).sum()
    if after:
        loss.backward()
    return _out(loss, lin.weight, {"lin.weight": lin.weight, "x": x}, lin)


# checked: bias = -10 so relu(lin(x)) == 0 for every row; lin.weight.grad == zeros.
@situation(
    name="dead_relu_unit",
    source="https://theneuralbase.com/deep-learning-fundamentals/learn/beginner/dead-neurons-relu/",
    moments=(False, True),
    truth="The pre-activation is negative for every input, ReLU outputs 0 and passes back "
    "a zero gradient, so the layer's weight gradient is exactly zero (a dead ReLU).",
    cases=("zero",),
    must=[(r"(?i)relu|threshold",)],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, DETACH),
)
def _b(after):
    with _seed(40):
        lin = nn.Linear(3, 1)
        head = nn.Linear(1, 1)
        x = torch.rand(16, 3)
    with torch.no_grad():
        lin.bias.fill_(-10.0)
    loss = (head(torch.relu(lin(x))) - 1.0).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, lin.weight, {"lin.weight": lin.weight}, nn.Sequential(lin, head))


# checked: zero-initialised bias-free Linear -> ReLU (input exactly 0, relu'(0) = 0);
# linear.weight.grad == zeros.
@situation(
    name="zero_init_before_relu",
    source="https://github.com/lucidrains/deep-cross-attention/issues/2",
    moments=(False, True),
    truth="The bias-free linear layer is initialised to zero, so its outputs are exactly 0 "
    "and ReLU's gradient at 0 is 0: the layer's weight gradient is exactly zero and it can "
    "never move.",
    cases=("zero",),
    must=[(r"(?i)relu|threshold",)],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, DETACH),
)
def _b(after):
    with _seed(41):
        linear = nn.Linear(8, 3, bias=False)
        x = torch.randn(4, 8)
    nn.init.zeros_(linear.weight)
    agg = torch.relu(linear(F.normalize(x, dim=-1)))
    loss = (agg - 1.0).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, linear.weight, {"linear.weight": linear.weight}, linear)


# checked: sigmoid(w * x) with w*x = 100 in float32: sigmoid == 1.0 exactly,
# w.grad == 0 exactly.
@situation(
    name="saturated_sigmoid",
    source="https://digital-ai-finance.github.io/neural-networks/topics/07-sigmoid-saturation.html",
    moments=(False, True),
    truth="The sigmoid input is so large that the output is exactly 1.0 in float32 and its "
    "derivative s(1-s) is exactly 0, so the weight gradient vanishes completely.",
    cases=("zero",),
    must=[(r"(?i)sigmoid|saturat",)],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, DETACH),
)
def _b(after):
    w = torch.tensor([50.0], requires_grad=True)
    x = torch.tensor([2.0])
    loss = (torch.sigmoid(w * x) - 0.0).pow(2).sum()
    if after:
        loss.backward()
    return _out(loss, w, {"w": w})


# checked: D logit -120 -> sigmoid == 0.0 in float32; g_loss = log(1 - D(G(z))).mean();
# G weight grad == zeros.
@situation(
    name="gan_saturating_generator_loss",
    source="https://github.com/depthfirstlearning/depthfirstlearning.com/issues/22",
    moments=(False, True),
    truth="The discriminator is so confident (D(G(z)) underflows to exactly 0) that the "
    "saturating loss log(1 - D(G(z))) has zero gradient through the sigmoid, so the "
    "generator gets an exactly zero gradient.",
    cases=("zero",),
    must=[(r"(?i)sigmoid|saturat",)],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, DETACH),
)
def _b(after):
    with _seed(42):
        G = nn.Linear(3, 2)
        z = torch.randn(4, 3)
    d_w = torch.tensor([[1.0, -1.0]])
    d_b = torch.tensor([-120.0])
    d_out = torch.sigmoid(G(z) @ d_w.t() + d_b)
    g_loss = torch.log(1 - d_out).mean()
    if after:
        g_loss.backward()
    return _out(g_loss, G.weight, {"G.weight": G.weight}, G)


# checked: x = zeros(3, requires_grad=True); x.norm().backward(); x.grad == zeros (no NaN
# in torch 2.13: the norm backward uses a zero subgradient at 0).
@situation(
    name="norm_of_zero_vector",
    source="https://github.com/pytorch/pytorch/issues/2421",
    moments=(False, True),
    truth="At the zero vector the 2-norm is not differentiable; current torch returns the "
    "zero subgradient, so x.grad is exactly zero (not NaN).",
    cases=("zero",),
    must=[(r"(?i)norm",)],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, DETACH),
)
def _b(after):
    x = torch.zeros(3, requires_grad=True)
    n = x.norm()
    if after:
        n.backward()
    return _out(n, x, {"x": x})


# ===========================================================================
# NaN / Inf gradients
# ===========================================================================


# checked: a = [0., 1.]; sqrt(a).sum().backward(); a.grad == [inf, 0.5].
@situation(
    name="sqrt_at_zero",
    source="https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1",
    moments=(False, True),
    truth="The derivative of sqrt at 0 is 1/(2*sqrt(0)) = inf, so a.grad[0] is inf.",
    cases=("nonfinite",),
    must=[(r"(?i)sqrt",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    a = torch.tensor([0.0, 1.0])
    a.requires_grad = True
    b = torch.sqrt(a).sum()
    if after:
        b.backward()
    return _out(b, a, {"a": a})


# checked: sqrt((x - 1) ** 2) at x = 1: x.grad == nan (sqrt backward gives inf, pow
# backward multiplies it by 2*(x-1) = 0 -> nan); detect_anomaly points at PowBackward0.
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by PowBackward0.
@situation(
    name="sqrt_of_square_at_zero",
    source="https://github.com/pytorch/pytorch/issues/6394",
    moments=(False, True),
    truth="sqrt of 0 has an infinite derivative, and the square's derivative 2(x-1) is 0, "
    "so the chain rule gives 0 * inf = NaN at x = 1.",
    cases=("nonfinite",),
    must=[(r"(?i)sqrt|pow",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    x = torch.tensor([1.0], requires_grad=True)
    y = torch.sqrt(torch.pow(x - 1, 2)).sum()
    if after:
        y.backward()
    return _out(y, x, {"x": x})


# checked: x parallel to w so cos_theta == 1 exactly; theta = acos(1); w.grad all nan
# (acos'(1) = -inf times d cos(2 theta)/d theta = 0).
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by AcosBackward0.
@situation(
    name="acos_at_one",
    source="https://discuss.pytorch.org/t/nan-gradient-for-torch-cos-torch-acos/9617",
    moments=(False, True),
    truth="cos_theta reaches exactly 1, where acos has derivative -1/sqrt(1-x^2) = -inf; "
    "multiplied by the zero derivative of cos(2 theta) at 0 it gives NaN.",
    cases=("nonfinite",),
    must=[(r"(?i)acos",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    x = torch.tensor([[1.0, 0.0]])
    w = torch.tensor([[2.0], [0.0]], requires_grad=True)
    xlen = x.pow(2).sum(1).pow(0.5).view(-1, 1)
    wlen = w.pow(2).sum(0).pow(0.5).view(1, -1)
    cos_theta = (x.mm(w) / xlen / wlen).clamp(-1, 1)
    theta = cos_theta.acos()
    y = (torch.cos(2 * theta) * xlen.view(-1, 1)).sum()
    if after:
        y.backward()
    return _out(y, w, {"w": w})


# checked: margin = 0: loss value 0.0 but z.grad == nan (float64); the NaN comes from the
# division z / (margin + sign(margin) * thresh) with a zero denominator.
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by DivBackward0.
@situation(
    name="division_by_zero_margin",
    source="https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1",
    moments=(False, True),
    truth="At margin = 0, sign(margin) is 0 so the denominator is exactly 0: z/0 is inf in "
    "the forward and the division's backward produces NaN (0/0), even though the loss "
    "value is 0.",
    cases=("nonfinite",),
    must=[(r"(?i)div|division|denominator|margin|/",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    z = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    margin = torch.tensor(0.0, dtype=torch.float64)
    thresh, beta, tau = 1e-10, 1.0, 1.0
    denom = margin + torch.sign(margin) * thresh
    loss = (F.softplus(tau - z / denom, beta=beta) * torch.abs(denom)).sum()
    if after:
        loss.backward()
    return _out(loss, z, {"z": z, "margin": margin})


# checked: t = sigmoid(h) underflows to 0 for h = -200; log(t) = -inf; backward: h.grad[0]
# == nan (1/0 = inf times sigmoid' = 0).
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by SigmoidBackward0.
@situation(
    name="log_of_underflowed_probability",
    source="https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1",
    moments=(False, True),
    truth="The probability underflows to exactly 0, log gives -inf and its derivative 1/0 "
    "= inf, which times the zero sigmoid derivative gives NaN.",
    cases=("nonfinite",),
    must=[(r"(?i)\blog|sigmoid",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    h = torch.tensor([-200.0, 1.0], requires_grad=True)
    t = torch.sigmoid(h)
    loss = -torch.log(t).sum()
    if after:
        loss.backward()
    return _out(loss, h, {"h": h})


# checked: log(softmax(logits)) with a -150 logit (softmax underflows to 0) then NLL;
# loss finite (0.0) but lin.weight.grad all nan; log_softmax gives finite grads.
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by LogBackward0.
@situation(
    name="log_of_softmax_instead_of_log_softmax",
    source="https://github.com/pytorch/pytorch/issues/1620",
    moments=(False, True),
    truth="softmax underflows to exactly 0 for one class, log(0) = -inf and its backward "
    "gives 0/0 = NaN there; the NaN spreads through softmax to every weight "
    "(log_softmax avoids it).",
    cases=("nonfinite",),
    must=[(r"(?i)\blog|softmax",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    lin = nn.Linear(3, 3, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.eye(3))
    data = torch.tensor([[0.0, 50.0, -150.0]])
    loss = F.nll_loss(torch.log(F.softmax(lin(data), dim=1)), torch.tensor([1]))
    if after:
        loss.backward()
    return _out(loss, lin.weight, {"lin.weight": lin.weight}, lin)


# checked: y = x.where(isinf(exp(x)), exp(x).log1p()) with x = 100: y finite, x.grad ==
# [0.5, 0.7311, nan]; the unselected branch exp(100) = inf gives 0 * inf = nan.
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by ExpBackward0.
@situation(
    name="where_does_not_stop_nan_from_exp_branch",
    source="https://thinbug.com/q/56667596",
    moments=(False, True),
    truth="torch.where passes a zero gradient to the unselected branch, but that branch "
    "computed exp(100) = inf, and exp's backward multiplies 0 by inf = NaN.",
    cases=("nonfinite",),
    must=[(r"(?i)exp|log1p|where",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    x = torch.tensor([0.0, 1.0, 100.0], requires_grad=True)
    e = x.exp()
    y = x.where(torch.isinf(e), e.log1p())
    s = y.sum()
    if after:
        s.backward()
    return _out(s, x, {"x": x})


# checked: torch.where(x > 2, log2(x), 2 * x) with x[0] = 0: x.grad == [nan, 2, 0.4809].
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by Log2Backward0.
@situation(
    name="where_with_log2_branch_at_zero",
    source="https://github.com/pytorch/pytorch/issues/108618",
    moments=(False, True),
    truth="log2 is evaluated at 0 even though where does not select it there; its backward "
    "computes 0 / (0 * ln 2) = NaN for that element.",
    cases=("nonfinite",),
    must=[(r"(?i)log|where",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    x1 = torch.tensor([0.0, 2.0, 3.0], requires_grad=True)
    y1 = torch.where(x1 > 2, torch.log2(x1), 2 * x1)
    z1 = y1.sum()
    if after:
        z1.backward()
    return _out(z1, x1, {"x1": x1})


# checked: torch.where(a <= 0, exp(a), 1 + a) with a = 100: a.grad == nan.
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by ExpBackward0.
@situation(
    name="where_with_overflowing_exp_branch",
    source="https://github.com/pytorch/pytorch/issues/68425",
    moments=(False, True),
    truth="The unselected branch exp(100) overflows to inf in float32; where sends it a "
    "zero gradient and exp's backward computes 0 * inf = NaN.",
    cases=("nonfinite",),
    must=[(r"(?i)exp|where",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    a = torch.tensor(100.0, requires_grad=True)
    b = torch.where(a <= 0, torch.exp(a), 1 + a)
    if after:
        b.backward()
    return _out(b, a, {"a": a})


# checked: log(a)[a > 0].sum() with a[0] = 0: a.grad == [nan, 1, 0.5]; indexing before
# log gives [0, 1, 0.5].
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by LogBackward0.
@situation(
    name="log_then_mask",
    source="https://github.com/pytorch/pytorch/issues/12986",
    moments=(False, True),
    truth="log is computed on the whole tensor, including the 0 that is masked out "
    "afterwards; log's backward there is 0/0 = NaN.",
    cases=("nonfinite",),
    must=[(r"(?i)\blog",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    a = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    l = torch.log(a)[a > 0.0].sum()
    if after:
        l.backward()
    return _out(l, a, {"a": a})


# checked: logsumexp over rows that are all -inf: a.grad all nan.
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by LogsumexpBackward0.
@situation(
    name="logsumexp_of_all_neg_inf",
    source="https://github.com/pytorch/pytorch/issues/31829",
    moments=(False, True),
    truth="Each row is entirely -inf, so logsumexp is -inf and its backward computes "
    "exp(-inf - (-inf)) = exp(nan) = NaN.",
    cases=("nonfinite",),
    must=[(r"(?i)logsumexp",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    a = torch.full((2, 2), -float("inf"), requires_grad=True)
    y = torch.logsumexp(a, dim=-1).sum()
    if after:
        y.backward()
    return _out(y, a, {"a": a})


# checked: z = full(2, nan); z[0] = x*y/y (y = 0); z[1] = x + y; z[1].backward():
# x.grad == nan, y.grad == nan (CopySlices routes a zero gradient into the division,
# whose backward gives 0/0).
# checked: detect_anomaly(check_nan=True) around autograd.grad: first NaN returned by DivBackward0.
@situation(
    name="nan_from_other_element_of_copyslices",
    source="https://whosebug.com/question/5957504/PyTorch-backward-on-a-tensor-element-affected-by-nan-in-other-elements",
    moments=(False, True),
    truth="Assigning into z records both elements in one CopySlices node; the backward of "
    "z[1] sends a zero gradient to the z[0] branch, whose division by y = 0 turns it into "
    "0/0 = NaN, which lands in x.grad.",
    cases=("nonfinite",),
    must=[(r"(?i)div|division|/|copy_?slices",)],
    never=(NOT_IN_GRAPH, RG_FALSE, DETACH, UNUSED),
)
def _b(after):
    x = torch.tensor(1.0, requires_grad=True)
    y = torch.tensor(0.0, requires_grad=True)
    z = torch.full((2,), float("nan"))
    z[0] = x * y / y
    z[1] = x + y
    out = z[1]
    if after:
        out.backward()
    return _out(out, x, {"x": x, "y": y, "z": z})


# checked: F.normalize(a, p=1) with four zeros: a.grad == [5.01, 5.01, 5.01, 5.01, 0.]
# (finite in torch 2.13; the 2017 report of NaN no longer reproduces).
@situation(
    name="normalize_p1_with_zeros_is_finite_now",
    source="https://github.com/pytorch/pytorch/issues/3264",
    moments=(False, True),
    truth="With torch 2.13 the p=1 norm uses a zero subgradient at 0, so the gradient is "
    "finite (5.01 for the zero entries, 0 for the last); there is no NaN.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, NOT_IN_GRAPH, RG_FALSE, UNUSED),
)
def _b(after):
    a = torch.tensor([[0.0, 0.0, 0.0, 0.0, 0.1996]], requires_grad=True)
    b = F.normalize(a, p=1, dim=1).sum()
    if after:
        b.backward()
    return _out(b, a, {"a": a})


# ===========================================================================
# In-place modifications
# ===========================================================================


# checked: y = x * 2; y.add_(1); z = y.sum(); backward works, x.grad == 2.
@situation(
    name="inplace_add_after_scalar_mul_is_fine",
    source="https://taourl.com/read-2445510.html",
    moments=(False, True),
    truth="Multiplying by a constant saves neither its input nor its output, so the "
    "in-place add_ on y breaks nothing: backward works and x.grad = 2.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    z = y.sum()
    if after:
        z.backward()
    return _out(z, x, {"x": x, "y": y})


# checked: uexp = (2*t).exp(); loss = uexp.sum(); uexp[0] = 666; backward raises
# "modified by an inplace operation ... ExpBackward0"; t.grad None.
@situation(
    name="inplace_on_saved_exp_output",
    source="https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3",
    moments=(False, True),
    truth="exp saves its output for backward; writing uexp[0] in place bumps its version, "
    "so backward refuses to run and t.grad stays None.",
    cases=("modified-in-place",),
    must=[(INPLACE,)],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    t = torch.arange(3.0, requires_grad=True)
    u = 2 * t
    uexp = u.exp()
    loss = uexp.sum()
    uexp[0] = 666
    if after:
        _try_backward(loss)
    return _out(loss, t, {"t": t, "uexp": uexp})


# checked: same graph but u[0] = 666 instead; backward works; t.grad == 2*exp(2t) (the
# original values: exp uses its saved, unmodified output).
@situation(
    name="inplace_on_exp_input_is_fine",
    source="https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3",
    moments=(False, True),
    truth="exp does not save its input, so modifying u in place does not affect backward; "
    "t.grad = 2 exp(2t) is correct.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    t = torch.arange(3.0, requires_grad=True)
    u = 2 * t
    uexp = u.exp()
    loss = uexp.sum()
    u[0] = 666
    if after:
        loss.backward()
    return _out(loss, t, {"t": t, "u": u})


# checked: y = (c ** 2).sum(); c.detach().add_(1) (shares storage and version counter);
# backward raises "modified by an inplace operation"; c.grad None.
@situation(
    name="inplace_through_detached_alias",
    source="https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297",
    moments=(False, True),
    truth="c.detach() shares c's storage and version counter; add_ on it changes the c "
    "that pow saved, so backward raises and c.grad stays None.",
    cases=("modified-in-place",),
    must=[(INPLACE,)],
    never=(NAN, RG_FALSE, UNUSED, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(43):
        c = torch.randn(3, requires_grad=True)
    y = (c**2).sum()
    c.detach().add_(1)
    if after:
        _try_backward(y)
    return _out(y, c, {"c": c})


# checked: h = sigmoid(lin(inp)); out = h; out[:, 0] = 0; backward raises
# (SigmoidBackward0 saved output at version 1); lin.weight.grad None.
@situation(
    name="alias_of_sigmoid_output_modified",
    source="https://github.com/Jee-King/TSAN/issues/3",
    moments=(False, True),
    truth="out = h is an alias, not a copy; writing into it modifies the sigmoid output "
    "that sigmoid saved for backward, so backward raises (out = h.clone() fixes it).",
    cases=("modified-in-place",),
    must=[(INPLACE,)],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    with _seed(44):
        lin = nn.Linear(4, 3)
        inp = torch.randn(2, 4)
    h = torch.sigmoid(lin(inp))
    out = h
    out[:, 0] = 0
    loss = out.sum()
    if after:
        _try_backward(loss)
    return _out(loss, lin.weight, {"lin.weight": lin.weight}, lin)


# checked: a = feats.view(1, 2, 2); c = bmm(a, b); a[0, 0, 0] = 0 (in place, through the
# view); backward raises (BmmBackward0); b.grad None.
@situation(
    name="bmm_input_modified_through_view",
    source="https://github.com/WOW5678/CompNet/issues/2",
    moments=(False, True),
    truth="bmm saved a (needed for b's gradient); a is later modified in place through a "
    "view, so its version no longer matches and backward raises.",
    cases=("modified-in-place",),
    must=[(INPLACE,)],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    with _seed(45):
        lin = nn.Linear(3, 4)
        b = torch.randn(1, 2, 2, requires_grad=True)
        inp = torch.randn(1, 3)
    feats = lin(inp)
    a = feats.view(1, 2, 2)
    c = torch.bmm(a, b)
    a[0, 0, 0] = 0.0
    loss = c.sum()
    if after:
        _try_backward(loss)
    return _out(loss, b, {"b": b, "a": a})


# checked: loss1.backward(retain_graph=True); optD.step() (in-place update of D's weight);
# loss2.backward() raises "... output 0 of TBackward0, is at version 1; expected version 0".
@situation(
    name="optimizer_step_between_two_backwards",
    source="https://github.com/NVlabs/FUNIT/issues/23",
    moments=(False, True),
    truth="optimizer.step() updates D's weight in place between the two backward calls; "
    "the second backward needs the old weight saved in the shared graph, sees a newer "
    "version and raises.",
    cases=("modified-in-place",),
    must=[(INPLACE, r"(?i)step|optimizer")],
    never=(NAN, RG_FALSE, UNUSED),
)
def _b(after):
    with _seed(46):
        G = nn.Linear(3, 4)
        D = nn.Linear(4, 1)
        z = torch.randn(5, 3)
    optD = torch.optim.SGD(D.parameters(), lr=0.1)
    d_out = D(G(z))
    loss1 = d_out.mean()
    loss2 = (d_out**2).mean()
    loss1.backward(retain_graph=True)
    optD.step()
    if after:
        _try_backward(loss2)
    return _out(loss2, G.weight, {"G.weight": G.weight, "D.weight": D.weight})


# ===========================================================================
# Custom Functions and hooks
# ===========================================================================


class _ReturnsNone(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return None


# checked: _ReturnsNone.apply(x).backward(); x.grad None (since PR 41490 a None gradient
# from a custom backward is propagated as undefined, not zeros).
@situation(
    name="custom_function_backward_returns_none",
    source="https://github.com/pytorch/pytorch/pull/41490",
    moments=(False, True),
    truth="The custom Function's backward returns None for x, which autograd treats as a "
    "zero (undefined) gradient, so nothing is accumulated and x.grad stays None.",
    cases=("zero",),
    must=[(r"(?i)Function|backward|returns? None",)],
    never=(NAN, RG_FALSE, UNUSED, r"(?i)not (in|part of) the (output'?s? )?graph"),
)
def _b(after):
    x = torch.ones(1, requires_grad=True)
    y = _ReturnsNone.apply(x)
    if after:
        y.backward()
    return _out(y, x, {"x": x})


class _Times666(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.clone() * 666


# checked: _Times666.apply(x + 1).backward(); custom backward called; x.grad == 666.
@situation(
    name="custom_function_on_non_leaf_input_runs",
    source="https://github.com/pytorch/pytorch/issues/4714",
    moments=(False, True),
    truth="The custom backward is called even when the Function is applied to x + 1 "
    "(a non-leaf); x.grad = 666 as the Function defines.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH),
)
def _b(after):
    x = torch.tensor([1.0], requires_grad=True)
    z = _Times666.apply(x + 1).sum()
    if after:
        z.backward()
    return _out(z, x, {"x": x})


# checked: a.register_hook(lambda g: g * 10); MSE backward; a.grad == 80 (one pass
# without the hook gives 8); Adam's step is unchanged by the scale.
@situation(
    name="tensor_hook_scales_grad",
    source="https://github.com/pytorch/pytorch/issues/2843",
    moments=(True,),
    truth="The hook registered on a multiplies its gradient by 10, so a.grad = 80 instead "
    "of the 8 the loss gives (Adam's update is insensitive to that scale).",
    cases=("differs",),
    must=[(r"(?i)hook",)],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH),
)
def _b(after):
    X = torch.tensor([4.0])
    a = torch.tensor([2.0], requires_grad=True)
    a.register_hook(lambda grad: grad * 10)
    y = a * X
    loss = nn.MSELoss()(y, torch.tensor([7.0]))
    if after:
        loss.backward()
    return _out(loss, a, {"a": a})


# checked: hooks returning stored meta-gradients on every parameter; dummy loss backward;
# net.weight.grad == the stored meta-gradient, not the dummy loss's gradient.
@situation(
    name="hooks_replace_grads_in_dummy_backward",
    source="https://github.com/katerakelly/pytorch-maml/issues/8",
    moments=(True,),
    truth="Hooks on the parameters replace whatever the dummy backward computes with the "
    "stored meta-gradients, so .grad holds those, not the gradient of the dummy loss.",
    cases=("differs",),
    must=[(r"(?i)hook",)],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH),
)
def _b(after):
    with _seed(47):
        net = nn.Linear(3, 2)
        x = torch.randn(4, 3)
        meta = {n: torch.randn_like(p) for n, p in net.named_parameters()}
    for n, p in net.named_parameters():
        p.register_hook(lambda g, stored=meta[n]: stored)
    loss = net(x).pow(2).mean()
    if after:
        loss.backward()
    return _out(loss, net.weight, {"net.weight": net.weight}, net)


# ===========================================================================
# zero_grad, accumulation, backward twice
# ===========================================================================


# checked: two forward+backward passes on the same batch without zero_grad;
# a1.grad == 2 * (one pass) exactly.
@situation(
    name="backward_twice_without_zero_grad",
    source="https://velog.io/@coma_403/optimizer.zerograd는-왜-사용하는가",
    moments=(True,),
    truth="backward adds into .grad; after two backward passes without zero_grad, a1.grad "
    "is the sum of both, exactly twice one pass.",
    cases=("accumulated",),
    must=[(ACCUM,)],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH),
)
def _b(after):
    a1 = torch.tensor(1.0, requires_grad=True)
    first = a1 * 2
    first.backward()
    a2 = a1 * 2
    if after:
        a2.backward()
    return _out(a2, a1, {"a1": a1})


# checked: only the last layer given to the optimizer; two training steps with
# opt.zero_grad(); model[0].weight.grad == grad(step 1) + grad(step 2) (never cleared).
@situation(
    name="params_outside_optimizer_accumulate",
    source="https://discuss.pytorch.org/t/best-practice-for-freezing-layers/58156",
    moments=(False, True),
    truth="optimizer.zero_grad() only clears the parameters the optimizer holds; the first "
    "layer is not in it, so its .grad keeps accumulating across steps.",
    cases=("accumulated", "differs"),
    must=[(ACCUM,)],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH),
)
def _b(after):
    with _seed(48):
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        x = torch.randn(6, 3)
        y = torch.randn(6, 1)
    opt = torch.optim.SGD(model[-1].parameters(), lr=1e-1)
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
    opt.step()
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    if after:
        loss.backward()
        opt.step()
    return _out(loss, model[0].weight, {"model.0.weight": model[0].weight}, model)


# checked: model.zero_grad() (set_to_none=True by default) then .grad read before any
# backward: None.
@situation(
    name="grad_read_after_zero_grad_before_backward",
    source="https://pytorch.org/docs/master/generated/torch.optim.Optimizer.zero_grad.html",
    moments=(False,),
    truth="zero_grad() sets .grad to None (set_to_none=True is the default) and backward "
    "has not run since, so there is no gradient yet.",
    cases=("not-run", "ok", "unchecked"),
    must=[(r"(?i)backward|zero_grad|set_to_none",)],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(49):
        model = nn.Linear(3, 1)
        x = torch.randn(4, 3)
    model(x).sum().backward()
    model.zero_grad()
    loss = model(x).pow(2).mean()
    return _out(loss, model.weight, {"weight": model.weight}, model)


# checked: loss.backward(); optimizer.zero_grad(); optimizer.step() -> weight.grad None
# and the step changes nothing.
@situation(
    name="zero_grad_between_backward_and_step",
    source="https://velog.io/@rhss10/기본-optimizer.zerograd는-어디에-넣어주어야-할까",
    moments=(True,),
    truth="zero_grad() ran after backward and before step, resetting .grad to None, so the "
    "gradient was discarded and the step did nothing.",
    cases=("not-run",),
    must=[(r"(?i)zero_grad|set_to_none|reset|cleared|discarded",)],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    with _seed(50):
        model = nn.Linear(3, 1)
        x = torch.randn(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.zero_grad()
    opt.step()
    return _out(loss, model.weight, {"weight": model.weight}, model)


# checked: gradient-accumulation loop that calls zero_grad() every micro-batch: after the
# second micro-batch, weight.grad == one pass of the second micro-batch's loss only.
@situation(
    name="zero_grad_every_micro_batch",
    source="https://github.com/bhuvanakundumani/SimCSE_unsupervised/issues/1",
    moments=(False, True),
    truth="zero_grad() at the top of every micro-batch wipes the earlier micro-batches, so "
    ".grad holds just the last micro-batch's gradient (exactly one pass of this loss); "
    "nothing accumulates.",
    cases=("ok", "unchecked", "not-run"),
    must=[],
    never=(NAN, RG_FALSE, UNUSED, ACCUM_CLAIM),
)
def _b(after):
    with _seed(51):
        model = nn.Linear(3, 1)
        batches = [torch.randn(4, 3) for _ in range(2)]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    (model(batches[0]).pow(2).mean() / 2).backward()
    opt.zero_grad()
    loss = model(batches[1]).pow(2).mean() / 2
    if after:
        loss.backward()
    return _out(loss, model.weight, {"weight": model.weight}, model)


# checked: computed_loss.backward() twice; the second raises "Trying to backward through
# the graph a second time"; model.weight.grad == one pass (the first backward only).
@situation(
    name="second_backward_raises_grad_from_first",
    source="https://bobbyhadz.com/blog/runtime-error-trying-to-backward-through-the-graph-a-second-time",
    moments=(True,),
    truth="The first backward freed the graph's saved tensors; the second backward raised "
    "before adding anything, so .grad holds exactly the first pass.",
    cases=("ok", "unchecked",),
    must=[],
    never=(NAN, RG_FALSE, UNUSED, ACCUM_CLAIM),
)
def _b(after):
    with _seed(52):
        model = nn.Linear(5, 2)
        inputs = torch.randn(5)
    target = torch.tensor([1.0, 2.0])
    out = model(inputs)
    computed_loss = nn.CrossEntropyLoss()(out, target)
    computed_loss.backward()
    _try_backward(computed_loss)
    return _out(computed_loss, model.weight, {"weight": model.weight}, model)


# checked: loss built but backward never called: weight.grad None.
@situation(
    name="backward_never_called",
    source="https://taourl.com/read-3032220.html",
    moments=(False,),
    truth="The training code never calls loss.backward(), so no gradient has been "
    "computed yet; one backward would fill .grad.",
    cases=("not-run", "ok", "unchecked"),
    must=[(r"(?i)backward",)],
    never=(NAN, RG_FALSE, UNUSED, NOT_IN_GRAPH, LEAF_CLAIM_NOT_TRUE),
)
def _b(after):
    model = nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.fill_(0.3)
        model.bias.fill_(0.1)
    X = torch.tensor([[1.0], [2.0], [3.0]])
    y = torch.tensor([[2.0], [4.0], [6.0]])
    loss = nn.MSELoss()(model(X), y)
    return _out(loss, model.weight, {"weight": model.weight}, model)
