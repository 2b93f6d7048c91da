"""Control, a healthy step people suspect: the first DPO steps with the reference a frozen copy of
the starting policy (``copy.deepcopy(policy).requires_grad_(False)``). At the first step the policy
equals the reference, every log-ratio is 0 and the loss is exactly ``log 2 = 0.6931`` -- as it must
be -- yet the gradient is finite and nonzero; after one Adam step the policy has moved away from the
fixed reference and the second loss is below ``log 2``.

Source: https://prof.lexailabs.com/practice/dpo-loss ("anchored to a frozen reference model so the
policy does not drift too far"; "Output: 0.6931 (= -log sigma(0))"; "Equal log-ratios give loss
log(2)"; "Use a numerically stable log-sigmoid"). Adapted: a tanh next-token model over 20 tokens
stands for the language model, 16 preference pairs of 6-token responses, beta 0.1, Adam, two watched
iterations.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://prof.lexailabs.com/practice/dpo-loss"
DESCRIPTION = "control: DPO, frozen deepcopy reference: first loss exactly log 2, then below"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\b(zero|no) gradient",
    r"all-zero",
    r"(same|identical) (module|model|object|parameters)",
]
VOCAB, BETA = 20, 0.1


def make_policy():
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(VOCAB, 16), nn.Tanh(), nn.Linear(16, VOCAB))


def pairs():
    g = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, VOCAB, (16, 4), generator=g)
    chosen = torch.randint(0, VOCAB, (16, 6), generator=g)
    rejected = torch.randint(0, VOCAB, (16, 6), generator=g)
    return prompt, chosen, rejected


def seq_logp(model, prompt, response):
    seq = torch.cat([prompt, response], dim=1)
    logp = F.log_softmax(model(seq[:, :-1]), dim=-1)
    tok = logp.gather(-1, seq[:, 1:].unsqueeze(-1)).squeeze(-1)
    return tok[:, prompt.shape[1] - 1 :].sum(dim=1)  # the response tokens only


def dpo_step(policy, ref_model, optimizer, prompt, chosen, rejected):
    optimizer.zero_grad()
    pc, pr = seq_logp(policy, prompt, chosen), seq_logp(policy, prompt, rejected)
    with torch.no_grad():
        rc, rr = seq_logp(ref_model, prompt, chosen), seq_logp(ref_model, prompt, rejected)
    loss = -F.logsigmoid(BETA * ((pc - rc) - (pr - rr))).mean()
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in policy.named_parameters()}
    optimizer.step()
    return loss.item(), grads


def step(watch):
    policy = make_policy()
    ref_model = copy.deepcopy(policy).requires_grad_(False)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    prompt, chosen, rejected = pairs()
    losses, grads = [], []
    with watch(policy) as w:
        for _ in range(2):
            loss, g = dpo_step(policy, ref_model, optimizer, prompt, chosen, rejected)
            losses.append(loss)
            grads.append(g)
    ref_is_policy = all(
        p is q for p, q in zip(ref_model.parameters(), policy.parameters(), strict=True)
    )
    return Run(w=w, losses=losses, grads=grads, ref_is_policy=ref_is_policy)


def truth(run):
    assert not run.ref_is_policy
    assert abs(run.losses[0] - math.log(2)) < 1e-6  # first step: policy == reference
    assert run.losses[1] < math.log(2) - 1e-4
    for gs in run.grads:
        for n, g in gs.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
