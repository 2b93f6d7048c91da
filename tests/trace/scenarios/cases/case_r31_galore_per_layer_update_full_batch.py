"""The control of ``galore_per_layer_update_accumulated``, a healthy step that looks odd: the same
per-layer weight updates (one AdamW per parameter, stepped from its post-accumulate-grad hook, its
``.grad`` freed at once) on the whole batch of 64 in one backward, without accumulation.  Each
parameter is updated exactly once, by exactly what one AdamW step on the full batch's gradient
gives; ``.grad`` is None after the backward because the hooks consumed and freed it, by design.

Source: https://aiwiki.ai/wiki/galore ("GaLore trains every weight of the model (full-parameter
learning); the low-rank approximation lives in the optimizer's view of the gradient rather than in
the weights themselves"; "Combined with 8-bit optimizer state quantization and per-layer weight
updates, GaLore enables pretraining a 7-billion-parameter LLaMA-style model from scratch on a single
24 GB consumer GPU without model parallelism, sharding, or CPU offloading").  Adapted: the bug's
model, data and per-parameter optimizers, one backward per step.
"""

import torch
from case_r31_galore_per_layer_update_accumulated import one_full_batch_update
from case_r31_galore_per_layer_update_accumulated import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://aiwiki.ai/wiki/galore"
DESCRIPTION = "healthy: per-layer AdamW steps in post-accumulate-grad hooks, one backward per step"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"per[- ](layer|parameter) (optimi[sz]er|update|step)",
        r"post[_ -]accumulate",
        r"(optimi[sz]er|step)[^\n]{0,40}(in|inside|from|during) (the )?(hooks?|backward)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"never (move|moved|moves|update|updated|learn|train)",
    r"(updated|stepped) (twice|several times|[2-9] times|\d{2,} times)",
]


def step(watch):
    return _step(watch, micro=1)


def truth(run):
    assert all(g is None for grads in run.grads for g in grads)
    assert run.steps == [1] * len(run.steps)
    reference = one_full_batch_update()
    for n, p in run.model.named_parameters():
        assert torch.allclose(p.detach(), reference[n], rtol=1e-5, atol=1e-8), n
