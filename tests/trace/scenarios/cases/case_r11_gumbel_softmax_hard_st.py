"""Control: the same hard choice made with ``F.gumbel_softmax(logits, tau=1, hard=True)``: the
forward weights the heads with an exact one-hot vector, the backward takes the gradient of the
soft sample (straight-through), so the selector gets a finite, nonzero gradient and learns, and
the heads train as before.

Source: https://github.com/shariqiqbal2810/maddpg-pytorch/issues/34 ("should this line be
hard=False instead?  Otherwise, how does the gradient flow through?" - "The hard flag specifies
whether the action "appears" to be one-hot, but it always acts like a gumbel-softmax sample in
the backward pass").
"""

from case_r11_hard_onehot_argmax_no_st import K
from case_r11_hard_onehot_argmax_no_st import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/shariqiqbal2810/maddpg-pytorch/issues/34"
DESCRIPTION = "control: F.gumbel_softmax(hard=True): one-hot forward, selector gets its gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"selector[^\n]{0,80}(no gradient|\bNone\b|all-zero)",
    r"(argmax|one-hot|one_hot)[^\n]{0,60}(cut|no gradient)",
]


def step(watch):
    return _step(watch, straight_through=True)


def truth(run):
    assert bool((run.choice.sum(1) == 1).all()) and bool(
        ((run.choice == 0) | (run.choice == 1)).all()
    )
    assert run.grads["selector.weight"] is not None
    assert bool(run.grads["selector.weight"].abs().sum() > 0)
    for k in range(K):
        assert run.grads[f"heads.{k}.weight"] is not None, k
