"""Fine-tuning a pretrained network whose BatchNorm the user "froze" with ``momentum = 0`` (so the
running statistics stay the pretrained ones) and ``requires_grad = False`` on its weight and bias,
the model left in ``train()`` mode. In training mode BatchNorm normalises with the *batch's* mean
and variance, whatever the momentum: the step trains the other layers on batch-normalised features,
while ``eval()`` will normalise with the old running statistics. On this shifted fine-tuning data
the logits the step trained on differ from the eval-mode logits of the same batch. The running
statistics, the BatchNorm weight and bias do not change; every gradient is finite; nothing raises.

Source:
https://discuss.pytorch.org/t/frozen-batch-normalization-still-shows-different-performance-in-model-train-from-model-eval/25176
("When training, I set momentum = 0 for all nn.BatchNorm2d, so I think the running mean and running
var will keep still. Then I set requires_grad of parameters() of nn.BatchNorm2d false"; the answer:
"In train mode, you are using batch stats (not running stats). Since you disabled running stats
update, in eval mode, the running stats are still the old stats"). Adapted: ``Linear(12, 16,
bias=False)``, ``BatchNorm1d(16)``, ``Tanh``, ``Linear(16, 3)``, the BatchNorm's running statistics
and affine set from a "source" domain, fine-tuned on inputs scaled by 2 and shifted by 1, SGD at
0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "frozen-batch-normalization-still-shows-different-performance-in-model-train-from-model-eval/25176"
)
DESCRIPTION = "BatchNorm 'frozen' by momentum=0 + requires_grad=False in train mode: batch stats"
ASK = []
MUST = [
    [r"batch ?norm", r"BatchNorm", r"\bbn\b", r"running[_ ](mean|var|stat)"],
    [
        r"batch[- ](statistic|stat|mean)",
        r"train(ing)?[- ]mode",
        r"momentum",
        r"eval\(\)",
        r"eval(uation)? mode",
        r"\.training",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"1\.(weight|bias)[^\n]{0,60}(moved|was updated|were updated|changed)",
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
    for p in bn.parameters():
        p.requires_grad = False
    model.train()
    bn.momentum = 0.0
    x, y = data()
    with torch.no_grad():
        eval_logits = pretrained().eval()(x)  # what eval() gives for this batch, same weights
    stats = (bn.running_mean.clone(), bn.running_var.clone())
    bn_affine = (bn.weight.detach().clone(), bn.bias.detach().clone())
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        F.cross_entropy(logits, y).backward()
        grads = {n: p.grad for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, model=model, logits=logits.detach(), eval_logits=eval_logits, stats=stats,
        bn_affine=bn_affine, grads=grads,
    )  # fmt: skip


def truth(run):
    bn = run.model[1]
    assert bn.training and bn.momentum == 0.0
    assert torch.equal(bn.running_mean, run.stats[0]) and torch.equal(bn.running_var, run.stats[1])
    assert torch.equal(bn.weight, run.bn_affine[0]) and torch.equal(bn.bias, run.bn_affine[1])
    assert run.grads["1.weight"] is None and run.grads["1.bias"] is None
    # trained on batch-normalised features, not on what eval() computes
    assert (run.logits - run.eval_logits).abs().max() > 0.1
    for n in ("0.weight", "3.weight", "3.bias"):
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
