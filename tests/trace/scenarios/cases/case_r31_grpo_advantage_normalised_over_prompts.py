"""One GRPO update whose advantages are normalised over the wrong axis.  The rewards are a tensor of
shape ``(prompts, G)``, one row per prompt's group of ``G`` sampled responses, and GRPO normalises
each reward by its own group's mean and standard deviation (``dim=1``).  Here ``rewards.mean(0)``
and ``rewards.std(0)`` are taken over the prompts, for each response index: the advantage of a
response then says how its prompt compares with the other prompts, not how the response compares
with the other responses to the same prompt.  The prompts differ in difficulty (a reward offset of 2
per prompt), so every response to the four easiest prompts gets a positive advantage and every
response to the three hardest a negative one, the best response of each of them included; within a
group the advantages do not sum to zero.  The policy is pushed toward whatever it sampled for easy
prompts.  Every gradient is finite and nonzero; nothing raises.

Source: https://texonom.com/grpo-187c3c96247d80dfb88bceaf4abad43c ("GRPO does not use a separate
critic network by grouping multiple responses to the same question and using intra-group reward
statistics to compute relative advantage"; "A group is formed by processing the same input (prompt)
to generate multiple outputs, which are then grouped together for relative advantage calculation").
Adapted: 8 prompts (learned embeddings of width 16) and groups of 6 responses of 4 tokens over a
vocabulary of 6, sampled from a policy ``Linear(16, 32), Tanh, Linear(32, 24)`` (a token
distribution per position), the reward the number of tokens 0 plus 2 times the prompt's index, the
clipped objective (epsilon 0.2) at ratio 1 with no KL term, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://texonom.com/grpo-187c3c96247d80dfb88bceaf4abad43c"
DESCRIPTION = "GRPO advantages (r - r.mean(0)) / r.std(0): normalised across prompts, not groups"
ASK = []
MUST = [
    [r"advantage\w*", r"grpo", r"group\w*"],
    [
        r"(dim|axis)\s?=?\s?0",
        r"wrong (dim\w*|axis)",
        r"across (the )?(prompts?|groups?|batch)",
        r"over (the )?prompts?",
        r"(within|per|each) (the )?(group|prompt)",
        r"intra-?group",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
PROMPTS, G, TOKENS, VOCAB = 8, 6, 4, 6


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.prompt = nn.Embedding(PROMPTS, 16)
        self.net = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, TOKENS * VOCAB))

    def forward(self, prompt_ids):
        return self.net(self.prompt(prompt_ids)).view(-1, TOKENS, VOCAB)


def advantages(rewards, within_group):
    dim = 1 if within_group else 0
    mean, std = rewards.mean(dim, keepdim=True), rewards.std(dim, keepdim=True)
    return (rewards - mean) / (std + 1e-4)


def step(watch, within_group=False):
    torch.manual_seed(0)
    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    prompt_ids = torch.arange(PROMPTS).repeat_interleave(G)  # (PROMPTS * G,)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():  # rollouts from the old policy
        old_logp_all = F.log_softmax(policy(prompt_ids), -1)
        responses = torch.multinomial(old_logp_all.exp().view(-1, VOCAB), 1, generator=g).view(
            PROMPTS * G, TOKENS
        )
        old_logp = old_logp_all.gather(-1, responses[..., None]).squeeze(-1).sum(-1)
    rewards = ((responses == 0).sum(-1).float() + 2.0 * prompt_ids.float()).view(PROMPTS, G)
    adv = advantages(rewards, within_group)
    with watch(policy) as w:
        optimizer.zero_grad()
        logp_all = F.log_softmax(policy(prompt_ids), -1)
        logp = logp_all.gather(-1, responses[..., None]).squeeze(-1).sum(-1)
        ratio = torch.exp(logp - old_logp)
        a = adv.reshape(-1)
        loss = -torch.min(ratio * a, ratio.clamp(0.8, 1.2) * a).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in policy.named_parameters()}
        optimizer.step()
    return Run(w=w, policy=policy, rewards=rewards, adv=adv, loss=float(loss.detach()), grads=grads)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert bool((run.rewards.std(1) > 0).all())  # no group of equal rewards
    group_sums = run.adv.sum(1).abs()
    assert float(group_sums.max()) > 1.0  # advantages of a group do not sum to zero
    best = run.adv.gather(1, run.rewards.argmax(1, keepdim=True)).squeeze(1)
    assert bool((best < 0).any())  # the best response of some group is pushed down
