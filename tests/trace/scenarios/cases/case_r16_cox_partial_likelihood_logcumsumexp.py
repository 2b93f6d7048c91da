"""A healthy step: a neural Cox model trained with the negative partial log-likelihood, written by
hand as the torchsurv page defines it: subjects sorted by time, descending, so that
``logcumsumexp`` of the log hazards gives each subject's log risk-set sum; the loss is minus the mean,
over the subjects with an event, of ``log_hz - log_risk``.  Censored subjects (29 of 64) have
no term of their own but sit in the risk sets of earlier events, so their log hazards get a nonzero
gradient too.  The partial likelihood does not change when a constant is added to every log hazard,
so the network's last layer has no bias (it would get an exactly zero gradient).  Every gradient is
finite and nonzero.

Source: https://opensource.nibr.com/torchsurv/notebooks/loss.html ("The Cox model loss is
available through the function ... neg_partial_log_likelihood"; "In TorchSurv, the user may specify
the log relative hazard with a PyTorch neural network"; "npll = - sum_{i: δ_i = 1} (log λ_i - log
sum_{j ∈ R(T_i)} λ_j), where R(T_i) is the risk set at time T_i").  Adapted: the loss written with
``torch.logcumsumexp`` instead of the library, a tanh MLP, 64 subjects with continuous times (no
ties).
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://opensource.nibr.com/torchsurv/notebooks/loss.html"
DESCRIPTION = "healthy: Cox negative partial log-likelihood with logcumsumexp over sorted times"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"no gradient",
    r"all-zero",
    r"dead (units?|relu|neurons?)",
    r"censor\w*[^\n]{0,40}(ignored|dropped|no gradient|wrong)",
]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 5, generator=g)
    true_log_hz = x @ torch.tensor([0.8, -0.5, 0.3, 0.0, 0.0])
    event_time = -torch.log(torch.rand(64, generator=g)) / torch.exp(true_log_hz)
    censor_time = 2.0 * torch.rand(64, generator=g)
    time = torch.minimum(event_time, censor_time)
    event = event_time <= censor_time
    return x, time, event


def neg_partial_log_likelihood(log_hz, event, time):
    order = torch.argsort(time, descending=True)
    log_hz, event = log_hz[order], event[order]
    log_risk = torch.logcumsumexp(log_hz, dim=0)  # log sum over {j: T_j >= T_i}
    return -(log_hz - log_risk)[event].mean()


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1, bias=False))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, time, event = data()
    with watch(model) as w:
        optimizer.zero_grad()
        log_hz = model(x).squeeze(1)
        loss = neg_partial_log_likelihood(log_hz, event, time)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    h = log_hz.detach().clone().requires_grad_(True)
    h_grad = torch.autograd.grad(neg_partial_log_likelihood(h, event, time), h)[0]
    return Run(
        w=w, loss=loss.item(), grads=grads, h=h.detach(), h_grad=h_grad, time=time, event=event
    )


def truth(run):
    assert 0.2 < float((~run.event).float().mean()) < 0.5  # a share of censored subjects
    # the risk-set form, term by term
    terms = []
    for i in torch.nonzero(run.event).flatten().tolist():
        at_risk = run.time >= run.time[i]
        terms.append(run.h[i] - torch.logsumexp(run.h[at_risk], dim=0))
    assert abs(-float(torch.stack(terms).mean()) - run.loss) < 1e-5
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    censored = ~run.event & (run.time < run.time.max())
    assert bool((run.h_grad[censored] != 0).all())  # censored subjects still get a gradient
