"""A GAN with two optimizers where only the discriminator's is zeroed: ``optD.zero_grad()``
before D's loss, but no ``optG.zero_grad()`` before G's.  The generator's ``.grad`` keeps the
first iteration's gradient, and the second iteration's backward adds to it: optG steps on the
sum of two iterations.  The generator is the watched model.

Source: https://runebook.dev/ru/docs/pytorch/generated/torch.optim.rmsprop/torch.optim.RMSprop.zero_grad
(on zero_grad mistakes: "Несколько оптимизаторов: Если у тебя, например, GAN ... и ты
используешь два разных оптимизатора, не забывай вызывать zero_grad() для обоих" -- with two
optimizers, as in a GAN, do not forget zero_grad() for both).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://runebook.dev/ru/docs/pytorch/generated/torch.optim.rmsprop/"
    "torch.optim.RMSprop.zero_grad"
)
DESCRIPTION = "GAN, optG.zero_grad() missing: G's .grad sums two iterations' gradients"
ASK = []
MUST = [
    [
        r"zero_grad",
        r"not (been )?(zeroed|reset|cleared)",
        r"accumulat",
        r"\b2 (backward )?passes",
        r"two (backward )?passes",
        r"previous (step|iteration|batch)",
        r"stale",
    ]
]
MUST_NOT = [FALSE_OK]


def _nets():
    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    return G, D


def step(watch, zero_g=False):
    torch.manual_seed(0)
    G, D = _nets()
    optG = torch.optim.Adam(G.parameters(), lr=1e-3)
    optD = torch.optim.Adam(D.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    data = [
        (torch.randn(16, 2, generator=g) + 2, torch.randn(16, 4, generator=g)) for _ in range(2)
    ]
    ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
    grads_before_g_backward, grads_after = [], []
    with watch(G) as w:
        for real, z in data:
            fake = G(z)
            optD.zero_grad()
            loss_d = F.binary_cross_entropy_with_logits(D(real), ones) + (
                F.binary_cross_entropy_with_logits(D(fake.detach()), zeros)
            )
            loss_d.backward()
            optD.step()
            if zero_g:
                optG.zero_grad()
            loss_g = F.binary_cross_entropy_with_logits(D(fake), ones)
            w0 = G[0].weight
            grads_before_g_backward.append(None if w0.grad is None else w0.grad.clone())
            loss_g.backward()
            grads_after.append(w0.grad.clone())
            optG.step()
    return Run(w=w, G=G, before=grads_before_g_backward, after=grads_after)


def truth(run):
    from scenario_kit import plain

    # at the second iteration G's .grad still holds the first iteration's gradient ...
    assert run.before[0] is None
    assert run.before[1] is not None and torch.equal(run.before[1], run.after[0])
    assert bool(run.after[0].abs().sum() > 0)
    # ... and the second backward adds its own (the same loop with optG.zero_grad(): the
    # first step is the same, so its second gradient is the second iteration's alone)
    fresh = step(plain, zero_g=True).after[1]
    assert torch.allclose(run.after[1], run.after[0] + fresh, atol=1e-6)
