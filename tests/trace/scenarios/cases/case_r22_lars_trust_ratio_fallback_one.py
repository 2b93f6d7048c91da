"""The control of ``lars_zero_init_head_trust_ratio_zero``: the same LARS optimizer and classifier
with the trust ratio falling back to 1 when the weight's norm or the gradient's norm is zero, as
the reference implementation does.  The zero-initialised head takes a plain momentum-SGD first
step and moves; from the second step on the hidden layer gets a gradient and every parameter
trains.  (On the first step the hidden layer's gradient is zero, as for any zero-initialised head:
the logits do not yet depend on it.)

Source: https://junaidaliop.github.io/zij/math/lars/ ("Each multidimensional parameter (treated as
a layer) is given a local learning rate proportional to the ratio between the norm of its weights
and the norm of its gradient"; "The trust ratio lambda^l falls back to one when either norm is
zero. Parameters with one dimension or fewer (biases and scalars) skip the rate scaling").
Adapted: the bug's optimizer (``lr=0.1``, ``momentum=0.9``, ``eta=0.001``) with the fallback, the
bug's ``Linear(10, 16)``, ``Tanh``, ``Linear(16, 3)`` classifier with its head weight at zero, 128
examples, two steps watched.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://junaidaliop.github.io/zij/math/lars/"
DESCRIPTION = "control: LARS with trust ratio 1 when a norm is zero: the zero-init head moves"
ASK = []
MUST = [[HEALTHY_OK, r"zero[- ]init\w*", r"first step"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"trust[- _]?ratio[^\n]{0,40}(is |was |of )?(0|zero)\b",
    r"(never|did not|didn't) (move|moved|update|change)",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class LARS(torch.optim.Optimizer):
    """Trust ratio eta * ||w|| / (||g|| + eps), 1 for biases and when either norm is zero."""

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
                w_norm, g_norm = p.norm(), g.norm()
                if "bias" in name.lower() or w_norm == 0 or g_norm == 0:
                    ratio = 1.0
                else:
                    ratio = group["eta"] * w_norm / (g_norm + group["eps"])
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
        model[2].weight.zero_()
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
    assert bool(run.grads[0]["2.weight"].abs().sum() > 0)
    assert bool((run.grads[0]["0.weight"] == 0).all())  # first step: the zero head, as expected
    for n, g in run.grads[1].items():  # second step: every parameter has a gradient
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in params.items():
        assert not torch.equal(p.detach(), run.before[n]), n
