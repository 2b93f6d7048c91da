"""Control: mixed precision on CPU, ``torch.autocast("cpu", dtype=torch.bfloat16)`` around the
forward and the loss, ``backward()`` and an SGD step outside it.  The layers compute in bfloat16
(the output is bfloat16), while the parameters stay float32 and so does every ``.grad``: what the
user found "weird" is what autocast does (the casts' backward returns the gradient in the leaf's
dtype).  Nothing is wrong: every gradient is finite and nonzero and every parameter moves.

Source: https://discuss.pytorch.org/t/torch-autocasts-gradient/169003 ("I noticed that the
gradient's precision is actually single-precision(FP32), which is weird. According to the paper
'Mixed precision training', shouldn't it be FP16?").  The thread's CUDA float16 with a
``GradScaler`` is CPU bfloat16 without one here (the autocast docs: on CPU, bfloat16 "only uses
torch.autocast"), and a small MLP with its default initialisation replaces the thread's
``Linear(10, 5)`` whose weights were filled with zeros.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/torch-autocasts-gradient/169003"
DESCRIPTION = "control: CPU autocast bfloat16 forward, float32 params and .grad: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"underflow",
    r"\bfloat16\b",
    r"(needs?|requires?|should use) (a )?GradScaler",
    r"changed none",
    r"did not (move|change)",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
    g = torch.Generator().manual_seed(1)
    x, y = torch.rand(16, 10, generator=g), torch.randint(0, 5, (16,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(x)
            loss = F.cross_entropy(out, y)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, out_dtype=out.dtype, grads=grads, before=before, after=after)


def truth(run):
    assert run.out_dtype == torch.bfloat16
    for n, g in run.grads.items():
        assert g.dtype == torch.float32, n  # the user's observation
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(run.before[n], run.after[n]), n
