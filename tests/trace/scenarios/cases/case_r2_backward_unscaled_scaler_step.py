"""An AMP loop whose second iteration takes a code path with loss.backward() instead of
scaler.scale(loss).backward(), followed as usual by scaler.step and scaler.update: the step
unscales gradients that were never scaled, so the optimizer reads every gradient divided by the
scale (65536) and the update is 65536 times too small.

Source: https://app.semanticdiff.com/gh/microsoft/DeepSpeed/commit/1752c2ab64e789341af6a15bb4af8466edad7c22
(DeepSpeed #7839: the optimizer "applies dynamic_loss_scale with cur_scale=65536 but
engine.backward() never scales the loss, so step() divides gradients by 65536").  Reproduced
with torch.amp.GradScaler on CPU.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://app.semanticdiff.com/gh/microsoft/DeepSpeed/commit/1752c2ab64e789341af6a15bb4af8466edad7c22"
DESCRIPTION = "AMP loop, 2nd iteration: loss.backward() unscaled, scaler.step reads grad / 65536"
ASK = []
MUST = [
    [
        r"65,?536",
        r"6\.55?\d*e\+?0?4",
        r"1\.5\d*e-0?5",
        r"1\.5\d*\s*[x×·*]\s*10\^?-0?5",
        r"2\s*\*\*\s*16",
        r"2\^16",
    ],
    [
        r"GradScaler",
        r"unscale",
        r"scaler",
        r"not scaled",
        r"never scaled",
        r"without scal",
        r"loss scale",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"(step|update) (was )?skipped",
    r"skipped the (optimizer'?s? )?step",
]


def _net():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
    x0, y0 = torch.randn(16, 4), torch.randn(16, 1)
    opt.zero_grad()  # one ordinary AMP iteration first (the scaler is now at 65536)
    scaler.scale(F.mse_loss(model(x0), y0)).backward()
    scaler.step(opt)
    scaler.update()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()  # the bug: should be scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return Run(w=w, model=model, before=before, state=state, x=x, y=y, scale=scaler.get_scale())


def truth(run):
    assert run.scale == 2.0**16
    ref = _net()
    ref.load_state_dict(run.state)
    grads = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    for p, b, g in zip(run.model.parameters(), run.before, grads, strict=True):
        assert torch.allclose(p.grad, g / run.scale, rtol=1e-4, atol=1e-12)
        assert torch.allclose(p.detach(), b - 0.1 * g / run.scale, rtol=1e-6, atol=1e-9)
        assert not torch.allclose(p.detach(), b - 0.1 * g, rtol=1e-3, atol=1e-7)
