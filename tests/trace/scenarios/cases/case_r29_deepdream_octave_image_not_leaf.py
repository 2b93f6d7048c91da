"""DeepDream over two octaves with a frozen network: gradient ascent on the image, the network's
parameters set to ``requires_grad=False``.  The first octave's image is a leaf that requires grad
and its own ``torch.optim.SGD([img])`` ascends it for two iterations.  The next octave upsamples it
with ``F.interpolate(img, scale_factor=1.4)``: the result is computed from a tensor that requires
grad, so it is not a leaf, and building the octave's optimizer raises ``ValueError: can't optimize a
non-leaf Tensor``.  The second octave never runs; the network's parameters never get a ``.grad``
(they are frozen by design) and do not move.

Source: https://sigmoidprime.com/post/deepdream/ ("DeepDream is a wonderfully simple technique
designed to expose the abstract patterns hidden within the interconnections of trained neural
networks"; "We will also program an implementation of the algorithm using PyTorch and apply it to a
pretrained version of the Inception-v3 model").  Adapted: the octave's image upsampled without
``detach()`` (the page gives the algorithm, not the slip); a seeded random network ``Conv2d(3, 8,
3), ELU, Conv2d(8, 16, 3), ELU, Conv2d(16, 16, 3)`` (padding 1) in place of Inception, the loss
minus the mean square of its last activations, a 16 x 16 random image, octave scale 1.4, two SGD
iterations at 0.5 per octave.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://sigmoidprime.com/post/deepdream/"
DESCRIPTION = "DeepDream octave img = interpolate(img) without detach: SGD([img]) raises non-leaf"
ASK = []
MUST = [
    [r"\braised\b", r"ValueError", r"exception", r"\berror\b"],
    [
        r"non-?leaf",
        r"\bleaf\b",
        r"interpolate",
        r"detach",
        r"requires_grad_",
        r"(image|input)[^\n]{0,60}(graph|history|computed|result of)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
OCTAVES, ITERATIONS, SCALE = 2, 2, 1.4


def network():
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ELU(),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ELU(),
        nn.Conv2d(16, 16, 3, padding=1),
    )
    net.eval().requires_grad_(False)
    return net


def step(watch, detach=False):
    net = network()
    before = {n: p.detach().clone() for n, p in net.named_parameters()}
    g = torch.Generator().manual_seed(1)
    img = torch.rand(1, 3, 16, 16, generator=g).requires_grad_(True)
    images, error = [], None
    try:
        with watch(net) as w:
            for octave in range(OCTAVES):
                if octave > 0:
                    base = img.detach() if detach else img
                    img = F.interpolate(base, scale_factor=SCALE, mode="bilinear")
                    if detach:
                        img.requires_grad_(True)
                start = img.detach().clone()
                optimizer = torch.optim.SGD([img], lr=0.5)
                for _ in range(ITERATIONS):
                    optimizer.zero_grad()
                    loss = -net(img).pow(2).mean()  # ascend the activations
                    loss.backward()
                    optimizer.step()
                images.append((start, img.detach().clone()))
    except ValueError as e:
        error = e
    return Run(w=w, net=net, before=before, error=error, images=images)


def truth(run):
    assert run.error is not None and "can't optimize a non-leaf Tensor" in str(run.error)
    assert len(run.images) == 1  # the first octave ran, the second never did
    start, end = run.images[0]
    assert not torch.equal(start, end)
    for n, p in run.net.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
