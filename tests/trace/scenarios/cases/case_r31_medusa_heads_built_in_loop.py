"""The control of ``medusa_heads_list_times_k``: the same Medusa-1 step with the three heads built
in a loop, ``nn.ModuleList([MedusaHead(...) for _ in range(3)])``: three modules with their own
parameters, each trained on its own offset.  The base model is frozen (``requires_grad=False``) and
not in the optimizer, as Medusa-1 prescribes; every head parameter gets a finite, nonzero gradient,
and the heads' logits differ.

Source:
http://www.nextadvisors.com.br/index.php?u=https%3A%2F%2Fgithub.com%2FFasterDecoding%2FMedusa%2Fraw%2F10e73877a758b6418ce9627c0c6806031e16e8b3%2FREADME.md
(a copy of Medusa's README: "Medusa adds extra 'heads' to LLMs to predict multiple future tokens
simultaneously. When augmenting a model with Medusa, the original model stays untouched, and only
the new heads are fine-tuned"; "Instead of introducing a new model, we train multiple decoding heads
on the *same* model").  Adapted: the bug's model, data and optimizer with the heads built in a loop.
"""

import torch
from case_r31_medusa_heads_list_times_k import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "http://www.nextadvisors.com.br/index.php?u=https%3A%2F%2Fgithub.com%2FFasterDecoding%2FMedusa%2F"
    "raw%2F10e73877a758b6418ce9627c0c6806031e16e8b3%2FREADME.md"
)
DESCRIPTION = "control: Medusa-1, frozen base, three heads built in a loop (own parameters)"
ASK = []
MUST = [
    [HEALTHY_OK, r"(frozen|requires_grad\s*=?\s*False)[^\n]{0,80}(intended|deliberate|on purpose)"]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"shar\w* (the same )?(weights?|parameters?|module)",
    r"medusa_heads[^\n]{0,40}not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, repeated=False)


def truth(run):
    heads = run.model.medusa_heads
    assert heads[0] is not heads[1] and heads[1] is not heads[2]
    assert len(run.grads) == 12
    assert run.held == sum(p.numel() for p in heads.parameters())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert not torch.equal(run.after[0], run.after[1])
