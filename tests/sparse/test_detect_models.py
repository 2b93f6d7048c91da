"""Detection on real models (issue 45): a CNN with max pooling, an FFT layer, a Transformer
encoder layer; each pattern contains the non-zeros of dense Jacobians at random inputs, keeps
the samples of a batch independent, and gives right values through ``SparseJacobian``."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from gradarg import SparseJacobian, hessian_sparsity, jacobian_sparsity

D = torch.float64


class FourierLayer(nn.Module):
    """An FNO-style spectral layer: ``irfft(W · rfft(x)[:modes])`` plus a pointwise path."""

    def __init__(self, channels: int = 2, modes: int = 3) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(5)
        self.modes = modes
        self.weight = nn.Parameter(torch.randn(channels, channels, modes, dtype=torch.cfloat,
                                               generator=g).to(torch.complex128))
        self.pointwise = nn.Conv1d(channels, channels, 1).double()

    def forward(self, x):
        spectrum = torch.fft.rfft(x)
        low = torch.einsum("bim,iom->bom", spectrum[..., : self.modes], self.weight)
        out = torch.cat([low, torch.zeros_like(spectrum[..., self.modes:])], -1)
        return torch.tanh(torch.fft.irfft(out, n=x.shape[-1]) + self.pointwise(x))


def cnn():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(3, 2, 3, padding=1), nn.AvgPool2d(2), nn.AdaptiveMaxPool2d((2, 1)),
    ).double().eval()


def transformer():
    torch.manual_seed(0)
    return nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                      batch_first=True).double().eval()


def fourier():
    torch.manual_seed(0)
    return FourierLayer().double()


MODELS = [("CNN with max pooling", cnn, (2, 1, 8, 8)),
          ("FFT layer", fourier, (2, 2, 8)),
          ("Transformer encoder layer", transformer, (2, 3, 8))]


@pytest.mark.parametrize(("label", "build", "shape"), MODELS, ids=[m[0] for m in MODELS])
def test_model_pattern_contains_the_dense_jacobian(label, build, shape):
    model = build()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.zeros(shape, dtype=D)
    with warnings.catch_warnings():  # vmap's slow fallback for the attention backward
        warnings.simplefilter("ignore", UserWarning)
        found = jacobian_sparsity(model, x, layout=torch.strided)
        g = torch.Generator().manual_seed(1)
        truth = None
        for _ in range(3):
            j = torch.func.jacrev(model)(torch.randn(shape, generator=g, dtype=D)) != 0
            truth = j if truth is None else truth | j
    assert found.shape == truth.shape
    assert not (truth & ~found).any(), f"{label}: a non-zero of the Jacobian is missing"
    # the samples of the batch stay independent: the pattern is not one dense block
    flat = found.reshape(shape[0], -1, shape[0], x[0].numel())
    assert flat[0, :, 1].sum() == 0 and flat[1, :, 0].sum() == 0
    assert flat[0, :, 0].any()
    if label.startswith("CNN"):  # windows: an output pixel does not see the whole image
        assert not flat[0, :, 0].all()
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())
    # and SparseJacobian computes the right values with it
    xr = torch.randn(shape, generator=g, dtype=D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        sj = SparseJacobian(jacobian_sparsity(model, xr), xr.shape)
        dense = torch.func.jacrev(model)(xr)
        assert torch.allclose(sj(model, xr).to_dense(), dense)


@pytest.mark.parametrize(("label", "build", "shape"), MODELS[:2], ids=[m[0] for m in MODELS[:2]])
def test_model_hessian_pattern_contains_the_dense_hessian(label, build, shape):
    model = build()
    f = lambda x: (model(x) ** 2).sum()
    x = torch.zeros((1, *shape[1:]), dtype=D)
    found = hessian_sparsity(f, x, layout=torch.strided)
    g = torch.Generator().manual_seed(2)
    truth = None
    for _ in range(2):
        h = torch.func.hessian(f)(torch.randn(x.shape, generator=g, dtype=D)) != 0
        truth = h if truth is None else truth | h
    assert not (truth & ~found).any(), f"{label}: a non-zero of the Hessian is missing"
