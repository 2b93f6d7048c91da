"""A conditional neural process trained with a random number of context points per batch, drawn
as ``torch.randint(0, 10, ...)``: zero is a possible draw.  The first step (6 context points)
trains; on the second the context set is empty, the mean aggregation of the encoded context ``r =
encoder(context).mean(1)`` averages over zero points and is NaN, the decoder's mean and scale are
NaN at every target, and ``torch.distributions.Normal``, checking its arguments (torch's default,
written ``validate_args=True`` here), raises ``ValueError: Expected parameter loc ... to satisfy the
constraint Real(), but found invalid values`` in the forward.  The second step's backward never
runs: its ``zero_grad`` has set every ``.grad`` to ``None``, and the parameters keep the values of
the first step.

Source: https://wiki.math.uwaterloo.ca/statwiki/index.php?title=conditional_neural_process&oldid=39913
("Let training set be O = {x_i, y_i}_{i = 0}^{n-1}, and test set be T = {x_i, y_i}_{i = n}^{n + m -
1}"; "the second phase learns a function for a specific task, but does so using only a small number
of data points").  Adapted: the number of context points drawn from 0 to 9 with the generator seeded
85 (whose second draw is 0); 16 sine curves ``a sin(x + phi)`` on 20 points each, every point a
target, encoder ``Linear(2, 32), Tanh, Linear(32, 32)``, decoder ``Linear(33, 32), Tanh, Linear(32,
2)`` giving the mean and ``0.1 + 0.9 softplus`` of the scale, Adam at 1e-3, two steps watched.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://wiki.math.uwaterloo.ca/statwiki/index.php?title=conditional_neural_process&oldid=39913"
)
DESCRIPTION = "CNP context size randint(0, 10) draws 0: mean over no point NaN, Normal raises"
ASK = []
MUST = [
    [r"\braised\b", r"ValueError", r"exception", r"\berror\b"],
    [
        r"empty",
        r"(zero|0|no) context",
        r"context",
        r"\b0 (points|elements|rows)\b",
        r"mean (of|over) (an )?(empty|zero|0|no)",
        r"\b0\s?/\s?0\b",
        r"MeanBackward|\bmean\b",
        r"aggregat\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
POINTS = 20


class CNP(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32))
        self.decoder = nn.Sequential(nn.Linear(33, 32), nn.Tanh(), nn.Linear(32, 2))

    def forward(self, xc, yc, xt):
        r = self.encoder(torch.cat([xc, yc], -1)).mean(1)
        out = self.decoder(torch.cat([xt, r[:, None, :].expand(-1, xt.shape[1], -1)], -1))
        mu, raw = out.unbind(-1)
        return mu, 0.1 + 0.9 * F.softplus(raw)


def batch(g):
    a = 0.5 + 1.5 * torch.rand(16, 1, generator=g)
    phi = 3.14 * torch.rand(16, 1, generator=g)
    x = torch.linspace(-3, 3, POINTS).repeat(16, 1)
    return x[..., None], (a * torch.sin(x + phi))[..., None]


def step(watch, low=0):
    torch.manual_seed(0)
    model = CNP()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data_gen = torch.Generator().manual_seed(1)
    sizes = torch.randint(low, 10, (2,), generator=torch.Generator().manual_seed(85)).tolist()
    losses, grads, states, error = [], [], [], None
    try:
        with watch(model) as w:
            for n_context in sizes:
                x, y = batch(data_gen)
                idx = torch.randperm(POINTS, generator=data_gen)[:n_context]
                optimizer.zero_grad()
                mu, sigma = model(x[:, idx], y[:, idx], x)
                loss = (
                    -torch.distributions.Normal(mu, sigma, validate_args=True)
                    .log_prob(y[..., 0])
                    .mean()
                )
                loss.backward()
                losses.append(float(loss.detach()))
                grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
                optimizer.step()
                states.append({n: p.detach().clone() for n, p in model.named_parameters()})
    except ValueError as e:
        error = e
    return Run(
        w=w, model=model, sizes=sizes, losses=losses, grads=grads, states=states, error=error
    )


def truth(run):
    assert run.sizes == [6, 0] and len(run.losses) == 1
    assert run.error is not None and "Expected parameter loc" in str(run.error)
    assert "invalid values" in str(run.error) and "nan" in str(run.error)
    assert torch.isfinite(torch.tensor(run.losses[0]))
    for n, g in run.grads[0].items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.states[0][n]), n
