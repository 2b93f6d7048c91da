"""One SimPO update whose length-normalised reward averages the token log-probabilities over the
padded response slots instead of over the response's own tokens.  Chosen and rejected responses of 2
to 8 tokens are right-padded with the pad id 0 to 8 slots, and ``logp[:, prompt:].mean(-1)`` counts
the pad slots: each reward is divided by 8 whatever the response's length (the length normalisation
SimPO is built on is gone), and the pad slots' own log-probabilities, of predicting the pad token,
enter the rewards: the loss raises the probability of padding after chosen responses and lowers it
after rejected ones.  The logits at the pad slots get a nonzero gradient.  Every parameter's gradient
is finite and nonzero; nothing raises.

Source: http://www.webkkk.net/Komnenos1100/Nexus/blob/main/docs/01_reinforcement_learning/alignment/simpo.md
("SimPO eliminates the reference model by using length-normalized log probabilities as implicit
rewards"; "r(y|x) = (1/|y|) · sum_t log π(y_t|x,y_{<t})"; "L = -log σ(β · (r_chosen - r_rejected -
γ))"; "beta: 2.0"; "gamma: 0.5 (reward margin)"; "length_normalization: True (essential)").
Adapted: a policy ``Embedding(12, 16)``, ``GRU(16, 32)``, ``Linear(32, 12)``; 16 preference pairs of
prompts of 4 tokens, responses of random lengths right-padded with 0; Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "http://www.webkkk.net/Komnenos1100/Nexus/blob/main/docs/01_reinforcement_learning/alignment/"
    "simpo.md"
)
DESCRIPTION = (
    "SimPO reward = mean log-prob over padded slots: pads counted, no length normalisation"
)
ASK = []
MUST = [
    [r"\bpad\w*"],
    [
        r"\bmask\w*",
        r"length[- ]normali[sz]\w*",
        r"(average|mean)\w* (over|across|includ\w*)",
        r"\|y\||response length",
        r"divid\w* by",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
VOCAB, PROMPT, SLOTS, PAIRS = 12, 4, 8, 16
BETA, GAMMA = 2.0, 0.5


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.rnn = nn.GRU(16, 32, batch_first=True)
        self.head = nn.Linear(32, VOCAB)

    def forward(self, tokens):
        return self.head(self.rnn(self.embed(tokens))[0])


def batch(g):
    prompts = torch.randint(1, VOCAB, (PAIRS, PROMPT), generator=g)
    responses, masks = [], []
    for _ in range(2):  # chosen, rejected
        lengths = torch.randint(2, SLOTS + 1, (PAIRS,), generator=g)
        mask = torch.arange(SLOTS)[None] < lengths[:, None]
        tokens = torch.randint(1, VOCAB, (PAIRS, SLOTS), generator=g) * mask  # pad id 0
        responses.append(torch.cat([prompts, tokens], 1))
        masks.append(mask)
    return torch.cat(responses), torch.cat(masks)


def step(watch, masked=False):
    torch.manual_seed(0)
    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    seq, mask = batch(torch.Generator().manual_seed(1))
    with watch(policy) as w:
        optimizer.zero_grad()
        logits = policy(seq[:, :-1])
        logits.retain_grad()
        logp = torch.gather(F.log_softmax(logits, -1), 2, seq[:, 1:, None]).squeeze(-1)
        logp = logp[:, PROMPT - 1 :]  # the response slots
        reward = (logp * mask).sum(-1) / mask.sum(-1) if masked else logp.mean(-1)
        chosen, rejected = reward[:PAIRS], reward[PAIRS:]
        loss = -F.logsigmoid(BETA * (chosen - rejected - GAMMA)).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in policy.named_parameters()}
        optimizer.step()
    pad_slots = torch.cat([torch.zeros(2 * PAIRS, PROMPT - 1, dtype=torch.bool), ~mask], 1)
    pad_grad = logits.grad.abs().sum(-1)[pad_slots].sum()
    per_token = (logp.detach() * mask).sum(-1) / mask.sum(-1)
    return Run(
        w=w, grads=grads, loss=float(loss.detach()), pad_grad=float(pad_grad),
        reward_gap=float((reward.detach() - per_token).abs().max()),
        pads=int((~mask).sum()),
    )  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss) and run.pads > 20
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.pad_grad > 1e-3  # the pad slots' logits are trained
    assert run.reward_gap > 0.1  # the rewards are not the per-token averages
