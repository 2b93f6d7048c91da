"""A healthy step people suspect ("embeddings not learning"): a skip-gram model with negative
sampling, two embedding tables (input and output) initialised uniform in [-1, 1], each batch of
(center, context) pairs scored with ``bmm`` and 5 noise words per pair drawn from the unigram
distribution to the power 0.75, and the loss ``-(logsigmoid(out . in) + sum logsigmoid(-noise .
in)).mean()``.  Only the rows of the words in the batch get a gradient: the input table's rows of
the 31 words that are no center word here are exactly zero, which is how an embedding lookup
trains.  The loss is finite; every looked-up row's gradient is finite and nonzero.

Source: https://drserendipity.com/notes/notes_by_subjects/artificial_intelligence/natural-language-processing/4-extracurricular/4-6-pytorch/4-6-2-embeddings-word2vec/12-12-completemodel-customloss-v2-2/
("I've defined my two embedding layers, in-embed and out-embed ... initializing the embedding
look-up tables with uniform weights between negative one and one"; "forward noise, which will
return a noisy target embeddings. So, this samples noisy words from our noise distribution";
"Next, I'm defining a custom negative sampling loss ... This should return a single value that
indicates the average loss over a batch of data").  Adapted: a 50-word vocabulary, width 16, 64
pairs whose centers are among the 20 most frequent words, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://drserendipity.com/notes/notes_by_subjects/artificial_intelligence/"
    "natural-language-processing/4-extracurricular/4-6-pytorch/4-6-2-embeddings-word2vec/"
    "12-12-completemodel-customloss-v2-2/"
)
DESCRIPTION = "healthy: skip-gram with negative sampling; rows of words not in the batch get 0"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        (
            r"^summary:[^\n]*(rows?|words?|tokens?|indices)[^\n]{0,80}"
            r"(not in (the |this )?batch|absent|unused|did not appear|not looked up|not present)"
        ),
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
    r"(in_embed|out_embed)\S* (got|gets|has|received) no gradient",
]
VOCAB, DIM, NOISE = 50, 16, 5


class SkipGramNeg(nn.Module):
    def __init__(self, noise_dist):
        super().__init__()
        self.noise_dist = noise_dist
        self.in_embed = nn.Embedding(VOCAB, DIM)
        self.out_embed = nn.Embedding(VOCAB, DIM)
        self.in_embed.weight.data.uniform_(-1, 1)
        self.out_embed.weight.data.uniform_(-1, 1)

    def forward_input(self, words):
        return self.in_embed(words)

    def forward_output(self, words):
        return self.out_embed(words)

    def forward_noise(self, batch_size, generator):
        words = torch.multinomial(
            self.noise_dist, batch_size * NOISE, replacement=True, generator=generator
        )
        return self.out_embed(words).view(batch_size, NOISE, DIM), words


def negative_sampling_loss(input_vectors, output_vectors, noise_vectors):
    batch_size = input_vectors.shape[0]
    input_vectors = input_vectors.view(batch_size, DIM, 1)
    output_vectors = output_vectors.view(batch_size, 1, DIM)
    out_loss = F.logsigmoid(torch.bmm(output_vectors, input_vectors)).squeeze()
    noise_loss = F.logsigmoid(torch.bmm(noise_vectors.neg(), input_vectors)).squeeze().sum(1)
    return -(out_loss + noise_loss).mean()


def step(watch):
    counts = 1000.0 / torch.arange(1, VOCAB + 1, dtype=torch.float)  # Zipf-like frequencies
    noise_dist = (counts / counts.sum()) ** 0.75
    noise_dist = noise_dist / noise_dist.sum()
    torch.manual_seed(0)
    model = SkipGramNeg(noise_dist)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)
    g = torch.Generator().manual_seed(1)
    centers = torch.randint(0, 20, (64,), generator=g)
    contexts = (centers + torch.randint(1, 4, (64,), generator=g)) % VOCAB
    with watch(model) as w:
        optimizer.zero_grad()
        noise_vectors, noise_words = model.forward_noise(64, g)
        loss = negative_sampling_loss(
            model.forward_input(centers), model.forward_output(contexts), noise_vectors
        )
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, loss=loss.item(), grads=grads, centers=centers, contexts=contexts, noise=noise_words
    )


def truth(run):
    assert torch.isfinite(torch.tensor(run.loss))
    g_in, g_out = run.grads["in_embed.weight"], run.grads["out_embed.weight"]
    assert bool(torch.isfinite(g_in).all()) and bool(torch.isfinite(g_out).all())
    used_in = set(run.centers.tolist())
    used_out = set(run.contexts.tolist()) | set(run.noise.tolist())
    for row in range(VOCAB):
        assert bool((g_in[row] != 0).any()) == (row in used_in), row
        assert bool((g_out[row] != 0).any()) == (row in used_out), row
    assert VOCAB - len(used_in) == 31  # the rows of the words that are no center here
