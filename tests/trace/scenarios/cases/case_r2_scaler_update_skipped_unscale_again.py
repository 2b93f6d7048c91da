"""AMP loop with clipping that skips the optimizer step *and* scaler.update() when the unscaled
gradient norm is not finite.  The first iteration overflows (the initial scale is far too
large), the code skips; the next iteration's scaler.unscale_ raises "unscale_() has already
been called on this optimizer since the last update()".

Source: https://github.com/espnet/espnet/pull/2362 ("This error occurs if gradients has inf/nan
values and the optimizer and scaler updating are skipped.  We must invoke scaler.update at every
iteration even if it has inf/nan values").  Reproduced with torch.amp.GradScaler on CPU.
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/espnet/espnet/pull/2362"
DESCRIPTION = "scaler.update() skipped with the step after an overflow: next unscale_ raises"
ASK = []
MUST = [
    [r"already been called", r"RuntimeError", r"\braised\b", r"exception", r"\berror\b"],
    [r"update", r"unscale"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NO_ZERO_GRAD]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**127)
    batches = [(torch.randn(16, 4), 10 * torch.randn(16, 1)) for _ in range(2)]
    before = [p.detach().clone() for p in model.parameters()]
    norms, error = [], None
    try:
        with watch(model) as w:
            for x, y in batches:
                opt.zero_grad()
                loss = F.mse_loss(model(x), y)
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
                norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                norms.append(float(norm))
                if not torch.isfinite(norm):
                    continue  # the bug: skips scaler.update() as well as the step
                scaler.step(opt)
                scaler.update()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, norms=norms, error=error)


def truth(run):
    assert len(run.norms) == 1 and not torch.isfinite(torch.tensor(run.norms[0]))
    assert run.error is not None and "already been called" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert torch.equal(p.detach(), b)
