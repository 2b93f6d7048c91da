"""A SigLIP image-text step that writes the pairwise sigmoid loss as ``log(1 + exp(-y_ij * z_ij))``,
which expects ``y = +1`` for a matching pair and ``y = -1`` otherwise, but builds the labels with
``torch.eye(n)``: 1 on the diagonal, 0 elsewhere.  For every non-matching pair ``y * z = 0`` and its
loss is the constant ``log 2`` whatever the similarity: the 992 negative pairs of the batch of 32
contribute no gradient at all (``dL/dz`` is exactly 0 off the diagonal), and the two towers, the
temperature and the bias are trained on the 32 positive pairs only, which a model raising every
similarity satisfies.  The loss is finite, every parameter's gradient finite and nonzero; nothing
raises.

Source: https://www.yobitel.com/knowledge-base/siglip ("SigLIP replaces softmax with a sigmoid loss
applied independently to every (image, text) pair"; "For each image-text pair (i, j): z_ij = t *
(image_i · text_j) + b loss_ij = log(1 + exp(-y_ij * z_ij)) where y_ij = +1 if i == j (positive
pair), -1 otherwise (t, b) are learned temperature and bias scalars").  Adapted: the formula with
``torch.eye`` labels; an image tower ``Linear(32, 64), GELU, Linear(64, 16)`` on 32-d features, a
text tower ``EmbeddingBag(50, 16)`` on 6 tokens, both L2-normalised, ``t = exp(t')`` with ``t' = log
10`` and ``b = -10`` as the paper initialises them, the loss summed over pairs and divided by the
batch size, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.yobitel.com/knowledge-base/siglip"
DESCRIPTION = "SigLIP log(1 + exp(-y z)) with y = torch.eye: negatives' loss log 2, no gradient"
ASK = []
MUST = [
    [r"label\w*", r"\by(_ij)?\b", r"torch\.eye|\beye\b", r"negative (pairs?|examples?)"],
    [
        r"(-1|−1|minus one|±1|\+/-1|\{-1, ?\+?1\})",
        r"(0|zero)[^\n]{0,30}(instead of|rather than|not)[^\n]{0,10}(-1|−1)",
        r"log\s?\(?2\)?|constant",
        r"negative (pairs?|examples?)[^\n]{0,80}(no|zero) (gradient|signal|contribution)",
        r"(no|zero) (gradient|signal|contribution)[^\n]{0,80}negative (pairs?|examples?)",
        r"off[- ]diagonal",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
N = 32


class TwoTowers(nn.Module):
    def __init__(self):
        super().__init__()
        self.image = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 16))
        self.text = nn.EmbeddingBag(50, 16)
        self.t_prime = nn.Parameter(torch.tensor(math.log(10.0)))
        self.b = nn.Parameter(torch.tensor(-10.0))

    def forward(self, images, texts):
        img = F.normalize(self.image(images), dim=-1)
        txt = F.normalize(self.text(texts), dim=-1)
        return self.t_prime.exp() * img @ txt.T + self.b


def data():
    g = torch.Generator().manual_seed(1)
    texts = torch.randint(0, 50, (N, 6), generator=g)
    mixing = torch.randn(50, 32, generator=g)
    images = mixing[texts].mean(1) + 0.1 * torch.randn(N, 32, generator=g)
    return images, texts


def step(watch, signed=False):
    torch.manual_seed(0)
    model = TwoTowers()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, texts = data()
    labels = 2 * torch.eye(N) - 1 if signed else torch.eye(N)
    with watch(model) as w:
        optimizer.zero_grad()
        z = model(images, texts)
        z.retain_grad()
        loss = F.softplus(-labels * z).sum() / N  # log(1 + exp(-y z))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, z_grad=z.grad.detach(), loss=float(loss.detach()), grads=grads)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    off = ~torch.eye(N, dtype=torch.bool)
    assert bool((run.z_grad[off] == 0).all())  # the negatives give nothing
    assert bool((run.z_grad.diagonal() < 0).all())
