"""A Q-learning step whose target comes from the same network, r + gamma * max Q(s'), without
detach() or torch.no_grad(): the loss backpropagates through the target too, so the network
is pushed to move its target towards its prediction as well as the other way round.  The
network is called twice and both calls send gradient into its parameters.

Source: https://theneuralbase.pages.dev/pytorch/learn/beginner/detach-stopping-gradient-flow/
(".detach(): stopping gradient flow": "You need to stop gradient flow when you want to use a
tensor's values in your computation without updating its parameters: common in loss
calculations, target values ... Without it, you'll train things you meant to keep fixed";
"For target networks in RL ...").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theneuralbase.pages.dev/pytorch/learn/beginner/detach-stopping-gradient-flow/"
DESCRIPTION = "Q target r + 0.9 max Q(s') from the same net, not detached: gradient through both"
ASK = []
MUST = [
    [
        r"detach",
        r"\btarget\b",
        r"(two|2|both) calls",
        r"called (twice|2 times|two times)",
        r"ran (twice|2 times|two times)",
        r"second call",
    ]
]
MUST_NOT = [FALSE_OK]

GAMMA = 0.9


def _net():
    return nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))


def _batch():
    g = torch.Generator().manual_seed(1)
    s, s2 = torch.randn(16, 4, generator=g), torch.randn(16, 4, generator=g)
    a, r = torch.randint(0, 2, (16, 1), generator=g), torch.randn(16, generator=g)
    return s, a, r, s2


def step(watch, detach_target=False):
    torch.manual_seed(0)
    qnet = _net()
    opt = torch.optim.SGD(qnet.parameters(), lr=0.05)
    s, a, r, s2 = _batch()
    with watch(qnet) as w:
        opt.zero_grad()
        q = qnet(s).gather(1, a).squeeze(1)
        if detach_target:
            with torch.no_grad():
                target = r + GAMMA * qnet(s2).max(1).values
        else:
            target = r + GAMMA * qnet(s2).max(1).values
        loss = F.mse_loss(q, target)
        loss.backward()
        grads = [p.grad.clone() for p in qnet.parameters()]
        opt.step()
    return Run(w=w, qnet=qnet, grads=grads, batch=(s, a, r, s2), target_grad=target.requires_grad)


def detached_reference(batch):
    """The textbook gradient: the target taken as a constant."""
    s, a, r, s2 = batch
    torch.manual_seed(0)
    ref = _net()
    q = ref(s).gather(1, a).squeeze(1)
    target = (r + GAMMA * ref(s2).max(1).values).detach()
    return torch.autograd.grad(F.mse_loss(q, target), list(ref.parameters()))


def truth(run):
    assert run.target_grad  # the target is part of the graph
    expected = detached_reference(run.batch)
    assert any(
        not torch.allclose(g, e, rtol=1e-3, atol=1e-6)
        for g, e in zip(run.grads, expected, strict=True)
    )
