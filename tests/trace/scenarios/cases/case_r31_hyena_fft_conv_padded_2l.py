"""The control of ``hyena_fft_conv_length_l``: the same Hyena-style language model with the long
convolution computed by FFTs of length ``2L`` and the first ``L`` outputs kept, a linear (causal)
convolution: position ``t`` reads only ``v[0..t]`` (changing only the last token leaves the earlier
outputs unchanged, up to the FFT's rounding, below 1e-5).  Every parameter gets a finite, nonzero
gradient.

Source: https://eulerwa.com/en/products/eulerstack/tutorials/mixers/04_hyena.html ("Make the kernel
size the full sequence length N so each token sees all past tokens. But don't learn N parameters
directly — have a small network generate them implicitly"; "Filter generator: a small MLP +
sinusoidal features + exponential decay window takes position t and outputs filter value h(t)"; "FFT
convolution: the long filter and input are FFT'd → elementwise multiply → inverse FFT = convolution
in O(N log N)").  Adapted: the bug's model, data and optimizer with FFTs of length ``2L``.
"""

import torch
from case_r31_hyena_fft_conv_length_l import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://eulerwa.com/en/products/eulerstack/tutorials/mixers/04_hyena.html"
DESCRIPTION = "control: Hyena long conv by FFT of length 2L, first L kept: causal"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"circular|wrap\w*[- ]around",
    r"(leak\w*|look\w* ahead|future (tokens?|positions?))",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, padded=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.shift < 1e-5
