"""Control: the same one-batch overfitting check with ``F.cross_entropy`` (the negative
log-likelihood): over two steps on the same batch the loss goes down and the true classes'
log-probability goes up; every gradient finite and nonzero.

Source: http://megha-bose.github.io/posts/diagnosing-dl-failures/ ("The Golden Rule: Overfit One
Batch First ... If your model cannot memorize 4 samples, something is wrong with the forward pass,
the loss function, or the data pipeline"; its loop: ``optimizer.zero_grad(); loss =
model_loss(model, batch); loss.backward(); optimizer.step()``).
"""

from case_r11_log_likelihood_sign_flipped import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://megha-bose.github.io/posts/diagnosing-dl-failures/"
DESCRIPTION = "control: overfit one batch with cross_entropy: loss down, true-class log-prob up"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"\bsign\b",
    r"wrong (way|direction)",
    r"negative loss",
    r"loss (is |was |goes |went )?(negative|below zero)",
]


def step(watch):
    return _step(watch, cross_entropy=True)


def truth(run):
    assert 0 < run.losses[1] < run.losses[0]
    assert run.end > run.start
