"""A waveform decoder trained with an L1 loss between magnitude spectrograms, the magnitude written
as ``sqrt(re^2 + im^2)`` of ``torch.stft``. The decoded waveforms are multiplied by their padding
mask (clips of 256 to 448 samples in a 512-sample batch), so STFT frames lying wholly in the padding
are exactly 0, their squared norm is 0 and ``sqrt`` is taken at 0: its backward divides by ``2 *
sqrt(0)``, and ``0 / 0`` (or ``inf * 0`` through the square) gives NaN. The NaN flows back through
the mask (``NaN * 0`` is NaN) into every parameter's gradient. The loss and the data are finite;
nothing raises.

Source: https://e-com-net.com/article/1596492408617467904.htm ("Pytorch训练CRNN输出为NaN": with
``torchaudio.transforms.Spectrogram(..., power=1)``, "stft = torch.stft(wav, n_fft, hop_length,
win_length, ...)", "norm_sq = stft.pow(2.).sum(-1)", "result = norm_sq.sqrt()"; if wav is 0, norm_sq
is 0 and "result在计算梯度的时候就是NaN" (its gradient is NaN); the fix "result = (norm_sq + eps).sqrt()";
pytorch/audio#993). Adapted: a tanh MLP decodes 16-dimensional codes into 512 samples, masked to
each clip's length, ``n_fft=64``, ``hop_length=32``, ``center=False``, Adam.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://e-com-net.com/article/1596492408617467904.htm"
DESCRIPTION = "spectral L1 loss with sqrt(re^2 + im^2): all-zero padded frames give NaN gradients"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [
        r"sqrt",
        r"square root",
        r"(magnitude|norm)[^\n]{0,40}(zero|\b0\b)",
        r"zero (frames?|magnitude|norm)",
        r"(padd\w*|silen\w*)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    (
        r"(input|data|batch|target|label)s?[^\n]{0,30}(contain|has|have|had|with)[^\n]{0,15}"
        r"(nan|inf\b|non-?finite)"
    ),
]
N_FFT, HOP = 64, 32


def batch():
    g = torch.Generator().manual_seed(1)
    codes = torch.randn(8, 16, generator=g)
    lengths = torch.tensor([256, 288, 320, 352, 384, 416, 448, 448])
    mask = (torch.arange(512) < lengths.unsqueeze(1)).float()
    t = torch.arange(512) / 512
    freqs = torch.randint(3, 12, (8, 1), generator=g)
    target = torch.sin(2 * torch.pi * freqs * t) * mask
    return codes, mask, target


def magnitude(wav, eps=0.0):
    spec = torch.view_as_real(
        torch.stft(
            wav, N_FFT, HOP, window=torch.hann_window(N_FFT), center=False, return_complex=True
        )
    )
    norm_sq = spec.pow(2.0).sum(-1)
    return (norm_sq + eps).sqrt()


def step(watch):
    torch.manual_seed(0)
    decoder = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 512))
    optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
    codes, mask, target = batch()
    target_mag = magnitude(target)
    with watch(decoder) as w:
        optimizer.zero_grad()
        wav = decoder(codes) * mask
        mag = magnitude(wav)
        loss = F.l1_loss(mag, target_mag)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in decoder.named_parameters()}
        optimizer.step()
    return Run(w=w, mag=mag.detach(), loss=loss.item(), grads=grads, target=target, codes=codes)


def truth(run):
    assert bool(torch.isfinite(run.target).all()) and bool(torch.isfinite(run.codes).all())
    assert torch.isfinite(torch.tensor(run.loss))
    assert int((run.mag == 0).sum()) > 0  # frames wholly in the padding
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
