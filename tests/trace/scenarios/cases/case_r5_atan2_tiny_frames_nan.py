"""A model whose last stage is the phase ``atan2(imag, real)`` of a predicted complex
spectrogram.  The user nudges the denominator by 1e-7 where it is exactly zero, yet the
near-silent frames (input about 1e-20, no biases) give real and imaginary parts about 1e-20:
not zero, but the sum of their squares (about 1e-40) is below float32's normal range, and
atan2's backward, dividing by it, overflows to inf (then NaN).  The loss is finite; the gradient
of every parameter holds NaN.

Source: https://discuss.pytorch.org/t/how-to-avoid-nan-output-from-atan2-during-backward-pass/176890
("after a while I get an error that '[f]unction 'Atan2Backward0' returned nan values in its 0th
output' ... I add a small epsilon value to any denominator values that are zero ... Strangely,
though, the error still occurs").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.pytorch.org/t/how-to-avoid-nan-output-from-atan2-during-backward-pass/176890"
)
DESCRIPTION = "atan2 phase, denominator nudged only where == 0: tiny frames give NaN gradients"
ASK = ["net.0.weight"]
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b", r"infinit"],
    [r"atan2", r"Atan2Backward"],
]
MUST_NOT = [FALSE_OK]


class PhaseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(4, 8, bias=False), nn.Tanh(), nn.Linear(8, 2, bias=False)
        )

    def forward(self, frames):
        out = self.net(frames)
        numerator, denominator = out[:, 1], out[:, 0]
        epsilon = 1e-7
        nudge = (denominator == 0) * epsilon  # the thread's fix, for exact zeros only
        return torch.atan2(numerator, denominator + nudge)


def frames(silence):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 4, generator=g)
    x[10:] *= silence  # six near-silent (or silent) frames
    target = torch.rand(16, generator=g) * 2 - 1
    target[10:] = 0.0
    return x, target


def step(watch, silence=1e-20):
    torch.manual_seed(0)
    model = PhaseNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target = frames(silence)
    with watch(model) as w:
        opt.zero_grad()
        phase = model(x)
        loss = F.mse_loss(phase, target)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, loss=loss.detach(), grads=grads)


def truth(run):
    assert bool(torch.isfinite(run.loss))
    for grad in run.grads:
        assert bool(torch.isnan(grad).any())
