"""Control: a PEFT-style LoRA model (frozen base ``Linear`` layers, trainable low-rank ``lora_A`` /
``lora_B`` beside them, B initialised to zero) whose AdamW (weight decay 0.01) is built over
``model.parameters()``, frozen base weights included.  The page warns that the optimizer "will
silently waste compute attempting to update frozen" parameters; it does not update them: a frozen
weight gets no ``.grad`` and ``torch.optim`` skips a parameter whose ``.grad`` is None, weight
decay included.  Two steps (on the first, ``lora_A``'s gradient is exactly zero because B is
zero); the base weights stay bit for bit as loaded.

Source: https://theneuralbase.com/huggingface-transformers/learn/advanced/get-peft-model-wrapping-the-model/
("if you pass model.parameters() to your optimizer instead of filter(lambda p: p.requires_grad,
model.parameters()), the optimizer will silently waste compute attempting to update frozen ...
params").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = (
    "https://theneuralbase.com/huggingface-transformers/learn/advanced/"
    "get-peft-model-wrapping-the-model/"
)
DESCRIPTION = (
    "control: LoRA, frozen base, AdamW(weight_decay) over all parameters: base never moves"
)
ASK = []
MUST = [[HEALTHY_OK, r"frozen", r"lora_A"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"frozen[^\n]*(still )?moved",
    r"(base|lora_[AB])[^\n]*not (held|in)[^\n]*optimizer",
    r"no gradient (reached|for) [^\n]*lora",
]


class LoRALinear(nn.Module):
    def __init__(self, d_in, d_out, r=2):
        super().__init__()
        self.base = nn.Linear(d_in, d_out)
        self.lora_A = nn.Linear(d_in, r, bias=False)
        self.lora_B = nn.Linear(r, d_out, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.base.requires_grad_(False)

    def forward(self, x):
        return self.base(x) + 2.0 * self.lora_B(self.lora_A(x))


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(LoRALinear(8, 16), nn.ReLU(), LoRALinear(16, 3))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    base0 = [m.base.weight.detach().clone() for m in (model[0], model[2])]
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 3, (32,), generator=g)
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    return Run(w=w, model=model, base0=base0)


def truth(run):
    for m, b0 in zip((run.model[0], run.model[2]), run.base0, strict=True):
        assert m.base.weight.grad is None
        assert torch.equal(m.base.weight.detach(), b0)
        assert bool(m.lora_A.weight.grad.abs().sum() > 0)  # second step: B is no longer zero
        assert not torch.equal(m.lora_B.weight.detach(), torch.zeros_like(m.lora_B.weight))
