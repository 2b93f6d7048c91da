"""A siamese network built as two twins: the second encoder is ``copy.deepcopy`` of the first, each
input goes through its own twin, and a contrastive loss is taken on the pair of embeddings. The
twins start with identical weights but they are separate parameters: each gets only the gradient of
its own branch (the gradients differ), and after one Adam step the two encoders' weights already
differ. The weights are not tied; "they will remain identical after backpropagation" does not hold.
Every gradient is finite and nonzero; nothing raises.

Source:
https://geeksmental.com/question/why-does-siamese-neural-networks-use-tied-weights-and-how-do-they-work
(answer: "you could initialize a network, and then create a parallel twin of that network. Because
both networks see the same loss, they will remain identical after backpropagation"; the question
quotes the paper: "the gradient is additive across the twin networks due to the tied weights"). A
copy of the datascience.stackexchange thread 75559 whose shared-encoder setup is round 5's
``r5_siamese_shared_encoder`` (the control of this step). Adapted: tanh MLP encoders on synthetic
pairs, the contrastive loss with margin 1, Adam.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://geeksmental.com/question/"
    "why-does-siamese-neural-networks-use-tied-weights-and-how-do-they-work"
)
DESCRIPTION = "siamese twins by copy.deepcopy: weights not tied, they differ after one step"
ASK = []
MUST = [
    [
        r"(not|un)[- ]?(tied|shared)",
        r"(twin|copy|copies|duplicate|deepcopy)",
        r"diverg\w*",
        r"(separate|independent|distinct) (encoders?|networks?|modules?|parameters)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class Twins(nn.Module):
    def __init__(self):
        super().__init__()
        self.left = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 8))
        self.right = copy.deepcopy(self.left)  # "a parallel twin of that network"

    def forward(self, a, b):
        return self.left(a), self.right(b)


def pairs():
    g = torch.Generator().manual_seed(1)
    a = torch.randn(64, 10, generator=g)
    same = (torch.rand(64, generator=g) < 0.5).float()
    b = torch.where(
        same.unsqueeze(1) > 0,
        a + 0.1 * torch.randn(64, 10, generator=g),
        torch.randn(64, 10, generator=g),
    )
    return a, b, same


def contrastive(e1, e2, same, margin=1.0):
    d = F.pairwise_distance(e1, e2)
    return (same * d**2 + (1 - same) * F.relu(margin - d) ** 2).mean()


def step(watch):
    torch.manual_seed(0)
    model = Twins()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    a, b, same = pairs()
    start_equal = all(
        torch.equal(p, q)
        for p, q in zip(model.left.parameters(), model.right.parameters(), strict=True)
    )
    with watch(model) as w:
        optimizer.zero_grad()
        loss = contrastive(*model(a, b), same)
        loss.backward()
        twin_grads = (
            [p.grad.detach().clone() for p in model.left.parameters()],
            [p.grad.detach().clone() for p in model.right.parameters()],
        )
        optimizer.step()
    params = (
        [p.detach().clone() for p in model.left.parameters()],
        [p.detach().clone() for p in model.right.parameters()],
    )
    return Run(w=w, start_equal=start_equal, twin_grads=twin_grads, params=params)


def truth(run):
    assert run.start_equal
    for side in run.twin_grads:
        for g in side:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert any(not torch.equal(p, q) for p, q in zip(*run.twin_grads, strict=True))
    assert any(not torch.equal(p, q) for p, q in zip(*run.params, strict=True))  # diverged
