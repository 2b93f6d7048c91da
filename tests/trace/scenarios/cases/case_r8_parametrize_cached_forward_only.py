"""Control: the same weight-normed recurrent kernel used twice per forward, with
``parametrize.cached()`` wrapping each forward only, as the documentation shows: the weight is
computed once per forward and recomputed after each optimizer step; two iterations run, the
second on the updated weight, every gradient finite and nonzero.

Source: https://pytorch.org/docs/main/generated/torch.nn.utils.parametrize.cached.html ("with
P.cached(): output = model(inputs)").
"""

import torch
import torch.nn.utils.parametrize as P
from case_r8_parametrize_cached_whole_loop import Cell, data
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.nn import functional as F

SOURCE = "https://pytorch.org/docs/main/generated/torch.nn.utils.parametrize.cached.html"
DESCRIPTION = "control: parametrize.cached() around each forward only: two clean steps"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_ERROR, CLAIMS_NONFINITE, r"stale", r"second time"]


def step(watch):
    torch.manual_seed(0)
    model = Cell()
    x, y = data()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, weights_used = [], []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            with P.cached():
                out = model(x)
                weights_used.append(model.rec.weight.detach().clone())
            loss = F.mse_loss(out, y)
            losses.append(loss.item())
            loss.backward()
            grads = {n: p.grad.clone() for n, p in model.named_parameters()}
            opt.step()
    return Run(w=w, losses=losses, weights_used=weights_used, grads=grads)


def truth(run):
    assert len(run.losses) == 2 and run.losses[1] < run.losses[0]
    assert not torch.equal(run.weights_used[0], run.weights_used[1])  # recomputed after the step
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
