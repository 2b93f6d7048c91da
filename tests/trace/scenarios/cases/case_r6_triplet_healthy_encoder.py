"""Control: the same batch-hard triplet loss on the same encoder, its output layer left at its
default initialization: the embeddings differ, the loss is not stuck at the margin, and every
parameter gets a finite, nonzero gradient.

Source: https://quaterion.qdrant.tech/tutorials/triplet_loss_trick.html (the basic form,
"triplet_loss = F.relu(hardest_positive_dists - hardest_negative_dists + self._margin)", on an
encoder that has not collapsed).
"""

import torch
from case_r6_triplet_collapsed_encoder import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://quaterion.qdrant.tech/tutorials/triplet_loss_trick.html"
DESCRIPTION = "control: batch-hard triplet loss on an encoder that has not collapsed"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"collaps"]


def step(watch):
    return _step(watch, collapsed=False)


def truth(run):
    assert not torch.allclose(run.emb, run.emb[:1].expand_as(run.emb))
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
