"""A RetNet-style language model whose retention decay matrix is built as ``gamma ** |n - m|`` for
query ``n`` and key ``m``, an exponential weight that shrinks with the distance either way, instead
of RetNet's causal ``D[n, m] = gamma ** (n - m)`` for ``n >= m`` and 0 for ``n < m``.  Retention has
no softmax and no separate causal mask: the decay matrix is the mask.  With it symmetric, every
position reads the keys and values of the positions after it, the next token among them, and the
next-token loss is learned by copying from the future (the outputs at position 0 change when only
the last token of the sequence is changed).  The gradients are finite and nonzero; nothing raises.

Source: https://ai-solutions.daviesmeyer.com/en/glossary/retnet ("RetNet offers three compute modes:
parallel training (like Transformer), recurrent inference (O(1) per token, like RNN), and chunk-wise
processing (hybrid). The retention mechanism replaces softmax attention with exponentially weighted
sums.").  Adapted: the parallel form with the weights read as a decay over the distance ``|n - m|``;
a vocabulary of 16, 32 random sequences of 24 tokens, width 16, 2 heads with RetNet's decays ``1 -
2^-5`` and ``1 - 2^-6``, no rotation of ``Q`` and ``K``, a GroupNorm over the heads, the swish gate,
an FFN ``Linear(16, 32), GELU, Linear(32, 16)``, a head ``Linear(16, 16)``, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ai-solutions.daviesmeyer.com/en/glossary/retnet"
DESCRIPTION = "RetNet decay gamma ** |n - m|: not causal, each position reads the next tokens"
ASK = []
MUST = [
    [
        r"retention|retnet",
        r"decay",
        r"\bmask\w*",
        r"causal\w*",
    ],
    [
        r"(future|later|next|subsequent) (tokens?|positions?|keys?)",
        r"(not|non-?)[ -]?causal",
        r"causal\w*[^\n]{0,40}(missing|broken|violat\w*|lost)",
        r"(leak\w*|peek\w*|cheat\w*|look\w* ahead|sees? the (target|answer))",
        r"symmetric",
        r"\|n\s?-\s?m\||abs\w*",
        r"upper triang\w*|\btril\b|lower triang\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
VOCAB, LENGTH, WIDTH, HEADS = 16, 24, 16, 2


def decay_matrix(causal):
    n = torch.arange(LENGTH)
    distance = n[:, None] - n[None, :]
    gammas = 1 - 2.0 ** torch.tensor([-5.0, -6.0])
    if causal:
        d = gammas[:, None, None] ** distance.clamp(min=0).float()
        return d * (distance >= 0)
    return gammas[:, None, None] ** distance.abs().float()


class RetNetLM(nn.Module):
    def __init__(self, causal):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.q = nn.Linear(WIDTH, WIDTH, bias=False)
        self.k = nn.Linear(WIDTH, WIDTH, bias=False)
        self.v = nn.Linear(WIDTH, WIDTH, bias=False)
        self.g = nn.Linear(WIDTH, WIDTH, bias=False)
        self.o = nn.Linear(WIDTH, WIDTH, bias=False)
        self.group_norm = nn.GroupNorm(HEADS, WIDTH)
        self.ffn = nn.Sequential(nn.Linear(WIDTH, 32), nn.GELU(), nn.Linear(32, WIDTH))
        self.head = nn.Linear(WIDTH, VOCAB)
        self.register_buffer("decay", decay_matrix(causal))

    def forward(self, tokens):
        b = tokens.shape[0]
        x = self.embed(tokens)
        q, k, v = (
            f(x).view(b, LENGTH, HEADS, -1).transpose(1, 2) for f in (self.q, self.k, self.v)
        )
        scores = q @ k.transpose(-1, -2) * self.decay  # (b, heads, n, m): no softmax
        r = (scores @ v).transpose(1, 2).reshape(b * LENGTH, WIDTH)
        r = self.group_norm(r).view(b, LENGTH, WIDTH)
        x = x + self.o(F.silu(self.g(x)) * r)
        return self.head(x + self.ffn(x))


def data():
    g = torch.Generator().manual_seed(1)
    seq = torch.randint(0, VOCAB, (32, LENGTH + 1), generator=g)
    return seq[:, :-1], seq[:, 1:]


def step(watch, causal=False):
    torch.manual_seed(0)
    model = RetNetLM(causal)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():  # a probe after the step: change only the last token of each sequence
        changed = tokens.clone()
        changed[:, -1] = (changed[:, -1] + 1) % VOCAB
        shift = (model(changed) - model(tokens))[:, :-1].abs().amax()
    return Run(w=w, model=model, loss=float(loss.detach()), grads=grads, shift=float(shift))


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.shift > 1e-3  # earlier positions read the last token
