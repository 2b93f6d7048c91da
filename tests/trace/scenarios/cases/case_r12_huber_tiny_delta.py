"""A regressor trained with ``nn.HuberLoss(delta=1e-3)``, chosen to get an L1-like loss on a target
of scale about 5 ("as delta -> 0 it approaches MAE").  In torch's Huber loss the linear part has
slope ``delta``: ``delta * (|r| - delta / 2)`` for ``|r| > delta``.  Every residual here is far
above 1e-3, so the loss's gradient with respect to each prediction is ``delta * sign(r) / N``:
1000 times smaller than the L1 (or ``SmoothL1Loss``) gradient, and the loss itself about 1000 times
smaller than the errors.  The two SGD steps move the weights about a thousandth of what an L1 loss
would; nothing is non-finite and nothing raises.

Source: https://www.howistudyai.com/concepts/9c718fab-fd5e-4585-b6bb-aa022863533a ("Huber Loss &
Smooth L1 ... As delta -> infinity, Huber becomes MSE; as delta -> 0, it approaches MAE";
"Smooth L1 is essentially a rescaled Huber loss: smoothL1_beta(x) = (1/beta) Huber_beta(x)").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://www.howistudyai.com/concepts/9c718fab-fd5e-4585-b6bb-aa022863533a"
DESCRIPTION = "HuberLoss(delta=1e-3) on errors of ~5: gradient delta * sign(r) / N, 1000x small"
ASK = []
MUST = [
    [r"huber", r"\bdelta\b", r"δ"],
    [
        r"1e-0?3",
        r"0\.001\b",
        r"(tiny|small|scaled|multipl\w*|shrunk|shrinks)",
        r"slope",
        r"vanish",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"detach", r"dead (units?|relu|neurons?)"]
DELTA = 1e-3


def step(watch, loss_fn=None):
    loss_fn = loss_fn if loss_fn is not None else nn.HuberLoss(delta=DELTA)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 4, generator=g)
    y = 5 * (x @ torch.tensor([[1.0], [-2.0], [0.5], [1.5]])) / 2 + torch.randn(64, 1, generator=g)
    out_grads, residuals, losses = [], [], []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            out = model(x)
            out.retain_grad()
            loss = loss_fn(out, y)
            loss.backward()
            out_grads.append(out.grad.detach().clone())
            residuals.append((out - y).detach())
            losses.append(loss.item())
            opt.step()
    return Run(w=w, out_grads=out_grads, residuals=residuals, losses=losses)


def truth(run):
    for og, r in zip(run.out_grads, run.residuals, strict=True):
        assert bool((r.abs() > DELTA).all())
        assert torch.allclose(og, DELTA * torch.sign(r) / r.numel(), rtol=1e-5, atol=0)
    assert run.losses[0] < 0.01 * run.residuals[0].abs().mean().item()
