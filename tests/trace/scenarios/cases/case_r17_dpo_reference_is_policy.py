"""DPO with the reference model bound to the policy itself (``ref_model = policy``, no copy). The
reference log-probabilities are computed under ``torch.no_grad()`` as usual, but from the very
parameters being trained, so at every step the policy's log-ratio to the reference is exactly 0 for
both the chosen and the rejected response, the DPO logit is 0 and the loss is exactly
``-logsigmoid(0) = log 2 = 0.6931`` at every iteration: the loss never moves. The gradient is the
nonzero gradient of the first DPO step every time (push chosen up, rejected down), with no anchor to
where the policy started. Every gradient is finite and nonzero; nothing raises.

Source:
https://kshirol-dev.github.io/learnAI/FineTuning/07-dpo-orpo-modern-alignment-high-level.html ("DPO
loss in pseudocode": "chosen_logps = policy.log_prob(chosen)", "ref_chosen_logps =
ref_model.log_prob(chosen)", "loss = -log_sigmoid(chosen_reward - rejected_reward)"; "The 'relative
to reference' part is crucial. It prevents the model from just increasing all probabilities").
Adapted: a tanh next-token model over 20 tokens stands for the language model, 16 preference pairs
of 6-token responses, beta 0.1, Adam, two watched iterations; the reference is the policy object.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://kshirol-dev.github.io/learnAI/FineTuning/07-dpo-orpo-modern-alignment-high-level.html"
)
DESCRIPTION = "DPO with ref_model = policy (no copy): log-ratios 0, loss log 2 at every step"
ASK = []
MUST = [
    [
        r"reference",
        r"ref_model",
        r"same (module|model|object|parameters|network)",
        r"(is|as) the policy",
        r"cancel\w*",
        r"log ?\(?2\)?|0\.693",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\b(zero|no) gradient",
    r"all-zero",
    r"not in (the |any )?optimizer",
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
    ref_model = policy  # the reference: meant to be a frozen copy
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
    assert run.ref_is_policy
    for loss in run.losses:
        assert abs(loss - math.log(2)) < 1e-6  # the loss does not move from log 2
    for gs in run.grads:
        for n, g in gs.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
