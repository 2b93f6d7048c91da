"""A model EMA kept as a deep copy of the model (``ModelEmaV2``-style), updated after each optimizer
step by looping over the copy's and the model's ``parameters()`` with ``ema_p.mul_(decay).add_(p,
alpha=1 - decay)`` -- outside ``torch.no_grad()``.  The copy's parameters are leaves that require
grad (``deepcopy`` keeps ``requires_grad=True``), and an in-place operation on such a leaf with grad
enabled raises ``RuntimeError: a leaf Variable that requires grad is being used in an in-place
operation``.  The training step itself ran (the model moved); the EMA weights never change.

Source: https://timm.fast.ai/training_modelEMA ("When training a model, it is often beneficial to
maintain moving averages of the trained parameters"; "model_weights = decay * model_weights + (1 -
decay) * new_model_weights"; "class ModelEmaV2(nn.Module): ... # make a copy of the model for
accumulating moving average of weights ... self.module = deepcopy(model) ... self.module.eval()").
Adapted: the page shows the class's start, not its update; here the update is written over
``parameters()`` without ``torch.no_grad()`` (timm's own update copies ``state_dict()`` tensors
under ``no_grad``: the control).  A ``Linear(10, 32)``, ``Tanh``, ``Linear(32, 3)`` classifier,
SGD at 0.1, decay 0.99.
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://timm.fast.ai/training_modelEMA"
DESCRIPTION = "EMA update in place on the copy's parameters outside no_grad: raises (leaf in-place)"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"in-?place",
        r"\bleaf\b",
        r"no_grad",
        r"\bema\b",
        r"moving average",
        r"mul_|add_|copy_",
    ],
]
MUST_NOT = [FALSE_OK]
DECAY = 0.99


class ModelEma(nn.Module):
    def __init__(self, model, decay=DECAY):
        super().__init__()
        self.module = copy.deepcopy(model)  # a copy of the model for the moving average
        self.module.eval()
        self.decay = decay

    def update_params_grad_enabled(self, model):  # the bug: no torch.no_grad()
        for ema_p, p in zip(self.module.parameters(), model.parameters(), strict=True):
            ema_p.mul_(self.decay).add_(p, alpha=1 - self.decay)

    def update_state_dict_no_grad(self, model):  # timm's ModelEmaV2._update
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(),
                                      model.state_dict().values(), strict=True):  # fmt: skip
                ema_v.copy_(self.decay * ema_v + (1.0 - self.decay) * model_v)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, (x[:, :3].argmax(1))


def step(watch, timm_update=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))
    ema = ModelEma(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    x, y = data()
    error = None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            if timm_update:
                ema.update_state_dict_no_grad(model)
            else:
                ema.update_params_grad_enabled(model)
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, ema=ema, before=before, error=error)


def truth(run):
    assert run.error is not None
    assert "leaf Variable that requires grad" in str(run.error)
    assert "in-place operation" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)  # the step ran
    for e, b in zip(run.ema.module.parameters(), run.before, strict=True):
        assert e.requires_grad and torch.equal(e.detach(), b)  # the EMA never moved
