"""The control of ``rnnt_loss_probability_space_underflow``: the same transducer, utterances and
optimizer with the lattice recursion in log space, ``alpha[t, u] = logaddexp(alpha[t - 1, u] + log
P(blank), alpha[t, u - 1] + log P(y_u))``.  The log-likelihood of each utterance is between -243 and
-232 (``1e-104`` or so as a probability, which float32 could not hold), the loss is finite and every
parameter gets a finite, nonzero gradient and moves.  The encoder's gradient is a sum over the ``U +
1 = 21`` lattice rows and the prediction network's over the ``T = 60`` columns, as transducers do.

Source: https://anwarvic.github.io/speech-recognition/Improved_RNN-T ("they observed a huge gradient
variance during RNNT training such that the gradient variance is amplified for U (transcription
length) times on the encoder side, and was amplified for T (acoustic length) times on the predictor
side").  Adapted: the bug's model, utterances and optimizer with the loss in log space (the page's
normalized jointer is not used).
"""

import math

import torch
from case_r30_rnnt_loss_probability_space_underflow import loss_log_space
from case_r30_rnnt_loss_probability_space_underflow import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://anwarvic.github.io/speech-recognition/Improved_RNN-T"
DESCRIPTION = "control: RNN-T loss by the lattice recursion in log space (logaddexp): finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"underflow",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, rnnt_loss=loss_log_space)


def truth(run):
    assert bool(torch.isfinite(run.final).all()) and bool((run.final < -150).all())
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
