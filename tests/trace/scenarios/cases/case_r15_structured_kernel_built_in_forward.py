"""Control: the same structured 2x2 filter with ``a`` and ``b`` registered as ``nn.Parameter``
attributes and the kernel built in ``forward`` from them (``torch.stack``) and applied with
``F.conv2d``: the kernel is part of the graph, ``a`` and ``b`` get the gradient (the sum over the
filter entries of their derivatives), the optimizer updates them, and the filter keeps the form
``[[a+b, a-b], [a-b, a+b]]`` after every step.  Every gradient is finite and nonzero.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (copy of the PyTorch forum
thread "What is the most convenient way to make model weights dependent on some parameter?":
"nn.Parameter() ignores the history of computation"; "Rewrite ... in such a way that it takes the
computed w as input and does not use nn.Parameter(), calling everything via torch.nn.functional.
In this way, the gradient with respect to u will be computed automatically").  Adapted to the
filter, example and optimizer of ``r15_structured_kernel_torch_tensor``.
"""

import torch
from case_r15_structured_kernel_torch_tensor import example
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread 'What is the most"
    " convenient way to make model weights dependent on some parameter?')"
)
DESCRIPTION = "control: a, b registered, kernel stacked in forward, F.conv2d: a, b trained"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"torch\.tensor",
    r"not registered|unregistered",
    r"no gradient",
    r"all-zero",
]


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.zeros(1, 1))
        self.b = nn.Parameter(torch.zeros(1, 1))

    def kernel(self):
        a, b = self.a[0, 0], self.b[0, 0]
        return torch.stack([torch.stack([a + b, a - b]), torch.stack([a - b, a + b])]).view(
            1, 1, 2, 2
        )

    def forward(self, x):
        return F.conv2d(x, self.kernel())


def step(watch):
    torch.manual_seed(0)
    model = MyModel()
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, labels = example()
    names = [n for n, _ in model.named_parameters()]
    kernels, grads = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
            kernels.append(model.kernel().detach().clone())
    return Run(w=w, names=names, kernels=kernels, grads=grads, model=model)


def truth(run):
    assert run.names == ["a", "b"]
    for it in run.grads:
        for g in it:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for k in run.kernels:
        k = k[0, 0]
        assert float(k[0, 0]) == float(k[1, 1]) and float(k[0, 1]) == float(k[1, 0])
    assert float(run.model.a.detach()) != 0.0  # a moved
