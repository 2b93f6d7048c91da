"""BitFit written as "train the parameters whose name contains ``bias``": ``p.requires_grad =
"bias" in name`` over the whole model, the new classification head included.  The head's weight
has no ``bias`` in its name, so it is frozen with the pretrained body's weights: its ``.grad``
stays ``None`` and it keeps its random initialisation, while BitFit trains the biases *and* the
task head.  The logits are a fixed random projection of the body's features, moved only by the
biases.  Nothing raises; nothing is NaN.

Source: https://responsible-ai-datascience-ipparis.github.io/posts/bitfit ("BitFit, on the other
hand, only updates the bias terms in the model while keeping all other weights frozen"; "Bias
terms are small but essential parameters in neural networks").  Adapted: a "pretrained" body
(``Linear(10, 32)``, ``Tanh``, ``Linear(32, 32)``, ``Tanh``) and a new ``Linear(32, 3)`` head,
the freezing loop over ``named_parameters()``, SGD at 0.1 over the parameters left trainable, 128
examples.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://responsible-ai-datascience-ipparis.github.io/posts/bitfit"
DESCRIPTION = "BitFit by name ('bias' in name): the new head's weight frozen with the body"
ASK = ["head.weight"]
MUST = [
    [r"head\.weight"],
    [r"requires_grad", r"frozen", r"freez\w*", r"\bNone\b", r"no gradient"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero"]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.head = nn.Linear(32, 3)  # new, task-specific

    def forward(self, x):
        return self.head(self.body(x))


def trainable(name):
    return "bias" in name


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = Classifier()
    for name, p in model.named_parameters():
        p.requires_grad = trainable(name)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grads = {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    params = dict(run.model.named_parameters())
    head = params["head.weight"]
    assert not head.requires_grad and run.grads["head.weight"] is None
    assert torch.equal(head.detach(), run.before["head.weight"])  # the task head never trains
    for n, p in params.items():
        if n.endswith("bias"):
            assert bool(run.grads[n].abs().sum() > 0), n
            assert not torch.equal(p.detach(), run.before[n]), n
