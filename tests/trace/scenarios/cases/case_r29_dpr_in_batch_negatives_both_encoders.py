"""The control of ``dpr_passages_from_no_grad_index``: the same dense passage retriever with the
batch's passages encoded inside each step, ``p_enc(passages[ids])``, so the in-batch contrastive
loss reaches both encoders.  Over two steps every parameter of both gets a finite, nonzero gradient
and moves.

Source: https://nlpcitations-com.pages.dev/citations/dpr/ ("DPR (Dense Passage Retrieval) is a
bi-encoder retrieval model introduced by Karpukhin et al. (2020) that encodes queries and passages
independently into dense vectors and retrieves by maximum inner product search"; "Training: Positive
pair: (question, relevant passage); Negatives: BM25 hard negatives + in-batch random negatives;
Loss: cross-entropy over dot product scores").  Adapted: the bug's encoders, corpus and optimizer
with the passages encoded in the step.
"""

import torch
from case_r29_dpr_passages_from_no_grad_index import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://nlpcitations-com.pages.dev/citations/dpr/"
DESCRIPTION = "control: DPR in-batch negatives, passages encoded in the step: both encoders train"
ASK = ["p_enc.head.0.weight"]
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bno_grad\b",
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, index_once=False)


def truth(run):
    for g in run.grads:
        for n, t in g.items():
            assert t is not None, n
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
