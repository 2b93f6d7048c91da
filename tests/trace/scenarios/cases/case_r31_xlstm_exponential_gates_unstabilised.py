"""An sLSTM layer (xLSTM's scalar-memory cell) with exponential input and forget gates, ``i =
exp(i~)`` and ``f = exp(f~)``, written without the stabiliser state ``m_t`` the paper pairs them
with.  The forget-gate bias is initialised between 3 and 6 (xLSTM's initialisation for its forget
gates), so each step multiplies the cell ``c`` and the normaliser ``n`` by about ``e^3`` to ``e^6``:
both overflow float32 from the 16th of the 64 positions (in every sequence by the 18th), ``h = o * c
/ n`` becomes ``inf / inf = NaN`` from there on, and the loss and every parameter's gradient are
NaN.  Nothing raises.

Source: https://aman.ai/primers/ai/xLSTM/ ("By integrating advancements such as exponential gating
and novel memory structures—scalar and matrix memories—xLSTMs aim to enhance the traditional LSTM's
capability"; "Originating in the early 1990s, LSTMs were designed to combat the vanishing gradient
problem").  Adapted: the sLSTM recurrence ``c_t = f c_{t-1} + i z``, ``n_t = f n_{t-1} + i``, ``h_t
= o c_t / n_t`` with ``z = tanh``, ``o = sigmoid``, exponential ``i`` and ``f``; 16 cells, input and
recurrent weights ``Linear(4, 64)`` and ``Linear(16, 64, bias=False)``, a head ``Linear(16, 1)`` at
every position, 16 sequences of 64 steps, the running mean of the first input as target, MSE, Adam
at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://aman.ai/primers/ai/xLSTM/"
DESCRIPTION = "sLSTM exp(i), exp(f) gates without the stabiliser m_t: c and n overflow, h = NaN"
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*|overflow\w*"],
    [
        r"stabili[sz]\w*",
        r"\bm_?t\b|max\s?\(",
        r"exp\w*[- ]?(gat\w*|forget|input)",
        r"\bexp\b|exponential",
        r"forget[- ]gate",
        r"normali[sz]er|\bn_?t\b",
        r"overflow\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
HIDDEN, LENGTH = 16, 64


class SLSTM(nn.Module):
    def __init__(self, stabilised):
        super().__init__()
        self.stabilised = stabilised
        self.w = nn.Linear(4, 4 * HIDDEN)
        self.r = nn.Linear(HIDDEN, 4 * HIDDEN, bias=False)
        with torch.no_grad():
            self.w.bias[HIDDEN : 2 * HIDDEN] = torch.linspace(3.0, 6.0, HIDDEN)  # forget gate

    def forward(self, x):  # (B, T, 4)
        b = x.shape[0]
        h = c = n = m = torch.zeros(b, HIDDEN)
        hs, ns = [], []
        for t in range(x.shape[1]):
            i_, f_, z_, o_ = (self.w(x[:, t]) + self.r(h)).chunk(4, -1)
            if self.stabilised:
                m_new = torch.maximum(f_ + m, i_)
                i, f = torch.exp(i_ - m_new), torch.exp(f_ + m - m_new)
                m = m_new
            else:
                i, f = torch.exp(i_), torch.exp(f_)
            c = f * c + i * torch.tanh(z_)
            n = f * n + i
            h = torch.sigmoid(o_) * c / n
            hs.append(h)
            ns.append(n)
        return torch.stack(hs, 1), torch.stack(ns, 1)


class Model(nn.Module):
    def __init__(self, stabilised):
        super().__init__()
        self.cell = SLSTM(stabilised)
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        h, n = self.cell(x)
        return self.head(h), n


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, LENGTH, 4, generator=g)
    target = x[..., :1].cumsum(1) / torch.arange(1, LENGTH + 1).float()[:, None]
    return x, target


def step(watch, stabilised=False):
    torch.manual_seed(0)
    model = Model(stabilised)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        out, n = model(x)
        loss = F.mse_loss(out, target)
        loss.backward()
        grads = {k: p.grad.detach().clone() for k, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, model=model, out=out.detach(), n=n.detach(), loss=float(loss.detach()), grads=grads
    )


def truth(run):
    overflow = (~torch.isfinite(run.n)).any(-1)  # (sequence, position)
    first = int(overflow.any(0).float().argmax())
    everywhere = int(overflow.all(0).float().argmax())
    assert bool(overflow.any()) and 10 <= first <= everywhere < 24
    assert bool(torch.isfinite(run.out[:, :first]).all())
    assert bool(torch.isnan(run.out[:, everywhere:]).all())
    assert math.isnan(run.loss)
    for k, g in run.grads.items():
        assert bool(torch.isnan(g).any()), k
