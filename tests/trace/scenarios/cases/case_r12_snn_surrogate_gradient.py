"""Control: the same spiking network with its spikes made by a custom ``autograd.Function`` that
uses the Heaviside step in the forward (``(v > 0).float()``) and the SuperSpike surrogate
``grad / (scale * |v| + 1)**2`` (scale 10) in the backward.  Every hidden unit spikes at least once
on the batch; ``backward`` runs, and ``fc1`` (through the surrogate) and ``fc2`` (through the
spike counts) get finite, nonzero gradients: the network trains.

Source: https://riaa3102.github.io/SESNNet/modules/model/surrogate/super_spike.html ("Class that
implements the SuperSpike function as the surrogate gradient for the backward pass.  static
backward(ctx, grad_output) ... Backward pass using surrogate gradient function: SuperSpike; static
forward(ctx, input_) ... Forward pass using 'Heaviside step function'"; ``surrogate_scale: float =
10.0``).
"""

import torch
from case_r12_snn_heaviside_spikes import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://riaa3102.github.io/SESNNet/modules/model/surrogate/super_spike.html"
DESCRIPTION = "control: spikes by a SuperSpike surrogate-gradient Function: fc1 and fc2 train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all-zero",
    r"no gradient",
    r"dead (units?|relu|neurons?)",
]
SCALE = 10.0


class SuperSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        return (v > 0).float()

    @staticmethod
    def backward(ctx, grad_output):
        (v,) = ctx.saved_tensors
        return grad_output / (SCALE * v.abs() + 1.0) ** 2


def step(watch):
    return _step(watch, spike_fn=SuperSpike.apply)


def truth(run):
    assert run.error is None
    assert bool((run.counts.sum(0) > 0).all())  # every hidden unit spikes on the batch
    for n, gr in run.grads.items():
        assert gr is not None and bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert run.moved
