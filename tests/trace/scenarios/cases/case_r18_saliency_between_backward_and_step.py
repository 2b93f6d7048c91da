"""A saliency map logged in the middle of a training step, between ``loss.backward()`` and
``optimizer.step()``. The helper does what the page's ``compute_saliency_map`` does: it runs the
model on a detached copy of one image with ``requires_grad_()``, calls ``model.zero_grad()`` and
back-propagates the predicted class's score ``output[0, c]``. ``zero_grad`` throws away the batch
gradient the training loss had just put in every ``.grad``, and the score's backward fills them
with the gradient of one image's class score instead; ``optimizer.step()`` then moves the weights
along that gradient (a step down the class score, the loss of the batch ignored). Every gradient is
finite and nonzero; nothing raises.

Source: https://drclab.github.io/posts/deep_learning/torch_402 ("def compute_saliency_map(model,
input_image, target_class=None)": "input_image.requires_grad_()", "model.zero_grad()",
"output[0, target_class].backward()", "gradients = input_image.grad.data[0]"). Adapted: the helper
called inside the training step on the batch's first image; a tanh MLP on 8x8 one-channel images,
three classes, SGD without momentum.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://drclab.github.io/posts/deep_learning/torch_402"
DESCRIPTION = "saliency (model.zero_grad + score backward) between backward and step: wrong grads"
ASK = []
MUST = [
    [
        r"zero_grad[^\n]{0,80}(between|after)[^\n]{0,40}backward",
        r"(second|another|extra|other|later) backward",
        r"saliency",
        r"(overwr\w*|replac\w*|discard\w*|wip\w*|clear\w*|zeroed)[^\n]{0,60}grad",
        r"grad\w*[^\n]{0,60}(overwr\w*|replac\w*|discard\w*|wip\w*|clear\w*|zeroed)",
        r"not (the|from the) (training )?loss",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"zero_grad(\(\))? (is |was )?(missing|never called)"]
LR = 0.1


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 3))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 1, 8, 8, generator=g)
    return x, (x[:, 0, :4].sum((1, 2)) > 0).long() + (x[:, 0, 4:].sum((1, 2)) > 0).long()


def compute_saliency_map(model, input_image, target_class=None):
    input_image = input_image.clone().detach()
    input_image.requires_grad_()
    output = model(input_image)
    if target_class is None:
        target_class = output.argmax(dim=1).item()
    model.zero_grad()
    output[0, target_class].backward()
    return input_image.grad.data[0].abs().sum(dim=0), target_class


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        saliency, target = compute_saliency_map(model, x[:1])  # logged mid-step
        stepped = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, x=x, y=y, target=target, stepped=stepped, saliency=saliency)


def truth(run):
    model = make_model()
    score = model(run.x[:1])[0, run.target]
    score_grads = torch.autograd.grad(score, list(model.parameters()))
    loss_grads = torch.autograd.grad(F.cross_entropy(model(run.x), run.y), list(model.parameters()))
    for s, c, lg in zip(run.stepped, score_grads, loss_grads, strict=True):
        assert torch.allclose(s, c, atol=1e-6)  # the step used the class score's gradient
        assert not torch.allclose(s, lg, atol=1e-3)  # not the training loss's
        assert bool(torch.isfinite(s).all()) and bool(s.abs().sum() > 0)
    assert run.saliency.shape == (8, 8)
