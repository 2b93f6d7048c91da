"""A healthy step people suspect: a model augmented with new modules (an extra hidden block and a
wider head path) initialised from the smaller model's checkpoint with
``load_state_dict(..., strict=False)``.  The question is whether the new parameters "will be
trained, instead of ignored": ``strict=False`` only skips the keys it cannot match when copying
weights; the new modules keep their initialisation, are in the optimizer with everything else, and
get finite, nonzero gradients like the loaded ones.  The loaded parameters hold the checkpoint's
values before the step; every parameter moves.

Source: https://discuss.pytorch.org/t/does-model-load-state-dict-strict-false-ignore-new-parameters-introduced-in-my-models-constructor/84539
("I want to make sure that the newly introduced parameters will be trained, instead of ignored
when I set strict=False"; the reply: "The load_state_dict() just loads the weights for you.  Once
you've loaded the weights using either of the arguments in strict, it's done").  Adapted: tanh
MLPs, model B adding a block between A's encoder and head.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.pytorch.org/t/does-model-load-state-dict-strict-false-ignore-new-parameters-"
    "introduced-in-my-models-constructor/84539"
)
DESCRIPTION = "healthy: strict=False load into a model with new modules: new and old all train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"no gradient",
    r"all-zero",
    r"not in (the |any )?optimizer",
    r"frozen",
]


class ModelA(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 32), nn.Tanh())
        self.head = nn.Linear(32, 4)


class ModelB(ModelA):
    def __init__(self):
        super().__init__()
        self.extra = nn.Sequential(nn.Linear(32, 32), nn.Tanh())  # new

    def forward(self, x):
        h = self.encoder(x)
        return self.head(h + self.extra(h))


def step(watch):
    torch.manual_seed(7)
    checkpoint = {k: v.detach().clone() for k, v in ModelA().state_dict().items()}
    torch.manual_seed(0)
    model = ModelB()
    result = model.load_state_dict(checkpoint, strict=False)
    loaded = all(torch.equal(model.state_dict()[k], v) for k, v in checkpoint.items())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 12, generator=g)
    y = torch.randint(0, 4, (32,), generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    moved = {n: not torch.equal(p.detach(), before[n]) for n, p in model.named_parameters()}
    return Run(
        w=w,
        missing=list(result.missing_keys),
        unexpected=list(result.unexpected_keys),
        loaded=loaded,
        grads=grads,
        moved=moved,
    )


def truth(run):
    assert set(run.missing) == {"extra.0.weight", "extra.0.bias"}
    assert run.unexpected == []
    assert run.loaded
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert all(run.moved.values())
