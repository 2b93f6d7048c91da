"""A hand-written AdamW step that bias-corrects the second moment but not the first: the update is
``m_t / (sqrt(v_hat_t) + eps)`` with ``m_t`` where ``m_hat_t = m_t / (1 - beta1^t)`` belongs. At the
first step ``m_1 = 0.1 g`` and ``v_hat_1 = g^2``: every adaptive update is 10 times too small, at the
second 5.3 times, and the shortfall fades only over the first hundred or so steps. Nothing is
non-finite; the weights move, just ten times less than AdamW would move them.

Source: https://lynx-cortex.pages.dev/phase-18-training-loop/theory/02-optimizer-and-schedule/ ("2.
Bias correction m_hat_t = m_t / (1 - beta_1^t) is not optional. At step t=1, m_1 = (1 - beta_1) g_1
= 0.1 g_1. Without bias correction, the first 100 steps update theta by ~10x less than they should";
"Common bug: implementing the update with m_t instead of m_hat_t"). Adapted: the page's AdamW
equations (beta1 0.9, beta2 0.95, eps 1e-8, weight decay 0.1, lr 3e-4) written out under
``torch.no_grad()`` for a tanh MLP classifier, three steps.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://lynx-cortex.pages.dev/phase-18-training-loop/theory/02-optimizer-and-schedule/"
DESCRIPTION = "hand-written AdamW with m_t instead of m_hat_t: first updates 10x too small"
ASK = []
MUST = [[r"bias[- ]correct\w*", r"1\s*-\s*(beta|β)\w*", r"m_?hat|m̂", r"10\s*(x|×|times)"]]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
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
                    v_hat = v_t / (1 - BETA2**t)
                    p.mul_(1 - LR * WD)
                    p.addcdiv_(m_t, v_hat.sqrt().add_(EPS), value=-LR)  # m_t, not m_hat
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
    for p0, p1, r1 in zip(run.history[0], run.history[1], ref[1], strict=True):
        decayed = p0 * (1 - LR * WD)
        mine, adamw = p1 - decayed, r1 - decayed
        assert bool(torch.isfinite(p1).all())
        ratio = float(mine.norm() / adamw.norm())
        assert 0.09 < ratio < 0.11, ratio  # the first update is ten times too small
    final = [float((a - b).norm()) for a, b in zip(run.history[3], ref[3], strict=True)]
    assert max(final) > 1e-4
