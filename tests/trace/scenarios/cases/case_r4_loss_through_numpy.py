"""The loss is computed in NumPy: the prediction is detached to call ``.numpy()``, the squared
error averaged there, and the result wrapped back with ``torch.tensor(..., requires_grad=True)``
so that ``backward()`` runs.  It does run -- on a new leaf tensor with no graph behind it: no
parameter of the model gets a gradient and the optimizer step moves nothing.

Source: https://stackoverflow.com/questions/63582590/why-do-we-call-detach-before-calling-numpy-on-a-pytorch-tensor
("np.ndarray object does not have this extra 'computational graph' layer and therefore, when
converting a torch.tensor to np.ndarray you must explicitly remove the computational graph of
the tensor using the detach() command").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://stackoverflow.com/questions/63582590/"
    "why-do-we-call-detach-before-calling-numpy-on-a-pytorch-tensor"
)
DESCRIPTION = "loss computed in numpy and re-wrapped with requires_grad: no parameter gets .grad"
ASK = ["0.weight"]
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
        r"detach",
        r"numpy",
        r"not (connected|part of|in) (to )?the (graph|loss)",
        r"(does not|doesn't|did not) depend",
        r"(new|separate|fresh) (leaf|tensor)",
        r"graph",
        r"cut",
        r"output[^\n]{0,40}(not used|unused|never used)",
        r"backward[^\n]{0,60}(never|did not|didn't) reach",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.randn(32, 1, generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        pred = model(x)
        loss_np = ((pred.detach().numpy() - y.numpy()) ** 2).mean()
        loss = torch.tensor(loss_np, requires_grad=True)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, loss=loss, before=before)


def truth(run):
    assert run.loss.is_leaf and run.loss.grad_fn is None
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
