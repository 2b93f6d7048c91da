"""The control of ``flow_warp_grid_not_normalized``: the same flow network, frames and photometric
loss, with the whole sampling grid (pixel coordinates plus flow) mapped to ``[-1, 1]`` by ``2 * g /
(size - 1) - 1`` and ``align_corners=True``, as the answer does.  Every output pixel samples inside
the second frame, the flow gets a gradient almost everywhere, and every parameter's gradient is
finite and nonzero.

Source: https://taourl.com/read-2512036.html ("Applying backward warping with forward optical flow
in PyTorch using `grid_sample`"; ``sampling_grid = grid + forward_flow``; "Normalize grid to [-1, 1]
for grid_sample"; ``F.grid_sample(source_img, sampling_grid, mode='bilinear', padding_mode='zeros',
align_corners=True)``).  Adapted: the page's in-place normalisation of the grid's two channels
written out of place (its ``2.0 sampling_grid ... / (W 1) 1.0`` lost its operators in the stored
copy), the bug's network and data.
"""

import torch
from case_r24_flow_warp_grid_not_normalized import flow_warp_normalized
from case_r24_flow_warp_grid_not_normalized import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://taourl.com/read-2512036.html"
DESCRIPTION = "control: sampling grid normalised to [-1, 1] for grid_sample: the flow learns"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"outside"]


def step(watch):
    return _step(watch, warp=flow_warp_normalized)


def truth(run):
    assert float((run.warped == 0).float().mean()) < 0.1
    assert float((run.flow_grad.abs().sum(1) > 0).float().mean()) > 0.5
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
