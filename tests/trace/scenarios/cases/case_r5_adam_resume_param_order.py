"""Resuming training from a checkpoint: the model is rebuilt with its branches registered in
another order (built from a dict whose order changed between runs), its weights are loaded by
name -- fine -- and the Adam state by position: ``exp_avg`` of the old first parameter now sits
on a parameter of another shape.  The first ``optimizer.step()`` after the backward raises a
size mismatch; the gradients were computed, nothing moved.

Source: https://github.com/piergiaj/pytorch-i3d/issues/38 ("Adam does not use the name of the
module's parameter to match its own weights, but apparently it only uses the order of the
parameters as provided by module.parameters()"; "This will cause Adam to crash with the
following error when it performs an optimisation step: ... exp_avg.mul_(beta1).add_(1 - beta1,
grad) RuntimeError: invalid argument 3: sizes do not match").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/piergiaj/pytorch-i3d/issues/38"
DESCRIPTION = "Adam state loaded by position into a model registered in another order: step raises"
ASK = ["rgb.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"optimizer",
        r"Adam",
        r"\.step\(",
        r"\bstep\b",
        r"exp_avg",
        r"state",
    ],
]
MUST_NOT = [FALSE_OK]


class TwoStream(nn.Module):
    def __init__(self, order):
        super().__init__()
        layers = {"rgb": nn.Linear(6, 8), "flow": nn.Linear(4, 8)}
        for name in order:  # registration order = order of model.parameters()
            self.add_module(name, layers[name])
        self.head = nn.Linear(16, 3)

    def forward(self, rgb, flow):
        return self.head(torch.cat([F.relu(self.rgb(rgb)), F.relu(self.flow(flow))], dim=1))


def batch(seed):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(8, 6, generator=g),
        torch.randn(8, 4, generator=g),
        torch.randint(0, 3, (8,), generator=g),
    )


def checkpoint():
    """The first run: a few Adam steps, then the state dicts saved."""
    torch.manual_seed(0)
    model = TwoStream(("rgb", "flow"))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for seed in range(2):
        rgb, flow, y = batch(seed)
        opt.zero_grad()
        F.cross_entropy(model(rgb, flow), y).backward()
        opt.step()
    return model.state_dict(), opt.state_dict()


def step(watch):
    model_state, opt_state = checkpoint()
    torch.manual_seed(1)
    model = TwoStream(("flow", "rgb"))  # the resumed run: same modules, another order
    model.load_state_dict(model_state)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    opt.load_state_dict(opt_state)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    rgb, flow, y = batch(5)
    error = None
    try:
        with watch(model) as w:
            opt.zero_grad()
            F.cross_entropy(model(rgb, flow), y).backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error)


def truth(run):
    assert run.error is not None and "must match the size" in str(run.error)
    for n, p in run.model.named_parameters():
        assert p.grad is not None, n  # the backward ran ...
        assert torch.equal(p.detach(), run.before[n]), n  # ... the step did not
