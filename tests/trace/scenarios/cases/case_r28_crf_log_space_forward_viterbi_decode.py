"""The control of ``crf_forward_algorithm_probability_space_overflow``: the same CRF tagger on the
same 64-token sentences with the forward algorithm in log space (``logsumexp`` over the previous
tags at each position), so ``log Z`` is about 111 to 115 and finite; the loss is ``log Z`` minus the
gold path's score, and every parameter gets a finite, nonzero gradient.  After the step the tags are
decoded by Viterbi on the non-normalised scores (``max`` and ``argmax`` in place of ``logsumexp``,
then a backtrace) from the emissions already computed, under ``no_grad``: it reads no gradient and
calls no module.

Source: https://topic.alibabacloud.com/a/getting-started-with-conditional-airport-iv-prediction-algorithm-for-conditional-random-airport_8_8_30367802.html
("Note that it is only necessary to calculate the non-normalized probabilities, without having to
calculate probabilities, which can greatly improve the efficiency"; "the conditional random field
prediction problem becomes the best path problem to seek the most non-normalized probability";
"The Viterbi algorithm is described below").  Adapted: the bug's tagger, sentences and optimizer;
the training loss in log space as in any CRF layer (round 18's healthy CRF runs 5-token sentences).
"""

import math

import torch
from case_r28_crf_forward_algorithm_probability_space_overflow import LEN, TAGS, data
from case_r28_crf_forward_algorithm_probability_space_overflow import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://topic.alibabacloud.com/a/getting-started-with-conditional-airport-iv-prediction-"
    "algorithm-for-conditional-random-airport_8_8_30367802.html"
)
DESCRIPTION = "control: CRF forward algorithm with logsumexp on 64 tokens, Viterbi decode after"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bdead\b",
    r"argmax",
    r"negative (loss|nll|log-likelihood)",
]


def step(watch):
    return _step(watch, log_space=True)


def truth(run):
    assert torch.allclose(run.log_z, run.reference, rtol=0, atol=1e-3)
    assert math.isfinite(run.loss) and run.loss > 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.decoded.shape == (data()[0].shape[0], LEN)
    assert int(run.decoded.min()) >= 0 and int(run.decoded.max()) < TAGS
