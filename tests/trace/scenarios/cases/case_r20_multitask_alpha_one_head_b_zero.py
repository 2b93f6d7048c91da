"""A two-head multi-task regressor trained with the fixed weighting ``L = alpha * L_a + (1 - alpha)
* L_b`` and ``alpha = 1.0``.  Task B's loss is computed and is in the graph, but multiplied by 0:
``head_b``'s weight and bias get a gradient that exists and is exactly zero at every step (autograd
passes ``0 * dL_b``), and the shared trunk's gradient is task A's alone.  Task B never learns;
nothing raises, nothing is NaN.

Source: https://crackedaicode.com/problems/flax-multi-task-loss ("A 2-head model on top of a shared
trunk"; "L = α * L_a + (1 - α) * L_b"; "α = 0.5 is symmetric. α = 1.0 ignores task B.").  Adapted:
the exercise is written for Flax; here the same model in PyTorch, ``Linear(8, 16)`` with ``Tanh``
in place of the page's ReLU, two ``Linear(16, 1)`` heads, MSE per task, SGD at 0.05, a batch of 64.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://crackedaicode.com/problems/flax-multi-task-loss"
DESCRIPTION = "multi-task loss alpha * L_a + (1 - alpha) * L_b with alpha = 1: head_b's grads all 0"
ASK = ["head_b.weight"]
MUST = [
    [
        r"all[- ]zero",
        r"\bzero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
    ],
    [
        r"(weighted|scaled|multiplied) by (0|zero)\b",
        r"(weight|coefficient|factor|alpha|α)\s*(of\s+\S+\s*)?(=|is|was|of)\s*(0(\.0)?|zero)\b",
        r"zero[- ]weight\w*",
        r"times (0|zero)\b",
        r"\b0(\.0)? ?\*",
        r"1 - alpha",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class TwoHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.head_a = nn.Linear(16, 1)
        self.head_b = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.head_a(h), self.head_b(h)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    y_a = x[:, :4].sum(1, keepdim=True)
    y_b = torch.sin(x[:, 4:]).sum(1, keepdim=True)
    return x, y_a, y_b


def step(watch, alpha=1.0):
    torch.manual_seed(0)
    model = TwoHead()
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y_a, y_b = data()
    with watch(model) as w:
        optimizer.zero_grad()
        pa, pb = model(x)
        loss_a, loss_b = F.mse_loss(pa, y_a), F.mse_loss(pb, y_b)
        loss = alpha * loss_a + (1 - alpha) * loss_b
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, start=start, alpha=alpha, grads=grads, x=x, y_a=y_a, y_b=y_b,
               loss_b=loss_b.item())  # fmt: skip


def task_grads(run, task):
    ref = TwoHead()
    ref.load_state_dict(run.start)
    pa, pb = ref(run.x)
    loss = F.mse_loss(pa, run.y_a) if task == "a" else F.mse_loss(pb, run.y_b)
    names = [n for n, _ in ref.named_parameters()]
    return dict(zip(names, torch.autograd.grad(loss, list(ref.parameters()), allow_unused=True),
                    strict=True))  # fmt: skip


def truth(run):
    assert run.alpha == 1.0
    own_b = task_grads(run, "b")
    assert run.loss_b > 0.1 and bool(own_b["head_b.weight"].abs().sum() > 0)  # B has a signal
    for n in ("head_b.weight", "head_b.bias"):
        assert bool((run.grads[n] == 0).all()), n  # present and exactly zero
        assert torch.equal(dict(run.model.named_parameters())[n].detach(), run.start[n]), n
    only_a = task_grads(run, "a")
    for n in ("trunk.0.weight", "trunk.0.bias", "head_a.weight", "head_a.bias"):
        assert torch.allclose(run.grads[n], only_a[n], atol=1e-7), n  # task A's gradient alone
