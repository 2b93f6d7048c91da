"""Control: a tiny next-token language model step with AdamW.  The reporter's "loss not
decreasing" could not be reproduced by the maintainers: a healthy step.

Source: https://github.com/Lightning-AI/litgpt/issues/689 ("Loss not decreasing" -- "I tried
replicating what you see but no success ... The loss decreases normally").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/Lightning-AI/litgpt/issues/689"
DESCRIPTION = "control: tiny LM, AdamW step; healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"no gradient", r"vanish", r"explod"]


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(50, 16)
        self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
        self.ln = nn.LayerNorm(16)
        self.lm_head = nn.Linear(16, 50)

    def forward(self, idx):
        h = self.wte(idx)
        h = h + self.mlp(h)
        return self.lm_head(self.ln(h))


def step(watch):
    torch.manual_seed(0)
    model = TinyLM()
    tokens = torch.randint(0, 50, (4, 9))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 50), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
