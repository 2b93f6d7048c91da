"""The control of ``decision_transformer_action_from_action_token``: the same Decision Transformer,
trajectories and optimizer with the action head reading the output at each step's state token, as
the paper does.  Under the causal mask the prediction of ``a_t`` depends on the returns-to-go, the
states and the earlier actions ``a_1 .. a_{t-1}``, not on ``a_t`` (its derivative with respect to
``a_t`` and every later action is exactly zero).  Every gradient is finite and nonzero.

Source: https://codefrydev.in/Reinforcement/tags/decision-transformer ("Implement a Decision
Transformer: a transformer (or GPT-style) model that takes sequences of (returns-to-go, state,
action) and predicts actions conditioned on desired return"; "at each timestep, input (R_t, s_t,
a_{t-1}, R_{t-1}, s_{t-1}, ...) where R_t is the return from t onward; the model predicts a_t.
Training is supervised on offline trajectories").  Adapted: the bug's model and data, the head on
the state tokens.
"""

import torch
from case_r30_decision_transformer_action_from_action_token import K
from case_r30_decision_transformer_action_from_action_token import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://codefrydev.in/Reinforcement/tags/decision-transformer"
DESCRIPTION = "control: Decision Transformer predicts a_t from the s_t token: a_t not read"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"leak\w*",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, read=1)


def truth(run):
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for t in range(K):
        assert bool(run.jac[:, t, t:].abs().sum() == 0), t  # a_t and later actions unread
        if t > 0:
            assert bool(run.jac[:, t, :t].abs().sum() > 0), t  # earlier actions read
