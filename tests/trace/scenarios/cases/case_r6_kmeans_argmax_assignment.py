"""Control, a healthy step people suspect: k-means centroids as a parameter, each point assigned
to its nearest centroid with ``argmax`` (no gradient through the assignment), the loss the mean
squared distance to the assigned centroid.  The argmax is a constant for the backward; every
centroid has points assigned and gets a finite, nonzero gradient, and the step moves it.

Source: https://newbedev.com/how-does-pytorch-backprop-through-argmax ("How does pytorch backprop
through argmax?"; "once you compute it and assign each datapoint to a cluster, the derivative of
loss with respect to the location of these clusters is well-defined. This is what your algorithm
does").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://newbedev.com/how-does-pytorch-backprop-through-argmax"
DESCRIPTION = "control: k-means centroids, argmax assignment, squared distance: centroids train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"did not reach", r"no backward", r"argmax[^\n]{0,60}(break|cut)"]


class KMeans(nn.Module):
    def __init__(self, k: int = 3, dim: int = 2) -> None:
        super().__init__()
        self.centroids = nn.Parameter(torch.tensor([[-4.0, 0.0], [0.0, 4.0], [4.0, 0.0]]))

    def forward(self, x):
        dists = torch.cdist(x, self.centroids)
        assign = torch.argmax(-dists, dim=1)
        return ((x - self.centroids[assign]) ** 2).sum(dim=1).mean()


def step(watch):
    torch.manual_seed(0)
    model = KMeans()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    centers = torch.tensor([[-5.0, 1.0], [1.0, 5.0], [5.0, -1.0]])
    x = (centers[:, None, :] + 0.5 * torch.randn(3, 20, 2, generator=g)).reshape(60, 2)
    before = model.centroids.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = model(x)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    g = run.model.centroids.grad
    assert g is not None and bool(torch.isfinite(g).all())
    assert bool((g.abs().sum(dim=1) > 0).all())  # every centroid got a gradient
    assert bool((run.model.centroids.detach() != run.before).any(dim=1).all())
