"""A hand-written LARS optimizer (SGD with momentum, each weight matrix's learning rate scaled by
its trust ratio ``eta * ||w|| / (||g|| + eps)``, biases excluded) on a classifier whose head weight
is zero-initialised.  For the head, ``||w|| = 0``: its trust ratio is 0 and so is its update,
whatever its gradient; it stays exactly zero, and because the logits then do not depend on the
hidden layer, the hidden layer's gradient is exactly zero too.  Only the head's bias (excluded from
the scaling) learns: the class frequencies.  Nothing raises; nothing is NaN.

Source: https://github.com/KLGR123/KLGR123.github.io ("LARS（Layer-wise Adaptive Rate Scaling）";
``\\text{trust\\_ratio}_\\ell = \\eta \\cdot \\frac{\\lVert w_\\ell\\rVert}{\\lVert g_\\ell \\rVert
+ \\epsilon}``, ``\\text{lr}_\\ell = \\text{lr} \\times \\text{trust\\_ratio}_\\ell``; "通常跳过 BN /
偏置层的层级自适应与权重衰减（trust ratio 置 1 即可）"; ``def _exclude(p_name)``, ``return ("bn" in n) or ("ln" in n)
or ("bias" in n)``).  Adapted: the page's formula as a small torch optimizer (``lr=0.1``,
``momentum=0.9``, ``eta=0.001``, ``eps=1e-9``, no weight decay), a ``Linear(10, 16)``, ``Tanh``,
``Linear(16, 3)`` classifier whose head weight starts at zero, 128 examples, two steps watched.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/KLGR123/KLGR123.github.io"
DESCRIPTION = "LARS trust ratio eta*||w||/||g||, zero-initialised head: ratio 0, head never moves"
ASK = ["2.weight", "0.weight"]
MUST = [
    [
        r"trust[- _]?ratio",
        r"\blars\b",
        r"(layer[- ]wise|per[- ]layer) (learning rate|lr|scal\w*)",
        r"(weight )?norm (is |of )?(0|zero)",
        r"\|\|\s*w\s*\|\|\s*=\s*0",
    ],
    [
        r"2\.weight[^\n]{0,80}(zero|0\b|did not move|didn't move|never (moved|moves|updated))",
        r"(did not|didn't|never) (move|change|update)",
        r"zero[- ]init\w*",
        r"(update|step) (is |was )?(exactly )?(0|zero)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class LARS(torch.optim.Optimizer):
    """The page's trust ratio; biases (by name) keep ratio 1."""

    def __init__(self, named_params, lr=0.1, momentum=0.9, eta=0.001, eps=1e-9):
        named = list(named_params)
        group = {"params": [p for _, p in named], "names": [n for n, _ in named]}
        super().__init__([group], {"lr": lr, "momentum": momentum, "eta": eta, "eps": eps})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for name, p in zip(group["names"], group["params"], strict=True):
                if p.grad is None:
                    continue
                g = p.grad
                if "bias" in name.lower():
                    ratio = 1.0
                else:
                    ratio = group["eta"] * p.norm() / (g.norm() + group["eps"])
                buf = self.state[p].setdefault("buf", torch.zeros_like(p))
                buf.mul_(group["momentum"]).add_(g * (group["lr"] * ratio))
                p.sub_(buf)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 3))
    with torch.no_grad():
        model[2].weight.zero_()  # zero-initialised head
    optimizer = LARS(model.named_parameters())
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    grads = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    params = dict(run.model.named_parameters())
    for g in run.grads:
        assert bool(g["2.weight"].abs().sum() > 0)  # the head has a gradient ...
        for n in ("0.weight", "0.bias"):
            assert bool((g[n] == 0).all()), n  # ... the hidden layer none
    assert bool((params["2.weight"].detach() == 0).all())  # ... and the head never moves
    assert torch.equal(params["0.weight"].detach(), run.before["0.weight"])
    assert not torch.equal(params["2.bias"].detach(), run.before["2.bias"])
