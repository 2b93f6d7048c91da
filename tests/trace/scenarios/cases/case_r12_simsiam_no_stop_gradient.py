"""SimSiam written without its stop-gradient: the symmetric loss ``D(p1, z2) / 2 + D(p2, z1) / 2``
with ``D(p, z) = -cosine_similarity(p, z)`` is computed on the projections ``z`` as they come out
of the encoder, not on ``z.detach()``.  The targets then carry history: ``backward`` sends the
loss's gradient into the encoder through the target branch as well as through the predictor
branch, so the encoder's gradient is not SimSiam's (it differs from the stop-gradient one by far
more than rounding), while the predictor's, which sits on the predicting branch only, is the same.
This is the configuration the paper reports to collapse (both views pulled together through both
branches).  Every gradient is finite and nonzero; nothing raises.

Source: https://github.com/PatrickHua/SimSiam/issues/39 ("There should be a stop gradient in the
simsiam model ... The 'stop_gradient' part of the network is absent from your implementation.
This model is effectively training both the path").  Adapted: the step is the loss of that
repository's ``D`` (its reply quotes ``z = z.detach() # stop gradient``) with the ``detach`` left
out; a small MLP encoder and predictor on random vectors, two noisy views each.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/PatrickHua/SimSiam/issues/39"
DESCRIPTION = "SimSiam loss on z without detach: encoder also trained through the target branch"
ASK = []
MUST = [
    [r"stop[- ]?grad", r"detach", r"target (branch|side|path)", r"both (branches|paths|sides)"],
    [
        r"\bz[12]?\b",
        r"target",
        r"projection",
        r"encoder",
        r"cosine",
        r"collapse",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"no gradient"]


class SimSiam(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 16))
        self.predictor = nn.Sequential(nn.Linear(16, 8), nn.Tanh(), nn.Linear(8, 16))

    def forward(self, x1, x2):
        z1, z2 = self.encoder(x1), self.encoder(x2)
        p1, p2 = self.predictor(z1), self.predictor(z2)
        return p1, p2, z1, z2


def D(p, z, stop_gradient):  # negative cosine similarity
    if stop_gradient:
        z = z.detach()
    return -F.cosine_similarity(p, z, dim=-1).mean(), z.requires_grad


def step(watch, stop_gradient: bool = False):
    torch.manual_seed(0)
    model = SimSiam()
    params = dict(model.named_parameters())
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 16, generator=g)
    views = [
        (x + 0.3 * torch.randn(32, 16, generator=g), x + 0.3 * torch.randn(32, 16, generator=g))
        for _ in range(2)
    ]

    def loss_fn(x1, x2, stop):
        p1, p2, z1, z2 = model(x1, x2)
        a, target_grad = D(p1, z2, stop)
        b, _ = D(p2, z1, stop)
        return a / 2 + b / 2, target_grad

    ref_grads = torch.autograd.grad(loss_fn(*views[0], True)[0], list(params.values()))
    reference = dict(zip(params, ref_grads, strict=True))
    grads, target_grads = [], []
    with watch(model) as w:
        for x1, x2 in views:
            opt.zero_grad()
            loss, target_grad = loss_fn(x1, x2, stop_gradient)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in params.items()})
            target_grads.append(target_grad)
            opt.step()
    return Run(w=w, grads=grads, reference=reference, target_grads=target_grads)


def relative_difference(grads, reference, prefix):
    names = [n for n in reference if n.startswith(prefix)]
    num = torch.sqrt(sum((grads[n] - reference[n]).pow(2).sum() for n in names))
    den = torch.sqrt(sum(reference[n].pow(2).sum() for n in names))
    return (num / den).item()


def truth(run):
    assert all(run.target_grads)  # the targets z carried history into the loss
    assert relative_difference(run.grads[0], run.reference, "encoder.") > 0.1
    assert relative_difference(run.grads[0], run.reference, "predictor.") < 1e-5
    for grads in run.grads:
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
