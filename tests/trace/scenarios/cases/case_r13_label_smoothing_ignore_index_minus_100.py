"""A decoder's output layer trained with OpenNMT's ``LabelSmoothingLoss`` kept at its default
``ignore_index=-100`` while the data pads with token 0.  The loss builds its smoothed target row
as ``one_hot = torch.full((V,), eps / (V - 2)); one_hot[self.ignore_index] = 0``: with -100 that is
Python's negative indexing, so the zeroed column is token ``V - 100`` = 20 of this 120-token
vocabulary, a real word whose probability is now trained toward 0 on every row, and the padding
rows (target 0 != -100) are not masked out: 16 of the 64 positions train the model to predict the
padding token with confidence 0.9.  The loss (``kl_div`` summed over the rows, divided by the
number of rows) is finite and every gradient finite and nonzero; nothing raises.

Source: https://discuss.pytorch.org/t/negative-indexing-of-a-1d-tensor-is-this-something-to-do-with-ignore-index-in-nllloss/47582
("in its implementation it has one_hot[self.ignore_index] = 0 and the index is default
self.ignore_index = -100 .  I don't get what does it mean"; the quoted ``LabelSmoothingLoss``:
``smoothing_value = label_smoothing / (tgt_vocab_size - 2)``, ``one_hot[self.ignore_index] = 0``).
Adapted: the loss's ``forward`` is OpenNMT's (scatter the confidence, mask rows whose target is
``ignore_index``, ``kl_div``), on an MLP's 120-way output for 64 positions.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "negative-indexing-of-a-1d-tensor-is-this-something-to-do-with-ignore-index-in-nllloss/47582"
)
DESCRIPTION = "OpenNMT label smoothing, ignore_index=-100, pad 0: token 20 zeroed, pads trained"
ASK = []
MUST = [
    [
        r"-100",
        r"ignore_index",
        r"negative ind\w*",
        r"(token|class|column|index|row) 20\b",
    ],
    [
        r"pad\w*",
        r"smooth\w*",
        r"one_hot",
        r"kl_div",
        r"target (distribution|row|probabilit)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]
V, PAD, EPS = 120, 0, 0.1


class LabelSmoothingLoss(nn.Module):
    """OpenNMT-py's loss, as quoted in the thread (forward as in OpenNMT-py)."""

    def __init__(self, label_smoothing, tgt_vocab_size, ignore_index=-100):
        assert 0.0 < label_smoothing <= 1.0
        self.ignore_index = ignore_index
        super().__init__()
        smoothing_value = label_smoothing / (tgt_vocab_size - 2)
        one_hot = torch.full((tgt_vocab_size,), smoothing_value)
        one_hot[self.ignore_index] = 0
        self.register_buffer("one_hot", one_hot.unsqueeze(0))
        self.confidence = 1.0 - label_smoothing

    def target_rows(self, target):
        model_prob = self.one_hot.repeat(target.size(0), 1)
        model_prob.scatter_(1, target.unsqueeze(1), self.confidence)
        model_prob.masked_fill_((target == self.ignore_index).unsqueeze(1), 0)
        return model_prob

    def forward(self, output, target):
        return F.kl_div(output, self.target_rows(target), reduction="sum")


def step(watch, ignore_index: int = -100):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, V))
    criterion = LabelSmoothingLoss(EPS, V, ignore_index=ignore_index)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    target = torch.randint(1, V, (64,), generator=g)
    target[48:] = PAD  # the padded tail of the sequences
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        loss = criterion(F.log_softmax(logits, dim=-1), target) / target.numel()
        loss.backward()
        opt.step()
    rows = criterion.target_rows(target)
    # what each position's logits receive from the loss (at the updated weights: same rows)
    probe = model(x).detach().requires_grad_(True)
    (criterion(F.log_softmax(probe, dim=-1), target) / target.numel()).backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, rows=rows, target=target, logit_grad=probe.grad, grads=grads, loss=loss.item())


def truth(run):
    pad = run.target == PAD
    real = ~pad & (run.target != V - 100)
    assert bool((run.rows[real, V - 100] == 0).all())  # token 20: zero smoothing mass
    assert bool((run.rows[pad, PAD] > 0.8).all())  # padding rows trained toward the pad token
    assert bool((run.logit_grad[pad].abs().sum(1) > 0).all())
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
