"""LoRA fine-tuning where the adapters were already attached when a freeze pass ran: the pass
sets requires_grad=False on everything but the classifier head, so the LoRA matrices are frozen
with the base weights.  Only the head trains; the optimizer, built from the parameters that
require grad, never holds an adapter.

Source: https://github.com/X-GenGroup/Flow-Factory/pull/56 ("Fix frozen LoRA parameters when
adapter already exists": "LoRA parameters (lora_A, lora_B, etc.) might have been frozen by
_freeze_components() earlier ... apply_lora skipped the component, it never ensured
requires_grad=True for these parameters" ... "the subsequent training phase failed to learn
anything (loss stayed flat)").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/X-GenGroup/Flow-Factory/pull/56"
DESCRIPTION = "LoRA adapters frozen by a freeze pass run after they were attached: only head trains"
ASK = ["q.lora_B.weight"]
MUST = [[r"lora"], [r"frozen", r"requires_grad"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"lora_[AB][^\n]*never called",
    r"lora_[AB]\.weight[^\n]*(got|received) a (finite, )?(nonzero )?gradient",
]


class LoRALinear(nn.Module):
    """base(x) + scale * B(A(x)); B starts at zero, as LoRA does."""

    def __init__(self, d_in, d_out, rank=4, alpha=8):
        super().__init__()
        self.base = nn.Linear(d_in, d_out)
        self.lora_A = nn.Linear(d_in, rank, bias=False)
        self.lora_B = nn.Linear(rank, d_out, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + self.scale * self.lora_B(self.lora_A(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = LoRALinear(16, 16)
        self.v = LoRALinear(16, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(torch.tanh(self.v(torch.tanh(self.q(x)))))


def build(freeze_pass_after_adapters):
    torch.manual_seed(0)
    model = Net()
    if freeze_pass_after_adapters:  # everything but the head, adapters included
        for name, p in model.named_parameters():
            p.requires_grad = name.startswith("head.")
    else:  # the base weights only
        for name, p in model.named_parameters():
            p.requires_grad = "lora_" in name or name.startswith("head.")
    return model


def step(watch, freeze_pass_after_adapters=True):
    model = build(freeze_pass_after_adapters)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 16, generator=g), torch.randint(0, 3, (32,), generator=g)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    for name, p in run.model.named_parameters():
        if "lora_" in name:
            assert not p.requires_grad and p.grad is None
            assert torch.equal(p.detach(), run.before[name])  # the adapters never train
    assert run.model.head.weight.grad is not None
    assert not torch.equal(run.model.head.weight.detach(), run.before["head.weight"])
