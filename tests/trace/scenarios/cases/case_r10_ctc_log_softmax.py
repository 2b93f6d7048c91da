"""Control: the same speech model with ``F.log_softmax(out, dim=-1)`` before ``nn.CTCLoss``, as the
reporter's fix: the loss is a positive negative log-likelihood, a healthy step.

Source: https://github.com/SeanNaren/deepspeech.pytorch/issues/488 ("I add log_softmax function and
the loss function becomes positive").
"""

from case_r10_ctc_raw_logits_negative import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/SeanNaren/deepspeech.pytorch/issues/488"
DESCRIPTION = "control: CTCLoss given log_softmax outputs: positive loss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"not log-?probabilit", r"negative (ctc )?loss", r"\bdead\b"]


def step(watch):
    return _step(watch, log_softmax=True)


def truth(run):
    assert all(v > 0 for v in run.losses)
