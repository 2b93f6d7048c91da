"""A tiny language model (embedding, one residual MLP block, a final ``nn.RMSNorm``, a bias-free
output layer) whose final norm's weight is initialised to zeros, as for a norm that adds 1 to its
weight, while ``nn.RMSNorm`` multiplies by the weight itself.  Its output is ``0 * x / rms(x) = 0``
for every token: the hidden states reaching ``head`` are zero, the logits are zero (uniform
predictions, loss ``log 16``), ``head.weight`` gets an exactly all-zero gradient (its input is
zero) and so do ``emb.weight`` and the block (the norm's derivative with respect to its input is
its weight, 0).  Only ``norm.weight`` itself gets a nonzero gradient; the one SGD step moves nothing
else.

Source: https://github.com/pytorch/torchtitan/pull/4489 ("The final output norm uses
``gain_center=0.0`` and inherited zero weight initialization from ``_gain_norm``, resulting in zero
effective scale at initialization.  This zeros the final hidden states and logits, and produces
zero gradients for the decoder and lm_head on the first backward pass").
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/torchtitan/pull/4489"
DESCRIPTION = "final RMSNorm weight zero-initialised: zero logits, all-zero grads but norm.weight"
ASK = ["head.weight"]
MUST = [
    [r"^summary:[^\n]*(head|emb|mlp)\.", r"^why head\.weight:[^\n]*(zero|0\b)"],
    [
        r"\bnorm\.weight",
        r"rms_?norm",
        r"final norm",
        r"norm(ali[sz]ation)? (layer|module)",
        r"[`'\"]norm[`'\"]",
        r"\bnorm (output|weight|scale)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"no_grad",
    r"detach",
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
]
VOCAB, DIM = 16, 16


class TinyLM(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 32), nn.Tanh(), nn.Linear(32, DIM))
        self.norm = norm
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        h = self.emb(tokens)
        h = h + self.mlp(h)
        return self.head(self.norm(h))


def zero_init_rmsnorm():
    norm = nn.RMSNorm(DIM)
    nn.init.zeros_(norm.weight)
    return norm


def step(watch, make_norm=zero_init_rmsnorm):
    torch.manual_seed(0)
    model = TinyLM(make_norm())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    seq = torch.stack(
        [
            torch.cat(
                [torch.randperm(VOCAB, generator=g), torch.randint(0, VOCAB, (1,), generator=g)]
            )
            for _ in range(4)
        ]
    )
    x, y = seq[:, :-1], seq[:, 1:]  # every token appears in every input row
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    moved = {n: not torch.equal(p.detach(), before[n]) for n, p in model.named_parameters()}
    return Run(w=w, logits=logits.detach(), loss=loss.item(), grads=grads, moved=moved)


def truth(run):
    assert bool((run.logits == 0).all())
    assert abs(run.loss - math.log(VOCAB)) < 1e-5
    for n, gr in run.grads.items():
        if n == "norm.weight":
            assert bool(gr.abs().sum() > 0) and run.moved[n]
        else:
            assert bool((gr == 0).all()) and not run.moved[n], n
