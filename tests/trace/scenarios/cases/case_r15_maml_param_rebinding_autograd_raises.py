"""MAML without ``torch.nn.functional``: the meta-parameters are kept as a copy of the model's
parameters and "loaded" into the model before each inner step by ``for meta_param, model_param in
zip(param_copy, model.parameters()): model_param = meta_param``.  That assignment rebinds the loop
variable and changes nothing in the model: the forward runs on the model's own parameters, the
copies are not in the graph, and ``torch.autograd.grad(loss, param_copy)`` raises "One of the
differentiated Tensors appears to not have been used in the graph".  No inner update, no
meta-update; no parameter gets a ``.grad``.

Source: https://discuss.pytorch.org/t/another-way-to-implement-maml-model-agnostic-meta-learning/164439
("many maml implementation use nn.functional interface such as F.linear(x,w,b). However, it is
unfriendly for the pre-defined nn.Module model"; "# shallow copy here  model_param = meta_param";
"grad = torch.autograd.grad(loss, param_copy)").  Adapted: the post's ``copy.deepcopy(
model.parameters())`` raises on a generator, so the copy is ``copy.deepcopy(list(...))``; a tanh
MLP on two sine-regression tasks, the meta-optimizer Adam over the copies.
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "another-way-to-implement-maml-model-agnostic-meta-learning/164439"
)
DESCRIPTION = "MAML: `model_param = meta_param` rebinds a name; autograd.grad on the copies raises"
ASK = []
MUST = [
    [
        r"not (been )?used in the graph",
        r"\braised\b",
        r"RuntimeError",
        r"exception",
        r"\berror\b",
    ],
    [
        r"cop(y|ies)",
        r"rebind\w*|rebound|reassign\w*|assign\w*",
        r"param_copy",
        r"not (the )?model'?s? (own )?param",
        r"not (in|part of) the graph",
        r"not used",
    ],
]
MUST_NOT = [FALSE_OK, r"\bnan\b|non-?finite"]
INNER_LR = 0.01


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)
    )


def tasks():
    """Two sine-regression tasks: (support x, support y, query x, query y) each."""
    g = torch.Generator().manual_seed(1)
    out = []
    for amp, phase in ((1.0, 0.0), (2.5, 1.0)):
        xs = 10 * torch.rand(10, 1, generator=g) - 5
        xq = 10 * torch.rand(10, 1, generator=g) - 5
        out.append((xs, amp * torch.sin(xs + phase), xq, amp * torch.sin(xq + phase)))
    return out


def step(watch):
    model = make_model()
    param_copy = copy.deepcopy(list(model.parameters()))
    meta_opt = torch.optim.Adam(param_copy, lr=1e-3)
    error = None
    try:
        with watch(model) as w:
            meta_opt.zero_grad()
            for xs, ys, xq, yq in tasks():
                # load parameters
                for meta_param, model_param in zip(param_copy, model.parameters(), strict=True):
                    # shallow copy here
                    model_param = meta_param  # the post's line: rebinds a name
                out = model(xs)
                loss = F.mse_loss(out, ys)
                grad = torch.autograd.grad(loss, param_copy)
                fast = [p - INNER_LR * g for p, g in zip(param_copy, grad, strict=True)]
                for meta_param, model_param in zip(fast, model.parameters(), strict=True):
                    model_param = meta_param  # noqa: F841
                F.mse_loss(model(xq), yq).backward()
            meta_opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, param_copy=param_copy, error=error)


def truth(run):
    assert run.error is not None
    assert "appears to not have been used in the graph" in str(run.error)
    assert all(p.grad is None for p in run.model.parameters())
    assert all(p.grad is None for p in run.param_copy)
    assert all(p is not q for p, q in zip(run.param_copy, run.model.parameters(), strict=True))
