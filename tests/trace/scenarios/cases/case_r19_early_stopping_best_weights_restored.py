"""Control: the same early-stopping loop with best-weight restoration: at each improvement it keeps
``copy.deepcopy(model.state_dict())`` and, when the patience runs out, loads it back. The model left
holds exactly the weights of the epoch with the lowest validation loss. Every gradient is finite and
nonzero.

Source: https://www.book-ai.org/books/predictive-maintenance/chapter-13/section-02 ("Early Stopping
with Best Weights"; "Implement best weight restoration for optimal checkpoints"; "Early stopping
monitors validation performance and halts training when the model stops improving"). Adapted: the
loop written out in PyTorch with patience 5; a tanh MLP fitted by Adam (1e-2), one full-batch step
per epoch, on 16 noisy training examples, validated on 128 clean ones.
"""

import copy

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.book-ai.org/books/predictive-maintenance/chapter-13/section-02"
DESCRIPTION = "control: early stopping restoring a deep copy of the best state_dict"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"not restored|(without|never|no) restor"]
MAX_EPOCHS, PATIENCE = 200, 5


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 1))


def data():
    g = torch.Generator().manual_seed(1)
    v = torch.randn(20, 1, generator=g)
    x_train, x_val = torch.randn(16, 20, generator=g), torch.randn(128, 20, generator=g)
    y_train = x_train @ v + 1.5 * torch.randn(16, 1, generator=g)  # noisy
    return x_train, y_train, x_val, x_val @ v


def step(watch):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x_train, y_train, x_val, y_val = data()
    val_losses, snapshots = [], []  # the scenario's record, for the truth
    best, best_epoch, bad, best_state = float("inf"), -1, 0, None
    with watch(model) as w:
        for epoch in range(MAX_EPOCHS):
            optimizer.zero_grad()
            F.mse_loss(model(x_train), y_train).backward()
            optimizer.step()
            with torch.no_grad():
                val = F.mse_loss(model(x_val), y_val).item()
            val_losses.append(val)
            snapshots.append({k: t.clone() for k, t in model.state_dict().items()})
            if val < best:
                best, best_epoch, bad = val, epoch, 0
                best_state = copy.deepcopy(model.state_dict())
            else:
                bad += 1
                if bad >= PATIENCE:
                    break
        model.load_state_dict(best_state)  # restore the best weights
    return Run(w=w, model=model, x_val=x_val, y_val=y_val, val_losses=val_losses,
               snapshots=snapshots, best_epoch=best_epoch)  # fmt: skip


def truth(run):
    last = len(run.val_losses) - 1
    assert last < MAX_EPOCHS - 1 and run.best_epoch == last - PATIENCE
    state = run.model.state_dict()
    assert all(torch.equal(state[k], run.snapshots[run.best_epoch][k]) for k in state)
    with torch.no_grad():
        final = F.mse_loss(run.model(run.x_val), run.y_val).item()
    assert abs(final - run.val_losses[run.best_epoch]) < 1e-6  # the best model is the one left
