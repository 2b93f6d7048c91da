"""A padded batch in which every target is the padding label: ``CrossEntropyLoss`` with
``ignore_index=-100`` averages over zero non-ignored targets and returns NaN (0 / 0).  Its
gradient is finite -- all zeros -- so the step leaves every parameter where it was while the
logged loss is NaN.

Source: https://lean-dojo.github.io/TorchLean/docs/NN/Examples/BugZoo/IgnoredLabelLoss.html
("PyTorch issue #75181 reported CrossEntropyLoss(ignore_index=...) returning nan for an
all-ignored target case"; "the empty-active-label reduction policy should be stated").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://lean-dojo.github.io/TorchLean/docs/NN/Examples/BugZoo/IgnoredLabelLoss.html"
DESCRIPTION = "every target = ignore_index: cross_entropy is NaN (0/0), all gradients zero"
ASK = []
MUST = [
    [r"loss[^\n]{0,60}(\bnan\b|non-?finite)", r"(\bnan\b|non-?finite)[^\n]{0,30}loss"],
    [r"ignor", r"(all|every)[^\n]{0,30}(target|label)s?", r"\bzero", r"no (target|label)"],
]
MUST_NOT = [
    FALSE_OK,
    r"(?<!no )(?<!not )(\bnan\b|non-?finite|\binf\b) gradient",
    r"gradients? (is|are|was|were) nan",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(30, 8), nn.Linear(8, 30))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(1, 30, (4, 6), generator=g)
    target = torch.full((4, 6), -100)  # all padding
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, 30), target.reshape(-1), ignore_index=-100)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, loss=loss.detach(), before=before)


def truth(run):
    assert bool(torch.isnan(run.loss))
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool((p.grad == 0).all())
        assert torch.equal(p.detach(), b)
