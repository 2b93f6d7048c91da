"""A wav2vec 2.0 pre-training step whose diversity loss is computed from the hard code choices: the
average usage ``p_bar`` of each codebook entry is the mean of ``one_hot(argmax(logits))`` over the
batch, and the loss is ``1 / (G V) sum_g sum_v p_bar log p_bar``.  A fresh quantizer uses only some
of the 8 entries of each codebook; an unused entry gives ``0 * log 0 = 0 * -inf = NaN``: the
diversity term and the total loss are NaN.  The term was built from an arg-max and has no graph, so
the backward runs through the contrastive term alone and every gradient is finite; the model trains
on a loss that prints NaN, and the diversity term never pushes the code usage apart.

Source: https://sciencecareer.data.blog/2021/01/06/wav2vec-2-0-learning-speech-representations-via-self-supervised-objective
("We choose the one which is having minimum difference with the extracted feature and this operation
is done using argmin operator which is converted into argmax by introducing negation. But argmax is
non-differentiable hence backprop is a problem. So here comes the role of Gumbel SoftMax"; "So, we
use argmax in forward prop and while backprop we use Gumbel SoftMax").  Adapted: the usage counted
on the arg-max (as for a code-perplexity log line) and used as the loss; 4 random waveforms of 400
samples, a feature encoder ``Conv1d(1, 32, 10, stride 5), Tanh, Conv1d(32, 32, 8, stride 4), Tanh``
(18 frames), a quantizer of G = 2 codebooks of V = 8 entries (``Linear(32, 16)`` logits,
``gumbel_softmax(hard=True, tau=2)``, 16-dimensional entries), half the frames masked, a
convolutional context network, the contrastive loss over 5 distractors at temperature 0.1, the
diversity term weighted 0.1, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://sciencecareer.data.blog/2021/01/06/"
    "wav2vec-2-0-learning-speech-representations-via-self-supervised-objective"
)
DESCRIPTION = "wav2vec diversity on argmax code counts: 0 * log 0, NaN loss, term has no grad"
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"divers\w*",
        r"entropy",
        r"log\s?\(?0\)?|0\s?\*\s?log|log of (zero|0)|0 \* -?inf",
        r"argmax|arg-max",
        r"(hard|code) (counts?|usage|frequenc\w*|assignments?|choices?)",
        r"unused (code|entr)\w*",
        r"no (graph|grad_fn)|does not require grad|constant",
    ],
]
MUST_NOT = [
    FALSE_OK,
    r"\bdead\b",
    r"nan (gradient|grad)s?\b",
    r"(gradient|grad)s? (is |are |were |was )?(nan|non-?finite)",
    r"non-?finite (gradient|grad)s?\b",
]
G, V, DIM, DISTRACTORS = 2, 8, 32, 5


class Wav2Vec(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(1, DIM, 10, stride=5), nn.Tanh(), nn.Conv1d(DIM, DIM, 8, stride=4), nn.Tanh()
        )
        self.quantizer = nn.Linear(DIM, G * V)
        self.codebook = nn.Parameter(torch.randn(G, V, DIM // G))
        self.project_q = nn.Linear(DIM, DIM)
        self.mask_embedding = nn.Parameter(torch.rand(DIM))
        self.context = nn.Sequential(
            nn.Conv1d(DIM, DIM, 3, padding=1), nn.Tanh(), nn.Conv1d(DIM, DIM, 3, padding=1)
        )

    def forward(self, wave, mask):
        z = self.encoder(wave[:, None]).transpose(1, 2)  # (B, T, DIM)
        logits = self.quantizer(z).view(*z.shape[:2], G, V)
        onehot = F.gumbel_softmax(logits, tau=2.0, hard=True, dim=-1)
        q = self.project_q(torch.einsum("btgv,gvd->btgd", onehot, self.codebook).flatten(2))
        z_masked = torch.where(mask[..., None], self.mask_embedding, z)
        c = self.context(z_masked.transpose(1, 2)).transpose(1, 2)
        return c, q, logits


def contrastive(c, q, mask, g):
    losses = []
    for b, t in mask.nonzero().tolist():
        others = mask[b].nonzero()[:, 0]
        others = others[others != t]
        pick = others[torch.randperm(len(others), generator=g)[:DISTRACTORS]]
        candidates = torch.cat([q[b, t : t + 1], q[b, pick]])
        sim = F.cosine_similarity(c[b, t][None], candidates, dim=-1) / 0.1
        losses.append(F.cross_entropy(sim[None], torch.zeros(1, dtype=torch.long)))
    return torch.stack(losses).mean()


def diversity(logits, hard):
    if hard:  # usage of each entry counted on the arg-max
        p_bar = F.one_hot(logits.argmax(-1), V).float().mean((0, 1))
    else:  # the average softmax over the batch
        p_bar = logits.softmax(-1).mean((0, 1))
    return (p_bar * p_bar.log()).sum() / (G * V)


def data():
    g = torch.Generator().manual_seed(1)
    wave = torch.randn(4, 400, generator=g).cumsum(1) / 10
    mask = torch.rand(4, 18, generator=g) < 0.5
    return wave, mask


def step(watch, hard=True):
    torch.manual_seed(0)
    model = Wav2Vec()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    wave, mask = data()
    g = torch.Generator().manual_seed(3)
    with watch(model) as w:
        optimizer.zero_grad()
        c, q, logits = model(wave, mask)
        l_m = contrastive(c, q, mask, g)
        l_d = diversity(logits, hard)
        loss = l_m + 0.1 * l_d
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    usage = F.one_hot(logits.detach().argmax(-1), V).sum((0, 1))
    return Run(
        w=w,
        model=model,
        usage=usage,
        l_m=float(l_m.detach()),
        l_d=float(l_d.detach()),
        l_d_has_graph=l_d.requires_grad,
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    assert bool((run.usage == 0).any())  # an unused codebook entry
    assert math.isnan(run.l_d) and math.isnan(run.loss) and math.isfinite(run.l_m)
    assert not run.l_d_has_graph
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
    for n, p in run.model.named_parameters():
        assert bool(torch.isfinite(p).all()), n
