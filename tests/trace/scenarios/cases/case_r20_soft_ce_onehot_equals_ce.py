"""A healthy step its writer suspected: a hand-written cross-entropy for soft labels,
``sum(-log_softmax(inputs, dim=1) * target) / sample_num``, used on one-hot float targets built
from hard labels.  On one-hot targets it is exactly ``nn.CrossEntropyLoss`` (the loss and every
gradient are equal to float precision): the worse accuracy the asker saw does not come from this
loss.  Every gradient is finite and nonzero; nothing raises.

Source: https://discuss.pytorch.org/t/cross-entropy-for-soft-label/16093 ("I code my own cross
entropy, but i found the classification accuracy is always worse than the nn.CrossEntropyLoss()
when i test on the dataset with hard labels"; "log_likelihood = - F.log_softmax(inputs, dim=1)",
"sample_num, _class_num = target.shape", "loss = torch.sum(torch.mul(log_likelihood,
target))/sample_num"; "could anyone help me to check if there is problem in my code?").  Adapted:
the thread's ``softCrossEntropy`` module on a ``Linear(10, 16)``, ``Tanh``, ``Linear(16, 4)``
classifier, 64 examples, targets ``F.one_hot(labels, 4).float()``, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/cross-entropy-for-soft-label/16093"
DESCRIPTION = "healthy: hand-written soft-label cross-entropy on one-hot targets = CrossEntropyLoss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero"]


class softCrossEntropy(nn.Module):  # the thread's name
    def forward(self, inputs, target):
        log_likelihood = -F.log_softmax(inputs, dim=1)
        sample_num, _class_num = target.shape
        return torch.sum(torch.mul(log_likelihood, target)) / sample_num


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 4))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, x[:, :4].argmax(1)


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = softCrossEntropy()
    x, labels = data()
    target = F.one_hot(labels, 4).float()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = criterion(model(x), target)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, x=x, labels=labels, loss=loss.item(), grads=grads, before=before)


def truth(run):
    ref = make_model()
    ce = nn.CrossEntropyLoss()(ref(run.x), run.labels)
    ref_grads = torch.autograd.grad(ce, list(ref.parameters()))
    assert abs(run.loss - ce.item()) < 1e-6  # the same loss
    for g, r, b, p in zip(run.grads, ref_grads, run.before, run.model.parameters(), strict=True):
        assert torch.allclose(g, r, atol=1e-7)  # the same gradient
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
