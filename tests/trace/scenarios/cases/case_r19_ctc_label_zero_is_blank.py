"""A CTC recogniser for the letters A to D whose label map numbers the letters from 0 (A = 0, ..., D
= 3) while ``nn.CTCLoss()`` keeps its default ``blank=0``: the letter A is the blank. CTC decoding
merges repeats and then deletes every blank, so no frame-level path decodes to a target that
contains A; the likelihood of every one of these targets is exactly 0 (asserted by enumerating all
5^6 paths). ``CTCLoss`` does not check the targets and returns a finite loss all the same, from
alignments in which A is emitted as blank: the model is trained to say "blank" for A. Every gradient
is finite and nonzero; nothing raises.

Source: https://www.cnblogs.com/chenkui164/p/16359288.html ("CTCLoss如何使用" (how to use CTCLoss):
"首先我们需要一个26个字母的词表,我们用序号1-26,分别来表示字母A-Z这26个字母,我们用序号0表示blank" (first we need a vocabulary of the 26
letters: we use indices 1-26 for the letters A-Z, and index 0 for blank)). Adapted: four letters
numbered from 0 instead of 1, six frames, a per-frame tanh MLP, the targets BAD, CAB, DAD and ABC,
Adam at 1e-2.
"""

import itertools
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://www.cnblogs.com/chenkui164/p/16359288.html"
DESCRIPTION = "CTC targets numbered from 0 with blank=0: the letter A is the blank"
ASK = []
MUST = [
    [
        r"blank",
        r"(label|class|index|target)s? 0\b[^\n]{0,60}(reserved|blank)",
        r"target\w*[^\n]{0,60}(contain|include)\w*[^\n]{0,20}\b0\b",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
T, C = 6, 5  # frames; blank + 4 letters
WORDS = ["BAD", "CAB", "DAD", "ABC"]
LABELS = {letter: i for i, letter in enumerate("ABCD")}  # A = 0: the blank's index


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
    assert run.blank == 0 and bool((run.targets == run.blank).any(1).all())  # A is the blank
    exact = path_log_likelihood(run.log_probs, run.targets, run.blank)
    assert bool(torch.isneginf(exact).all())  # no path decodes to any of these targets
    per_sample = nn.CTCLoss(reduction="none")(
        run.log_probs, run.targets, torch.full((4,), T), torch.full((4,), 3)
    )
    assert bool(torch.isfinite(per_sample).all()) and math.isfinite(run.loss)  # finite all the same
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
