"""Control: a five-layer tanh MLP with Xavier initialisation on its first batch.  Most gradient
entries are tiny and centred on zero (the histograms the user found puzzling), yet each layer's
gradient norm is within a small factor of the others: nothing vanishes, nothing explodes.

Source: https://ai.stackexchange.com/questions/35460/how-to-explain-near-zero-gradients-on-first-epochs
("I will expect that on the first epochs the gradients far from zero ... But it is not the
case"; the comment: "Try observing L2 norm of gradients").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ai.stackexchange.com/questions/35460/how-to-explain-near-zero-gradients-on-first-epochs"
DESCRIPTION = "control: 5-layer tanh MLP, Xavier init: small entries, level layer norms"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, r"vanish", r"explod", r"\bdead\b"]


def _net():
    layers = []
    for i in range(5):
        lin = nn.Linear(20 if i == 0 else 64, 64)
        nn.init.xavier_normal_(lin.weight, gain=nn.init.calculate_gain("tanh"))
        nn.init.zeros_(lin.bias)
        layers += [lin, nn.Tanh()]
    return nn.Sequential(*layers, nn.Linear(64, 10))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    x, y = torch.randn(128, 20), torch.randint(0, 10, (128,))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        norms = [float(m.weight.grad.norm()) for m in model if isinstance(m, nn.Linear)]
        small = float((model[0].weight.grad.abs() < 1e-2).float().mean())
        opt.step()
    return Run(w=w, model=model, norms=norms, small=small)


def truth(run):
    assert run.small > 0.9  # most entries are tiny
    assert max(run.norms) / min(run.norms) < 10  # but the layers' norms are level
