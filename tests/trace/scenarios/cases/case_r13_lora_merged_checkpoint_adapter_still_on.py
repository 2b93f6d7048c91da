"""LoRA training resumed from a checkpoint written with the merged weights: the saved base weight
already holds ``W0 + scale * B @ A`` (as a "save all" strategy writes it) and the checkpoint also
holds ``lora_A`` / ``lora_B``, which the resumed model loads into adapters that are still active.
The forward is now ``(W0 + scale B A) x + scale B A x``: the adapter's update counted twice, so the
resumed model is not the one that was trained (its outputs differ) and training continues from a
wrong function.  Gradients are finite and nonzero for the adapters and the head, the frozen base
weight gets none as intended, and nothing raises.

Source: https://github.com/espnet/espnet/issues/6107 ("when using save_strategy: all, the saved
model weights include merged LoRA parameters -- i.e., the base weights are updated with the LoRA
deltas"; "it seems that during inference, both the merged weights and the LoRA adapter modules
are active.  This makes it look like the LoRA weights are being applied twice").  Adapted: a
LoRA-wrapped linear layer and a head, trained 20 steps, saved merged, reloaded into the same
architecture, and trained one step further.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/espnet/espnet/issues/6107"
DESCRIPTION = "LoRA resumed from a merged checkpoint with adapters still on: delta applied twice"
ASK = []
MUST = [
    [r"lora", r"adapter"],
    [
        r"merg\w*",
        r"twice",
        r"double\w*",
        r"applied (again|two times)",
        r"counted (again|twice)",
        r"checkpoint",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]
R, ALPHA = 4, 8


class LoRALinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.base = nn.Linear(d_in, d_out)
        self.base.requires_grad_(False)
        self.lora_A = nn.Parameter(0.1 * torch.randn(R, d_in))
        self.lora_B = nn.Parameter(torch.zeros(d_out, R))
        self.scale = ALPHA / R

    def delta(self):
        return self.scale * self.lora_B @ self.lora_A

    def forward(self, x):
        return self.base(x) + self.scale * (x @ self.lora_A.T) @ self.lora_B.T


def make_model():
    return nn.Sequential(LoRALinear(8, 16), nn.Tanh(), nn.Linear(16, 1))


def step(watch, merged: bool = True):
    torch.manual_seed(0)
    model = make_model()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    y = torch.sin(x.sum(1, keepdim=True))
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(trainable, lr=1e-2)
    for _ in range(20):  # the first run
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        trained_out = model(x)
        state = {k: v.clone() for k, v in model.state_dict().items()}
        if merged:  # the checkpoint's base weight includes the adapter's delta
            state["0.base.weight"] = state["0.base.weight"] + model[0].delta()
    torch.manual_seed(1)
    resumed = make_model()
    resumed.load_state_dict(state)
    with torch.no_grad():
        resumed_out = resumed(x)
        effective = resumed[0].base.weight + resumed[0].delta()
        intended = model[0].base.weight + model[0].delta()
    opt2 = torch.optim.Adam([p for p in resumed.parameters() if p.requires_grad], lr=1e-2)
    with watch(resumed) as w:
        opt2.zero_grad()
        loss = F.mse_loss(resumed(x), y)
        loss.backward()
        opt2.step()
    grads = {n: p.grad for n, p in resumed.named_parameters()}
    return Run(
        w=w,
        trained_out=trained_out,
        resumed_out=resumed_out,
        effective=effective,
        intended=intended,
        delta=model[0].delta().detach(),
        grads=grads,
    )


def truth(run):
    assert bool(run.delta.abs().max() > 1e-2)  # the adapter learned something
    assert torch.allclose(run.effective, run.intended + run.delta, atol=1e-6)  # counted twice
    assert (run.resumed_out - run.trained_out).abs().max() > 1e-2
    assert run.grads["0.base.weight"] is None and run.grads["0.base.bias"] is None
    for n in ("0.lora_A", "0.lora_B", "2.weight", "2.bias"):
        gr = run.grads[n]
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
