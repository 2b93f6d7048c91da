"""Neural style transfer with the content and style targets taken from the feature network without
``detach``, while the network's parameters still require grad. The targets ``cnn(content)`` and
``gram(cnn(style))`` then carry a graph into the network's weights; the first ``loss.backward()``
inside the L-BFGS closure backpropagates through those target graphs too (and frees them), and the
second closure evaluation, within the same ``optimizer.step(closure)``, raises ``RuntimeError:
Trying to backward through the graph a second time``. Before it raised, the first backward also
wrote gradients into the feature network that is meant to stay fixed.

Source: https://fangdahan.medium.com/pytorch-style-transfer-tutorial-91e58d6b1055 ("Why `detach`
target from graph": "we 'detach' the target content from the tree used to dynamically compute the
gradient: this is a stated value, not a variable"; "Otherwise PyTorch will try to back propagate the
graph twice, however the classical error will appear: RuntimeError: Trying to backward through the
graph a second time"). Adapted: a two-layer tanh CNN stands for VGG, 16x16 random images, the image
started from white noise, ``torch.optim.LBFGS([img], max_iter=4)`` as in the tutorial, the targets
not detached.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://fangdahan.medium.com/pytorch-style-transfer-tutorial-91e58d6b1055"
DESCRIPTION = (
    "style transfer targets not detached from an unfrozen CNN: 2nd closure backward raises"
)
ASK = []
MUST = [
    [
        r"second time",
        r"(backward|backpropagat\w*)[^\n]{0,40}(twice|again)",
        r"(already|been) freed",
        r"retain_graph",
    ],
    [
        r"target",
        r"detach\w*",
        r"(graph|tensor)s? (built|made|computed|kept|created) (before|outside|once)",
        r"outside the (closure|loop|block)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


def features():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.Tanh(), nn.Conv2d(8, 8, 3, padding=1), nn.Tanh()
    )


def images():
    g = torch.Generator().manual_seed(1)
    return [torch.rand(1, 3, 16, 16, generator=g) for _ in range(3)]  # content, style, noise


def gram(f):
    _, c, h, w = f.shape
    m = f.reshape(c, h * w)
    return m @ m.t() / (c * h * w)


def step(watch):
    cnn = features()
    content, style, noise = images()
    content_target = cnn(content)  # no .detach(): the tutorial's ContentLoss detaches here
    style_target = gram(cnn(style))
    img = noise.clone().requires_grad_(True)  # the tutorial's white-noise start
    optimizer = torch.optim.LBFGS([img], max_iter=4)
    losses = []

    def closure():
        optimizer.zero_grad()
        f = cnn(img)
        loss = F.mse_loss(f, content_target) + 1e3 * F.mse_loss(gram(f), style_target)
        loss.backward()
        losses.append(loss.item())
        return loss

    error = None
    try:
        with watch(cnn) as w:
            optimizer.step(closure)
    except RuntimeError as e:
        error = e
    cnn_grads = [None if p.grad is None else p.grad.detach().clone() for p in cnn.parameters()]
    return Run(w=w, error=error, losses=losses, cnn_grads=cnn_grads, img=img)


def truth(run):
    assert run.error is not None
    assert "backward through the graph a second time" in str(run.error)
    assert len(run.losses) == 1  # the first closure evaluation ran, the second raised
    # the first backward reached the feature network through the targets' graphs
    assert all(g is not None and bool(g.abs().sum() > 0) for g in run.cnn_grads)
