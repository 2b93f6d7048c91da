"""The control of ``pcgrad_grads_not_cloned``: the same PCGrad step with each task's gradient copied,
``[p.grad.detach().clone() for p in params]``, before the next task's ``zero_grad`` and backward.
The two gradients conflict, each is projected onto the normal plane of the other, and their sum is
written into ``.grad`` by hand before Adam's step (two backward passes of one graph with
``retain_graph=True``, then ``.grad`` replaced: by design).  Every parameter's ``.grad`` at the step
is finite and nonzero, each head's included.

Source: https://liner.com/review/gradient-surgery-for-multitask-learning ("We propose Projecting
Conflicting Gradients (PCGrad), a gradient surgery method that modifies gradients to prevent
destructive interference between tasks"; "PCGrad projects a task's gradient onto the normal plane of
conflicting task gradients, effectively removing harmful components while preserving beneficial
interactions"; "The method is model-agnostic, easily integrated with existing optimizers and
architectures").  Adapted: the bug's network, data and optimizer with the gradients cloned.
"""

import torch
from case_r32_pcgrad_grads_not_cloned import pcgrad
from case_r32_pcgrad_grads_not_cloned import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://liner.com/review/gradient-surgery-for-multitask-learning"
DESCRIPTION = "control: PCGrad with each task's gradient cloned before the next backward"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        (
            r"\.grad[^\n]{0,80}(replaced|assigned|overwritten|set by hand)[^\n]{0,80}"
            r"(intended|deliberate|on purpose|by design|surgery|pcgrad)"
        ),
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"\bdead\b",
    r"all[- ]zero",
    r"alias\w*|same tensors?",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, cloned=True)


def truth(run):
    first, second = run.task_grads
    assert all(a is not b for a, b in zip(first, second, strict=True))
    expected, _ = pcgrad(run.own)
    for n, g, e in zip(run.names, run.stepped.values(), expected, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g.flatten(), e, rtol=1e-4, atol=1e-7), n
