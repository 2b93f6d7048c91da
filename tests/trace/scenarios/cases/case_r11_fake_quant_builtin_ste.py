"""Control: the same network with the activations fake-quantized by
``torch.fake_quantize_per_tensor_affine(h, 0.1, 0, 0, 255)``, torch's quantizer with a built-in
straight-through estimator: the forward uses the values rounded to the grid of 0.1, the backward
passes the gradient unchanged for inputs inside the representable range [0, 25.5], which holds
every activation here.  ``fc1`` and ``fc2`` both get finite, nonzero gradients and train.

Source: https://apxml.com/courses/practical-llm-quantization/chapter-4-quantization-aware-training-qat/straight-through-estimator-ste
("How can the model learn to adapt to quantization if the gradients are blocked?  This is where
the Straight-Through Estimator (STE) comes into play").
"""

from case_r11_fake_quant_round_no_ste import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://apxml.com/courses/practical-llm-quantization/"
    "chapter-4-quantization-aware-training-qat/straight-through-estimator-ste"
)
DESCRIPTION = "control: fake_quantize_per_tensor_affine (STE), activations in range: fc1 trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"all-zero",
    r"fc1[^\n]{0,60}(no gradient|zero gradient)",
    r"dead (units?|relu|neurons?)",
]


def step(watch):
    return _step(watch, ste=True)


def truth(run):
    assert run.h_max < 25.5
    for n, g in run.grads.items():
        assert g is not None and bool(g.abs().sum() > 0), n
