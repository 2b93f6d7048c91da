"""Control: the same OpenNMT ``LabelSmoothingLoss`` built with ``ignore_index`` set to the padding
token (0), as the book's loss takes a ``pad_id``: the zeroed column of the smoothed target is the
padding token's, every real token gets ``eps / (V - 2)``, and the 16 padding rows are masked to
all-zero targets, so their logits get exactly zero gradient (by design: padding is not trained on)
while the 48 real positions train the layer.  Finite, nonzero parameter gradients: a healthy step.

Source: https://www.book-ai.org/books/transformer/chapter-10/section-02 ("class
LabelSmoothingLoss(nn.Module): Label smoothing loss for sequence-to-sequence models ... Args:
vocab_size: Size of the vocabulary; smoothing: Label smoothing factor (default: 0.1); pad_id:
Padding"; "P(dog) = 1 - eps + eps/V", "P(cat) = eps/V").
"""

import torch
from case_r13_label_smoothing_ignore_index_minus_100 import PAD, V
from case_r13_label_smoothing_ignore_index_minus_100 import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.book-ai.org/books/transformer/chapter-10/section-02"
DESCRIPTION = "control: OpenNMT label smoothing with ignore_index = pad id 0: pads masked, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"-100",
    r"negative ind\w*",
    r"dead (units?|relu|neurons?)",
]


def step(watch):
    return _step(watch, ignore_index=PAD)


def truth(run):
    pad = run.target == PAD
    assert bool((run.rows[pad] == 0).all())  # padding rows masked
    assert bool((run.rows[~pad, PAD] == 0).all())  # the pad column gets no smoothing mass
    assert bool((run.rows[~pad, V - 100] > 0).all())  # token 20 keeps its share
    assert bool((run.logit_grad[pad] == 0).all())
    assert bool((run.logit_grad[~pad].abs().sum(1) > 0).all())
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
