"""The control of ``swin_shifted_windows_unmasked``: the same two-block Swin Transformer with the
shifted block's attention masked as Swin does (after the cyclic shift, tokens of different original
regions in a window get ``-inf`` scores, so each attends only within its own region; every token
keeps at least itself), and the output rolled back.  The top-left token's output depends on its own
neighbourhood only: the input at the opposite corner has exactly zero effect on it.  Every parameter
gets a finite, nonzero gradient.

Source: https://www.emergentmind.com/topics/windowed-and-shifted-self-attention ("To overcome the
isolation of local windows, the shifted window mechanism cyclically shifts the feature map by (2D),
(3D), or corresponding chunk offsets (language), re-partitions into new windows, and applies the
same local attention with a mask to block unwanted cross-window attention. The output is
reverse-shifted to restore alignment").  Adapted: the bug's model, data and optimizer with the mask.
"""

import torch
from case_r31_swin_shifted_windows_unmasked import SIZE
from case_r31_swin_shifted_windows_unmasked import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.emergentmind.com/topics/windowed-and-shifted-self-attention"
DESCRIPTION = "control: Swin shifted windows with the region mask (-inf across regions)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"wrap\w*[- ]?around",
    r"(no|without( the)?) (attention )?mask",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, masked=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert float(run.reach[SIZE - 1, SIZE - 1]) == 0.0
    assert float(run.reach[0, 0]) > 0
