"""Training resumed from a checkpoint that holds the model's ``state_dict`` but not the
optimizer's: after three AdamW steps the weights are saved, a new model loads them, and a new
``AdamW`` is built over it and stepped with empty state.  Its first step has no moments and a step
count of 1: the bias-corrected update is about ``lr * sign(grad)`` on every weight, not the update
the interrupted run would have made with its accumulated ``exp_avg`` / ``exp_avg_sq`` (and step
count 4).  The resumed weights after the step differ from the uninterrupted run's.  Every gradient
is finite and nonzero and nothing raises; the gradients themselves are the same in both runs.

Source: https://git.liuyihu.com/EvolvingLMMs-Lab/OneVision-Encoder/pull/65 (a mirror of that
repository's pull request: "But it does NOT save optimizer.state_dict(), which contains: exp_avg
(1st moment / momentum), exp_avg_sq (2nd moment / RMS accumulator), step count for bias
correction.  When resuming training without optimizer state, AdamW starts fresh, causing:
Transient loss spikes").
"""

import copy
import io

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://git.liuyihu.com/EvolvingLMMs-Lab/OneVision-Encoder/pull/65"
DESCRIPTION = "resumed from a checkpoint without optimizer state: AdamW restarts from step 1"
ASK = []
MUST = [
    [r"optimi[sz]er", r"adamw?"],
    [
        r"optimi[sz]er state",
        r"state_dict",
        r"(empty|no|fresh|new|without)[^\n]{0,30}state",
        r"moments?",
        r"exp_avg",
        r"load_state_dict",
        r"fresh",
        r"resum\w*",
        r"checkpoint",
        r"step count",
        r"step 1\b",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]
LR = 1e-2


def make_model():
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))


def step(watch, load_optimizer: bool = False):
    torch.manual_seed(0)
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(32, 8, generator=g), torch.randn(32, 1, generator=g)) for _ in range(4)]
    for x, y in batches[:3]:  # the first run, interrupted after three steps
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, buffer)
    # what the uninterrupted run does next
    x, y = batches[3]
    continued = copy.deepcopy(model)
    continued_opt = torch.optim.AdamW(continued.parameters(), lr=LR)
    continued_opt.load_state_dict(opt.state_dict())
    continued_opt.zero_grad()
    F.mse_loss(continued(x), y).backward()
    continued_opt.step()
    # the resumed run
    buffer.seek(0)
    checkpoint = torch.load(buffer)
    torch.manual_seed(123)
    resumed = make_model()
    resumed.load_state_dict(checkpoint["model"])
    resumed_opt = torch.optim.AdamW(resumed.parameters(), lr=LR)
    if load_optimizer:
        resumed_opt.load_state_dict(checkpoint["optimizer"])
    state_before = len(resumed_opt.state)
    with watch(resumed) as w:
        resumed_opt.zero_grad()
        loss = F.mse_loss(resumed(x), y)
        loss.backward()
        resumed_opt.step()
    grads = {n: p.grad.detach().clone() for n, p in resumed.named_parameters()}
    same_grads = all(
        torch.equal(a.grad, b.grad)
        for a, b in zip(resumed.parameters(), continued.parameters(), strict=True)
    )
    max_diff = max(
        (a.detach() - b.detach()).abs().max().item()
        for a, b in zip(resumed.parameters(), continued.parameters(), strict=True)
    )
    steps = [s["step"].item() for s in resumed_opt.state.values()]
    return Run(
        w=w,
        state_before=state_before,
        grads=grads,
        same_grads=same_grads,
        max_diff=max_diff,
        steps=steps,
    )


def truth(run):
    assert run.state_before == 0  # the new AdamW held no moments
    assert all(s == 1 for s in run.steps)
    assert run.same_grads
    assert run.max_diff > 1e-3  # the step is not the interrupted run's
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
