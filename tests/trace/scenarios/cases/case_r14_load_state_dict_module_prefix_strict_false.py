"""Fine-tuning a new head on a frozen pretrained backbone whose checkpoint was saved from a
``DataParallel``-wrapped model: every key starts with ``module.`` (``module.body.0.weight``...).
The loading error ("Unexpected key(s)") is silenced with ``load_state_dict(..., strict=False)``,
which then matches nothing: every backbone key is missing, every checkpoint key unexpected, and
the backbone keeps its random initialisation.  Frozen (``requires_grad_(False)``), it never
changes: the head is trained on random features.  The watched step looks ordinary: the head gets
finite, nonzero gradients, the frozen backbone none (as intended); nothing raises.

Source: https://taourl.com/read-2482346.html ("The error arises because the saved weights include
keys like ``module.conv1.weight`` (due to DataParallel wrapping), while the target model expects
``conv1.weight``"; "Solution 2: Use strict=False (ignores unexpected keys)").  Adapted: an MLP
backbone pretrained on a regression task, its state dict prefixed with ``module.``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://taourl.com/read-2482346.html"
DESCRIPTION = "load_state_dict(strict=False) with 'module.' keys: nothing loaded, backbone random"
ASK = ["body.0.weight"]
MUST = [
    [
        r"load_state_dict",
        r"strict",
        r"missing[_ ]keys?",
        r"unexpected[_ ]keys?",
        r"module\.",
        r"checkpoint",
        r"pretrained",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 16), nn.Tanh())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.body(x))


def pretrained_checkpoint():
    """The backbone's weights after pretraining, saved from a DataParallel-wrapped model."""
    torch.manual_seed(7)
    pre = Net()
    opt = torch.optim.Adam(pre.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(128, 10, generator=g)
    y = torch.randint(0, 3, (128,), generator=g)
    for _ in range(20):
        opt.zero_grad()
        F.cross_entropy(pre(x), y).backward()
        opt.step()
    return {f"module.{k}": v.detach().clone() for k, v in pre.state_dict().items()}


def step(watch, strip_prefix: bool = False):
    checkpoint = pretrained_checkpoint()
    torch.manual_seed(0)
    model = Net()
    state = checkpoint
    if strip_prefix:
        state = {k.removeprefix("module."): v for k, v in checkpoint.items()}
        state = {k: v for k, v in state.items() if k.startswith("body.")}  # a new head
    result = model.load_state_dict(state, strict=False)
    model.body.requires_grad_(False)
    opt = torch.optim.Adam(model.head.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 10, generator=g)
    y = torch.randint(0, 3, (32,), generator=g)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    loaded = torch.equal(model.body[0].weight, checkpoint["module.body.0.weight"])
    grads = {n: p.grad for n, p in model.named_parameters()}
    return Run(
        w=w,
        missing=list(result.missing_keys),
        unexpected=list(result.unexpected_keys),
        loaded=loaded,
        grads=grads,
    )


def truth(run):
    assert set(run.missing) == {
        "body.0.weight",
        "body.0.bias",
        "body.2.weight",
        "body.2.bias",
        "head.weight",
        "head.bias",
    }
    assert len(run.unexpected) == 6
    assert not run.loaded  # the backbone kept its random initialisation
    assert run.grads["body.0.weight"] is None
    for n in ("head.weight", "head.bias"):
        gr = run.grads[n]
        assert gr is not None and bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
