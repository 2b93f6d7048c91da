"""A linear-chain CRF tagger whose partition function is computed by the forward algorithm in
probability space, as the product formula reads: ``alpha_t = (alpha_(t-1) @ exp(T)) * exp(E_t)``,
``Z = sum(alpha_L * exp(end))``, then ``log Z``.  Each position multiplies alpha by about the number
of tags (5): over sentences of 64 tokens (``log Z`` about 111 to 115 in log space) ``alpha`` passes
float32's largest value (about ``e^88.7``) from position 50 on and becomes ``inf``.  ``log Z`` is
``inf``, so is the loss; the backward multiplies ``1 / inf = 0`` by ``inf``: the emission layer's,
the embedding's, the transitions' and the end scores' gradients hold NaN (only the start scores get
a finite one).  Nothing raises.

Source: https://www.onenoughtone.com/learn/conditional-random-fields/2 ("P(y | x) = 1/Z(x)
prod_(i=1)^n Psi_i(y_(i-1), y_i, x)"; "(3) The forward algorithm for computing partition functions
in O(nL^2)"; "It's often convenient to work with log-space scores").  Adapted: the recursion written
on the potentials ``Psi = exp(score)`` themselves; 5 tags, a 20-token vocabulary, 8 sentences of 64
tokens with synthetic tags, emissions ``Linear(16, 5)`` on ``tanh(Embedding(20, 16))``, a transition
matrix and start and end scores, Adam at 1e-2.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://www.onenoughtone.com/learn/conditional-random-fields/2"
DESCRIPTION = "CRF forward algorithm on exp(scores) (probability space), 64 tokens: Z = inf, NaN"
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*"],
    [
        r"overflow\w*",
        r"\bexp\b|exp\(",
        r"log[- ]?space",
        r"logsumexp|log-sum-exp",
        r"partition",
        r"forward algorithm",
        r"\bprod\w*|multipl\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
TAGS, VOCAB, LEN, BATCH = 5, 20, 64, 8


class CRFTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.emit = nn.Linear(16, TAGS)
        self.transitions = nn.Parameter(0.1 * torch.randn(TAGS, TAGS))
        self.start = nn.Parameter(0.1 * torch.randn(TAGS))
        self.end = nn.Parameter(0.1 * torch.randn(TAGS))

    def forward(self, ids):
        return self.emit(torch.tanh(self.embed(ids)))


def log_partition_probability_space(crf, em):
    alpha = torch.exp(crf.start + em[:, 0])
    for t in range(1, em.shape[1]):
        alpha = (alpha @ torch.exp(crf.transitions)) * torch.exp(em[:, t])
    return torch.log((alpha * torch.exp(crf.end)).sum(1))


def log_partition_log_space(crf, em):
    alpha = crf.start + em[:, 0]
    for t in range(1, em.shape[1]):
        alpha = torch.logsumexp(alpha[:, :, None] + crf.transitions[None], 1) + em[:, t]
    return torch.logsumexp(alpha + crf.end, 1)


def gold_score(crf, em, tags):
    score = crf.start[tags[:, 0]] + crf.end[tags[:, -1]]
    score = score + em.gather(2, tags[:, :, None]).squeeze(2).sum(1)
    return score + crf.transitions[tags[:, :-1], tags[:, 1:]].sum(1)


def viterbi(crf, em):
    """Best tag paths from the non-normalised scores (max in place of logsumexp, then backtrace)."""
    score, back = crf.start + em[:, 0], []
    for t in range(1, em.shape[1]):
        best, arg = (score[:, :, None] + crf.transitions[None]).max(1)
        score = best + em[:, t]
        back.append(arg)
    path = [(score + crf.end).argmax(1)]
    for arg in reversed(back):
        path.append(arg.gather(1, path[-1][:, None]).squeeze(1))
    return torch.stack(path[::-1], 1)


def data():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (BATCH, LEN), generator=g)
    return ids, ids % TAGS


def step(watch, log_space=False):
    torch.manual_seed(0)
    model = CRFTagger()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    ids, tags = data()
    with watch(model) as w:
        optimizer.zero_grad()
        em = model(ids)
        if log_space:
            log_z = log_partition_log_space(model, em)
        else:
            log_z = log_partition_probability_space(model, em)
        loss = (log_z - gold_score(model, em, tags)).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
        with torch.no_grad():  # decoding reads the emissions already computed
            decoded = viterbi(model, em.detach())
    with torch.no_grad():
        reference = log_partition_log_space(model_at_start(), model_at_start()(ids))
    return Run(
        w=w,
        log_z=log_z.detach(),
        reference=reference,
        loss=float(loss.detach()),
        grads=grads,
        decoded=decoded,
    )


def model_at_start():
    torch.manual_seed(0)
    return CRFTagger()


def truth(run):
    assert bool(torch.isfinite(run.reference).all()) and float(run.reference.min()) > 88.8
    assert bool(torch.isinf(run.log_z).all()) and run.loss == float("inf")
    for n in ("embed.weight", "emit.weight", "emit.bias", "transitions", "end"):
        assert bool(torch.isnan(run.grads[n]).any()), n
