"""Control: neural style transfer done as the PyTorch tutorial does it. The feature network is
frozen (``requires_grad_(False)``), the content and style targets are detached, and L-BFGS optimises
the pixels of the input image only (``LBFGS([img])``), re-evaluating the closure several times per
step. No parameter of the network gets a gradient (by design: none is trained), the image gets a
finite nonzero gradient, nothing raises, and the loss falls within the step.

Source: https://www.dangdatascience.com/projects/style-transfer/ ("The authors of the original paper
suggest using the LBFGS optimization algorithm"; "we used gradient descent to approach the
representation we wanted. To do this the optimizer used the sum of the two gradients from each
loss"; "A great set of starter code for this can be found in the Pytorch tutorials"). Adapted: a
two-layer tanh CNN stands for VGG, 16x16 random images, the image started from white noise,
``LBFGS([img], max_iter=4)``.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.dangdatascience.com/projects/style-transfer/"
DESCRIPTION = "control: style transfer, frozen CNN, detached targets, LBFGS on the image pixels"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"requires_grad\s*=?\s*False",
        r"frozen",
        r"(input )?image",
        r"not (a )?(model )?parameters? of the model|outside the model",
    ]
]
MUST_NOT = [
    CLAIMS_ERROR,
    CLAIMS_NONFINITE,
    r"second time",
    r"retain_graph",
    r"not in (the |any )?optimizer",
]


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
    cnn = features().requires_grad_(False)
    content, style, noise = images()
    content_target = cnn(content).detach()
    style_target = gram(cnn(style)).detach()
    img = noise.clone().requires_grad_(True)  # the tutorial's white-noise start
    optimizer = torch.optim.LBFGS([img], max_iter=4)
    losses, img_grads = [], []

    def closure():
        optimizer.zero_grad()
        f = cnn(img)
        loss = F.mse_loss(f, content_target) + 1e3 * F.mse_loss(gram(f), style_target)
        loss.backward()
        losses.append(loss.item())
        img_grads.append(img.grad.detach().clone())
        return loss

    error = None
    try:
        with watch(cnn) as w:
            optimizer.step(closure)
    except RuntimeError as e:
        error = e
    cnn_grads = [None if p.grad is None else p.grad.detach().clone() for p in cnn.parameters()]
    return Run(w=w, error=error, losses=losses, cnn_grads=cnn_grads, img=img, img_grads=img_grads)


def truth(run):
    assert run.error is None
    assert len(run.losses) > 1  # the closure ran several times in one step
    assert run.losses[-1] < run.losses[0]
    assert all(g is None for g in run.cnn_grads)  # nothing of the network is trained
    for g in run.img_grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
