"""A healthy step its writer suspected: a 10-class problem whose output layer has 50 logits.
``nn.CrossEntropyLoss`` takes the softmax over all 50; the 40 logits that are never a target only
ever get pushed down (their gradient is the softmax probability they hold), so their rows of the
output layer get a finite, nonzero gradient like the others.  Nothing raises, every parameter
moves; the extra logits cost capacity, not correctness.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (question 'How is loss computed
for multiclass CNN with an output layer larger than the number of classes?': "I have constructed
the final layer in my model as an output of 50, i.e., ``nn.Linear(100, 50)``. Also, I am using
cross-entropy loss. I am confused about how loss is calculated"; "Why would you make the final
layer larger than the number of classes?" - "Well, it didn't give an error").  Adapted: a
``Linear(8, 16)``, ``Tanh``, ``Linear(16, 50)`` classifier on 128 examples of 10 classes, SGD at
0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (question 'How is loss computed"
    " for multiclass CNN with an output layer larger than the number of classes?')"
)
DESCRIPTION = "healthy: 10 classes, 50 logits: the 40 unused rows get pushed down, no error"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 8, generator=g)
    mix = torch.randn(8, 10, generator=g)
    return x, (x @ mix).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 50))
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
    return Run(w=w, model=model, y=y, logits=logits.detach(), before=before, grads=grads)


def truth(run):
    assert int(run.y.max()) <= 9
    unused_rows = run.grads[2][10:]  # output rows of the 40 logits that are never a target
    assert bool((unused_rows.abs().sum(1) > 0).all())
    probs = run.logits.softmax(1)
    assert torch.allclose(run.grads[3][10:], probs[:, 10:].mean(0), atol=1e-6)  # pushed down
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
