"""The control of ``dkt_predicts_answer_already_in_input``: the same deep knowledge tracing step
with the targets shifted by one: the prediction after interaction ``t`` is read at the skill of the
next question, ``q_(t+1)``, and scored against its answer ``a_(t+1)``.  The recurrent network sees
interactions up to ``t`` only; flipping ``a_(t+1)`` in the input leaves the scored prediction
unchanged.  Every gradient is finite and nonzero.

Source: http://ceurspt.wikidata.dbis.rwth-aachen.de/Vol-3605/8.smw ("The goal of knowledge tracing
(KT) is to track a students' progress over time by analyzing their historical data, so as to
predict their future performance on tests related to the topics they have covered"; "Deep Knowledge
Tracing (DKT) has proven highly effective in solving KT tasks due to its ability to model complex
long-range dependencies in test sequences").  Adapted: the bug's students, model and optimizer with
the next interaction as the target.
"""

import torch
from case_r28_dkt_predicts_answer_already_in_input import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://ceurspt.wikidata.dbis.rwth-aachen.de/Vol-3605/8.smw"
DESCRIPTION = "control: DKT prediction after interaction t scored on interaction t + 1"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b", r"leak\w*"]


def step(watch):
    return _step(watch, shift=1)


def truth(run):
    assert run.shift == 1 and not run.target_in_input
    assert run.flip_change == 0.0  # the scored prediction cannot read the answer it is scored on
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
