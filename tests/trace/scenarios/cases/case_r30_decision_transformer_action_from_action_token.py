"""A Decision Transformer whose action head reads the transformer's output at each step's action
token instead of its state token.  The tokens are interleaved ``(R_1, s_1, a_1, R_2, s_2, a_2,
...)`` under a causal mask, so the output at ``a_t``'s position has attended to ``a_t`` itself: the
prediction of ``a_t`` reads its own target, a label leak.  The prediction's derivative with respect
to the input action ``a_t`` is nonzero at every step; every gradient is finite and nonzero, the loss
falls, and nothing raises.

Source:
https://hf-mirror.492719920.workers.dev/spaces/Ahmadzei/RAG/blob/9007c8ed72f6554e38e2bad98fbbba8e72e72f22/chunked/content_aware_chunking/_model_summary/chunk_32.txt
("The Decision Transformer generates a series of actions that lead to a future desired return based
on returns-to-go, past states, and actions. For the last K timesteps, each of the three modalities
are converted into token embeddings and processed by a GPT-like model to predict a future action
token").  Adapted: the head on the action tokens (the page does not say which position predicts); 64
trajectories of 5 steps from a noisy linear policy on a 4-dimensional state, 2-dimensional actions,
returns-to-go summed backwards and scaled by 1/10, ``Linear`` embeddings of width 32 for returns,
states and actions plus a learned timestep embedding, ``LayerNorm``, one causal
``TransformerEncoderLayer`` (2 heads, feed-forward 64, ``ELU``, no dropout), a ``Linear(32, 2),
Tanh`` action head, MSE, AdamW at 1e-3, two steps.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://hf-mirror.492719920.workers.dev/spaces/Ahmadzei/RAG/blob/9007c8ed72f6554e38e2bad98fbbba8e"
    "72e72f22/chunked/content_aware_chunking/_model_summary/chunk_32.txt"
)
DESCRIPTION = "Decision Transformer predicts a_t from a_t's own token (causal, sees itself): leak"
ASK = []
MUST = [
    [
        r"leak\w*",
        r"(sees|reads|attends to|includes?|contains?)[^\n]{0,60}(own |its )?(target|label|a_t|action)",
        r"action token",
        r"state token",
        r"off[- ]by[- ]one",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
STATE, ACTION, K, WIDTH = 4, 2, 5, 32


class DecisionTransformer(nn.Module):
    def __init__(self, read):
        super().__init__()
        self.read = read  # 1: the state tokens (s_t), 2: the action tokens (a_t)
        self.embed_return = nn.Linear(1, WIDTH)
        self.embed_state = nn.Linear(STATE, WIDTH)
        self.embed_action = nn.Linear(ACTION, WIDTH)
        self.embed_time = nn.Embedding(K, WIDTH)
        self.norm = nn.LayerNorm(WIDTH)
        layer = nn.TransformerEncoderLayer(
            WIDTH, 2, 64, dropout=0.0, activation=F.elu, batch_first=True
        )
        self.transformer = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.predict_action = nn.Sequential(nn.Linear(WIDTH, ACTION), nn.Tanh())

    def forward(self, rtg, states, actions):
        b = states.shape[0]
        time = self.embed_time(torch.arange(K))
        tokens = torch.stack(
            [
                self.embed_return(rtg) + time,
                self.embed_state(states) + time,
                self.embed_action(actions) + time,
            ],
            2,
        ).reshape(b, 3 * K, WIDTH)
        mask = nn.Transformer.generate_square_subsequent_mask(3 * K)
        h = self.transformer(self.norm(tokens), mask=mask, is_causal=True)
        return self.predict_action(h[:, self.read :: 3])


def trajectories():
    g = torch.Generator().manual_seed(1)
    policy = torch.randn(STATE, ACTION, generator=g)
    dynamics = torch.randn(STATE, STATE, generator=g) / 3
    s = torch.randn(64, STATE, generator=g)
    states, actions, rewards = [], [], []
    for _ in range(K):
        a = torch.tanh(s @ policy + 0.3 * torch.randn(64, ACTION, generator=g))
        states.append(s)
        actions.append(a)
        rewards.append(-(s**2).sum(1) + a[:, 0])
        s = torch.tanh(s @ dynamics + a.repeat(1, 2))
    states, actions, rewards = (
        torch.stack(states, 1),
        torch.stack(actions, 1),
        torch.stack(rewards, 1),
    )
    rtg = rewards.flip(1).cumsum(1).flip(1)[..., None] / 10
    return rtg, states, actions


def step(watch, read=2):
    torch.manual_seed(0)
    model = DecisionTransformer(read)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    rtg, states, actions = trajectories()
    grads, losses = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.mse_loss(model(rtg, states, actions), actions)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            losses.append(float(loss.detach()))
            optimizer.step()
    # probe, after the step: how each step's prediction depends on each input action
    probe = actions.clone().requires_grad_()
    pred = model(rtg, states, probe)
    jac = torch.stack(
        [torch.autograd.grad(pred[:, t].sum(), probe, retain_graph=True)[0] for t in range(K)], 1
    )  # jac[:, t, u]: d prediction_t / d action_u
    return Run(w=w, model=model, grads=grads, losses=losses, jac=jac.detach())


def truth(run):
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for t in range(K):
        assert bool(run.jac[:, t, t].abs().sum() > 0), t  # reads its own target
        assert bool(run.jac[:, t, t + 1 :].abs().sum() == 0), t  # causal: nothing later
