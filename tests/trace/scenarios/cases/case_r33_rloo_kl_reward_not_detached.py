"""RLOO (REINFORCE with a leave-one-out baseline) with the KL anchor folded into the reward, as in
the usual recipe, ``reward = score - beta * (logp - logp_ref)``, where ``logp`` is the policy's
sequence log-probability that the loss also uses, not detached.  The reward, hence the
leave-one-out advantage ``A_i = r_i - mean_{j != i} r_j``, is then a function of the policy's
parameters, and ``loss = -(A * logp).mean()`` back-propagates through the advantage as well:
``-(dA/dtheta) * logp``, a term with no place in the policy gradient (it pulls each group's
log-probabilities together), about 0.4 times the REINFORCE gradient's norm in every tensor here.  On this first step the policy equals the
reference, so the KL term is exactly 0 and every reward equals the score: the values are right and
only the gradient is wrong.  Nothing raises; every gradient is finite and nonzero.

Source: https://jiahuanglin.xyz/all_lessons/RL/lessons/12_rloo.html ("RLOO's fix is one line: use
the mean of the other K−1 rollouts"; "So RLOO is REINFORCE + LOO group baseline + KL anchor.
Nothing else").  Adapted: a policy ``Linear(6, 32), Tanh, Linear(32, 5 * 8)`` giving independent
logits for 5 tokens out of 8 per prompt, its frozen copy as the reference, 4 prompts with K = 4
rollouts each sampled under ``no_grad``, a score counting the tokens equal to the prompt's target,
beta 0.1, Adam at 1e-3.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://jiahuanglin.xyz/all_lessons/RL/lessons/12_rloo.html"
DESCRIPTION = "RLOO reward with the KL term from logp not detached: gradient through the advantage"
ASK = []
MUST = [
    [
        r"detach\w*",
        r"stop[- ]?grad\w*",
        r"no_grad",
        r"gradient (flows?|goes|passes) (back )?through (the )?(reward|advantage|baseline|kl)",
    ],
    [r"rewards?", r"advantages?", r"\bkl\b", r"baseline", r"logp|log[- ]?prob\w*"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
PROMPTS, K, T, V, BETA = 4, 4, 5, 8, 0.1


def rloo_loss(logp, logp_ref, score, detach):
    kl = logp - logp_ref
    reward = score - BETA * (kl.detach() if detach else kl)
    r = reward.view(PROMPTS, K)
    baseline = (r.sum(1, keepdim=True) - r) / (K - 1)
    advantage = (r - baseline).view(-1)
    return -(advantage * logp).mean(), reward


def sequence_logp(policy, feats, tokens):
    logits = policy(feats).view(-1, T, V)
    return torch.log_softmax(logits, -1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1).sum(-1)


def step(watch, detach=False):
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, T * V))
    reference = copy.deepcopy(policy).requires_grad_(False)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(2)
    prompts = torch.randn(PROMPTS, 6, generator=g)
    targets = torch.randint(0, V, (PROMPTS,), generator=g)
    feats = prompts.repeat_interleave(K, 0)
    with torch.no_grad():  # rollouts
        probs = torch.softmax(policy(feats).view(-1, T, V), -1)
        tokens = torch.multinomial(probs.view(-1, V), 1, generator=g).view(-1, T)
        logp_ref = sequence_logp(reference, feats, tokens)
    score = (tokens == targets.repeat_interleave(K, 0).unsqueeze(-1)).float().mean(-1)
    # the policy gradient with the reward held constant, with torch alone
    twin = copy.deepcopy(policy)
    ref_loss, _ = rloo_loss(sequence_logp(twin, feats, tokens), logp_ref, score, True)
    expected = torch.autograd.grad(ref_loss, list(twin.parameters()))
    with watch(policy) as w:
        optimizer.zero_grad()
        logp = sequence_logp(policy, feats, tokens)
        loss, reward = rloo_loss(logp, logp_ref, score, detach)
        loss.backward()
        grads = [p.grad.detach().clone() for p in policy.parameters()]
        optimizer.step()
    return Run(
        w=w, loss=float(loss.detach()), grads=grads, expected=[e.detach() for e in expected],
        reward=reward.detach(), score=score, logp=logp.detach(),
    )  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss)
    assert torch.equal(run.reward, run.score)  # KL exactly 0 on the first step: values right
    for g, e in zip(run.grads, run.expected, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert float((g - e).norm()) > 0.3 * float(e.norm())  # the term through A
