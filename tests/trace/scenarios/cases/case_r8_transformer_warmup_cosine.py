"""Control: a tiny decoder-only language model (token embedding tied to the output projection, a
learned position embedding, one pre-norm ``TransformerEncoderLayer`` with a causal mask, a final
``LayerNorm``), AdamW with weight decay, and the usual schedule: linear warm-up over 4 steps, then
cosine decay, as a ``LambdaLR``.  Following the schedule the very first step runs at learning
rate 0 (the ramp starts at 0); the step watched is the third, at half the peak rate: every
gradient finite and nonzero, every parameter moves, the tied weight once with the sum of both
uses.

Source: https://interactiveprimer.com/concepts/computer-science/deep-learning/training-deep-networks/learning-rate-schedules.html
("The modern recipe is a short linear warmup ramping up to a peak, followed by a smooth cosine
decay"; "eta_t = eta_max t / T_warm. At t = 0 the rate is 0").
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://interactiveprimer.com/concepts/computer-science/deep-learning/"
    "training-deep-networks/learning-rate-schedules.html"
)
DESCRIPTION = "control: tiny tied-embedding transformer LM, AdamW, warm-up + cosine, step 3"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"changed none",
    r"did not (move|change)",
    r"learning rate (is |of )?0(?![.\d])",
    r"(updated|stepped) twice",
    r"vanish",
    r"explod",
]


class TinyLM(nn.Module):
    def __init__(self, vocab=32, d=16, T=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(T, d) * 0.02)
        self.block = nn.TransformerEncoderLayer(
            d, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True, norm_first=True
        )
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.tok.weight  # tied
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(T))

    def forward(self, idx):
        T = idx.shape[1]
        h = self.tok(idx) + self.pos[:T]
        h = self.block(h, src_mask=self.causal[:T, :T], is_causal=True)
        return self.lm_head(self.norm(h))


def schedule(warmup=4, total=20):
    def factor(t):
        if t < warmup:
            return t / warmup
        p = (t - warmup) / (total - warmup)
        return 0.5 * (1 + math.cos(math.pi * p))

    return factor


def step(watch):
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule())
    g = torch.Generator().manual_seed(1)
    seqs = torch.randint(0, 32, (3, 4, 9), generator=g)

    def iteration(batch):
        opt.zero_grad()
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 32), batch[:, 1:].reshape(-1))
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        return loss.item(), grads, lr

    iteration(seqs[0])  # t = 0: learning rate 0
    iteration(seqs[1])  # t = 1
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        loss, grads, lr = iteration(seqs[2])  # t = 2: half the peak
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, loss=loss, grads=grads, lr=lr, before=before, after=after, model=model)


def truth(run):
    assert abs(run.lr - 1.5e-3) < 1e-9
    assert run.model.lm_head.weight is run.model.tok.weight
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(run.before[n], run.after[n]), n
