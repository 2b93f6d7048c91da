"""Control: the same ``Hardtanh`` regressor with the inputs standardised (``(x - 15) / std``,
values in about [-1.7, 1.7]): most hidden units work in the linear region of ``Hardtanh`` for most
examples, both layers get finite, nonzero gradients on both steps and train.

Source: https://runebook.dev/ru/docs/pytorch/generated/torch.nn.hardtanh ("Стандартные [−1,1] не
всегда подходят для твоих данных": the default [-1, 1] does not suit every input range; scaled
inputs keep the units inside it).
"""

from case_r11_hardtanh_raw_inputs_saturated import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://runebook.dev/ru/docs/pytorch/generated/torch.nn.hardtanh"
DESCRIPTION = "control: Hardtanh regressor on standardised inputs: both layers train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"all-zero",
    r"\b0\.(weight|bias)[^\n]{0,60}(no gradient|zero gradient)",
]


def step(watch):
    return _step(watch, standardize=True)


def truth(run):
    assert not bool((run.pre.abs() > 1).all())
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(g.abs().sum() > 0), n
    assert run.moved
