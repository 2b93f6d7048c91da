"""A domain-adversarial (DANN) step written without a gradient reversal layer, as the minimax is
often first written: ``loss = label_loss - lam * domain_loss`` over the whole model, one
optimizer.  The feature extractor gets what a reversal layer would give it (minus the domain
gradient), but so does the domain classifier: its parameters receive ``-lam`` times the gradient of
its own loss and the step moves them to classify the domains worse (its loss after the step is
higher than before).  The adversary is never trained to discriminate, so the features are never
pushed to be domain-invariant against a real discriminator.  Every gradient is finite and
nonzero; nothing raises.

Source: https://grokipedia.com/page/Gradient_Reversal_Layer ("it serves as an identity function
during forward propagation ... but during backpropagation it reverses the gradient by multiplying
it by a negative scalar -λ"; "the feature extractor and label predictor parameters minimize the
task loss while the domain classifier parameters maximize domain discrimination, but the reversed
gradient from the GRL causes the feature extractor to effectively minimize domain
discriminability").  Adapted: the subtraction in place of the layer, on a tanh feature extractor
with a label head and a domain head, SGD; the same setup done right (a reversal layer) is round
5's ``r5_grl_static_function``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://grokipedia.com/page/Gradient_Reversal_Layer"
DESCRIPTION = "DANN as label_loss - lam * domain_loss, no GRL: the domain head trained to be wrong"
ASK = []
MUST = [
    [r"domain"],
    [
        r"subtract\w*",
        r"minus",
        r"negat\w*",
        r"maximi[sz]\w*",
        r"(wrong|opposite|reversed?) (sign|direction)",
        r"ascen\w*",
        r"(its|the) (own )?loss (went|goes|rose|increased|up)",
        r"gradient reversal|\bGRL\b",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]
LAM = 0.3


class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 16), nn.Tanh())
        self.label = nn.Linear(16, 3)
        self.domain = nn.Sequential(nn.Linear(16, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        f = self.features(x)
        return self.label(f), self.domain(f)


def batches():
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(16, 10, generator=g), torch.randint(0, 3, (16,), generator=g)
    xt = torch.randn(16, 10, generator=g) + 1.0
    return xs, ys, xt


def losses(model, xs, ys, xt):
    cls, dom_s = model(xs)
    _, dom_t = model(xt)
    dom = torch.cat([dom_s, dom_t]).squeeze(1)
    dom_y = torch.cat([torch.zeros(16), torch.ones(16)])
    return F.cross_entropy(cls, ys), F.binary_cross_entropy_with_logits(dom, dom_y)


def step(watch):
    torch.manual_seed(0)
    model = DANN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    xs, ys, xt = batches()
    with watch(model) as w:
        opt.zero_grad()
        label_loss, domain_loss = losses(model, xs, ys, xt)
        loss = label_loss - LAM * domain_loss
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        opt.step()
    with torch.no_grad():
        _, domain_after = losses(model, xs, ys, xt)
    # the domain head's own gradient, by plain torch on the initial model
    torch.manual_seed(0)
    ref = DANN()
    _, ref_domain = losses(ref, xs, ys, xt)
    own = torch.autograd.grad(ref_domain, list(ref.domain.parameters()))
    return Run(
        w=w,
        grads=grads,
        own=own,
        domain_before=float(domain_loss.detach()),
        domain_after=float(domain_after),
    )


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    names = [n for n in run.grads if n.startswith("domain.")]
    for n, o in zip(names, run.own, strict=True):
        assert torch.allclose(run.grads[n], -LAM * o, atol=1e-7), n  # ascent on its own loss
    assert run.domain_after > run.domain_before  # the discriminator got worse
