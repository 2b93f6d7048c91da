"""A monocular depth network trained for metric depth with Eigen et al.'s scale-invariant log loss
at ``lambda = 1``: per image, ``mean(d**2) - lambda * mean(d)**2`` with
``d = log(pred) - log(target)``.  At ``lambda = 1`` the loss does not change when every ``log(pred)`` of an image is shifted by the
same amount (its gradients over the pixels of an image sum to ``(2 / n) (1 - lambda) sum(d) = 0``):
the absolute scale is not trained.  The output layer's bias, which shifts every pixel's log
depth, gets a gradient that is zero up to float rounding (below 1e-6, against about 1e-2 for the
largest entry of its weight's), and the predictions keep whatever global scale the initialisation
gave them.  Every other gradient is finite and nonzero; nothing raises.

Source: http://guillesanbri.com/Scale-Invariant-Loss/ ("The catch about this function is that the
scale of the predicted output does not affect its magnitude"; "What a scale invariant loss function
does is calculate an error magnitude that does not take into account the scale discrepancy between
the ground truth annotation and the output predicted by our model").  Adapted: the network predicts
log depth directly (``Conv2d(1, 8, 3)``, ``Tanh``, ``Conv2d(8, 1, 3)``), 8 synthetic 16 x 16 scenes
(a tilted plane at a distance of 2 to 6 per scene, shaded by depth), SGD at 1e-2 (Adam would turn
the bias's rounding noise into steps of the full learning rate).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "http://guillesanbri.com/Scale-Invariant-Loss/"
DESCRIPTION = "scale-invariant log loss at lambda = 1: the output bias (global scale) gets ~0 grad"
ASK = ["2.bias"]
MUST = [
    [
        r"scale[- ]invarian\w*",
        r"lambda",
        r"λ",
        r"(mean|offset|shift|constant|scale)[^\n]*cancel\w*",
        r"cancel\w*[^\n]*(mean|offset|shift|constant|scale)",
        r"global scale",
        r"absolute scale",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


def silog(log_pred, log_target, lam):
    d = (log_pred - log_target).flatten(1)
    return (d.pow(2).mean(1) - lam * d.mean(1).pow(2)).mean()


def data():
    g = torch.Generator().manual_seed(1)
    rows = torch.linspace(0.0, 1.0, 16).view(1, 1, 16, 1)
    distance = 2.0 + 4.0 * torch.rand(8, 1, 1, 1, generator=g)
    depth = distance * (1.0 + 0.5 * rows) * torch.ones(8, 1, 16, 16)
    image = torch.exp(-depth / 4.0) + 0.02 * torch.randn(depth.shape, generator=g)
    return image, depth


def step(watch, lam=1.0):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.Tanh(), nn.Conv2d(8, 1, 3, padding=1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    image, depth = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = silog(model(image), depth.log(), lam)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, grads=grads)


def truth(run):
    assert float(run.grads["2.bias"].abs()) < 1e-6  # the global shift is not trained
    assert float(run.grads["2.weight"].abs().max()) > 1e-3
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
        if n != "2.bias":
            assert bool(g.abs().sum() > 0), n
