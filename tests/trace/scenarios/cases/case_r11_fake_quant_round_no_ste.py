"""Quantization-aware training with the activations fake-quantized by plain rounding,
``torch.round(h / s) * s``, and no straight-through estimator.  The derivative of ``round`` is 0
almost everywhere (autograd's ``RoundBackward`` returns zeros): the gradient reaching the
quantizer is multiplied by 0, so ``fc1``, before it, gets an exactly all-zero gradient on every
step and never learns; only ``fc2``, after it, trains.

Source: https://apxml.com/courses/practical-llm-quantization/chapter-4-quantization-aware-training-qat/straight-through-estimator-ste
("The core operation within fake quantization is the rounding function ... Its derivative is zero
almost everywhere ... If the gradient is zero or undefined, the updates cannot flow back through
the quantization operation to the preceding layers and weights.  This effectively stalls the
learning process for parameters situated before the quantization node").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://apxml.com/courses/practical-llm-quantization/"
    "chapter-4-quantization-aware-training-qat/straight-through-estimator-ste"
)
DESCRIPTION = "fake-quant activations with round(h / s) * s, no STE: fc1's gradient all zero"
ASK = ["fc1.weight"]
MUST = [
    [r"^summary:[^\n]*fc1"],
    [r"\bround", r"RoundBackward", r"quantiz", r"straight-through", r"\bSTE\b"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"no_grad"]
SCALE = 0.1


class QATNet(nn.Module):
    def __init__(self, ste: bool):
        super().__init__()
        self.ste = ste
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        if self.ste:  # torch's fake quantizer: identity gradient inside [0, 255] * scale
            h = torch.fake_quantize_per_tensor_affine(h, SCALE, 0, 0, 255)
        else:
            h = torch.round(h / SCALE) * SCALE
        return self.fc2(h)


def step(watch, ste: bool = False):
    torch.manual_seed(0)
    model = QATNet(ste)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randn(32, 1, generator=g)
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
    with torch.no_grad():
        h = F.relu(model.fc1(x))
    grads = {n: p.grad for n, p in model.named_parameters()}
    return Run(w=w, grads=grads, h_max=h.max().item())


def truth(run):
    for n in ("fc1.weight", "fc1.bias"):
        assert run.grads[n] is not None and bool((run.grads[n] == 0).all()), n
    for n in ("fc2.weight", "fc2.bias"):
        assert bool(run.grads[n].abs().sum() > 0), n
