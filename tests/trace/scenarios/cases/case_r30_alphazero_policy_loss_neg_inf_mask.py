"""An AlphaZero-style policy-value network for tic-tac-toe trained on self-play targets ``(s, pi,
z)`` with the loss ``(z - v)^2 - pi^T log p``, where illegal moves are masked by filling their
logits with ``-inf`` before ``log_softmax``.  The search's policy ``pi`` is 0 on the occupied cells,
and there ``log p = -inf``: ``0 * -inf`` is NaN, so the policy loss and the total loss are NaN. The
gradients are finite: ``masked_fill``'s backward zeroes the gradient at the masked logits and
``log_softmax``'s backward only reads ``pi`` (0 there) and the softmax (0 there), so Adam steps on
ordinary gradients while every logged loss is NaN. Nothing raises.

Source:
https://mrtanke.github.io/posts/2025-11-24-mastering-chess-and-shogi-by-self-play-with-a-general-reinforcement-learning-algorithm
("A single neural network f_theta(s) outputs both the policy p and value v from the raw board";
"MCTS uses this network to produce an improved policy pi, which selects moves and supervises
training. Self-play generates (s, pi, z) data, and training minimizes value error (z - v)^2 and
policy cross-entropy -pi^T log p").  Adapted: the ``-inf`` mask of illegal moves (the page gives the
loss, not the masking); 64 positions with 2 to 6 stones, ``pi`` a random visit distribution over the
empty cells, ``z`` in ``{-1, 0, 1}``, a trunk ``Linear(27, 64), Tanh, Linear(64, 64), Tanh``, a
policy head ``Linear(64, 9)`` and a value head ``Linear(64, 1), Tanh``, Adam at 1e-3 with weight
decay 1e-4 (the paper's L2 term).
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://mrtanke.github.io/posts/2025-11-24-mastering-chess-and-shogi-by-self-play-with-a-"
    "general-reinforcement-learning-algorithm"
)
DESCRIPTION = (
    "AlphaZero policy loss -pi log_softmax(logits with -inf on illegal): 0 * -inf NaN loss"
)
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"0\s?\*\s?-?inf|zero times (minus )?infinity|0 \* \(?-inf",
        r"-inf\w*|minus infinity|negative infinity",
        r"illegal|mask\w*",
        r"log_?softmax|log\s?\(?p\)?",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]


class PolicyValueNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(27, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.policy = nn.Linear(64, 9)
        self.value = nn.Sequential(nn.Linear(64, 1), nn.Tanh())

    def forward(self, planes):
        h = self.trunk(planes)
        return self.policy(h), self.value(h)[:, 0]


def self_play_batch():
    g = torch.Generator().manual_seed(1)
    boards = torch.zeros(64, 9, dtype=torch.long)  # 0 empty, 1 own stone, 2 opponent's
    for b in range(64):
        stones = int(torch.randint(2, 7, (1,), generator=g))
        cells = torch.randperm(9, generator=g)[:stones]
        boards[b, cells] = 1 + torch.arange(stones) % 2
    planes = F.one_hot(boards, 3).float().view(64, 27)
    legal = boards == 0
    visits = torch.rand(64, 9, generator=g) ** 3 * legal
    pi = visits / visits.sum(1, keepdim=True)
    z = torch.randint(-1, 2, (64,), generator=g).float()
    return planes, legal, pi, z


def step(watch, fill=-math.inf):
    torch.manual_seed(0)
    model = PolicyValueNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    planes, legal, pi, z = self_play_batch()
    with watch(model) as w:
        optimizer.zero_grad()
        logits, v = model(planes)
        log_p = F.log_softmax(logits.masked_fill(~legal, fill), dim=1)
        policy_loss = -(pi * log_p).sum(1).mean()
        loss = F.mse_loss(v, z) + policy_loss
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        model=model,
        before=before,
        log_p=log_p.detach(),
        policy_loss=float(policy_loss.detach()),
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    assert bool(torch.isneginf(run.log_p).any())
    assert math.isnan(run.policy_loss) and math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert bool(torch.isfinite(p).all()) and not torch.equal(p.detach(), run.before[n]), n
