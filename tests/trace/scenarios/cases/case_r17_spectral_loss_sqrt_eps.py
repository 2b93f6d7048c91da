"""Control: the same waveform decoder and masked batch, the spectral L1 loss's magnitude written as
``sqrt(re^2 + im^2 + 1e-14)``, the fix the source gives. The padded frames are still exactly zero,
but the square root is taken at 1e-14, its derivative is finite, and through the square's factor ``2
* re = 0`` those frames contribute exactly nothing. Every gradient is finite and nonzero; nothing
raises.

Source: https://e-com-net.com/article/1596492408617467904.htm ("eps = 1e-14 # Add eps to ensure
.sqrt is not 0", "result = (norm_sq + eps).sqrt()"; "给要取根号的值加个很小的数" (add a very small number to the
value under the root)). Adapted: a tanh MLP decodes 16-dimensional codes into 512 samples, masked to
each clip's length, ``n_fft=64``, ``hop_length=32``, ``center=False``, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://e-com-net.com/article/1596492408617467904.htm"
DESCRIPTION = "control: spectral L1 loss with sqrt(norm_sq + 1e-14): finite gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all-zero", r"sqrt[^\n]{0,40}(zero|\b0\b)"]
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
    target_mag = magnitude(target, eps=1e-14)
    with watch(decoder) as w:
        optimizer.zero_grad()
        wav = decoder(codes) * mask
        mag = magnitude(wav, eps=1e-14)
        loss = F.l1_loss(mag, target_mag)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in decoder.named_parameters()}
        optimizer.step()
    return Run(w=w, mag=mag.detach(), loss=loss.item(), grads=grads, target=target, codes=codes)


def truth(run):
    assert torch.isfinite(torch.tensor(run.loss))
    assert int((run.mag <= 1e-6).sum()) > 0  # the padded frames are still there
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
