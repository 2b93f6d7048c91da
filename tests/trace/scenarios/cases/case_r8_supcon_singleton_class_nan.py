"""Supervised contrastive loss over a batch: normalised embeddings, similarities divided by a
temperature, the anchor itself left out of the softmax by a mask, and for each anchor the mean log
probability of its positives (the other examples of its class), ``(mask * log_prob).sum(1) /
mask.sum(1)`` as the SupCon reference code writes it.  The batch holds two classes with a single example each: those anchors have no
positive, ``pos.sum(1)`` is 0, their term is ``0 / 0 = NaN``, and so is the loss; in the
backward the division sends ``1 / 0 = inf`` to the masked sum, ``0 * inf`` is NaN, and every
gradient of the encoder is NaN.

Source: https://nowutnrom.pages.dev/4archives/Literature%20Notes/Readings/Paper%20Supervised%20Contrastive%20Learning%20for%20Pre-trained%20Language%20Model%20Fine-tuning.html
(notes on the SCL loss: "similarity[i] = .0 # turn off self similarity"; "loss[i] = -
1/(labels.count(labels[i]) - 1) * similarity[labels == labels[i]]", a division by zero for a class
seen once in the batch).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://nowutnrom.pages.dev/4archives/Literature%20Notes/Readings/"
    "Paper%20Supervised%20Contrastive%20Learning%20for%20Pre-trained%20Language%20Model%20"
    "Fine-tuning.html"
)
DESCRIPTION = "SupCon loss, two classes seen once in the batch: no positive, 0/0 NaN loss"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [r"\bdiv", r"0\s*/\s*0", r"by zero", r"no positive", r"(in|by|at|from) the loss"],
]
MUST_NOT = [FALSE_OK, r"explod", r"learning rate"]

LABELS = {
    "singletons": [0, 0, 1, 1, 2, 2, 3, 4],  # classes 3 and 4 appear once
}


def supcon(z, labels, tau=0.1, guard=False):
    """The SupCon reference form: self-similarity removed by a mask, positives by a 0/1 mask."""
    z = F.normalize(z, dim=1)
    n = z.shape[0]
    logits = z @ z.t() / tau
    logits = logits - logits.max(dim=1, keepdim=True).values.detach()
    logits_mask = 1.0 - torch.eye(n)
    log_prob = logits - torch.log((torch.exp(logits) * logits_mask).sum(1, keepdim=True))
    mask = (labels[:, None] == labels[None, :]).float() * logits_mask
    count = mask.sum(1)
    if guard:  # anchors without a positive count once and contribute 0
        count = torch.where(count < 1e-6, torch.ones_like(count), count)
    per_anchor = (mask * log_prob).sum(1) / count
    return -per_anchor.mean(), mask.sum(1)


def step(watch, guard: bool = False):
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 8))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 12, generator=g)
    labels = torch.tensor(LABELS["singletons"])
    opt = torch.optim.SGD(encoder.parameters(), lr=0.05)
    with watch(encoder) as w:
        opt.zero_grad()
        loss, positives = supcon(encoder(x), labels, guard=guard)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in encoder.named_parameters()}
        opt.step()
    return Run(w=w, loss=loss.item(), positives=positives, grads=grads)


def truth(run):
    assert run.positives.tolist()[-2:] == [0.0, 0.0]  # the two singleton anchors have no positive
    assert run.loss != run.loss  # NaN
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
