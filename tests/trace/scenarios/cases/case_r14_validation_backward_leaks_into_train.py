"""The annotated Transformer's ``SimpleLossCompute`` calls ``loss.backward()`` whether or not it
was given an optimizer; the validation run passes ``opt=None``, so the validation loss is
back-propagated, nothing steps and nothing zeroes the gradients.  ``.grad`` then holds the
validation gradient when the next epoch's first training batch runs its backward: autograd adds
the training gradient to it and ``optimizer.step()`` applies the sum, training the model on the
validation batch.  Here one watched block holds the validation pass (``model.eval()``, the loss's
``backward()``, no step) and the first training step after it (``zero_grad`` after the step, as
``SimpleLossCompute`` does): the SGD update is ``-lr * (g_train + g_val)``, not ``-lr * g_train``.
Every gradient is finite and nonzero; nothing raises.

Source: https://github.com/harvardnlp/annotated-transformer/issues/14 ("``loss.backward()`` is
called even if ``opt`` is None, i.e. during validation.  Wouldn't this cause gradients to be
computed on the validation set and thus you are training on the validation data?"; the reply:
"I verified that this _trains_ the model towards the validation data").  Adapted: a small tanh
MLP classifier with SGD instead of the Transformer and its Noam optimizer.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/harvardnlp/annotated-transformer/issues/14"
DESCRIPTION = "validation loss.backward() with no step nor zero_grad: next train step adds it"
ASK = []
MUST = [
    [
        r"validation",
        r"\beval\b",
        r"\beval\(\)",
        r"two backward",
        r"2 backward",
        r"sum of (2|two)",
        r"accumulat\w*",
        r"(earlier|previous|other|stale) (backward|pass|gradient)",
    ],
    [
        r"zero_grad",
        r"not (zeroed|cleared|reset)",
        r"accumulat\w*",
        r"no_grad",
        r"(stale|left ?over|leftover)",
        r"sum of (2|two)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
    r"no gradient",
]
LR = 0.1


def make_model():
    return nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 4))


def grads_of(model, x, y):
    loss = F.cross_entropy(model(x), y)
    return torch.autograd.grad(loss, list(model.parameters()))


def step(watch, validate_under_no_grad: bool = False):
    torch.manual_seed(0)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    g = torch.Generator().manual_seed(1)
    x_val, y_val = torch.randn(48, 12, generator=g), torch.randint(0, 4, (48,), generator=g)
    x_tr, y_tr = torch.randn(32, 12, generator=g), torch.randint(0, 4, (32,), generator=g)
    reference = copy.deepcopy(model)  # the same weights, for the truth's separate gradients
    g_val = grads_of(reference, x_val, y_val)
    g_train = grads_of(reference, x_tr, y_tr)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        model.eval()  # validation at the end of the previous epoch
        if validate_under_no_grad:
            with torch.no_grad():
                val_loss = F.cross_entropy(model(x_val), y_val)
        else:  # SimpleLossCompute(..., opt=None): backward, no step, no zero_grad
            val_loss = F.cross_entropy(model(x_val), y_val)
            val_loss.backward()
        model.train()  # the next epoch's first training batch
        loss = F.cross_entropy(model(x_tr), y_tr)
        loss.backward()
        opt.step()
        opt.zero_grad()
    deltas = [p.detach() - b for p, b in zip(model.parameters(), before, strict=True)]
    return Run(w=w, deltas=deltas, g_val=g_val, g_train=g_train, val_loss=val_loss.item())


def truth(run):
    for d, gt, gv in zip(run.deltas, run.g_train, run.g_val, strict=True):
        assert bool(gv.abs().sum() > 0)
        assert torch.allclose(d, -LR * (gt + gv), atol=1e-6)  # trained on the validation batch
        assert not torch.allclose(d, -LR * gt, atol=1e-6)
