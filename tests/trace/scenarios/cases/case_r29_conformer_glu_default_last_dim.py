"""A Conformer block's convolution module with its gate written ``nn.GLU()``, whose default
``dim=-1`` halves the last dimension.  The module works in ``(batch, channels, time)`` layout: the
pointwise convolution doubles the channels to 32 for the gate to halve back to 16, but the GLU
halves time instead (50 frames to 25) and keeps 32 channels, and the depthwise convolution (16
groups, 16 channels expected) raises ``RuntimeError: Given groups=16, weight of size [16, 1, 15],
expected input[4, 32, 25] to have 16 channels, but got 32 channels instead`` in the forward.  No
parameter gets a gradient and nothing moves.

Source: https://www.textbookofai.com/glossary/conformer.html ("Convolution module. The most novel
component: LayerNorm. Pointwise 1-D conv to 2 d_model channels followed by GLU (gated linear unit),
halving back to d_model. Depthwise 1-D conv with kernel size 31 (LibriSpeech), operates per-channel
along time, capturing local temporal structure"; "BatchNorm + Swish. Pointwise 1-D conv back to
d_model. Dropout").  Adapted: the gate as ``nn.GLU()`` with its default dimension (the page gives
the module, not the slip); d_model 16, a depthwise kernel of 15 without a bias (the batch norm after
it would cancel one), ``ELU`` where the paper has Swish, the half-step feed-forward module before it
(``LayerNorm, Linear(16, 64), ELU, Linear(64, 16)``), an input projection ``Linear(8, 16)``, 4
utterances of 50 frames of 8 features, a frame classifier ``Linear(16, 5)`` with cross-entropy, Adam
at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.textbookofai.com/glossary/conformer.html"
DESCRIPTION = "Conformer conv module gate nn.GLU() halves time (dim=-1): depthwise conv raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"\bGLU\b|\bglu\b",
        r"\bdim\s?=\s?-?1\b",
        r"last dim\w*",
        r"channels?",
        r"halv\w*",
        r"(shape|size) mismatch",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
D, T, KERNEL = 16, 50, 15


class ConvModule(nn.Module):
    def __init__(self, glu_dim):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.pointwise1 = nn.Conv1d(D, 2 * D, 1)
        self.glu = nn.GLU() if glu_dim is None else nn.GLU(dim=glu_dim)
        self.depthwise = nn.Conv1d(D, D, KERNEL, padding=KERNEL // 2, groups=D, bias=False)
        self.bn = nn.BatchNorm1d(D)
        self.act = nn.ELU()
        self.pointwise2 = nn.Conv1d(D, D, 1)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):  # x: (B, T, D)
        h = self.norm(x).transpose(1, 2)
        h = self.glu(self.pointwise1(h))
        h = self.act(self.bn(self.depthwise(h)))
        return x + self.dropout(self.pointwise2(h)).transpose(1, 2)


class Model(nn.Module):
    def __init__(self, glu_dim):
        super().__init__()
        self.proj = nn.Linear(8, D)
        self.ffn = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, 64), nn.ELU(), nn.Linear(64, D))
        self.conv = ConvModule(glu_dim)
        self.head = nn.Linear(D, 5)

    def forward(self, x):
        x = self.proj(x)
        x = x + 0.5 * self.ffn(x)
        return self.head(self.conv(x))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, T, 8, generator=g)
    y = F.avg_pool1d(x.transpose(1, 2), 5, 1, 2).transpose(1, 2) @ torch.randn(8, 5, generator=g)
    return x, y.argmax(-1)


def step(watch, glu_dim=None):
    torch.manual_seed(0)
    model = Model(glu_dim)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, y = data()
    error, grads = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x).reshape(-1, 5), y.reshape(-1))
            loss.backward()
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error, grads=grads)


def truth(run):
    assert run.error is not None
    assert "expected input[4, 32, 25] to have 16 channels" in str(run.error)
    for n, p in run.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
