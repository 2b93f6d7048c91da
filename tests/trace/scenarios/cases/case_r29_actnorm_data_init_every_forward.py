"""A Glow-style flow whose ActNorm layers use the data-dependent initialization, but the flag that
should make it happen once is never set: ``forward`` checks ``if not self.initialized`` and, finding
it false every time, copies the batch's statistics into ``loc`` and ``logs`` (``.data`` copies under
``no_grad``) at every call.  The first step trains: the two ActNorm layers get finite, nonzero
gradients and Adam moves them.  At the second step's forward both layers are overwritten with the
second batch's statistics, and the first step's update to them is lost; every later step starts them
again from the current batch.  Nothing raises, every gradient is finite and nonzero.

Source: https://uvadlc-notebooks.readthedocs.io/en/latest/tutorial_notebooks/DL2/Advanced_Generative_Models/Normalizing_flows/advancednormflow.html
("Actnorm performs an affine transformation with a scale and bias parameter per channel, similar to
that of batch normalization, but works on mini-batch size 1. The statistics (mean and std),
however, are only calculated once to initialize the scale and bias parameters").  Adapted: the
``initialized`` flag a plain attribute never set to true (the page gives the layer, not the slip);
a flow on 4-dimensional data (a correlated Gaussian, shifted and scaled), ActNorm, an affine
coupling (``Linear(2, 32), Tanh, Linear(32, 4)``, the scale through ``tanh``), a reversal, ActNorm,
a second coupling; the exact negative log-likelihood under a standard normal prior, Adam at 1e-2,
two steps on two batches of 128 watched.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://uvadlc-notebooks.readthedocs.io/en/latest/tutorial_notebooks/DL2/"
    "Advanced_Generative_Models/Normalizing_flows/advancednormflow.html"
)
DESCRIPTION = "Glow ActNorm data-dependent init flag never set: loc/logs re-set every forward"
ASK = []
MUST = [
    [
        r"initiali[sz]\w*",
        r"overwr\w*",
        r"re-?set",
        r"re-?assign\w*",
        r"\.data\b",
        r"copy_|copied",
        r"in[- ]place",
        r"(update|step)\w*[^\n]{0,60}(lost|undone|discarded|overwritten|thrown away)",
        r"(changed|modified|assigned|written) (in|during|by) (the )?forward",
        r"actnorm[^\n]{0,60}(statistic|batch|mean|std)",
        r"(without|outside) (a |an |the |any )?(torch\.optim )?optimi[sz]er",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
DIM = 4


class ActNorm(nn.Module):
    def __init__(self, dim, once):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.logs = nn.Parameter(torch.zeros(dim))
        self.once = once
        if once:
            self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))
        else:
            self.initialized = False  # the flag, never set below

    def forward(self, x):
        if not bool(self.initialized):
            with torch.no_grad():
                self.loc.data.copy_(-x.mean(0))
                self.logs.data.copy_(-torch.log(x.std(0) + 1e-6))
            if self.once:
                self.initialized.fill_(1)
        return (x + self.loc) * torch.exp(self.logs), self.logs.sum().expand(x.shape[0])


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(DIM // 2, 32), nn.Tanh(), nn.Linear(32, DIM))

    def forward(self, x):
        a, b = x.chunk(2, 1)
        s, t = self.net(a).chunk(2, 1)
        s = torch.tanh(s)
        return torch.cat([a, b * torch.exp(s) + t], 1), s.sum(1)


class Flow(nn.Module):
    def __init__(self, once):
        super().__init__()
        self.norm1, self.coupling1 = ActNorm(DIM, once), Coupling()
        self.norm2, self.coupling2 = ActNorm(DIM, once), Coupling()

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for layer in (self.norm1, self.coupling1):
            x, ld = layer(x)
            logdet = logdet + ld
        x = x.flip(1)
        for layer in (self.norm2, self.coupling2):
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet


def nll(model, x):
    z, logdet = model(x)
    log_pz = -0.5 * (z**2).sum(1) - 0.5 * DIM * math.log(2 * math.pi)
    return -(log_pz + logdet).mean()


def batches():
    g = torch.Generator().manual_seed(1)
    mix = torch.randn(DIM, DIM, generator=g)
    shift = torch.tensor([3.0, -2.0, 0.5, 5.0])
    scale = torch.tensor([4.0, 0.5, 2.0, 1.0])
    return [(torch.randn(128, DIM, generator=g) @ mix) * scale + shift for _ in range(2)]


def step(watch, once=False):
    torch.manual_seed(0)
    model = Flow(once)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    norms = [n for n, _ in model.named_parameters() if n.startswith("norm")]
    params = dict(model.named_parameters())
    after_step, at_forward, losses, grads = [], [], [], []
    with watch(model) as w:
        for x in batches():
            optimizer.zero_grad()
            loss = nll(model, x)
            at_forward.append({n: params[n].detach().clone() for n in norms})
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
            after_step.append({n: params[n].detach().clone() for n in norms})
            losses.append(float(loss.detach()))
    x2 = batches()[1]  # what the first ActNorm makes its parameters of when it re-initializes
    return Run(
        w=w,
        norms=norms,
        after_step=after_step,
        at_forward=at_forward,
        losses=losses,
        grads=grads,
        x2_loc=-x2.mean(0),
        x2_logs=-torch.log(x2.std(0) + 1e-6),
    )


def truth(run):
    assert all(math.isfinite(v) for v in run.losses)
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    # the first step moved the ActNorm parameters ...
    for n in run.norms:
        assert not torch.equal(run.after_step[0][n], run.at_forward[0][n]), n
    # ... and the second forward replaced them with the second batch's statistics
    assert torch.allclose(run.at_forward[1]["norm1.loc"], run.x2_loc, atol=1e-6)
    assert torch.allclose(run.at_forward[1]["norm1.logs"], run.x2_logs, atol=1e-6)
    for n in run.norms:
        assert not torch.allclose(run.at_forward[1][n], run.after_step[0][n], atol=1e-4), n
