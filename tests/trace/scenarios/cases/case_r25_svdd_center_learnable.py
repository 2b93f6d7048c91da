"""One-class Deep SVDD with its hypersphere centre ``c`` registered as an ``nn.Parameter`` of the
model (initialised, as the method says, to the mean of the initial network outputs over the
training data) and so handed to the optimizer with the network's weights.  The objective
``mean ||phi(x) - c||^2`` is then minimised over ``c`` too: ``c`` gets a nonzero gradient at every
mini-batch and moves towards the batch's features, the free centre that Ruff et al. show leads to
the trivial "hypersphere collapse" solution (all weights zero, ``c`` the constant output).  The
network is bias-free and uses LeakyReLU as the method requires; every gradient is finite and
nonzero and nothing raises.

Source: https://9dok.net/article/theoretical-properties-deep-svdd-deep-class-classification.q05n0k1l
("We first show that including the hypersphere center c as a free optimization variable can produce
a trivial solution for both (non-regularized) Deep SVDD objectives"; "We call such a solution,
where the network learns a constant map to some fixed output, 'hypersphere collapse'").  Adapted:
``Linear(16, 32, bias=False), LeakyReLU(0.1), Linear(32, 8, bias=False)``, ``c`` from a forward
pass over 512 normal examples, two mini-batches of 64, Adam at 1e-3 with weight decay 1e-6.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://9dok.net/article/theoretical-properties-deep-svdd-deep-class-classification.q05n0k1l"
)
DESCRIPTION = "Deep SVDD centre c an nn.Parameter in the optimizer: c trained, collapse allowed"
ASK = []
MUST = [
    [
        r"cent(er|re)[^\n]{0,80}(train|learn|optimi|parameter|mov|fixed|free|collapse)",
        r"(train|learn|optimi|parameter|mov|free)\w*[^\n]{0,80}cent(er|re)",
        r"\bc\b[^\n]{0,60}(train|learn|optimi|mov|fixed|free|collapse)",
        r"hypersphere collapse",
        r"\bcollaps\w*",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class DeepSVDD(nn.Module):
    def __init__(self, learnable_center):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(16, 32, bias=False), nn.LeakyReLU(0.1), nn.Linear(32, 8, bias=False)
        )
        self.learnable_center = learnable_center

    def init_center(self, x):
        with torch.no_grad():
            c = self.net(x).mean(0)
        if self.learnable_center:
            self.c = nn.Parameter(c)
        else:
            self.register_buffer("c", c)

    def forward(self, x):
        return (self.net(x) - self.c).pow(2).sum(1).mean()


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(512, 16, generator=g) * 0.5 + 1.0


def step(watch, learnable_center=True):
    torch.manual_seed(0)
    model = DeepSVDD(learnable_center)
    x = data()
    model.init_center(x)
    c0 = model.c.detach().clone()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6)
    grads = []
    with watch(model) as w:
        for i in range(2):
            optimizer.zero_grad()
            model(x[64 * i : 64 * (i + 1)]).backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    return Run(w=w, model=model, c0=c0, grads=grads)


def truth(run):
    names = [n for n, _ in run.model.named_parameters()]
    assert "c" in names
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert not torch.equal(run.model.c.detach(), run.c0)  # the centre moved
