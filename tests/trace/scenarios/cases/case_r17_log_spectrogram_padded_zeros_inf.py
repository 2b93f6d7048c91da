"""A classifier on log-magnitude spectrograms of clips zero-padded to a common length. The features
are ``log(|stft(x)|)`` computed in the data pipeline; STFT frames lying wholly in the padding have
magnitude exactly 0, and ``log(0) = -inf`` puts ``-inf`` into the input features (the waveforms
themselves are finite). The first linear layer sums ``-inf`` times weights of both signs, giving
``nan`` logits, a ``nan`` loss and ``nan`` gradients for the layers. Nothing raises.

Source: https://dsp.stackexchange.com/questions/88504/stft-audio-processing-with-zeros ("the matrix
includes a lot of low values or zeros. By the 2. equations including log those values get
transformed to nan latest in the second step. As soon as there are nans involved all future
aggregations I want to compute doesn't work"; comment: "Add a very small value to X[k] before taking
the log. Something like 1e-8"; answer: "In this case the level is -inf"). Adapted: 16 synthetic
tones of 256 to 512 samples padded to 512, ``n_fft=64``, ``hop_length=32``, ``center=False``, a tanh
MLP over the flattened log spectrogram, three classes, Adam.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://dsp.stackexchange.com/questions/88504/stft-audio-processing-with-zeros"
DESCRIPTION = "log |STFT| features of zero-padded clips: log(0) = -inf in the input, NaN loss"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b", r"infinit"],
    [
        r"(input|feature|data|batch)s?[^\n]{0,40}(inf\b|infinit|non-?finite|nan)",
        r"log[^\n]{0,30}(zero|\b0\b)",
        r"-inf",
    ],
]
MUST_NOT = [FALSE_OK]
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
    x = features(wav)
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
    assert bool(torch.isfinite(run.wav).all())
    assert int(torch.isneginf(run.x).sum()) > 0  # log(0) of the padded frames
    assert run.loss != run.loss  # nan
    assert bool(torch.isnan(run.grads["0.weight"]).any())
