"""A healthy recipe: post-hoc temperature scaling of an overconfident classifier.  The classifier's
validation logits are collected once under ``torch.no_grad()``; a single parameter ``temperature``
(initialised at 1.5) divides them, and L-BFGS minimises the validation NLL over that parameter
alone.  Only the temperature gets a gradient (the classifier's parameters, outside the graph and
outside the optimizer, keep ``.grad`` None and do not move, by design); the temperature rises above
1.5, the NLL falls and no prediction's class changes.  Nothing is wrong.

Source: https://grokipedia.com/page/Temperature_scaling ("It learns a single positive scalar
parameter T > 0, known as the temperature, on a held-out validation set by minimizing the negative
log-likelihood loss"; "dividing the model's raw logits by T before the softmax function";
"without altering the predicted class or overall accuracy"; "optimizing T amounts to a
one-dimensional convex problem solvable quickly via methods like conjugate gradient or line
search").  Adapted: a ``Linear(10, 32)``, ``Tanh``, ``Linear(32, 4)`` classifier made overconfident
by 300 Adam steps on 32 training examples with 25% of their labels flipped, 256 validation
examples, a wrapper module holding the classifier and ``temperature``, L-BFGS at lr 0.01 with 50
iterations (the method paper's reference code).
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://grokipedia.com/page/Temperature_scaling"
DESCRIPTION = "healthy: post-hoc temperature scaling, only T trained (L-BFGS on validation NLL)"
ASK = []
MUST = [[HEALTHY_OK, r"only (the )?temperature"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"vanish\w*"]


class ModelWithTemperature(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.temperature = nn.Parameter(torch.ones(1) * 1.5)

    def forward(self, x):
        return self.temperature_scale(self.model(x))

    def temperature_scale(self, logits):
        return logits / self.temperature


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(288, 10, generator=g)
    y = x[:, :4].argmax(1)
    flip = torch.rand(288, generator=g) < 0.25
    y = torch.where(flip, torch.randint(0, 4, (288,), generator=g), y)
    return (x[:32], y[:32]), (x[32:], y[32:])


def trained_classifier(train):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(300):
        optimizer.zero_grad()
        F.cross_entropy(model(train[0]), train[1]).backward()
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return model.eval()


def step(watch):
    train, (x_val, y_val) = data()
    scaled = ModelWithTemperature(trained_classifier(train))
    before = {n: p.detach().clone() for n, p in scaled.model.named_parameters()}
    optimizer = torch.optim.LBFGS([scaled.temperature], lr=0.01, max_iter=50)
    with watch(scaled) as w:
        with torch.no_grad():
            logits = scaled.model(x_val)
        nll_before = F.cross_entropy(scaled.temperature_scale(logits), y_val).item()

        def closure():
            optimizer.zero_grad()
            loss = F.cross_entropy(scaled.temperature_scale(logits), y_val)
            loss.backward()
            return loss

        optimizer.step(closure)
        grad_t = scaled.temperature.grad.detach().clone()
    with torch.no_grad():
        nll_after = F.cross_entropy(scaled.temperature_scale(logits), y_val).item()
    return Run(w=w, scaled=scaled, logits=logits, before=before, grad_t=grad_t,
               nll_before=nll_before, nll_after=nll_after)  # fmt: skip


def truth(run):
    t = float(run.scaled.temperature.detach())
    assert t > 1.5  # an overconfident classifier: softened
    assert run.nll_after < run.nll_before
    assert bool(torch.isfinite(run.grad_t).all()) and float(run.grad_t.abs()) > 0
    same = (run.logits / t).argmax(1) == run.logits.argmax(1)
    assert bool(same.all())  # no predicted class changes
    for n, p in run.scaled.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n  # by design
