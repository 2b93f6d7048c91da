"""A frozen backbone run under ``torch.inference_mode()`` (for speed, its features cached) and a
trainable head on those features: the head's ``Linear`` must save its input for the weight's
gradient, and an inference tensor cannot be saved for backward.  The head's forward raises;
nothing gets a gradient.

Source: https://gitea.ts-pc.fr/Ethanfel/ComfyUI-SelVA/src/commit/357b875e5e92083786a78aaeec948598dbe97c70/nodes
(commit message: "Two crash paths under 'RuntimeError: Inference tensors cannot be saved for
backward'. 1. clip_f / sync_f loaded from main-thread inference_mode carry the inference flag.
Clone them on entry to the worker thread so the conditions built from them are clean
non-inference tensors").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://gitea.ts-pc.fr/Ethanfel/ComfyUI-SelVA/src/commit/"
    "357b875e5e92083786a78aaeec948598dbe97c70/nodes"
)
DESCRIPTION = "backbone under inference_mode, trainable head on its features: the head raises"
ASK = ["head.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [r"inference", r"saved for backward"],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, 16), nn.ReLU())
        self.head = nn.Linear(16, 4)
        self.backbone.requires_grad_(False)  # frozen


def step(watch, mode="inference"):
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.Adam(model.head.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 12, generator=g), torch.randint(0, 4, (8,), generator=g)
    context = torch.inference_mode if mode == "inference" else torch.no_grad
    before = model.head.weight.detach().clone()
    error = None
    try:
        with watch(model) as w:
            with context():
                feats = model.backbone(x)
            opt.zero_grad()
            F.cross_entropy(model.head(feats), y).backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, before=before)


def truth(run):
    assert run.error is not None
    assert "Inference tensors cannot be saved for backward" in str(run.error)
    assert run.model.head.weight.grad is None
    assert torch.equal(run.model.head.weight.detach(), run.before)
