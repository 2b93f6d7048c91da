"""Control: softmax regression (one Linear) whose weight and bias are zeroed at construction with
weight.detach().zero_().  The page blames this for "gradients weren't updating"; in fact
detach().zero_() zeroes the parameter's values in place, the parameter stays a leaf that
requires grad, and a single linear layer learns from zero: the gradient is nonzero and the step
moves it.

Source: https://prodopsy.com/how-can-the-backward-function-in-tensor-influence-the-matrix-in-model
("The model explicitly detached .weight and .bias tensors during initialization
(detach().zero_()), preventing PyTorch's autograd system from connecting computation graphs to
trainable parameters").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://prodopsy.com/how-can-the-backward-function-in-tensor-influence-the-matrix-in-model"
)
DESCRIPTION = "control: one Linear zeroed by weight.detach().zero_(); it still gets grads, moves"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    r"no gradient",
    r"\bzero gradient",
    r"all-zero",
    r"detach",
]


class SoftmaxRegression(nn.Module):
    def __init__(self, num_features, num_classes):
        super().__init__()
        self.linear = nn.Linear(num_features, num_classes)
        self.linear.weight.detach().zero_()
        self.linear.bias.detach().zero_()

    def forward(self, x):
        return self.linear(x)  # logits; cross_entropy applies the softmax


def step(watch):
    torch.manual_seed(0)
    model = SoftmaxRegression(4, 3)
    x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        cost = F.cross_entropy(model(x), y)
        cost.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    lin = run.model.linear
    assert lin.weight.is_leaf and lin.weight.requires_grad
    assert bool((lin.weight.grad != 0).any()) and bool((lin.bias.grad != 0).any())
    assert bool((lin.weight.detach() != 0).any())  # moved off zero
