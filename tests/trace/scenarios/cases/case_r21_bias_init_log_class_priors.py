"""A healthy recipe: the last layer's bias initialised to the log of the class frequencies, so that
an imbalanced classifier starts out predicting the priors (Karpathy's "set the bias on your logits
such that your network predicts probability of 0.1 at initialization").  With classes A, B, C
counted 10, 100 and 900, ``bias = log([0.01, 0.09, 0.9])``: the first loss is about the entropy of
the labels (0.38) instead of ``log 3`` (1.10), and the step learns from the features instead of
spending its first iterations on the bias.  Every gradient is finite and nonzero; the bias's is
small (the priors are already nearly right), not zero.

Source: https://discuss.pytorch.org/t/initialize-bias-using-class-probabilities/135002 ("dataset
sample counts : {A: 10, B: 100, C: 900}"; "model.fc = nn.Linear(num_features, 3, bias=True)";
"I want the model to output probabilities [0.01, 0.1, 0.9] at initialization"; answered: ``x =
torch.tensor([0.01,0.09,0.9])``, ``log_x = x.log()``, ``out_layer.bias.data = log_x``, "you don't
have to set weight.data").  Adapted: the question's counts (1010 examples, one full batch), six
features whose means depend on the class, a ``Linear(6, 16)``, ``Tanh``, ``Linear(16, 3)``
classifier, SGD at 0.1.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/initialize-bias-using-class-probabilities/135002"
DESCRIPTION = "healthy: last bias = log class priors (10/100/900): first loss ~ label entropy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]
COUNTS = (10, 100, 900)


def data():
    g = torch.Generator().manual_seed(1)
    y = torch.cat([torch.full((n,), c) for c, n in enumerate(COUNTS)])
    means = torch.randn(3, 6, generator=g)
    x = means[y] + torch.randn(len(y), 6, generator=g)
    return x, y


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    with torch.no_grad():
        model[2].bias.copy_(torch.tensor([0.01, 0.09, 0.9]).log())  # the answer's recipe
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, logits=logits.detach(), loss=loss.item(), grads=grads,
               before=before)  # fmt: skip


def truth(run):
    freqs = torch.tensor(COUNTS, dtype=torch.float) / sum(COUNTS)
    entropy = float(-(freqs * freqs.log()).sum())
    assert abs(run.loss - entropy) < 0.15 and run.loss < 0.5 * math.log(3)
    mean_probs = run.logits.softmax(1).mean(0)
    assert torch.allclose(mean_probs, freqs, atol=0.05)  # starts out predicting the priors
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
