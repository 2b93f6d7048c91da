"""Control: the same tiny GPT-2 step with ``labels = input_ids.clone()`` and the padding positions
set to -100, as the Hugging Face course does: the model shifts inside, so the logits at t are
scored against the token at t + 1, and padding is neither attended to nor scored.

Source: https://discuss.huggingface.co/t/how-is-the-data-shifted-by-one-token-during-causallm-fine-tuning/36386/3
("shifting is handled inside the model. 'input_ids' and 'labels' can be very same tensors").
"""

from case_r10_gpt2_labels_shifted_twice import _ce
from case_r10_gpt2_labels_shifted_twice import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://discuss.huggingface.co/t/"
    "how-is-the-data-shifted-by-one-token-during-causallm-fine-tuning/36386/3"
)
DESCRIPTION = "control: GPT-2 labels = input_ids with padding -100, shifted once inside the model"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"shifted twice", r"no gradient for"]


def step(watch):
    return _step(watch, manual_shift=False)


def truth(run):
    target = run.labels[:, 1:]
    assert abs(_ce(run.logits[:, :-1], target) - run.loss) < 1e-5
    real = target != -100
    assert bool((target[real] == run.ids[:, 1:][real]).all())
