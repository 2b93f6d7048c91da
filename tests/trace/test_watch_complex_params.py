"""Class: a watched step whose parameters are complex (a Fourier neural operator's spectral
weights): a reader of the optimizer's step compared complex entries with ``> 0`` and raised
``NotImplementedError`` inside the user's ``optimizer.step()``, so the watch changed what the
step did.

Invariant: the watch never changes a step: with complex parameters (alone or beside real
ones), under each ``torch.optim`` optimizer that supports them, the step neither raises nor
moves the parameters differently from the same step unwatched (bit for bit), and the summary
is read without an error.  Generated: the optimizer, the sizes, the learning rate, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

OPTIMIZERS = {
    "sgd": lambda ps, lr: torch.optim.SGD(ps, lr=lr),
    "sgd-momentum": lambda ps, lr: torch.optim.SGD(ps, lr=lr, momentum=0.9, weight_decay=0.1),
    "adam": lambda ps, lr: torch.optim.Adam(ps, lr=lr),
    "adamw": lambda ps, lr: torch.optim.AdamW(ps, lr=lr),
    "rmsprop": lambda ps, lr: torch.optim.RMSprop(ps, lr=lr),
    "adagrad": lambda ps, lr: torch.optim.Adagrad(ps, lr=lr),
}


class Spectral(nn.Module):
    """``irfft(rfft(x) * w)`` with complex weights ``w``, then a real layer."""

    def __init__(self, n, modes):
        super().__init__()
        self.w = nn.Parameter(torch.randn(modes, dtype=torch.cfloat) / modes)
        self.out = nn.Linear(n, 1)
        self.n, self.modes = n, modes

    def forward(self, x):
        f = torch.fft.rfft(x)
        f = torch.cat([f[:, : self.modes] * self.w, f[:, self.modes:]], 1)
        return self.out(torch.tanh(torch.fft.irfft(f, n=self.n)))


def _step(watched, kind, n, modes, lr, seed):
    torch.manual_seed(seed)
    model = Spectral(n, modes)
    opt = OPTIMIZERS[kind](model.parameters(), lr)
    x, y = torch.randn(8, n), torch.randn(8, 1)

    def step():
        for _ in range(2):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()

    if watched:
        with gradarg.watch(model) as w:
            step()
        w.summary()
    else:
        step()
    return [p.detach().clone() for p in model.parameters()]


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(sorted(OPTIMIZERS)), n=st.sampled_from([8, 16]),
       modes=st.integers(1, 4), lr=st.sampled_from([1e-3, 0.1]), seed=st.integers(0, 2**16))
def test_complex_parameters_step_as_they_would_unwatched(kind, n, modes, lr, seed):
    plain = _step(False, kind, n, modes, lr, seed)
    watched = _step(True, kind, n, modes, lr, seed)
    assert all(torch.equal(a, b) for a, b in zip(plain, watched, strict=True)), kind
