"""The control of ``swiglu_value_projection_unused``: the same network with its SwiGLU blocks as
written, ``swish(linA(x)) * linB(x)``, both projections called.  Every parameter gets a finite,
nonzero gradient; the loss goes down.  Nothing is wrong.

Source: https://saeedmehrang.github.io/blogs/language-modeling/llm-2025-overview/swiglu ("SwiGLU
(Swish-Gated Linear Unit) is an activation function used in the feed-forward networks (FFN) of
modern transformer-based language models. It was introduced in the paper "GLU Variants Improve
Transformer" by Shazeer (2020) and has since become a standard component in state-of-the-art LLMs
like PaLM, LLaMA, and DeepSeek"; "GLU(x, W, V) = (xW + b) ⊗ σ(xV + c)").  Adapted: the bug's
network, data and optimizer with ``linB`` called.
"""

import torch
from case_r33_swiglu_value_projection_unused import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://saeedmehrang.github.io/blogs/language-modeling/llm-2025-overview/swiglu"
DESCRIPTION = "control: SwiGLU with both projections, swish(linA(x)) * linB(x)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"unused|never (called|used)"]


def step(watch):
    return _step(watch, typo=False)


def truth(run):
    assert run.losses[1] < run.losses[0]
    for n, g in run.grads.items():
        assert run.ids[n] in run.held, n
        assert g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
