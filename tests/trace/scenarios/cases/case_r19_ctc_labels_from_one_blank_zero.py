"""Control: the same CTC recogniser with the page's numbering, the letters from 1 (A = 1, ..., D =
4) and index 0 kept for ``nn.CTCLoss()``'s default blank. No target contains the blank, and the loss
of each target equals minus the log of the summed probability of every frame-level path that decodes
to it (asserted by enumerating all 5^6 paths). Every gradient is finite and nonzero.

Source: https://www.cnblogs.com/chenkui164/p/16359288.html ("CTCLoss如何使用" (how to use CTCLoss):
"我们用序号1-26,分别来表示字母A-Z这26个字母,我们用序号0表示blank" (we use indices 1-26 for the letters A-Z, and index 0 for
blank)). Adapted: four letters, six frames, a per-frame tanh MLP, the targets BAD, CAB, DAD and ABC,
Adam at 1e-2.
"""

import itertools

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://www.cnblogs.com/chenkui164/p/16359288.html"
DESCRIPTION = "control: CTC letters numbered from 1, blank=0: the exact path likelihood"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"blank[^\n]{0,40}(target|label)"]
T, C = 6, 5  # frames; blank + 4 letters
WORDS = ["BAD", "CAB", "DAD", "ABC"]
LABELS = {letter: i + 1 for i, letter in enumerate("ABCD")}  # 0 stays the blank


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, C))


def data():
    g = torch.Generator().manual_seed(1)
    frames = torch.randn(len(WORDS), T, 8, generator=g)
    targets = torch.tensor([[LABELS[ch] for ch in word] for word in WORDS])
    return frames, targets


def step(watch):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    frames, targets = data()
    ctc = nn.CTCLoss()  # blank=0
    n = len(WORDS)
    with watch(model) as w:
        optimizer.zero_grad()
        log_probs = model(frames).log_softmax(2).transpose(0, 1)  # (T, N, C)
        loss = ctc(log_probs, targets, torch.full((n,), T), torch.full((n,), 3))
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, log_probs=log_probs.detach(), targets=targets, blank=ctc.blank,
               loss=loss.item(), grads=grads)  # fmt: skip


def decode(path, blank):
    merged = [k for k, _ in itertools.groupby(path)]
    return tuple(k for k in merged if k != blank)


def path_log_likelihood(log_probs, targets, blank):
    """log p(target) summed over every frame-level path that decodes to it (all C**T paths)."""
    paths = list(itertools.product(range(C), repeat=T))
    index = torch.tensor(paths)  # (P, T)
    decoded = [decode(p, blank) for p in paths]
    out = []
    for i, target in enumerate(targets.tolist()):
        match = torch.tensor([d == tuple(target) for d in decoded])
        scores = log_probs[torch.arange(T), i][torch.arange(T), index].sum(1)  # (P,)
        out.append(torch.logsumexp(scores[match], 0) if match.any() else torch.tensor(-torch.inf))
    return torch.stack(out)


def truth(run):
    assert run.blank == 0 and not bool((run.targets == run.blank).any())
    exact = path_log_likelihood(run.log_probs, run.targets, run.blank)
    per_sample = nn.CTCLoss(reduction="none")(
        run.log_probs, run.targets, torch.full((4,), T), torch.full((4,), 3)
    )
    assert torch.allclose(per_sample, -exact, atol=1e-4)  # the exact CTC likelihood
    assert abs(run.loss - float((per_sample / 3).mean())) < 1e-5
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
