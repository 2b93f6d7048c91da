"""A block with dropout wrapped in ``torch.utils.checkpoint`` with ``preserve_rng_state=False``.
The checkpoint throws the block's activations away and recomputes them in the backward; without
the saved RNG state the recomputation draws a new dropout mask, so the block's and the stem's
gradients are taken through a different mask than the loss was: they differ from the gradient of
the loss (checked against the same step without checkpointing, same RNG state).

Source: https://github.com/openai/guided-diffusion/issues/167 ("Gradient checkpointing + dropout
causes loss divergence": "re-runs the forward pass during backprop without restoring the RNG
state. Every stochastic layer inside the block, like dropout, sees a different random mask on the
backward pass, so the gradients don't match the loss").  The step uses torch's own checkpoint
with ``preserve_rng_state=False``, the setting ankanbhunia/PIDM#66 and allenai/OLMo-core#828 fixed.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.utils.checkpoint import checkpoint

SOURCE = "https://github.com/openai/guided-diffusion/issues/167"
DESCRIPTION = "checkpoint(preserve_rng_state=False) around dropout: recompute draws a new mask"
ASK = []
MUST = [
    [r"checkpoint", r"recomput"],
    [r"dropout", r"preserve_rng_state", r"\brng\b", r"random", r"\bmask"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class Net(nn.Module):
    def __init__(self, preserve: bool):
        super().__init__()
        self.preserve = preserve
        self.stem = nn.Linear(8, 16)
        self.block = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 16))
        self.head = nn.Linear(16, 1)

    def forward(self, x, use_checkpoint=True):
        h = torch.relu(self.stem(x))
        if use_checkpoint:
            h = checkpoint(self.block, h, use_reentrant=False, preserve_rng_state=self.preserve)
        else:
            h = self.block(h)
        return self.head(h)


def step(watch, preserve: bool = False):
    torch.manual_seed(0)
    model = Net(preserve)
    reference = copy.deepcopy(model)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randn(32, 1, generator=g)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    rng = torch.get_rng_state()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    torch.set_rng_state(rng)  # the same masks, no checkpoint: the gradient of this loss
    ref_loss = nn.functional.mse_loss(reference(x, use_checkpoint=False), y)
    ref_loss.backward()
    ref = {n: p.grad.clone() for n, p in reference.named_parameters()}
    return Run(w=w, loss=loss.item(), ref_loss=ref_loss.item(), grads=grads, ref=ref)


def truth(run):
    assert run.loss == run.ref_loss  # the forward is the same
    assert torch.allclose(run.grads["head.bias"], run.ref["head.bias"])  # above the block
    for n in ("block.0.weight", "stem.weight"):
        assert not torch.allclose(run.grads[n], run.ref[n], atol=1e-6), n
