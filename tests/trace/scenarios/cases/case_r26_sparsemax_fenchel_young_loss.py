"""The control of ``sparsemax_output_log_nll_inf``: the same sparsemax classifier trained with the
sparsemax loss (the Fenchel-Young loss of sparsemax), ``-z_y + 1/2 sum_{j in S} (z_j^2 - tau^2) +
1/2``, which stays finite when the labelled class is outside the support and whose gradient with
respect to the logits is ``sparsemax(z) - onehot(y)``.  The loss is finite, every example
contributes (those whose label is outside the support too), and every gradient is finite and
nonzero.

Source: https://deepai.org/publication/sparse-sequence-to-sequence-models ("we provide an
affirmative answer to both questions by proposing neural sparse seq2seq models that replace the
softmax transformations (both in the attention and output) by sparse transformations. Our
innovations are rooted in the recently proposed sparsemax transformation (Martins and Astudillo,
2016) and Fenchel-Young losses (Blondel et al., 2019)").  Adapted: the bug's classifier, data and
optimizer, with the sparsemax loss in place of the log.
"""

import math

import torch
from case_r26_sparsemax_output_log_nll_inf import model_and_data, sparsemax
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.nn import functional as F

SOURCE = "https://deepai.org/publication/sparse-sequence-to-sequence-models"
DESCRIPTION = "control: sparsemax classifier trained with the Fenchel-Young sparsemax loss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def sparsemax_loss(z, y):
    p, tau = sparsemax(z)
    inside = (p > 0).to(z.dtype)
    z_y = z.gather(1, y[:, None]).squeeze(1)
    return -z_y + 0.5 * ((z.pow(2) - tau.pow(2)) * inside).sum(1) + 0.5, p


def step(watch):
    model, x, y = model_and_data()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        optimizer.zero_grad()
        z = model(x)
        z.retain_grad()
        per_example, p = sparsemax_loss(z, y)
        loss = per_example.mean()
        loss.backward()
        grads = {n: g.grad.detach().clone() for n, g in model.named_parameters()}
        optimizer.step()
    inside = p.detach().gather(1, y[:, None]).squeeze(1) > 0
    onehot = F.one_hot(y, 5).to(p.dtype)
    return Run(
        w=w, loss=loss.item(), inside=inside, grads=grads, dz=z.grad, p=p.detach(), onehot=onehot
    )


def truth(run):
    assert math.isfinite(run.loss)
    assert 0 < int(run.inside.sum()) < len(run.inside)
    # the gradient with respect to each example's logits is sparsemax(z) - onehot(y), over N
    assert torch.allclose(run.dz, (run.p - run.onehot) / len(run.p), atol=1e-7)
    assert bool((run.dz[~run.inside].abs().sum(1) > 0).all())  # out-of-support examples count
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
