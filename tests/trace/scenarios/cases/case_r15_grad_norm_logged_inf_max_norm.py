"""A healthy step people suspect: the total gradient norm is logged at every step with
``torch.nn.utils.clip_grad_norm_(model.parameters(), float('inf'))`` before ``optimizer.step()``.
The call returns the total norm of all gradients (as one vector) and, with ``max_norm=inf``, the
clip coefficient is ``min(inf / norm, 1) = 1``: no gradient is changed (each equal before and
after the call), the optimizer steps on the raw gradients.  The logged norm is finite and is the
norm of the concatenated gradients; every gradient is finite and nonzero.

Source: https://theneuralbase.pages.dev/pytorch/learn/intermediate/gradient-exploding-gradient-clipping/
("Training WITHOUT gradient clipping:" ... ``total_norm = torch.nn.utils.clip_grad_norm_(
model.parameters(), float('inf'))`` ... ``print(f" Epoch {epoch + 1}: loss = ..., gradient norm =
{total_norm:.4f}")`` then ``optimizer.step()``).  Adapted: the page's ReLU MLP (10-50-50-1) with
tanh, three iterations, SGD lr 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://theneuralbase.pages.dev/pytorch/learn/intermediate/gradient-exploding-gradient-clipping/"
DESCRIPTION = "healthy: clip_grad_norm_(params, inf) used only to log the norm; grads unchanged"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        (
            r"^summary:[^\n]*(max_norm[^\n]{0,20}inf|\binf(inity)?\b[^\n]{0,30}max_norm"
            r"|no clipping|not clip)"
        ),
    ]
]
MUST_NOT = [
    CLAIMS_ERROR,
    r"\bnan\b|non-?finite",
    r"gradients? (were |was |are )?(clipped|rescaled|scaled down)",
    r"no gradient",
    r"all-zero",
]


def step(watch):
    torch.manual_seed(42)
    model = nn.Sequential(
        nn.Linear(10, 50), nn.Tanh(), nn.Linear(50, 50), nn.Tanh(), nn.Linear(50, 1)
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    g = torch.Generator().manual_seed(1)
    X, y = torch.randn(32, 10, generator=g), torch.randn(32, 1, generator=g)
    logged, raw, kept = [], [], []
    with watch(model) as w:
        for _ in range(3):
            optimizer.zero_grad()
            output = model(X)
            loss = loss_fn(output, y)
            loss.backward()
            raw.append([p.grad.detach().clone() for p in model.parameters()])
            total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
            kept.append([p.grad.detach().clone() for p in model.parameters()])
            logged.append(float(total_norm))
            optimizer.step()
    return Run(w=w, logged=logged, raw=raw, kept=kept)


def truth(run):
    for norm, raw, kept in zip(run.logged, run.raw, run.kept, strict=True):
        flat = torch.cat([r.flatten() for r in raw])
        assert abs(norm - float(flat.norm())) < 1e-4 * (1 + norm)
        for r, k in zip(raw, kept, strict=True):
            assert torch.equal(r, k)  # the call changed nothing
            assert bool(torch.isfinite(r).all()) and bool(r.abs().sum() > 0)
