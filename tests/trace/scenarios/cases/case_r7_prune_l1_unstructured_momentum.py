"""Control: the same model pruned with ``torch.nn.utils.prune.l1_unstructured`` and retrained with
the same momentum SGD.  The optimizer keeps the original tensor (now ``0.weight_orig``) and the
forward uses ``weight_orig * weight_mask``: momentum still moves masked entries of
``weight_orig``, but the weight the layer computes with keeps every pruned entry at exactly zero.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.utils.prune.l1_unstructured
("Pruning and Retraining": prune the first Linear with ``l1_unstructured(module, name="weight",
amount=0.5)``, then "Retrain the pruned model").
"""

import torch
from case_r7_prune_mask_hook_momentum_revives import make
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.nn import functional as F
from torch.nn.utils import prune

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.nn.utils.prune.l1_unstructured"
DESCRIPTION = "control: prune.l1_unstructured + momentum SGD: the pruned weight entries stay 0"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"reviv", r"no gradient"]


def step(watch):
    model, batches = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for x, y in batches[:2]:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    prune.l1_unstructured(model[0], name="weight", amount=0.5)
    x, y = batches[2]
    orig_before = model[0].weight_orig.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        grad = model[0].weight_orig.grad.clone()
        opt.step()
    with torch.no_grad():
        model(x)  # the pre-hook recomputes weight = weight_orig * weight_mask
    return Run(
        w=w, model=model, mask=model[0].weight_mask.clone(), grad=grad, orig_before=orig_before
    )


def truth(run):
    pruned = run.mask == 0
    layer = run.model[0]
    assert int(pruned.sum()) == 64
    assert bool((run.grad[pruned] == 0).all())
    assert bool((layer.weight.detach()[pruned] == 0).all())  # the pruned weights stay pruned
    moved = layer.weight_orig.detach()[pruned] != run.orig_before[pruned]
    assert bool(moved.all())  # momentum moved the masked entries of weight_orig, harmlessly
    for p in run.model.parameters():
        assert bool(torch.isfinite(p).all())
