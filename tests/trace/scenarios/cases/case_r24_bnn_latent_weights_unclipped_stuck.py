"""A binarised layer trained with the straight-through estimator in its usual form: the forward
uses ``sign(w)`` and the backward passes the gradient through where ``|w| <= 1`` and cancels it
elsewhere (the derivative of ``hardtanh``).  The latent real weights are initialised with
``torch.randn`` and never clipped to ``[-1, 1]``: about a third of them start beyond 1 in
magnitude, get an exactly zero gradient, and with Adam they never move; their binary values are
frozen for good.  The other entries, the real-valued first layer and the head get finite, nonzero
gradients; nothing raises.

Source: https://aitopics.org/doc/conferences:F665A6FC ("These methods apply the sign function in
their forward pass and their respective gradients are backpropagated to update the weights.
However, the derivative of the sign function is zero whenever defined, which consequently freezes
training. Therefore, implementations of BC (e.g., BNN) usually replace the derivative of sign in
the backward computation with identity or other approximate gradient alternatives").  Adapted: the
hardtanh straight-through estimator of BNN (identity inside ``[-1, 1]``, zero outside) as a
``torch.autograd.Function``; a ``Linear(16, 32)``, ``Tanh``, binary ``32 x 32`` layer scaled by
``1 / sqrt(32)``, ``Tanh``, ``Linear(32, 3)`` classifier, 128 examples, Adam at 1e-2.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://aitopics.org/doc/conferences:F665A6FC"
DESCRIPTION = "BNN latent weights from randn, never clipped: |w| > 1 entries get zero gradient"
ASK = ["binary.weight"]
MUST = [
    [
        r"\|w\| ?> ?1",
        r"outside \[-1, ?1\]",
        r"beyond (\+-|±)?1",
        r"clip\w*",
        r"clamp\w*",
        r"straight[- ]through",
        r"\bSTE\b",
        r"hardtanh",
    ],
    [r"\bzero\b", r"no gradient", r"never (move|moved|update|change)\w*", r"stuck", r"frozen"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"requires_grad\s*(=|is|was)?\s*False"]


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w):
        ctx.save_for_backward(w)
        return torch.sign(w)

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        return grad * (w.abs() <= 1).to(grad.dtype)


class BinaryLinear(nn.Module):
    def __init__(self, n, clipped):
        super().__init__()
        init = torch.empty(n, n).uniform_(-1, 1) if clipped else torch.randn(n, n)
        self.weight = nn.Parameter(init)

    def forward(self, x):
        return F.linear(x, SignSTE.apply(self.weight)) / self.weight.shape[1] ** 0.5


class BNN(nn.Module):
    def __init__(self, clipped=False):
        super().__init__()
        self.fc = nn.Linear(16, 32)
        self.binary = BinaryLinear(32, clipped)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(torch.tanh(self.binary(torch.tanh(self.fc(x)))))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 16, generator=g)
    return x, (x[:, :3] - x[:, 3:6]).argmax(1)


def step(watch, clipped=False):
    torch.manual_seed(0)
    model = BNN(clipped)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = data()
    latent = model.binary.weight.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
        if clipped:
            with torch.no_grad():
                model.binary.weight.clamp_(-1, 1)
    return Run(w=w, model=model, grads=grads, latent=latent)


def truth(run):
    stuck = run.latent.abs() > 1
    assert float(stuck.float().mean()) > 0.2
    g = run.grads["binary.weight"]
    assert bool((g[stuck] == 0).all()) and bool((g[~stuck] != 0).all())
    assert torch.equal(run.model.binary.weight.detach()[stuck], run.latent[stuck])  # never move
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
