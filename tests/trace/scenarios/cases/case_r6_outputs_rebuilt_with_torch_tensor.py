"""Two outputs of the model are gathered into a vector with ``torch.tensor([cos_a, cos_b])`` to
multiply it by a matrix: ``torch.tensor`` copies the values into a new tensor with no graph, so
``y.sum().backward()`` raises "element 0 of tensors does not require grad and does not have a
grad_fn" and no gradient reaches the model.

Source: https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261
("y1 is ok, but y2 lose the gradient of a"; ``y2 = torch.tensor([cosa, cosb])``;
"RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn").
"""

import warnings

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261"
DESCRIPTION = "torch.tensor([cos_a, cos_b]) of model outputs: no graph, backward raises"
ASK = ["angles.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"torch\.tensor",
        r"does not require grad",
        r"grad_fn",
        r"new (tensor|leaf)",
        r"\bcop(y|ied)",
        r"graph",
    ],
]
MUST_NOT = [FALSE_OK]


class TwoAngles(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.angles = nn.Linear(4, 2)

    def forward(self, x):
        return self.angles(x)


def step(watch, stack: bool = False):
    torch.manual_seed(0)
    model = TwoAngles()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(1, 4, generator=torch.Generator().manual_seed(1))
    mat = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    error = None
    with watch(model) as w:
        opt.zero_grad()
        out = model(x)[0]
        cosa, cosb = torch.cos(out[0]), torch.cos(out[1])
        try:
            if stack:
                y2 = torch.stack([cosa, cosb])
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # "Converting a tensor with requires_grad"
                    y2 = torch.tensor([cosa, cosb])
            y2 = torch.matmul(y2, mat)
            y2.sum().backward()
            opt.step()
        except RuntimeError as e:
            error = e
    return Run(w=w, model=model, error=error)


def truth(run):
    assert run.error is not None and "does not require grad" in str(run.error)
    for p in run.model.parameters():
        assert p.grad is None
