"""The control of ``lambdarank_lambdas_as_forces_backward``: the same LambdaRank step with the
lambdas obtained from autograd, by backpropagating the loss whose gradient they are, ``sum over
pairs (i more relevant than j) of |Delta NDCG_ij| * softplus(-(s_i - s_j))`` with ``|Delta NDCG|``
computed from the detached scores.  Its gradient with respect to each score is minus the bug's
force, and the SGD step lowers the weighted pairwise loss.  Every gradient is finite and nonzero;
the ``argsort`` of the ranks runs on detached scores, by design.

Source: https://genai-systems-lab-ivory.vercel.app/gt/learning-to-rank-explained ("Pairwise: train
the model to correctly order pairs of documents: given (query, doc_A, doc_B), which should rank
higher? RankNet and LambdaRank use pairwise objectives"; "P_ij = sigmoid(s_i - s_j) = probability
model says i > j").  Adapted: the bug's queries, scorer and optimizer with the weighted pairwise
loss backpropagated.
"""

import torch
from case_r29_lambdarank_lambdas_as_forces_backward import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://genai-systems-lab-ivory.vercel.app/gt/learning-to-rank-explained"
DESCRIPTION = "control: LambdaRank as sum |dNDCG| softplus(-(si - sj)) backpropagated: loss falls"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"wrong (sign|direction)",
    r"opposite",
    r"argsort[^\n]{0,60}(no|zero) grad",
    r"all[- ]zero",
    r"\bdead\b",
]


def step(watch):
    return _step(watch, as_loss=True)


def truth(run):
    assert run.after < run.before
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
