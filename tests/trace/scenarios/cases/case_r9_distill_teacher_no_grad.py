"""Control: the same distillation step as the page writes it: the teacher in ``eval()`` under
``torch.no_grad()``, the optimizer over the student only.  The teacher gets no gradient and does
not move; every student parameter gets a finite, nonzero gradient and moves.

Source: https://smarttldr.pages.dev/en/topic/python-knowledge-distillation/deep-dive
(``teacher.eval()  # Teacher is frozen``, ``with torch.no_grad(): teacher_logits = teacher(inputs)``,
``F.kl_div(...) * (self.temperature ** 2)``).
"""

import torch
from case_r9_distill_teacher_in_optimizer import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://smarttldr.pages.dev/en/topic/python-knowledge-distillation/deep-dive"
DESCRIPTION = "control: KD with the teacher under no_grad, optimizer over the student only"
ASK = []
MUST = [[HEALTHY_OK, r"^summary:[^\n]*teacher[^\n]*(no_grad|no gradient|frozen|not (held|in))"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"student\.\d\.(weight|bias)[^\n]{0,60}(no gradient|\bNone\b|did not move|never moved)",
    r"teacher[^\n]{0,80}(was |were )?(moved|stepped|updated) by",
]


def step(watch):
    return _step(watch, frozen=True)


def truth(run):
    assert run.grads["teacher.0.weight"] is None
    for n in run.before:
        if n.startswith("teacher"):
            assert torch.equal(run.before[n], run.after[n]), n
        else:
            assert run.grads[n] is not None and not torch.equal(run.before[n], run.after[n]), n
