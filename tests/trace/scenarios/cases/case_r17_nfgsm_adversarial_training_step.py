"""A healthy step: single-step adversarial training with Noise-FGSM. Each clean input is moved by
uniform noise of twice the radius, the input gradient at the noisy point is taken with
``torch.autograd.grad`` (which leaves the parameters' ``.grad`` untouched), the FGSM step ``eps *
sign(grad)`` is added without clipping back to the eps-ball, and the classifier is trained on the
perturbed batch with an ordinary ``zero_grad`` / ``backward`` / ``step``. The parameters' gradients
are exactly those of the loss at the adversarial inputs, finite and nonzero; the perturbation
reaches beyond ``eps`` on purpose.

Source: https://ar5iv.labs.arxiv.org/html/2202.01181 ("Make Some Noise: Reliable and Efficient
Single-Step Adversarial Training": "we find that using a stronger noise around the clean sample
combined with not clipping is highly effective in avoiding CO for large perturbation radii. We then
propose Noise-FGSM (N-FGSM)"). Adapted: a tanh MLP on synthetic 20-feature inputs in [0, 1], eps =
0.1, noise radius 2 eps, SGD with momentum.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ar5iv.labs.arxiv.org/html/2202.01181"
DESCRIPTION = "healthy: N-FGSM adversarial training, input grad by autograd.grad, no clipping"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"leak\w*",
    r"accumulated (from|over|across)",
    r"no gradient",
]
EPS = 0.1


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(128, 20, generator=g)
    y = ((x[:, :10].sum(1) - x[:, 10:].sum(1)) > 0).long()
    return x, y, g


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y, g = data()
    with watch(model) as w:
        noise = (2 * torch.rand(x.shape, generator=g) - 1) * 2 * EPS
        x_noisy = (x + noise).requires_grad_(True)
        attack_loss = F.cross_entropy(model(x_noisy), y)
        (x_grad,) = torch.autograd.grad(attack_loss, x_noisy)
        x_adv = (x_noisy + EPS * x_grad.sign()).detach()  # no projection to the eps-ball
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x_adv), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        before = [p.detach().clone() for p in model.parameters()]
        optimizer.step()
    after = [p.detach().clone() for p in model.parameters()]
    return Run(w=w, model=model, x=x, y=y, x_adv=x_adv, grads=grads, before=before, after=after)


def truth(run):
    assert float((run.x_adv - run.x).abs().max()) > EPS  # not clipped to the eps-ball
    model = run.model
    params = list(model.parameters())
    with torch.no_grad():
        for p, b in zip(params, run.before, strict=True):
            p.copy_(b)
    expect = torch.autograd.grad(F.cross_entropy(model(run.x_adv), run.y), params)
    for g, e in zip(run.grads, expect, strict=True):
        assert torch.allclose(g, e, atol=1e-6)  # only the training loss's gradient, no leak
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for b, a in zip(run.before, run.after, strict=True):
        assert not torch.equal(a, b)
