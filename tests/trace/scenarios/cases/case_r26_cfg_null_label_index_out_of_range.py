"""Classifier-free guidance training with the "null" condition written as one more class index,
``NULL = 10`` for a 10-class model, while the label embedding keeps ``nn.Embedding(10, 32)`` rows
(indices 0 to 9).  The conditional dropout replaces about 10% of the labels by ``NULL``; the
embedding lookup of index 10 raises ``IndexError: index out of range in self`` in the forward, so
no backward runs: every ``.grad`` stays ``None`` and nothing moves.

Source: https://apxml.com/courses/intro-diffusion-models/chapter-6-conditional-generation-diffusion/implementing-classifier-free-guidance
("With a certain probability puncond (e.g., 10-20%), replace the actual conditioning information y
with a special null or unconditional token"; "For class labels, it might be a dedicated
'unconditional' class index").  Adapted: a small noise-prediction MLP on 16-dimensional points
(``Linear(48, 64)``, ``SiLU``, ``Linear(64, 64)``, ``SiLU``, ``Linear(64, 16)``) fed ``x_t``, a
learned time embedding and the label embedding; 10 classes of points around 10 centres, a linear
beta schedule of 100 steps, 64 examples, ``p_uncond = 0.1``, Adam at 1e-3.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://apxml.com/courses/intro-diffusion-models/chapter-6-conditional-generation-diffusion/"
    "implementing-classifier-free-guidance"
)
DESCRIPTION = "CFG null label = 10 on an Embedding(10, .): index out of range in self (raises)"
ASK = []
MUST = [
    [r"\braised\b", r"IndexError", r"exception", r"\berror\b"],
    [
        r"out of range",
        r"index(es)? 10\b",
        r"\b10\b[^\n]{0,60}(embedding|rows?|num_embeddings)",
        r"(embedding|num_embeddings)[^\n]{0,80}(\b10\b|\b11\b|size|rows?|extra|one more)",
        r"null[^\n]{0,60}(label|class|token|index)",
        r"uncond\w*",
    ],
]
MUST_NOT = [FALSE_OK]
CLASSES, STEPS, P_UNCOND = 10, 100, 0.1


class Denoiser(nn.Module):
    def __init__(self, label_rows):
        super().__init__()
        self.label = nn.Embedding(label_rows, 32)
        self.time = nn.Linear(1, 32)
        self.net = nn.Sequential(
            nn.Linear(48, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU(), nn.Linear(64, 16)
        )

    def forward(self, x_t, t, y):
        cond = self.label(y) + self.time(t[:, None].float() / STEPS)
        return self.net(torch.cat([x_t, cond], 1))


def data():
    g = torch.Generator().manual_seed(1)
    centres = torch.randn(CLASSES, 16, generator=g) * 2
    y = torch.arange(64) % CLASSES
    x0 = centres[y] + 0.3 * torch.randn(64, 16, generator=g)
    t = torch.randint(0, STEPS, (64,), generator=g)
    noise = torch.randn(64, 16, generator=g)
    drop = torch.rand(64, generator=g) < P_UNCOND
    alpha_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, STEPS), 0)[t][:, None]
    x_t = alpha_bar.sqrt() * x0 + (1 - alpha_bar).sqrt() * noise
    return x_t, t, y, noise, drop


def step(watch, label_rows=CLASSES):
    torch.manual_seed(0)
    model = Denoiser(label_rows)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x_t, t, y, noise, drop = data()
    y_in = torch.where(drop, torch.full_like(y, CLASSES), y)  # the null label
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    error, grads = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x_t, t, y_in), noise)
            loss.backward()
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
            optimizer.step()
    except IndexError as e:
        error = e
    return Run(w=w, model=model, y_in=y_in, before=before, error=error, grads=grads)


def truth(run):
    assert int((run.y_in == CLASSES).sum()) > 0  # some labels dropped to the null index
    assert run.model.label.num_embeddings == CLASSES
    assert run.error is not None and "index out of range" in str(run.error)
    for n, p in run.model.named_parameters():
        assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
