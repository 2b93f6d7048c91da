"""The control of ``cvae_one_hot_width_from_batch_raises``: the same conditional VAE with
``F.one_hot(y, num_classes=10)``, so that every batch's one-hot vectors have width 10, the short
last batch (classes 0 to 5) included.  Both steps run, every parameter gets a finite, nonzero
gradient at both.  In the second step the weight columns that read the one-hot entries of classes 6
to 9 (absent from that batch) get zero gradient, as any input feature that is 0 for the whole batch
does; nothing else is zero.

Source: https://overfitting.club/posts/tutorials/deep_learning/class_conditional_vae/class_conditional_vae.html
("give the decoder a class label y, and it learns what to generate"; "We'll implement two
conditioning mechanisms: concatenation (the simplest approach) and adaptive layer normalization").
Adapted: the bug's data, model and optimizer with ``num_classes`` given.
"""

import torch
from case_r27_cvae_one_hot_width_from_batch_raises import CLASSES, LATENT
from case_r27_cvae_one_hot_width_from_batch_raises import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://overfitting.club/posts/tutorials/deep_learning/class_conditional_vae/"
    "class_conditional_vae.html"
)
DESCRIPTION = "control: CVAE with F.one_hot(y, num_classes=10), both batches train"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"(absent|missing|not (present )?in (the |this )?batch)[^\n]{0,80}(class|label|one[- ]hot)",
        r"one[- ]hot[^\n]{0,80}(absent|missing|zero|not (present )?in)",
    ]
]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"vanish\w*", r"explod\w*"]


def step(watch):
    return _step(watch, num_classes=CLASSES)


def truth(run):
    assert run.error is None and len(run.grads) == 2
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    absent = run.grads[1]["enc.0.weight"][:, 64 + 6 :]
    assert bool((absent == 0).all())
    assert bool((run.grads[1]["dec.0.weight"][:, LATENT + 6 :] == 0).all())
