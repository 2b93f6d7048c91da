"""Causal linear attention (``out_i = phi(q_i)^T S_i / (phi(q_i)^T z_i)`` with ``S_i = sum_{j <= i}
phi(k_j) v_j^T`` and ``z_i = sum_{j <= i} phi(k_j)``) with the feature map ``phi = relu``.  The map
is non-negative, but not positive: a query whose 4 entries in a head are all negative has ``phi(q) =
0``, and a head whose first keys are all negative has ``z = 0`` at the first positions.  There the
normaliser is exactly 0 and the output ``0 / 0`` is NaN; the loss is NaN and every gradient of the
model holds NaN. Nothing raises.

Source: https://ajkdrag.in/2-Zettels/choice-of-feature-map-in-linear-attention ("In linear
attention, we approximate the Q-K similarity function by using kernels that can be decomposed";
"Common choices for phi include simple activations like ..."; "The denominator term in linear
attention math formulation ... is an approximation which if very small, can lead to numerical
instability").  Adapted: ``relu`` as the simple activation; 8 sequences of 32 steps of 4 features,
``Linear(4, 16)``, one causal linear attention layer of 4 heads of size 4 (``q``, ``k``, ``v``,
``out`` projections), a residual, ``Tanh``, ``Linear(16, 1)``, the running mean of the first feature
as the target, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ajkdrag.in/2-Zettels/choice-of-feature-map-in-linear-attention"
DESCRIPTION = "causal linear attention, phi = relu: phi(q) = 0 or z = 0, 0/0 NaN in the forward"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite"],
    [
        r"0\s?/\s?0|zero (divided )?by zero|divi\w* by (zero|0)",
        r"denominator|normali[sz]er",
        r"feature map|\bphi\b|φ",
        r"\brelu\b",
        r"elu\s?\(?\w*\)?\s?\+\s?1",
    ],
]
MUST_NOT = [FALSE_OK, r"requires_grad\s*(=|is|was)?\s*False"]
HEADS, SIZE, LENGTH = 4, 4, 32


class LinearAttention(nn.Module):
    def __init__(self, phi):
        super().__init__()
        self.phi = phi
        self.q, self.k, self.v, self.out = (nn.Linear(HEADS * SIZE, HEADS * SIZE) for _ in range(4))

    def forward(self, x):  # (B, L, H * S)
        b, n, _ = x.shape
        q, k, v = (f(x).view(b, n, HEADS, SIZE) for f in (self.q, self.k, self.v))
        q, k = self.phi(q), self.phi(k)
        s = torch.cumsum(k[..., :, None] * v[..., None, :], 1)  # (B, L, H, S, S)
        z = torch.cumsum(k, 1)  # (B, L, H, S)
        num = (q[..., None] * s).sum(-2)
        den = (q * z).sum(-1, keepdim=True)
        return self.out((num / den).reshape(b, n, -1)), den


class Model(nn.Module):
    def __init__(self, phi):
        super().__init__()
        self.embed = nn.Linear(4, HEADS * SIZE)
        self.attn = LinearAttention(phi)
        self.head = nn.Linear(HEADS * SIZE, 1)

    def forward(self, x):
        h = self.embed(x)
        a, den = self.attn(h)
        return self.head(torch.tanh(h + a)), den


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, LENGTH, 4, generator=g)
    target = torch.cumsum(x[..., :1], 1) / torch.arange(1, LENGTH + 1)[:, None]
    return x, target


def step(watch, phi=F.relu):
    torch.manual_seed(0)
    model = Model(phi)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        out, den = model(x)
        loss = F.mse_loss(out, target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, model=model, den=den.detach(), out=out.detach(), loss=float(loss.detach()), grads=grads
    )


def truth(run):
    zero = run.den == 0
    assert 0 < int(zero.sum()) < zero.numel() // 4  # some rows, not most
    assert bool(torch.isnan(run.out).any()) and math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
