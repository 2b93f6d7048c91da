"""The control of ``alphazero_policy_loss_neg_inf_mask``: the same policy-value network, self-play
batch and optimizer with the illegal moves' logits filled with ``-1e9`` instead of ``-inf``.  Their
probability is still exactly 0 after ``softmax`` (``exp(-1e9)`` underflows), but ``log p`` is a
finite ``-1e9``, ``pi * log p`` is ``0 * -1e9 = 0`` there, the loss is finite and every parameter
gets a finite, nonzero gradient; the gradients are those of the bug's step.

Source: https://codefrydev.in/Reinforcement/tags/alphazero ("Implement a simplified AlphaZero for
tic-tac-toe: a neural network that outputs policy (move probabilities) and value (expected
outcome)"; "Train via self-play: generate games, train the network on (state, policy target, value
target), repeat"; "the MCTS policy and game outcome become targets for the network").  Adapted: the
bug's network and batch with the finite mask.
"""

import math

import torch
from case_r30_alphazero_policy_loss_neg_inf_mask import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://codefrydev.in/Reinforcement/tags/alphazero"
DESCRIPTION = "control: AlphaZero policy loss with illegal logits filled with -1e9: finite loss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, fill=-1e9)


def truth(run):
    assert bool(torch.isfinite(run.log_p).all())
    assert math.isfinite(run.policy_loss) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
