"""Deep knowledge tracing with the targets not shifted: the input at step ``t`` is the one-hot of
the interaction ``(q_t, a_t)`` (question ``q_t``'s skill answered right or wrong), and the loss
compares the prediction at step ``t`` for skill ``q_t`` with ``a_t``, the answer that same input
already encodes.  The recurrent network can drive the loss down by reading the answer off its
current input; it is never asked to predict the next interaction.  Every gradient is finite and
nonzero, nothing raises; flipping ``a_t`` in the input changes the prediction it is scored on.

Source: http://mywolf.net/bigdata-ustc/EduKTM/blob/main/docs/DKT.md ("Deep knowledge tracing (DKT)
is the first approach to introduce deep learning into KT, which utilizes recurrent neural networks
(RNNs) to model the students' learning process. DKT applies RNNs to process the input sequence of
learning interactions over time, maintaining a hidden state that implicitly represents students'
knowledge state which evolves based on both the previous knowledge state and the present input
learning interaction").  Adapted: 8 skills, 16 students with 20 interactions each (answers drawn
from a per-student mastery), inputs one-hot over ``2 x 8`` (skill, answer) pairs, ``nn.RNN(16, 32)``
with ``tanh`` and ``Linear(32, 8)`` giving a logit per skill, binary cross-entropy, Adam at 1e-2.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "http://mywolf.net/bigdata-ustc/EduKTM/blob/main/docs/DKT.md"
DESCRIPTION = "DKT target at step t is a_t, already one-hot in the input at t: label leak"
ASK = []
MUST = [
    [
        r"leak\w*",
        r"shift\w*",
        r"next (interaction|question|step|answer)",
        r"(same|current) (step|input|interaction|position)",
        r"t ?\+ ?1",
        r"off[- ]by[- ]one",
        r"already (in|encoded)",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
SKILLS, STUDENTS, LENGTH = 8, 16, 20


class DKT(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(2 * SKILLS, 32, batch_first=True)
        self.out = nn.Linear(32, SKILLS)

    def forward(self, x):
        return self.out(self.rnn(x)[0])


def interactions():
    g = torch.Generator().manual_seed(1)
    mastery = torch.rand(STUDENTS, SKILLS, generator=g)
    q = torch.randint(0, SKILLS, (STUDENTS, LENGTH), generator=g)
    a = (torch.rand(STUDENTS, LENGTH, generator=g) < mastery.gather(1, q)).long()
    return q, a


def encode(q, a):
    return F.one_hot(q + SKILLS * a, 2 * SKILLS).float()


def scored(logits, q, a, shift):
    """The logits scored and their targets: step t against interaction t + shift."""
    steps = LENGTH - shift
    return logits[:, :steps].gather(2, q[:, shift:, None])[..., 0], a[:, shift:].float()


def step(watch, shift=0):
    torch.manual_seed(0)
    model = DKT()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    q, a = interactions()
    x = encode(q, a)
    with watch(model) as w:
        optimizer.zero_grad()
        pred, target = scored(model(x), q, a, shift)
        loss = F.binary_cross_entropy_with_logits(pred, target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    # flip the answer of the interaction scored at step 5 in the input, read the scored prediction
    t = 5
    a_flip = a.clone()
    a_flip[:, t + shift] = 1 - a_flip[:, t + shift]
    with torch.no_grad():
        before_flip = scored(model(x), q, a, shift)[0][:, t]
        after_flip = scored(model(encode(q, a_flip)), q, a, shift)[0][:, t]
    return Run(
        w=w,
        shift=shift,
        grads=grads,
        target_in_input=bool(
            (x[:, : LENGTH - shift].argmax(-1) == q[:, shift:] + SKILLS * target.long()).all()
        ),
        flip_change=float((after_flip - before_flip).abs().max()),
    )


def truth(run):
    assert run.shift == 0 and run.target_in_input
    assert run.flip_change > 1e-3  # the scored prediction reads its own answer
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
