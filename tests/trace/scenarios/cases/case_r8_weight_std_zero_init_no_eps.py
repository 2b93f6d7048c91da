"""Weight standardization written by hand in a ``Conv2d`` subclass, ``w = (W - mean) / W.std()``
over each filter, with no epsilon, in a small residual network whose branch ends in a
zero-initialised convolution (the usual "zero-init the last layer of each residual branch" trick).
Every filter of that convolution has standard deviation 0: its standardised weight is ``0 / 0 =
NaN`` in the forward, the block's output and the loss are NaN, and so is every gradient.

Source: https://nn.labml.ai/normalization/weight_standardization/index.html (the annotated
Weight Standardization: "W_hat = (W - mu) / sigma" with "sigma = sqrt(1/I sum (W - mu)^2 +
epsilon)"; "def weight_standardization(weight: torch.Tensor, eps: float)"): the step leaves the
epsilon out.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://nn.labml.ai/normalization/weight_standardization/index.html"
DESCRIPTION = "weight standardization without eps on a zero-initialised conv: 0/0 NaN forward"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [r"\bconv2\b", r"\bstd\b", r"StdBackward", r"\bdiv", r"0\s*/\s*0"],
]
MUST_NOT = [FALSE_OK, r"explod", r"learning rate"]


class WSConv2d(nn.Conv2d):
    eps = None

    def forward(self, x):
        w = self.weight
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        if self.eps is None:
            w = (w - mean) / w.std(dim=(1, 2, 3), keepdim=True)
        else:  # as on codegenes.net: sqrt(var + 1e-5)
            w = (w - mean) / torch.sqrt(w.var(dim=(1, 2, 3), keepdim=True) + self.eps)
        return F.conv2d(x, w, self.bias, self.stride, self.padding)


class Net(nn.Module):
    def __init__(self, eps, zero_init_last):
        super().__init__()
        self.stem = WSConv2d(3, 8, 3, padding=1)
        self.conv1 = WSConv2d(8, 8, 3, padding=1)
        self.conv2 = WSConv2d(8, 8, 3, padding=1)
        for conv in (self.stem, self.conv1, self.conv2):
            conv.eps = eps
        if zero_init_last:
            nn.init.zeros_(self.conv2.weight)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        h = h + self.conv2(torch.relu(self.conv1(h)))
        return self.head(h.mean(dim=(2, 3)))


def step(watch, eps=None, zero_init_last=True):
    torch.manual_seed(0)
    model = Net(eps, zero_init_last)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 3, 8, 8, generator=g), torch.randint(0, 4, (8,), generator=g)
    outputs = {}
    hooks = [
        getattr(model, n).register_forward_hook(lambda m, i, o, n=n: outputs.__setitem__(n, o))
        for n in ("stem", "conv1", "conv2")
    ]
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    for h in hooks:
        h.remove()
    finite = {n: bool(torch.isfinite(o).all()) for n, o in outputs.items()}
    return Run(w=w, loss=loss.item(), grads=grads, finite=finite)


def truth(run):
    assert run.finite == {"stem": True, "conv1": True, "conv2": False}  # NaN made in conv2
    assert run.loss != run.loss
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
