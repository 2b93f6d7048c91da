"""A convolution filter meant to be a function of two parameters, ``[[a+b, a-b], [a-b, a+b]]``,
built once in ``__init__`` with ``torch.tensor([[[[a+b, a-b], [a-b, a+b]]]])`` and installed as
``self.conv.weight = nn.Parameter(kernel)``. ``torch.tensor`` copies the values (a warning says so)
and keeps no graph; ``a`` and ``b`` are locals, not registered, never in ``model.parameters()``. The
optimizer trains the four entries of ``conv.weight`` as free numbers: on the thread's single example
(input ``[[1, 0], [0, 0]]``, target 2) only the top-left entry moves, and after the first step the
filter no longer has the structure (its diagonal entries differ). Every gradient the model has is
finite and nonzero; nothing raises.

Source: https://discuss.pytorch.org/t/how-to-create-a-trainable-customized-convolutional-layer/108964
("a 2X2 filter is created as torch.tensor([[[[a+b, a-b], [a-b,a+b]]]]). As we can see, it is
determined by a and b instead of four independent parameters"; its ``MyModel`` with
``generate_parameters`` and ``generate_kernel``, MSE, SGD lr 0.1).  The thread's code as written,
two iterations; the warning of ``torch.tensor`` is silenced as a script would only print it.
"""

import warnings

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://discuss.pytorch.org/t/how-to-create-a-trainable-customized-convolutional-layer/108964"
)
DESCRIPTION = (
    "kernel of a, b built with torch.tensor in __init__: a, b never trained, structure lost"
)
ASK = []
MUST = [
    [
        r"torch\.tensor",
        r"\ba\b[^\n]{0,20}\bb\b",
        r"not registered|unregistered",
        r"(cop(y|ies|ied))[^\n]{0,40}(values?|graph|data)",
        r"structure\w*|tied entries|constrain\w*",
        r"generate_(kernel|parameters)",
        r"(graph|history)[^\n]{0,20}(cut|broken|lost|dropped)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
]


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        # in my later experiment there might be multiple parameters,
        # so I made the generate_parameters() function
        a, b = self.generate_parameters()
        self.conv = nn.Conv2d(1, 1, 2, bias=False)
        kernel = self.generate_kernel(a, b)
        self.conv.weight = nn.Parameter(kernel)

    def forward(self, x):
        x = self.conv(x)
        return x

    def generate_parameters(self):
        a = nn.Parameter(torch.zeros(1, 1))
        b = nn.Parameter(torch.zeros(1, 1))
        return a, b

    def generate_kernel(self, a, b):
        with warnings.catch_warnings():  # "Converting a tensor with requires_grad=True ..."
            warnings.simplefilter("ignore", UserWarning)
            return torch.tensor([[[[a + b, a - b], [a - b, a + b]]]])


def example():
    return torch.tensor([[[[1.0, 0], [0, 0]]]]), torch.tensor([[[[2.0]]]])


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
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            grads.append(model.conv.weight.grad.detach().clone())
            optimizer.step()
            kernels.append(model.conv.weight.detach().clone())
    return Run(w=w, names=names, kernels=kernels, grads=grads)


def truth(run):
    assert run.names == ["conv.weight"]  # a and b are not parameters of the model
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert bool((g.flatten()[1:] == 0).all())  # only the top-left entry is reached
    k = run.kernels[-1][0, 0]
    assert float(k[0, 0]) != float(k[1, 1])  # no longer [[a+b, a-b], [a-b, a+b]]
