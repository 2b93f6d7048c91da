"""Control: truncated BPTT done as the page teaches: for each chunk of the sequence, a forward from
the carried hidden state, ``loss.backward()``, an optimizer step, then ``h = h.detach()`` so the
next chunk's backward stops at the chunk boundary.  Two chunks, two updates; every parameter gets
a finite, nonzero gradient each time and moves.

Source: https://pexcera.com/learn/sequence-modeling/backpropagation-through-time-bptt.html ("We
run the forward pass, propagate errors backward only within the current chunk, update weights,
and pass the final hidden state to the next chunk without propagating its gradients backward";
"detach the hidden state tensor between sequence steps to break the gradient history").
"""

from case_r11_tbptt_chunks_no_backward import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://pexcera.com/learn/sequence-modeling/backpropagation-through-time-bptt.html"
DESCRIPTION = "control: TBPTT, backward and step per chunk, hidden state detached between chunks"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"second time",
    r"not detached",
    r"no backward",
]


def step(watch):
    return _step(watch, backward=True)


def truth(run):
    assert all(g is not None and bool(g.abs().sum() > 0) for g in run.grads)
    assert all(run.moved)
