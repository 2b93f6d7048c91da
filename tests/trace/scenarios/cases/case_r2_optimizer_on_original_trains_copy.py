"""The optimizer is built from modelA's parameters; modelB = copy.deepcopy(modelA) is then the
model that is trained.  modelB's parameters get gradients, but the optimizer holds only
modelA's (which get none), so zero_grad and step never touch modelB and it never moves.

Source: https://androidkt.com/copy-pytorch-model-using-deepcopy-and-state_dict/ (the page builds
"optimizer=torch.optim.Adam(modelA.parameters(),lr=0.001)" and then copies the model with
copy.deepcopy; the copy has parameters of its own, which that optimizer does not hold).
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://androidkt.com/copy-pytorch-model-using-deepcopy-and-state_dict/"
DESCRIPTION = "optimizer built on modelA, deepcopy modelB trained: B gets .grad, never moves"
ASK = ["layer1.weight"]
MUST = [
    [r"optimizer"],
    [
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"(does not|doesn't|did not) hold",
        r"holds? none",
        r"never (moved|updated|stepped)",
        r"did not (move|change)",
        r"other (model|module|parameters|tensors)",
        r"\bcopy\b",
    ],
]
MUST_NOT = [FALSE_OK]


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(10, 4)
        self.act1 = nn.Sigmoid()

    def forward(self, x):
        return self.act1(self.layer1(x))


def step(watch):
    torch.manual_seed(0)
    inp, target = torch.randn(8, 10), torch.rand(8, 4)
    model_a = MyModel()
    criterion = nn.BCELoss()
    optimizer = torch.optim.Adam(model_a.parameters(), lr=0.001)
    model_b = copy.deepcopy(model_a)
    before = model_b.layer1.weight.detach().clone()
    with watch(model_b) as w:
        result = model_b(inp)
        loss = criterion(result, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model_b, model_a=model_a, opt=optimizer, before=before)


def truth(run):
    held = [p for g in run.opt.param_groups for p in g["params"]]
    assert not any(p is q for p in run.model.parameters() for q in held)
    assert all(p.grad is None for p in run.model_a.parameters())
    w = run.model.layer1.weight
    assert w.grad is not None and bool((w.grad != 0).any())
    assert torch.equal(w.detach(), run.before)
