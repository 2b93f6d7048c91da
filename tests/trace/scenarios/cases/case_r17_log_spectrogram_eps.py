"""Control: the same classifier on log-magnitude spectrograms of zero-padded clips, with the small
offset the source's comment suggests: ``log(|stft(x)| + 1e-8)``. The padded frames become a floor of
``log(1e-8) = -18.4`` instead of ``-inf``; every feature is finite, the loss is finite and every
gradient finite and nonzero. Nothing raises.

Source: https://dsp.stackexchange.com/questions/88504/stft-audio-processing-with-zeros (comment:
"Add a very small value to X[k] before taking the log. Something like 1e-8"; answer: "If you don't
want to deal with -inf you define the maximum dynamic range and add a small offset to your data").
Adapted: 16 synthetic tones of 256 to 512 samples padded to 512, ``n_fft=64``, ``hop_length=32``,
``center=False``, a tanh MLP over the flattened log spectrogram, three classes, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://dsp.stackexchange.com/questions/88504/stft-audio-processing-with-zeros"
DESCRIPTION = "control: log(|STFT| + 1e-8) features of zero-padded clips: all finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all-zero"]
N_FFT, HOP = 64, 32


def batch():
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(256, 513, (16,), generator=g)
    t = torch.arange(512) / 8000
    classes = torch.randint(0, 3, (16,), generator=g)
    freqs = torch.tensor([300.0, 900.0, 2000.0])[classes].unsqueeze(1)
    wav = torch.sin(2 * torch.pi * freqs * t) + 0.1 * torch.randn(16, 512, generator=g)
    wav = wav * (torch.arange(512) < lengths.unsqueeze(1)).float()  # zero padding
    return wav, classes


def features(wav, eps=0.0):
    spec = torch.stft(
        wav, N_FFT, HOP, window=torch.hann_window(N_FFT), center=False, return_complex=True
    )
    return torch.log(spec.abs() + eps).flatten(1)


def step(watch):
    torch.manual_seed(0)
    wav, y = batch()
    x = features(wav, eps=1e-8)
    model = nn.Sequential(nn.Linear(x.shape[1], 32), nn.Tanh(), nn.Linear(32, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, wav=wav, x=x, loss=loss.item(), grads=grads)


def truth(run):
    assert bool(torch.isfinite(run.x).all())
    assert float(run.x.min()) < -15  # the padded frames' floor, log(1e-8)
    assert run.loss == run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
