"""The control of ``bnn_latent_weights_unclipped_stuck``: the same binarised network and
straight-through estimator, with the latent weights drawn from ``U(-1, 1)`` and clipped back to
``[-1, 1]`` after every step, as BinaryConnect and BNN do: every latent weight stays where the
estimator passes the gradient, every entry of ``binary.weight`` gets a nonzero gradient, and
every gradient is finite and nonzero.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (blog post 'Paper Explanation:
Binarized Neural Networks: Training Neural Networks with Weights and Activations Constrained to +1
or -1': "To transform real-valued variables into these two values, two binarization functions can
be used. The first function is deterministic: x^b = Sign(x)"; "Although a BNN training method uses
binary (+1 or -1) weights ...").  Adapted: the bug's network and data; the clipping after the step
is the paper's (the stored excerpt stops before it).
"""

import torch
from case_r24_bnn_latent_weights_unclipped_stuck import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (blog post 'Paper Explanation:"
    " Binarized Neural Networks: Training Neural Networks with Weights and Activations Constrained"
    " to +1 or -1')"
)
DESCRIPTION = "control: BNN latent weights in [-1, 1], clipped after the step: all get gradient"
ASK = []
MUST = [[HEALTHY_OK, r"straight[- ]through", r"\bSTE\b"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"\bzero grad\w*"]


def step(watch):
    return _step(watch, clipped=True)


def truth(run):
    assert bool((run.latent.abs() <= 1).all())
    assert bool((run.model.binary.weight.abs() <= 1).all())
    assert bool((run.grads["binary.weight"] != 0).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
