"""A classifier ending in ``nn.Softmax(dim=0)`` on (batch, classes) logits, then ``log`` and
``NLLLoss``: each class column is normalised over the examples of the batch, not each example
over its classes.  Every example's loss now depends on the other examples' logits, the outputs
are not class probabilities, and the gradients (finite, nonzero) follow that objective.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.softmax ("You want
probabilities for each sample in a batch, but you apply softmax across the batch dimension
instead of the class dimension"; "A batch of 5 images, each classified into 10 classes. The
tensor shape is (5, 10) ... you mistakenly set dim=0 (the batch dimension)").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.tensor.softmax"
DESCRIPTION = "Softmax(dim=0) over (batch, classes): normalised across the batch, examples mixed"
ASK = []
MUST = [
    [
        r"dim(ension)?\s*=?\s*0",
        r"batch (dim|axis|dimension)",
        r"(across|over) (the )?(batch|examples|samples)",
        r"(mix|coupl|depend)\w*[^\n]{0,40}(other )?(examples|samples)",
    ]
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 10), nn.Softmax(dim=0))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(5, 12, generator=g), torch.randint(0, 10, (5,), generator=g)
    with watch(model) as w:
        opt.zero_grad()
        probs = model(x)
        loss = F.nll_loss(torch.log(probs), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, probs=probs.detach(), x=x, y=y)


def truth(run):
    assert torch.allclose(run.probs.sum(0), torch.ones(10))  # columns sum to 1 ...
    assert not torch.allclose(run.probs.sum(1), torch.ones(5))  # ... rows do not
    # example 0's loss depends on example 1's logits
    logits = run.model[:3](run.x).detach().requires_grad_(True)
    loss0 = F.nll_loss(torch.log(torch.softmax(logits, dim=0))[:1], run.y[:1])
    (g,) = torch.autograd.grad(loss0, logits)
    assert bool(g[1].abs().sum() > 0)
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
