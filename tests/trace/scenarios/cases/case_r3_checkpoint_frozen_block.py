"""Control: the same checkpointed model with the middle block frozen by requires_grad_(False)
instead of torch.no_grad(): the gradient flows through the frozen block to block1 and the
stem, and the block's own weights get none.

Source: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/16f4501cd49e86ba9497873d23bf816313e7fb4b
(a copy of pytorch/pytorch#37266: the failure comes from freezing with detach() or
torch.no_grad(); freezing the weights themselves leaves the gradient path open).
"""

from case_r3_checkpoint_no_grad_block import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/"
    "16f4501cd49e86ba9497873d23bf816313e7fb4b"
)
DESCRIPTION = "control: checkpointed block frozen by requires_grad_(False): stem still trains"
ASK = []
MUST = [[HEALTHY_OK, r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"no gradient (reached|for) (stem|block1)",
    r"checkpoint[^\n]*(no gradient|\bNone\b)",
]


def step(watch):
    return _step(watch, by_no_grad=False)


def truth(run):
    m = run.model
    assert run.error is None
    for p in (m.stem.weight, m.block1[0].weight, m.head.weight):
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
    assert m.block2.lin.weight.grad is None
