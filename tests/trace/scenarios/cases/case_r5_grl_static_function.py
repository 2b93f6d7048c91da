"""Control: the same DANN step with the gradient reversal layer written as a new-style Function
(static ``forward(ctx, x, alpha)`` / ``backward``, used through ``.apply``).  The feature
extractor receives the label loss's gradient minus alpha times the domain loss's: exactly what
the method asks for.  Every parameter gets a finite, nonzero gradient.

Source: https://github.hk.mmd.ink/tadeephuy/GradientReversal (a copy of the repository
tadeephuy/GradientReversal: "During the forward propagation, Gradient Reversal Layer(GRL) acts as
an identity transform. During the backpropagation though, GRL takes the gradient from the
subsequent level, multiplies it by alpha and passes it to the preceding layers").
"""

import torch
from case_r5_grl_legacy_function import DANN, batches
from case_r5_grl_legacy_function import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.hk.mmd.ink/tadeephuy/GradientReversal"
DESCRIPTION = "control: DANN with a static-method GRL: features get label - alpha * domain grads"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, CLAIMS_ERROR, r"no gradient", r"legacy"]


def step(watch):
    return _step(watch, legacy=False)


def _feature_grads(alpha):
    """Features' gradient of label loss - alpha * domain loss, with no reversal layer."""
    torch.manual_seed(0)
    model = DANN(legacy=False, alpha=-1.0)  # a reversal by -1: the domain gradient unreversed
    xs, ys, xt = batches()
    cls, dom_s = model(xs)
    _, dom_t = model(xt)
    dom = torch.cat([dom_s, dom_t]).squeeze(1)
    dom_y = torch.cat([torch.zeros(16), torch.ones(16)])
    label_loss = torch.nn.functional.cross_entropy(cls, ys)
    dom_loss = torch.nn.functional.binary_cross_entropy_with_logits(dom, dom_y)
    w = model.features[0].weight
    g_label = torch.autograd.grad(label_loss, w, retain_graph=True)[0]
    g_dom = torch.autograd.grad(dom_loss, w)[0]
    return g_label - alpha * g_dom


def truth(run):
    assert run.error is None
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
    assert torch.allclose(run.model.features[0].weight.grad, _feature_grads(1.0), atol=1e-6)
