"""The control of ``hnn_time_derivatives_without_create_graph``, and a healthy step that looks
broken: the same Hamiltonian network with ``create_graph=True``, so the loss on the time derivatives
``(dH/dp, -dH/dq)`` backpropagates into the energy network.  Every weight and every hidden bias gets
a finite, nonzero gradient and moves; the output layer's bias ``4.bias`` gets none (``.grad`` stays
``None``) and does not move: it adds a constant to ``H``, which no derivative of ``H`` sees.  The
energy is defined up to that constant; nothing is wrong.

Source: https://www.alphaxiv.org/overview/1906.01563 ("Rather than learning dynamics directly, HNNs
learn a scalar energy function (the Hamiltonian) and derive the system's dynamics from this learned
energy through automatic differentiation"; "HNNs instead parameterize H with a neural network,
learning this energy function directly from data while automatically preserving its conservation
properties").  Adapted: the bug's system, network and optimizer with ``create_graph=True``.
"""

import math

import torch
from case_r28_hnn_time_derivatives_without_create_graph import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.alphaxiv.org/overview/1906.01563"
DESCRIPTION = "control: HNN with create_graph=True; the output bias (H's constant) gets no grad"
ASK = ["4.bias"]
MUST = [
    [
        HEALTHY_OK,
        r"constant",
        r"offset",
        r"does not (depend|appear|enter|affect)",
        r"(derivative|gradient) (of|w\.r\.t\.) (the |its )?(input|energy|H)\b",
        r"input gradient|autograd\.grad|create_graph",
        r"independent",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"never (called|ran|run)",
    r"\bno_grad\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"\bdead\b",
]


def step(watch):
    return _step(watch, create_graph=True)


def truth(run):
    assert run.error is None and math.isfinite(float(run.loss.detach()))
    for n, p in run.model.named_parameters():
        if n == "4.bias":
            assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
        else:
            assert p.grad is not None, n
            assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0), n
            assert not torch.equal(p.detach(), run.before[n]), n
