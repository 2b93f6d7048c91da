"""A hand-written early-stopping loop (patience 5) that stops training when the validation loss has
not improved for 5 epochs but keeps the weights it stopped with: the model returned is the one
trained 5 epochs past the best validation loss, not the best one. On this small noisy training set
the validation loss rises after its minimum, so the weights left in the model give a validation loss
7% above the best the loop saw. Every gradient is finite and nonzero; nothing raises.

Source:
https://datascience.stackexchange.com/questions/92955/keras-earlystopping-callback-why-would-i-ever-set-restore-best-weights-false
("If I have set EarlyStopping(patience=10, restore_best_weights=False), Keras will return the model
trained for 10 extra epochs after val_loss reached a minimum. Why would I ever want this?"; "The
default value is restore_best_weights=False"). Adapted: the loop written out in PyTorch with
patience 5 and no restore; a tanh MLP fitted by Adam (1e-2), one full-batch step per epoch, on 16
noisy training examples, validated on 128 clean ones.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://datascience.stackexchange.com/questions/92955/"
    "keras-earlystopping-callback-why-would-i-ever-set-restore-best-weights-false"
)
DESCRIPTION = "early stopping without restoring the best weights: the last (worse) ones are kept"
ASK = []
MUST = [
    [
        r"best (weights|epoch|model|state|validation)",
        r"restor\w*",
        r"early[- ]stop\w*",
        r"patience",
        r"validation loss",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
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
    best, best_epoch, bad = float("inf"), -1, 0
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
            else:
                bad += 1
                if bad >= PATIENCE:
                    break  # stops, keeps the current weights
    return Run(w=w, model=model, x_val=x_val, y_val=y_val, val_losses=val_losses,
               snapshots=snapshots, best_epoch=best_epoch)  # fmt: skip


def truth(run):
    last = len(run.val_losses) - 1
    assert last < MAX_EPOCHS - 1 and run.best_epoch == last - PATIENCE  # stopped early
    best = run.val_losses[run.best_epoch]
    with torch.no_grad():
        final = F.mse_loss(run.model(run.x_val), run.y_val).item()
    assert final > 1.05 * best  # the model left is worse than the best the loop saw
    state = run.model.state_dict()
    assert all(torch.equal(state[k], run.snapshots[last][k]) for k in state)
    assert not all(torch.equal(state[k], run.snapshots[run.best_epoch][k]) for k in state)
