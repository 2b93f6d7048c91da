"""Control: the same LSTM encoder-decoder and reversal task with the page's scheme: the decoder
reads ``<bos>`` followed by the target and predicts the target followed by ``<eos>`` (the input
is the labels shifted right by one).  After the same 80 unwatched Adam steps the loss is still
that of a model learning the task (the decoder has to get the reversed source from the encoder)
and its predictions are rarely the token it was fed.  The watched step is an ordinary one: every
parameter, every embedding row (``<bos>`` included) gets a finite, nonzero gradient.

Source: https://stevengong.co/notes/Teacher-Forcing ("decoder_input: <bos> I like eating
mushrooms; labels: I like eating mushrooms <eos>").
"""

import torch
from case_r13_seq2seq_decoder_input_not_shifted import BOS
from case_r13_seq2seq_decoder_input_not_shifted import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://stevengong.co/notes/Teacher-Forcing"
DESCRIPTION = "control: seq2seq decoder input = <bos> + target, labels = target + <eos>: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"not shifted",
    r"cop(y|ies|ying) (its|the) input",
    r"leak\w*",
    r"dead (units?|relu|neurons?)",
]


def step(watch):
    return _step(watch, shifted=True)


def truth(run):
    assert torch.equal(run.dec_in[:, 1:], run.labels[:, :-1])  # shifted right by one
    assert bool((run.dec_in[:, 0] == BOS).all())
    assert run.copied < 0.3
    assert run.loss > 0.5
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
        assert (
            bool((gr.abs().sum(-1) > 0).all())
            if n.endswith("emb.weight")
            else bool(gr.abs().sum() > 0)
        ), n
