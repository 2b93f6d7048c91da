"""A healthy step with intended missing gradients: a language-model-like classifier over 200
classes with ``nn.AdaptiveLogSoftmaxWithLoss`` (cutoffs 10 and 50: a head with the 10 most
frequent classes and two tail clusters), trained on a batch of 16 examples whose Zipf-distributed
targets all fall below 50.  The module evaluates only the clusters that hold at least one target:
the second tail cluster (classes 50 to 199) is not run, so its two projections ``asm.tail.1.0``
and ``asm.tail.1.1`` get no gradient (``.grad`` stays ``None``) and Adam leaves them; the head,
the first cluster and the encoder get finite, nonzero gradients.  Nothing is wrong.

Source: https://mlverse.github.io/torch/reference/nn_adaptive_log_softmax_with_loss.html (the R
torch page of the same module: "Adaptive softmax partitions the labels into several clusters,
according to their frequency"; "For each minibatch, only clusters for which at least one target
is present are evaluated").  Adapted: PyTorch's ``nn.AdaptiveLogSoftmaxWithLoss(32, 200, [10,
50])`` after a ``Linear(10, 32), Tanh`` encoder, targets drawn with probabilities proportional to
``1 / (k + 1)`` (Zipf), Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://mlverse.github.io/torch/reference/nn_adaptive_log_softmax_with_loss.html"
DESCRIPTION = "healthy: adaptive softmax, no target in tail cluster 2: its projections get no grad"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"(cluster|tail)[^\n]{0,80}(no target|not (evaluated|used|run|reached)|absent|unused)",
        r"(no target|none of the targets)[^\n]{0,80}(cluster|tail|class)",
        r"tail\.1",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"detach\w*",
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.Tanh())
        self.asm = nn.AdaptiveLogSoftmaxWithLoss(32, 200, cutoffs=[10, 50], div_value=4.0)

    def forward(self, x, y):
        return self.asm(self.encoder(x), y)


def data():
    g = torch.Generator().manual_seed(1)
    probs = 1.0 / (torch.arange(200, dtype=torch.float32) + 1)
    y = torch.multinomial(probs, 16, replacement=True, generator=g)
    x = torch.randn(16, 10, generator=g) + torch.nn.functional.one_hot(y % 10, 10).float()
    return x, y


def step(watch):
    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(x, y)
        out.loss.backward()
        grads = {
            n: None if p.grad is None else p.grad.detach().clone()
            for n, p in model.named_parameters()
        }
        optimizer.step()
    return Run(w=w, model=model, y=y, before=before, grads=grads, loss=out.loss.item())


def truth(run):
    assert int(run.y.max()) < 50 and bool(((run.y >= 10) & (run.y < 50)).any())
    missing = {n for n, g in run.grads.items() if g is None}
    assert missing == {"asm.tail.1.0.weight", "asm.tail.1.1.weight"}
    for n, p in run.model.named_parameters():
        g = run.grads[n]
        if g is None:
            assert torch.equal(p.detach(), run.before[n]), n
        else:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
