"""A hard, discrete choice made by hand: a selector scores 4 expert heads, Gumbel noise is added to
its logits, the argmax picked and turned into a one-hot vector with ``F.one_hot(...).float()``,
which weights the heads' outputs.  ``argmax`` and ``one_hot`` are integer operations: the one-hot
has no graph, the selector gets no gradient (``.grad`` None) and never learns which head to pick;
the heads train on the examples routed to them.  The straight-through trick of
``F.gumbel_softmax(hard=True)``, ``y_hard - y_soft.detach() + y_soft``, is what was left out.

Source: https://pytorch.org/docs/1.12/generated/torch.nn.functional.gumbel_softmax.html ("The main
trick for hard is to do y_hard - y_soft.detach() + y_soft.  It achieves two things: - makes the
output value exactly one-hot ... - makes the gradient equal to y_soft gradient").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://pytorch.org/docs/1.12/generated/torch.nn.functional.gumbel_softmax.html"
DESCRIPTION = (
    "hard choice one_hot(argmax(logits + gumbel)) without straight-through: selector no grad"
)
ASK = ["selector.weight"]
MUST = [
    [r"^summary:[^\n]*selector"],
    [
        r"argmax",
        r"one_hot",
        r"one-hot",
        r"integer",
        r"\bindex",
        r"straight-through",
        r"gumbel",
        r"not differentiable",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad"]
K = 4


class HardChoice(nn.Module):
    def __init__(self):
        super().__init__()
        self.selector = nn.Linear(8, K)
        self.heads = nn.ModuleList(nn.Linear(8, 1) for _ in range(K))

    def forward(self, x, straight_through: bool):
        logits = self.selector(x)
        if straight_through:
            choice = F.gumbel_softmax(logits, tau=1.0, hard=True)
        else:
            u = torch.rand_like(logits)
            gumbel = -torch.log(-torch.log(u + 1e-10) + 1e-10)
            choice = F.one_hot((logits + gumbel).argmax(-1), K).float()
        outs = torch.cat([head(x) for head in self.heads], dim=1)
        return (choice * outs).sum(1, keepdim=True), choice


def step(watch, straight_through: bool = False):
    torch.manual_seed(0)
    model = HardChoice()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 8, generator=g), torch.randn(64, 1, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        pred, choice = model(x, straight_through)
        loss = F.mse_loss(pred, y)
        loss.backward()
        opt.step()
    grads = {n: p.grad for n, p in model.named_parameters()}
    return Run(w=w, grads=grads, choice=choice.detach())


def truth(run):
    assert bool(((run.choice == 0) | (run.choice == 1)).all())
    assert bool((run.choice.sum(1) == 1).all())
    assert run.grads["selector.weight"] is None and run.grads["selector.bias"] is None
    for k in range(K):
        assert run.grads[f"heads.{k}.weight"] is not None, k
