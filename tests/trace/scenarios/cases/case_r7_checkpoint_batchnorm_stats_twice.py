"""Activation checkpointing (``torch.utils.checkpoint``, non-reentrant) around a block holding a
``BatchNorm1d`` in train mode: the backward recomputes the block's forward, and the recomputation
updates the running statistics a second time.  After one training step ``num_batches_tracked`` is
2 and ``running_mean`` / ``running_var`` have taken the momentum update twice, so the statistics
used at evaluation drift away from the data; the gradients themselves are exact.

Source: https://discuss.pytorch.org/t/checkpoint-with-batchnorm-running-averages/17738 ("The
running mean/variance gets updated twice"; "I have tried compare BN in checkpoint and original
BN. It's true that the grad is correct but running_mean and var were updated twice.").
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

SOURCE = "https://discuss.pytorch.org/t/checkpoint-with-batchnorm-running-averages/17738"
DESCRIPTION = "non-reentrant checkpoint around BatchNorm1d: running stats updated twice per step"
ASK = []
MUST = [
    [
        r"running[_ ](mean|var|stat)",
        r"num_batches_tracked",
        r"(statistics|stats)[^\n]{0,60}(twice|two|again|double)",
    ],
    [r"twice", r"two (updates|times)", r"recomput", r"updated again", r"doubl"],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self, bn_inside: bool = True, use_checkpoint: bool = True):
        super().__init__()
        self.stem = nn.Linear(6, 16)
        self.block = nn.Sequential(nn.Linear(16, 16), nn.BatchNorm1d(16), nn.ReLU())
        self.head = nn.Linear(16, 1)
        self.bn_inside, self.use_checkpoint = bn_inside, use_checkpoint

    def forward(self, x):
        h = torch.relu(self.stem(x))
        if not self.use_checkpoint:
            return self.head(self.block(h))
        if self.bn_inside:  # the whole block, BatchNorm included, is recomputed in backward
            h = checkpoint(self.block, h, use_reentrant=False)
        else:  # only the Linear is checkpointed; BatchNorm and ReLU run once
            h = checkpoint(self.block[0], h, use_reentrant=False)
            h = self.block[2](self.block[1](h))
        return self.head(h)


def step(watch, bn_inside: bool = True):
    torch.manual_seed(0)
    model = Net(bn_inside=bn_inside)
    reference = copy.deepcopy(model)
    reference.use_checkpoint = False
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.randn(32, 1, generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    F.mse_loss(reference(x), y).backward()  # the same step without checkpointing, plain torch
    ref_grads = {n: p.grad for n, p in reference.named_parameters()}
    return Run(w=w, model=model, reference=reference, grads=grads, ref_grads=ref_grads)


def truth(run):
    bn, ref_bn = run.model.block[1], run.reference.block[1]
    for n, g in run.grads.items():
        assert torch.allclose(g, run.ref_grads[n], atol=1e-6), n  # the gradients are exact
    assert int(ref_bn.num_batches_tracked) == 1
    assert int(bn.num_batches_tracked) == 2  # one training step counted twice
    assert not torch.allclose(bn.running_mean, ref_bn.running_mean)
