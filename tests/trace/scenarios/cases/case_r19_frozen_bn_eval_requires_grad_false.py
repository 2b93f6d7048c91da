"""Control: the same fine-tuning step with the BatchNorm frozen the way the page gives it: the layer
switched to ``eval()`` after ``model.train()`` and ``requires_grad = False`` on its weight and bias.
In eval mode the layer normalises with the pretrained running statistics and does not update them:
the logits the step trains on are the eval-mode logits of the batch, the BatchNorm's statistics,
weight and bias stay as they were, and the other layers get finite, nonzero gradients and move.

Source: https://errorhandle.ai/how-to-freeze-batch-norm-layers-during-transfer-learning ("for layer
in model.modules(): if isinstance(layer, nn.BatchNorm2d): layer.eval(); for param in
layer.parameters(): param.requires_grad = False"; "Switching to Evaluation Mode: For PyTorch,
setting the batch-norm layers to evaluation mode prevents them from updating running statistics
during training"). Adapted: ``Linear(12, 16, bias=False)``, ``BatchNorm1d(16)``, ``Tanh``,
``Linear(16, 3)``, the BatchNorm's running statistics and affine set from a "source" domain,
fine-tuned on inputs scaled by 2 and shifted by 1, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://errorhandle.ai/how-to-freeze-batch-norm-layers-during-transfer-learning"
DESCRIPTION = "control: BatchNorm frozen by eval() + requires_grad=False: running stats used"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"^summary:[^\n]*(batch ?norm|BatchNorm|1\.weight|1\.bias)[^\n]*(frozen|requires_grad)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"batch[- ]statistic",
    r"(0\.weight|3\.weight|3\.bias)[^\n]{0,60}(no gradient|\bNone\b|did not move|never moved)",
]


def pretrained():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(12, 16, bias=False), nn.BatchNorm1d(16), nn.Tanh(), nn.Linear(16, 3)
    )
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():  # the pretrained BatchNorm: statistics of the source domain, an affine
        source = model[0](torch.randn(256, 12, generator=g))
        model[1].running_mean.copy_(source.mean(0))
        model[1].running_var.copy_(source.var(0))
        model[1].weight.copy_(1 + 0.2 * torch.randn(16, generator=g))
        model[1].bias.copy_(0.2 * torch.randn(16, generator=g))
    return model


def data():
    g = torch.Generator().manual_seed(1)
    x = 2 * torch.randn(32, 12, generator=g) + 1  # the fine-tuning domain
    return x, (x[:, 0] > 1).long() + (x[:, 1] > 1).long()


def step(watch):
    model = pretrained()
    bn = model[1]
    model.train()
    bn.eval()
    for p in bn.parameters():
        p.requires_grad = False
    x, y = data()
    with torch.no_grad():
        eval_logits = pretrained().eval()(x)
    stats = (bn.running_mean.clone(), bn.running_var.clone())
    bn_affine = (bn.weight.detach().clone(), bn.bias.detach().clone())
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        F.cross_entropy(logits, y).backward()
        grads = {n: p.grad for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, model=model, logits=logits.detach(), eval_logits=eval_logits, stats=stats,
        bn_affine=bn_affine, grads=grads, before=before,
    )  # fmt: skip


def truth(run):
    bn = run.model[1]
    assert not bn.training
    assert torch.equal(bn.running_mean, run.stats[0]) and torch.equal(bn.running_var, run.stats[1])
    assert torch.equal(bn.weight, run.bn_affine[0]) and torch.equal(bn.bias, run.bn_affine[1])
    assert run.grads["1.weight"] is None and run.grads["1.bias"] is None
    assert torch.allclose(run.logits, run.eval_logits, atol=1e-6)  # the running statistics
    for n in ("0.weight", "3.weight", "3.bias"):
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(dict(run.model.named_parameters())[n].detach(), run.before[n]), n
