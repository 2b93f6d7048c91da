"""Control: the same checkpoint resumed into the unchanged model class (``a`` then ``b``): model and
optimizer state load onto the same parameters they were saved from, and the resumed step
continues Adam's moments where they were.  A healthy resume.

Source: https://github.com/pytorch/pytorch/issues/3852 (optimizer state loaded by position).
"""

import torch
from case_r10_optimizer_state_swapped_order import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pytorch/pytorch/issues/3852"
DESCRIPTION = "control: optimizer.load_state_dict into the unchanged model: moments on their params"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"(wrong|other|another|swapped|mismatch\w*) (parameter|moment|state)",
]


def step(watch):
    return _step(watch, reorder=False)


def truth(run):
    for name, saved in run.saved.items():
        assert torch.equal(run.loaded[name], saved)
