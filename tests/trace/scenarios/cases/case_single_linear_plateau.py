"""Control: a single Linear layer fitting a noise-free linear map with Adam; the poster's loss
stalled near 1e-5, which the answer put down to float32 precision.  The step is healthy.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (copy of the PyTorch forum
thread "Can't Get Lower Loss", smu226, 2019-09-13, answered by ptrblck).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread 'Can't Get Lower Loss')"
DESCRIPTION = "control: one Linear, noise-free target, Adam step; nothing wrong"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"vanish", r"explod", r"\bdead\b", r"no gradient"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    true_map = torch.tensor([[-1.0, 0.0, 2.0, 0.0], [0.0, -1.0, 0.0, 2.0]])
    x = torch.randn(512, 4) * 10
    y = x @ true_map.t()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = model.weight.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
    assert not torch.equal(run.model.weight.detach(), run.before)
