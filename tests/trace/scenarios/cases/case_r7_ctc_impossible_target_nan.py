"""A CTC recogniser (per-frame Linear, ``log_softmax``, ``nn.CTCLoss``) whose batch holds one
sample that cannot be aligned: its target ``1 1 1 1`` needs a blank between repeated labels, 7
frames, and the sample has 6.  Its loss is inf, the batch mean is inf, and the backward fills the
gradient with NaN; the optimizer step writes NaN into every weight.

Source: https://github.com/open-mmlab/mmocr/pull/159 ("fix bug of loss nan": "Fix ctc_loss NaN bug
by setting zero_infinity=True"; also FangShancheng/ABINet#65, "the loss of first 4~5 iterations
is normal, then get inf, after that get nan").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://github.com/open-mmlab/mmocr/pull/159"
DESCRIPTION = "CTC batch with a target longer than its frames allow: loss inf, NaN gradients"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b", r"infinit"],
    [
        r"\bctc",
        r"CtcLoss",
        r"zero_infinity",
        r"(input|target)[_ ]lengths?",
        r"too short",
        r"align",
    ],
]
MUST_NOT = [FALSE_OK]

T, N, C = 6, 4, 5  # frames, batch, classes (0 = blank)


def step(watch, zero_infinity: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, C))
    ctc = nn.CTCLoss(blank=0, zero_infinity=zero_infinity)
    g = torch.Generator().manual_seed(1)
    frames = torch.randn(T, N, 8, generator=g)
    targets = torch.tensor([[1, 1, 1, 1], [2, 3, 0, 0], [4, 2, 1, 0], [3, 3, 0, 0]])
    target_lengths = torch.tensor([4, 2, 3, 2])
    input_lengths = torch.full((N,), T, dtype=torch.long)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with watch(model) as w:
        opt.zero_grad()
        log_probs = model(frames).log_softmax(2)  # (T, N, C)
        loss = ctc(log_probs, targets, input_lengths, target_lengths)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    per_sample = nn.CTCLoss(blank=0, reduction="none")(
        log_probs.detach(), targets, input_lengths, target_lengths
    )
    return Run(w=w, model=model, loss=loss.item(), grads=grads, per_sample=per_sample)


def truth(run):
    assert run.per_sample[0] == float("inf")  # 1 1 1 1 needs 7 frames, it has 6
    assert bool(torch.isfinite(run.per_sample[1:]).all())
    assert run.loss == float("inf")
    assert all(bool(torch.isnan(g).any()) for g in run.grads.values())
    assert all(bool(torch.isnan(p).any()) for p in run.model.parameters())
