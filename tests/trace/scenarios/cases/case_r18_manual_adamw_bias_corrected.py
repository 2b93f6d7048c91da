"""Control: the same hand-written AdamW step with both moments bias-corrected, ``m_hat_t = m_t / (1
- beta1^t)`` and ``v_hat_t = v_t / (1 - beta2^t)``, decoupled weight decay ``theta <- theta (1 - lr
lambda)`` and the update ``lr * m_hat_t / (sqrt(v_hat_t) + eps)``. Three steps written out under
``torch.no_grad()`` end where ``torch.optim.AdamW`` with the same settings ends. Every weight stays
finite and moves; the model has no optimizer object, by design.

Source: https://lynx-cortex.pages.dev/phase-18-training-loop/theory/02-optimizer-and-schedule/
("AdamW - the equations as you write them"; "beta_1 = 0.9", "beta_2 = 0.95", "epsilon = 10^-8",
"lambda = 0.1"; "Bias correction m_hat_t = m_t / (1 - beta_1^t) is not optional"). Adapted: the
page's equations for a tanh MLP classifier, lr 3e-4, three steps.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://lynx-cortex.pages.dev/phase-18-training-loop/theory/02-optimizer-and-schedule/"
DESCRIPTION = "control: hand-written AdamW with both moments bias-corrected: matches AdamW"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"bias[- ]correct\w*[^\n]{0,40}(missing|not applied|absent|omitted)",
    r"(weights|parameters) (did not|didn't|never) (move|change|update)",
]
LR, BETA1, BETA2, EPS, WD = 3e-4, 0.9, 0.95, 1e-8, 0.1


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, x[:, :3].argmax(1)


def step(watch):
    model = make_model()
    params = list(model.parameters())
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    x, y = data()
    history = [[p.detach().clone() for p in params]]
    with watch(model) as w:
        for t in range(1, 4):
            for p in params:
                p.grad = None
            F.cross_entropy(model(x), y).backward()
            with torch.no_grad():
                for p, m_t, v_t in zip(params, m, v, strict=True):
                    m_t.mul_(BETA1).add_(p.grad, alpha=1 - BETA1)
                    v_t.mul_(BETA2).addcmul_(p.grad, p.grad, value=1 - BETA2)
                    m_hat = m_t / (1 - BETA1**t)
                    v_hat = v_t / (1 - BETA2**t)
                    p.mul_(1 - LR * WD)
                    p.addcdiv_(m_hat, v_hat.sqrt().add_(EPS), value=-LR)
            history.append([p.detach().clone() for p in params])
    return Run(w=w, x=x, y=y, history=history)


def reference(x, y):
    model = make_model()
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=LR, betas=(BETA1, BETA2), eps=EPS, weight_decay=WD
    )
    out = [[p.detach().clone() for p in model.parameters()]]
    for _ in range(3):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        out.append([p.detach().clone() for p in model.parameters()])
    return out


def truth(run):
    ref = reference(run.x, run.y)
    for mine, theirs in zip(run.history[1:], ref[1:], strict=True):
        for a, b in zip(mine, theirs, strict=True):
            assert torch.allclose(a, b, atol=1e-6)  # AdamW's steps
    for p0, p3 in zip(run.history[0], run.history[3], strict=True):
        assert bool(torch.isfinite(p3).all()) and not torch.equal(p0, p3)
