"""The forward pass runs under ``torch.inference_mode()``; to make ``backward()`` work, the output
is cloned and ``requires_grad_(True)`` is set on the clone, as a page recommends.  The backward
then runs -- on a new leaf with no graph back to the model: no parameter gets a gradient and the
optimizer step moves nothing.

Source: https://taourl.com/read-2425307.html ("The solution is to create a clone of the inference
tensor, which converts it into a regular tensor that can participate in gradient computation";
"with torch.inference_mode: output = model(input_tensor) ... output_clone =
output.clone.requires_grad_(True); loss = output_clone.sum; loss.back[ward]").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://taourl.com/read-2425307.html"
DESCRIPTION = (
    "forward under inference_mode, output cloned + requires_grad_: no parameter gets .grad"
)
ASK = ["weight"]
MUST = [
    [
        r"no gradient",
        r"\bNone\b",
        r"got none",
        r"without (a )?gradient",
        r"no \.grad",
        r"(did not|never) reach",
    ],
    [
        r"inference",
        r"no_grad",
        r"grad(ient)?[- ]?(mode|tracking)?[^\n]{0,20}(disabled|off)",
        r"leaf",
        r"requires_grad_",
        r"clone",
        r"not (connected|part of|in) (to )?the (graph|loss)",
        r"graph",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Linear(5, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    input_tensor, target = torch.randn(3, 5, generator=g), torch.randn(3, 1, generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        with torch.inference_mode():
            output = model(input_tensor)
        output_clone = output.clone().requires_grad_(True)
        loss = F.mse_loss(output_clone, target)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, output_clone=output_clone, before=before)


def truth(run):
    assert run.output_clone.is_leaf and run.output_clone.grad is not None  # the clone got it
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
