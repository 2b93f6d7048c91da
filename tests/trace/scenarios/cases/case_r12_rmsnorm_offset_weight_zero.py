"""Control: the same tiny language model with a Gemma-style final RMSNorm that scales by
``1 + weight``, its weight initialised to zeros as it should be: the initial scale is 1, the
logits are not zero, and every parameter (``emb``, the block, ``norm.weight``, ``head``) gets a
finite, nonzero gradient; every token appears in the batch, so every embedding row gets one too.

Source: https://github.com/huggingface/transformers/pull/40449 ("Fix Gemma RMSNorm weight init:
Gemma RMSNorm weight is used additively in ``...*(1+weight)``, thus it should be initialized with
zero").
"""

import torch
from case_r12_rmsnorm_final_weight_zero import DIM
from case_r12_rmsnorm_final_weight_zero import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK
from torch import nn

SOURCE = "https://github.com/huggingface/transformers/pull/40449"
DESCRIPTION = "control: Gemma-style RMSNorm x * (1 + weight), weight zeros: every parameter trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"all-zero", r"\bzero gradient", r"no gradient", r"\bdead\b"]


class GemmaRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * (1.0 + self.weight)


def step(watch):
    return _step(watch, make_norm=lambda: GemmaRMSNorm(DIM))


def truth(run):
    assert not bool((run.logits == 0).all())
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
        assert run.moved[n], n
    assert bool((run.grads["emb.weight"].abs().sum(1) > 0).all())
