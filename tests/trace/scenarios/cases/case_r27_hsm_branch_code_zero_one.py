"""A hierarchical softmax over a complete binary tree, ``p(w | h) = prod_j sigma(s_j v_(n_j)^T h)``,
written with the word's code bits ``b_j`` in ``{0, 1}`` where the branch signs ``s_j`` in ``{+1,
-1}`` belong.  At every node where the path goes left (bit 0) the factor is ``sigma(0 * v^T h) =
sigma(0) = 1/2`` whatever the parameters: the loss holds a constant ``log 2`` per left turn and no
gradient comes from it (the score is multiplied by 0).  Only the right turns train; an example whose
word has the code 0000 contributes nothing at all.  Every gradient is finite and nonzero (each node
is a right turn for some word of the batch); nothing raises.

Source: https://api.emergentmind.com/topics/hierarchical-softmax-hsm ("the probability p(w|h) of
class w given a model state h is defined by the product of local conditional probabilities along the
path from root to leaf: p(w | h) = prod_(j=1)^(L(w)-1) sigma(b(w, j) v'_(n(w,j))^T h) where n(w,j)
is the j-th node on the path, b(w,j) in {+1, -1} encodes the branch taken").  Adapted: CBOW over 16
words (4-bit codes, 15 inner nodes in heap order), ``Embedding(16, 16)`` context vectors averaged
over 4 context words, ``Embedding(15, 16)`` node vectors, 64 examples covering every word, SGD at
0.1.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://api.emergentmind.com/topics/hierarchical-softmax-hsm"
DESCRIPTION = "hierarchical softmax branch sign from code bits {0, 1}: left turns sigma(0), no grad"
ASK = []
MUST = [
    [
        r"\{\s?0,\s?1\s?\}",
        r"\b0\s?/\s?1\b",
        r"\bbits?\b",
        r"\bcodes?\b",
        r"branch",
        r"\bsigns?\b",
        r"[±+]1|\+/-\s?1|-1",
        r"sigma\(0\)|sigmoid\(0\)|σ\(0\)",
        r"\b0\.5\b|\b1/2\b|log\s?\(?2",
        r"(multipl\w*|scaled|times) by (zero|0)\b",
        r"(zero|0)\s?\*",
        r"\*\s?(zero|0)\b",
        r"constant",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
V, DIM, DEPTH = 16, 16, 4


class CBOWTree(nn.Module):
    def __init__(self):
        super().__init__()
        self.context = nn.Embedding(V, DIM)
        self.nodes = nn.Embedding(V - 1, DIM)


def paths(words):
    bits = torch.stack([(words >> (DEPTH - 1 - j)) & 1 for j in range(DEPTH)], 1)
    nodes = torch.stack([(1 << j) - 1 + (words >> (DEPTH - j)) for j in range(DEPTH)], 1)
    return nodes, bits.float()


def terms(model, ctx, target, signed):
    """Per-node losses ``-log sigma(s_j v_(n_j)^T h)``, shape (batch, depth)."""
    h = model.context(ctx).mean(1)
    nodes, bits = paths(target)
    sign = 2 * bits - 1 if signed else bits
    score = (model.nodes(nodes) * h[:, None, :]).sum(-1)
    return -F.logsigmoid(sign * score), bits


def data():
    g = torch.Generator().manual_seed(1)
    target = torch.randperm(64, generator=g) % V
    offsets = torch.tensor([-2, -1, 1, 2])
    ctx = (target[:, None] + offsets[None, :]) % V
    return ctx, target


def step(watch, signed=False):
    torch.manual_seed(0)
    model = CBOWTree()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ctx, target = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        per_node, bits = terms(model, ctx, target, signed)
        per_node.sum(1).mean().backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        signed=signed,
        before=before,
        ctx=ctx,
        target=target,
        grads=grads,
        per_node=per_node.detach(),
        bits=bits,
    )


def left_turn_grads(run):
    """The gradient of the left-turn (bit 0) terms alone, at the parameters the step started from."""
    model = CBOWTree()
    model.load_state_dict(run.before)
    per_node, bits = terms(model, run.ctx, run.target, run.signed)
    left = (per_node * (bits == 0)).sum(1).mean()
    return torch.autograd.grad(left, list(model.parameters()))


def truth(run):
    assert set(run.target.tolist()) == set(range(V))
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    left = run.per_node[run.bits == 0]
    assert torch.allclose(left, torch.full_like(left, math.log(2)), rtol=0, atol=1e-7)
    for g in left_turn_grads(run):
        assert bool((g == 0).all())
