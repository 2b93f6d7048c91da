"""A DQN-style step that means to clip every gradient element to [-1, 1] before the optimizer
step, written ``param.grad.data.clamp(-1, 1)``: ``clamp`` returns a new tensor and the result is
thrown away, so ``.grad`` is unchanged and RMSprop reads gradient elements far above 1.

Source: https://github.com/pytorch/tutorials/pull/30 ("Fixed clamp not being applied to
parameters"; "I think the line ``param.grad.data.clamp(-1, 1)`` has no effect. I guess you wanted
to do it *in-place*, which is ``clamp_``").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/tutorials/pull/30"
DESCRIPTION = "param.grad.data.clamp(-1, 1) (not clamp_): the result is discarded, grads stay > 1"
ASK = []
MUST = [
    [
        r"clamp",
        r"in-?place",
        r"discard",
        r"(result|return value)[^\n]{0,40}(unused|not used|ignored|thrown away|lost)",
    ]
]
MUST_NOT = [FALSE_OK]


def step(watch, inplace: bool = False):
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.RMSprop(policy.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    state = torch.randn(32, 4, generator=g) * 3
    action = torch.randint(0, 2, (32, 1), generator=g)
    expected_q = torch.randn(32, generator=g) * 50  # large TD targets: large gradients
    with watch(policy) as w:
        q = policy(state).gather(1, action).squeeze(1)
        loss = F.smooth_l1_loss(q, expected_q) * 40
        opt.zero_grad()
        loss.backward()
        for param in policy.parameters():
            if inplace:
                param.grad.data.clamp_(-1, 1)
            else:
                param.grad.data.clamp(-1, 1)  # returns a new tensor: no effect
        read = {n: p.grad.clone() for n, p in policy.named_parameters()}
        opt.step()
    return Run(w=w, model=policy, read=read)


def truth(run):
    biggest = max(float(g.abs().max()) for g in run.read.values())
    assert biggest > 1.0  # the optimizer read gradient elements beyond the intended clip
