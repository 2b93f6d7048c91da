"""Control: a Siamese network -- one encoder applied to both inputs of each pair, a contrastive
(margin) loss on the distance of the two embeddings, one backward.  The encoder's gradient is the
sum of what the two calls sent back ("additive across the twin networks due to the tied
weights"), exactly the gradient of the loss; one optimizer step.  A healthy step.  The loss
depends on the difference of two embeddings, which the last layer's bias does not change: the
gradient of ``2.bias`` is exactly zero in every such step (asserted below), so a text naming
``2.bias`` as getting a zero gradient is accepted instead of "ok".

Source: https://datascience.stackexchange.com/questions/75559/why-does-siamese-neural-networks-use-tied-weights-and-how-do-they-work
("This objective is combined with standard backpropagation algorithm, where the gradient is
additive across the twin networks due to the tied weights"; "Why not just reuse the same
network twice?").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://datascience.stackexchange.com/questions/75559/"
    "why-does-siamese-neural-networks-use-tied-weights-and-how-do-they-work"
)
DESCRIPTION = "control: one encoder called on both inputs, contrastive loss, one backward"
ASK = []
MUST = [[HEALTHY_OK, r"\b2\.bias\b"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"same graph",
    r"(backward|backpropagat\w*|graph)[^\n]{0,30}(twice|2 times|two times)",
    r"held by (two|2|both)",
    r"(stepped|updated) twice",
]


def contrastive(e1, e2, same, margin=1.0):
    d = F.pairwise_distance(e1, e2)
    return torch.mean(same * d.pow(2) + (1 - same) * F.relu(margin - d).pow(2))


def step(watch):
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 8))
    opt = torch.optim.SGD(encoder.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    x1, x2 = torch.randn(16, 10, generator=g), torch.randn(16, 10, generator=g)
    same = (torch.rand(16, generator=g) > 0.5).float()
    with watch(encoder) as w:
        opt.zero_grad()
        loss = contrastive(encoder(x1), encoder(x2), same)
        loss.backward()
        grads = [p.grad.clone() for p in encoder.parameters()]
        opt.step()
    return Run(w=w, encoder=encoder, grads=grads, x1=x1, x2=x2, same=same)


def truth(run):
    import copy

    *nonzero, bias = run.grads
    for grad in nonzero:
        assert bool(torch.isfinite(grad).all()) and bool(grad.abs().sum() > 0)
    assert bool((bias == 0).all())  # e1 - e2 does not depend on the output bias
    # the gradient is the sum of the two branches': one twin per input, weights copied
    torch.manual_seed(0)
    twin_a = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 8))
    twin_b = copy.deepcopy(twin_a)
    contrastive(twin_a(run.x1), twin_b(run.x2), run.same).backward()
    for grad, pa, pb in zip(run.grads, twin_a.parameters(), twin_b.parameters(), strict=True):
        assert torch.allclose(grad, pa.grad + pb.grad, atol=1e-6)
