"""Gradient accumulation over two micro-batches of a small next-token model whose sequences are
padded (labels ``-100`` on padding): each micro-batch's loss is ``F.cross_entropy`` with its
default ``reduction='mean'`` over that micro-batch's non-padded tokens, divided by the number of
micro-batches (2), backpropagated, and one optimizer step is taken after the second.  The first
micro-batch holds 32 real tokens, the second 6: averaging inside each micro-batch and then over the
two weighs each token of the short micro-batch 32/6 times as much as a token of the long one.  The
accumulated ``.grad`` is not the gradient of the mean loss over the 38 tokens of the effective
batch (it differs by far more than rounding) although every gradient is finite and nonzero.

Source: https://omnissiah.systems/blog/gradient-accumulation-silent-divergence ("Reduction
mismatch.  PyTorch's CrossEntropyLoss defaults to reduction='mean' over the batch.  With
accumulation, you're averaging over a sub-batch, then averaging again when you step"; "The fix: set
reduction='sum' in your loss function and divide by total tokens or total samples yourself, once,
before the optimizer step").  Adapted: a bigram model (embedding, tanh, linear) on token ids.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://omnissiah.systems/blog/gradient-accumulation-silent-divergence"
DESCRIPTION = "accumulation, mean CE per micro-batch (32 vs 6 real tokens) / 2: tokens misweighted"
ASK = []
MUST = [
    [r"accumulat\w*", r"micro-?batch\w*", r"(two|2) backward"],
    [
        r"reduction",
        r"\bmean\b",
        r"averag\w*",
        r"token",
        r"padding",
        r"weigh\w*",
        r"normali[sz]\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]
V, PAD = 12, -100


def make_model():
    return nn.Sequential(nn.Embedding(V, 16), nn.Tanh(), nn.Linear(16, V))


def micro_batches():
    g = torch.Generator().manual_seed(1)
    long = torch.randint(0, V, (4, 9), generator=g)  # 4 x 8 = 32 real targets
    short = torch.randint(0, V, (4, 9), generator=g)
    short_labels = short[:, 1:].clone()
    for row, length in enumerate((2, 2, 3, 3)):  # 1 + 1 + 2 + 2 = 6 real targets
        short_labels[row, length - 1 :] = PAD
    return [(long[:, :-1], long[:, 1:].clone()), (short[:, :-1], short_labels)]


def token_loss(model, x, y, reduction="mean"):
    return F.cross_entropy(
        model(x).reshape(-1, V), y.reshape(-1), ignore_index=PAD, reduction=reduction
    )


def step(watch, per_token: bool = False):
    torch.manual_seed(0)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = micro_batches()
    n_tokens = sum(int((y != PAD).sum()) for _, y in batches)
    # the effective batch's mean loss over its tokens, at the step's weights
    full = sum(token_loss(model, x, y, "sum") for x, y in batches) / n_tokens
    reference = torch.autograd.grad(full, list(model.parameters()))
    with watch(model) as w:
        opt.zero_grad()
        for x, y in batches:
            if per_token:
                loss = token_loss(model, x, y, "sum") / n_tokens
            else:
                loss = token_loss(model, x, y) / len(batches)
            loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    counts = [int((y != PAD).sum()) for _, y in batches]
    used = torch.cat([x[y != PAD] for x, y in batches]).unique()
    return Run(w=w, grads=grads, reference=reference, counts=counts, used=used)


def truth(run):
    assert run.counts == [32, 6]
    assert len(run.used) == V  # every token id is an input at some real target: no zero row
    rel = max(
        ((g - r).norm() / r.norm()).item() for g, r in zip(run.grads, run.reference, strict=True)
    )
    assert rel > 0.2  # not the effective batch's gradient
    for gr in run.grads:
        assert bool(torch.isfinite(gr).all())
    assert bool((run.grads[0].abs().sum(1) > 0).all())
