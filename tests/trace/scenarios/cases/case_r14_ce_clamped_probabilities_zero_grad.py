"""Cross-entropy computed by hand from softmax probabilities clipped to ``[1e-7, 1 - 1e-7]`` so that
``-log`` never sees 0: ``-log(softmax(logits).clamp(1e-7, 1 - 1e-7)[range(n), y]).mean()``.  The
loss is finite, but ``clamp`` passes no gradient where it clips: every example whose target
probability is below ``1e-7``, the confidently wrong ones, contributes exactly zero gradient (their
loss is pinned at ``-log(1e-7) = 16.1``).  Here the classifier's head is overconfident (its weights
scaled by 30), 23 of the 64 examples are clipped, and their rows of the logits' gradient are
exactly zero where ``F.cross_entropy`` gives them rows of norm at least ``1 / 64``.  Every
parameter gradient is finite and nonzero (from the other examples); nothing raises.

Source: https://github.com/luisegarduno/First-NeuralNetwork ("If the confidence for the correct
class is 0 then the loss for the class ends up equaling INFINITY"; "Solution #1: Use
``numpy.clip`` to clip (limit) the values in an array ... ``-np.log(1e-7)``").  Adapted: the
notebook's numpy loss written in torch (``clamp``) on a tanh MLP classifier.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/luisegarduno/First-NeuralNetwork"
DESCRIPTION = "CE from softmax clamped to [1e-7, 1-1e-7]: clipped (worst) examples get zero grad"
ASK = []
MUST = [
    [r"clamp\w*", r"clip\w*", r"1e-0?7", r"ClampBackward"],
    [
        r"zero gradient",
        r"gradient[^\n]{0,40}\b(is |are |was |were )?(exactly )?(zero|0)\b",
        r"no gradient",
        r"blocks? (the )?gradient",
        r"(worst|wrong|misclassified|confident\w*)[^\n]{0,40}(example|sample|row)s?",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]
EPS = 1e-7


def make_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 10))
    with torch.no_grad():
        model[2].weight.mul_(30)  # an overconfident head
    return model


def clamped_ce(logits, y):
    p = logits.softmax(-1).clamp(EPS, 1 - EPS)
    return -p[torch.arange(len(y)), y].log().mean()


def step(watch, builtin: bool = False):
    model = make_model()
    reference = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 20, generator=g)
    y = torch.randint(0, 10, (64,), generator=g)
    loss_fn = F.cross_entropy if builtin else clamped_ce
    with watch(model) as w:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    logits = reference(x).detach().requires_grad_(True)  # the logits' gradient, row by row
    (row_grad,) = torch.autograd.grad(loss_fn(logits, y), [logits])
    p_target = logits.detach().softmax(-1)[torch.arange(64), y]
    return Run(w=w, loss=loss.item(), grads=grads, row_grad=row_grad, p_target=p_target)


def truth(run):
    clipped = run.p_target < EPS
    assert int(clipped.sum()) >= 4
    assert bool((run.row_grad[clipped] == 0).all())  # the worst examples send nothing back
    assert bool((run.row_grad[~clipped].abs().sum(-1) > 0).all())
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
