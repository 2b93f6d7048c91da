"""Control: ``torch.optim.Adam(amsgrad=True, foreach=False)`` with two parameter groups of their
own betas (the body at (0.9, 0.999), the head at (0.5, 0.9)), two steps.  The single-tensor path
that ``foreach=False`` selects gives the same parameters, bit for bit, as the default foreach
path: turning the flag off changes nothing but speed.

Source: https://github.com/kozistr/pytorch_optimizer/issues/519 ("`foreach` step paths do not
match the single-tensor paths in `SGDW`, `SignSGD` and `Tiger`"; "I ran SGD (momentum, dampening,
Nesterov), Adam, Adam(amsgrad), AdamW, RMSprop(centered) and Adamax over 36 configurations each
in float32 and float64 and got bit-identical results either way").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run, plain
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/kozistr/pytorch_optimizer/issues/519"
DESCRIPTION = "control: Adam(amsgrad, foreach=False), per-group betas, 2 steps: same as foreach"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"(did not|didn't) (move|change)",
    r"changed none",
]


def run_steps(watch, foreach: bool):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.Adam(
        [
            {"params": model[0].parameters(), "betas": (0.9, 0.999)},
            {"params": model[2].parameters(), "betas": (0.5, 0.9)},
        ],
        lr=1e-2,
        amsgrad=True,
        foreach=foreach,
    )
    g = torch.Generator().manual_seed(1)
    batches = [
        (torch.randn(32, 5, generator=g), torch.randint(0, 3, (32,), generator=g)) for _ in range(2)
    ]
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        for x, y in batches:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    return w, model, opt, before


def step(watch):
    w, model, opt, before = run_steps(watch, foreach=False)
    _, reference, _, _ = run_steps(plain, foreach=True)  # plain torch, for the truth
    return Run(w=w, model=model, opt=opt, before=before, reference=reference)


def truth(run):
    assert all(g["amsgrad"] and g["foreach"] is False for g in run.opt.param_groups)
    assert run.opt.param_groups[1]["betas"] == (0.5, 0.9)
    for (n, p), q in zip(run.model.named_parameters(), run.reference.parameters(), strict=True):
        assert not torch.equal(p.detach(), run.before[n]), n  # every parameter moved
        assert torch.equal(p.detach(), q.detach()), n  # bit for bit the foreach result
    state = run.opt.state[run.model[0].weight]
    assert "max_exp_avg_sq" in state
