"""Under float16 autocast a Linear's output overflows to inf (float16 max 65504) from finite
inputs; the loss and every gradient become NaN.  The overflow is inside 'big'.

Source: https://github.com/NVIDIA-NeMo/Speech/issues/11541 ("FilterbankFeatures may return
NaNs on CUDA device - torch autocast problem": a matmul cast to half, 65520 is inf in float16).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://github.com/NVIDIA-NeMo/Speech/issues/11541"
DESCRIPTION = "float16 autocast: 'big' overflows to inf from finite input; NaN everywhere"
ASK = []
MUST = [
    [r"\binf\b", r"overflow", r"non-?finite", r"\bnan\b"],
    [r"'?big'?"],
    [r"float16", r"\bhalf\b", r"fp16"],
]
MUST_NOT = [FALSE_OK, r"first[^\n]*'act'", r"'act'[^\n]*(first|made)"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.big = nn.Linear(8, 8)
        self.act = nn.ReLU()
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.act(self.big(x)))


def step(watch):
    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():
        model.big.weight.fill_(100.0)
    x = torch.full((4, 8), 100.0)  # 8 * 100 * 100 = 80000 > 65504
    y = torch.zeros(4, 1)
    seen = {}
    hook = model.big.register_forward_hook(lambda m, i, o: seen.update(inp=i[0], out=o))
    try:
        with watch(model) as w:
            with torch.autocast("cpu", dtype=torch.float16):
                out = model(x)
            loss = ((out.float() - y) ** 2).mean()
            loss.backward()
    finally:
        hook.remove()
    return Run(w=w, model=model, seen=seen, loss=loss.detach())


def truth(run):
    assert run.seen["out"].dtype == torch.float16
    assert bool(torch.isfinite(run.seen["inp"]).all())
    assert bool(torch.isinf(run.seen["out"]).all())
    assert not bool(torch.isfinite(run.loss))
    assert not bool(torch.isfinite(run.model.big.weight.grad).all())
