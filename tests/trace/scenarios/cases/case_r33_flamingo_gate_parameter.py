"""The control of ``flamingo_gate_plain_tensor``, a healthy step that looks broken on its first
iteration: the same Flamingo-style adapter with its gates registered as ``nn.Parameter(torch.zeros(
1))`` and held by the optimizer.  On the first step every gate is 0, so ``tanh(gate)`` is 0: the
cross-attention blocks, the gated feed-forwards and the resampler get exactly zero gradient, and
only the gates get one (from the branches' nonzero outputs).  After AdamW's first step the gates have
left zero, and on the second step every trainable parameter gets a finite, nonzero gradient.  The
language model is frozen (``requires_grad=False``) and outside the optimizer by design.  Two steps
are watched; nothing is wrong.

Source: https://study.piphipsi.com/phases/12-multimodal-ai/04-flamingo-gated-cross-attention/ ("The
mechanism: gated cross-attention layers, inserted between the frozen LLM's existing layers, with a
learned tanh gate that starts at zero so the LLM's text capability is preserved at initialization";
"Explain how gated cross-attention preserves a frozen LLM's text capability at initialization via
tanh(gate) = 0").  Adapted: the bug's model, data and optimizer with the gates as parameters.
"""

import torch
from case_r33_flamingo_gate_plain_tensor import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://study.piphipsi.com/phases/12-multimodal-ai/04-flamingo-gated-cross-attention/"
DESCRIPTION = "healthy: Flamingo tanh gates start at 0: the adapter learns from the 2nd step"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"zero[- ]init\w*",
        r"first step",
        r"gates?[^\n]{0,40}(zero|0\b)",
        r"tanh\(0\)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
    r"never (move|moved|moves|update|learn|train)",
    r"stuck|fixed point",
]


def step(watch):
    return _step(watch, parameter_gates=True)


def truth(run):
    assert all(i in run.held for i in run.gate_ids)
    assert all(g != 0.0 for g in run.gates)
    first, second = run.grads
    for n in run.names:
        gate = "_gates." in n
        assert bool(torch.isfinite(first[n]).all()), n
        assert bool(first[n].abs().sum() > 0) == gate, n  # only the gates on the first step
        assert bool(torch.isfinite(second[n]).all()) and bool(second[n].abs().sum() > 0), n
