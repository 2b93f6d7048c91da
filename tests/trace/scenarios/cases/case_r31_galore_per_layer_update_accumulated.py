"""GaLore-style per-layer weight updates (one AdamW per parameter, stepped from a
``register_post_accumulate_grad_hook`` as soon as that parameter's gradient is ready, its ``.grad``
freed at once) combined with gradient accumulation: the batch of 64 is split into 4 micro-batches of
16, each loss divided by 4, and the user expects one update per 64 examples.  But the hooks fire at
every backward: each micro-batch's backward steps every parameter, so one "step" is 4 AdamW updates
on quarter-batch gradients (AdamW's step count is 4 after it, and Adam's normalisation undoes the
division by 4), and no gradient is ever accumulated: ``.grad`` is None after every backward.  Every
gradient is finite and nonzero; nothing raises.

Source: https://aiwiki.ai/wiki/galore/raw ("GaLore (Gradient Low-Rank Projection) is a
memory-efficient training strategy for large neural networks that projects each weight matrix's
gradient into a low-rank subspace before the Adam-style optimizer state is computed"; "Combined with
8-bit optimizer state quantization and per-layer weight updates, GaLore enables pretraining a
7-billion-parameter LLaMA-style model from scratch on a single 24 GB consumer GPU").  Adapted: the
per-layer updates without the low-rank projection (plain AdamW per parameter, as in PyTorch's recipe
for fusing the optimizer step into the backward), with 4-step accumulation; a regression MLP
``Linear(16, 64), Tanh, Linear(64, 64), Tanh, Linear(64, 1)``, AdamW at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://aiwiki.ai/wiki/galore/raw"
DESCRIPTION = "per-layer AdamW steps in post-accumulate-grad hooks with 4 micro-batches: 4 updates"
ASK = []
MUST = [
    [
        r"per[- ](layer|parameter)",
        r"post[_ -]accumulate",
        r"\bhooks?\b",
        r"accumulat\w*",
        r"micro-?batch\w*",
    ],
    [
        r"(4|four) (updates|steps|times)",
        r"(stepped|updated|steps?) (at|on|after|in) (every|each) (micro-?batch|backward)",
        r"(every|each) (micro-?batch|backward)[^\n]{0,60}(step\w*|updat\w*)",
        r"(never|not|no) accumulat\w*",
        r"accumulat\w*[^\n]{0,60}(defeat\w*|broken|no effect|does nothing|never happen\w*|lost)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
MICRO = 4


def make_model():
    return nn.Sequential(
        nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1)
    )


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 16, generator=g)
    y = (x[:, :4].sum(1, keepdim=True) + 0.1 * torch.randn(64, 1, generator=g)).tanh()
    return x, y


def step(watch, micro=MICRO):
    torch.manual_seed(0)
    model = make_model()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizers = {p: torch.optim.AdamW([p], lr=1e-3) for p in model.parameters()}

    def optimizer_hook(p):
        optimizers[p].step()
        optimizers[p].zero_grad()  # set_to_none: the gradient's memory is freed at once

    handles = [p.register_post_accumulate_grad_hook(optimizer_hook) for p in model.parameters()]
    x, y = data()
    grad_after_backward = []
    with watch(model) as w:
        for xs, ys in zip(x.chunk(micro), y.chunk(micro), strict=True):
            loss = F.mse_loss(model(xs), ys) / micro
            loss.backward()
            grad_after_backward.append([p.grad for p in model.parameters()])
    for h in handles:
        h.remove()
    steps = [int(optimizers[p].state[p]["step"]) for p in model.parameters()]
    return Run(w=w, model=model, before=before, steps=steps, grads=grad_after_backward)


def one_full_batch_update():
    """AdamW's first step on the full batch's gradient: what one update per 64 examples gives."""
    torch.manual_seed(0)
    model = make_model()
    x, y = data()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    return {n: p.detach() for n, p in model.named_parameters()}


def truth(run):
    assert all(g is None for grads in run.grads for g in grads)  # freed by the hooks
    assert run.steps == [MICRO] * len(run.steps)
    reference = one_full_batch_update()
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
        assert bool(torch.isfinite(p).all()), n
    moved = [
        float((p.detach() - run.before[n]).abs().max() / (reference[n] - run.before[n]).abs().max())
        for n, p in run.model.named_parameters()
    ]
    assert min(moved) > 2.0  # several updates where one was meant
