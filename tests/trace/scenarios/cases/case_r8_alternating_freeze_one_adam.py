"""Control: the same alternating training, one half frozen at each batch with
``requires_grad_(False)``, with a single ``Adam`` built once over all parameters and
``zero_grad()`` (to None) before each backward: the frozen half's ``.grad`` is None, so Adam skips
it and it does not move; the trained half keeps its moment estimates from its earlier steps (at
batch 2 the first half is at its second Adam step, its updates no longer all of size ``lr``).

Source: https://github.com/qsimeon/gans-alternate-layer-freezing (the same alternating scheme;
here the optimizer is made once, before the loop).  Batch 0 runs before the watch, batches 1 and
2 inside it.
"""

import torch
from case_r8_adam_rebuilt_every_batch import LR
from case_r8_adam_rebuilt_every_batch import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/qsimeon/gans-alternate-layer-freezing"
DESCRIPTION = "control: alternating freeze with one Adam built once: frozen half skipped"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"still (moved|changed)",
    r"new optimizer",
    r"(state|moments?)[^\n]{0,40}(reset|empty|lost|discarded)",
]


def step(watch):
    return _step(watch, persistent=True)


def truth(run):
    last = run.record[2]
    assert last["steps"]["fc1.weight"] == 2  # the first half's second Adam step
    delta = (last["after"]["fc1.weight"] - last["before"]["fc1.weight"]).abs()
    assert bool((delta > 0).all())
    assert not torch.allclose(delta, torch.full_like(delta, LR), rtol=2e-2)
    for n in ("fc3.weight", "fc4.weight", "fc3.bias", "fc4.bias"):
        assert last["grads"][n] is None, n
        assert torch.equal(last["before"][n], last["after"][n]), n
