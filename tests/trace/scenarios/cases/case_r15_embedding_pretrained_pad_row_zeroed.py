"""Control: the same bag-of-words classifier with the pretrained table's row 0 set to zeros before
``nn.Embedding.from_pretrained(vectors, freeze=False, padding_idx=0)``.  Padded positions add
nothing to the sentence's sum, the features do not depend on the amount of padding, and the
padding row's gradient is exactly zero by design (``padding_idx``), so it stays zero; every other
gradient is finite and the rows of the words used get nonzero ones.

Source: https://prodissertation.co.uk/post/why-is-the-0-vector-still-not-returned-after-set-padding-idx
(the padding row "remains as a fixed pad": its gradients are "effectively set to zero"; the fix
to the question's nonzero padding vector is a zero row at ``padding_idx``).
"""

import torch
from case_r15_embedding_pretrained_pad_row_nonzero import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://prodissertation.co.uk/post/why-is-the-0-vector-still-not-returned-after-set-padding-idx"
DESCRIPTION = "control: pretrained vectors with a zero row 0, from_pretrained(padding_idx=0)"
ASK = []
MUST = [[HEALTHY_OK, r"padding_idx"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"pad\w* (row|vector)[^\n]{0,40}(non-?zero|not zero)",
    r"depend\w* on (the )?(amount|number) of padding",
]


def step(watch):
    return _step(watch, zero_pad_row=True)


def truth(run):
    assert bool((run.pad_before == 0).all()) and bool((run.pad_after == 0).all())
    g = run.grads["emb.weight"]
    assert bool((g[0] == 0).all()) and bool(g[1:].abs().sum() > 0)
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
    assert run.shift < 1e-6
