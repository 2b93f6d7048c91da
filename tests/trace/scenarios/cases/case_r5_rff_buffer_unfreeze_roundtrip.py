"""Control: a random Fourier feature encoding whose fixed projection ``b`` is a buffer
(``register_buffer``), inside a model that was frozen with ``requires_grad_(False)`` and then
unfrozen with ``requires_grad_(True)`` for fine-tuning.  The round trip leaves the buffer alone:
``b`` never requires grad and never moves, and every parameter trains.

Source: https://github.com/jmclong/random-fourier-features-pytorch/issues/6 ("why is this not a
buffer (register_buffer)?"; "The previous implementation would have caused problems when eg
locally freezing parts of the model using .requires_grad_(false) and later unfreeze using
.requires_grad_(true). This would have made b trainable by accident"; the fix made ``b`` a
buffer).
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/jmclong/random-fourier-features-pytorch/issues/6"
DESCRIPTION = "control: RFF projection b a buffer; requires_grad_ off/on leaves it fixed"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not (held|in (the|any) optimizer)",
    r"no gradient",
]


class GaussianEncoding(nn.Module):
    def __init__(self, sigma, input_size, encoded_size):
        super().__init__()
        self.register_buffer("b", torch.randn(encoded_size, input_size) * sigma)

    def forward(self, v):
        vp = 2 * torch.pi * v @ self.b.T
        return torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoding = GaussianEncoding(1.0, 2, 16)
        self.mlp = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, v):
        return self.mlp(self.encoding(v))


def step(watch):
    torch.manual_seed(0)
    model = Net()
    model.requires_grad_(False)  # frozen for a first phase ...
    model.requires_grad_(True)  # ... unfrozen for fine-tuning
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    b_before = model.encoding.b.clone()
    g = torch.Generator().manual_seed(1)
    v, y = torch.rand(64, 2, generator=g), torch.rand(64, 1, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(v), y).backward()
        opt.step()
    return Run(w=w, model=model, b_before=b_before)


def truth(run):
    b = run.model.encoding.b
    assert not b.requires_grad and torch.equal(b, run.b_before)
    assert "encoding.b" not in dict(run.model.named_parameters())
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
