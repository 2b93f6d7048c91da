"""A SchNet step trained on energies and forces, the forces taken as ``-dE/dR`` with
``torch.autograd.grad(..., create_graph=True)``, whose interatomic distances are computed for all
pairs at once, ``((R[:, :, None] - R[:, None]) ** 2).sum(-1).sqrt()``, the self-pairs ``i = j``
included and masked out of the continuous-filter convolution afterwards (the mask multiplies the
filter).  The self-distance is exactly 0 and ``sqrt``'s derivative there is infinite: the energy's
gradient with respect to it is 0 (masked), and ``0 * inf = NaN`` goes into every atom's force.  The
energies are finite; the forces, the force loss, the total loss and the gradient of every parameter
but the energy head's last bias (no force depends on it) are NaN.  Nothing raises.

Source: https://www.chipfoundryservices.com/topic/schnet ("SchNet represents each atom with a
learned embedding vector based on element type"; "Update intuition: 1. Compute pairwise distances
for neighboring atoms within a cutoff radius 2. Expand each distance into a smooth basis
representation 3.  Use a filter-generating network to compute interaction weights 4. Aggregate
neighbor messages to update each atom embedding 5. Repeat across several interaction layers").
Adapted: every pairwise distance computed in one broadcast and the neighbours chosen by a mask
(cutoff 5, ``i != j``); 8 molecules of 6 atoms of 3 elements with energies and forces of a harmonic
pair potential, embeddings of width 16, 20 Gaussians from 0 to 5, 2 interaction blocks with filter
networks ``Linear(20, 16), shifted softplus, Linear(16, 16)``, an atomwise ``Linear(16, 16), shifted
softplus, Linear(16, 1)`` summed to the energy, loss ``MSE(E) + 10 MSE(F)``, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.chipfoundryservices.com/topic/schnet"
DESCRIPTION = "SchNet all-pairs sqrt distances incl. i = j: sqrt'(0) = inf times 0, NaN forces"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite|\binf\b|infinit\w*"],
    [
        r"sqrt|square root",
        r"(self|diagonal)[- ](pairs?|distances?|interactions?)",
        r"\bi ?(=|==) ?j\b",
        r"distances? (of|is|are|at|=) (exactly )?(zero|0)",
        r"zero distances?",
        r"0 \* inf|inf \* 0",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
ATOMS, WIDTH, CUTOFF = 6, 16, 5.0


def shifted_softplus(x):
    return F.softplus(x) - math.log(2.0)


class SSP(nn.Module):
    def forward(self, x):
        return shifted_softplus(x)


class Interaction(nn.Module):
    def __init__(self):
        super().__init__()
        self.filter = nn.Sequential(nn.Linear(20, WIDTH), SSP(), nn.Linear(WIDTH, WIDTH))
        self.in2f = nn.Linear(WIDTH, WIDTH, bias=False)
        self.f2out = nn.Sequential(nn.Linear(WIDTH, WIDTH), SSP(), nn.Linear(WIDTH, WIDTH))

    def forward(self, x, rbf, mask):  # x (B, A, W), rbf (B, A, A, 20), mask (B, A, A)
        w = self.filter(rbf) * mask[..., None]
        conv = (w * self.in2f(x)[:, None, :, :]).sum(2)  # sum over neighbours j
        return x + self.f2out(conv)


class SchNet(nn.Module):
    def __init__(self, all_pairs):
        super().__init__()
        self.all_pairs = all_pairs
        self.embed = nn.Embedding(3, WIDTH)
        self.interactions = nn.ModuleList([Interaction(), Interaction()])
        self.atomwise = nn.Sequential(nn.Linear(WIDTH, WIDTH), SSP(), nn.Linear(WIDTH, 1))
        self.register_buffer("centres", torch.linspace(0.0, CUTOFF, 20))

    def distances(self, pos):
        if self.all_pairs:
            d = ((pos[:, :, None] - pos[:, None]) ** 2).sum(-1).sqrt()
            mask = (d < CUTOFF) & ~torch.eye(ATOMS, dtype=torch.bool)
            return d, mask.float()
        i, j = (~torch.eye(ATOMS, dtype=torch.bool)).nonzero(as_tuple=True)  # neighbour list
        d_ij = ((pos[:, i] - pos[:, j]) ** 2).sum(-1).sqrt()
        d = pos.new_zeros(pos.shape[0], ATOMS, ATOMS)
        mask = pos.new_zeros(pos.shape[0], ATOMS, ATOMS)
        d[:, i, j] = d_ij  # the diagonal stays a constant 0
        mask[:, i, j] = (d_ij < CUTOFF).float()
        return d, mask

    def forward(self, types, pos):
        d, mask = self.distances(pos)
        rbf = torch.exp(-10.0 * (d[..., None] - self.centres) ** 2)
        x = self.embed(types)
        for block in self.interactions:
            x = block(x, rbf, mask)
        return self.atomwise(x).sum((1, 2))


def data():
    g = torch.Generator().manual_seed(1)
    types = torch.randint(0, 3, (8, ATOMS), generator=g)
    pos = torch.randn(8, ATOMS, 3, generator=g)
    pos.requires_grad_(True)
    diff = pos[:, :, None] - pos[:, None]
    i, j = torch.triu_indices(ATOMS, ATOMS, 1)
    r = diff[:, i, j].norm(dim=-1)
    energy = (0.5 * (r - 1.5) ** 2).sum(-1)
    forces = -torch.autograd.grad(energy.sum(), pos)[0]
    return types, pos.detach(), energy.detach(), forces


def step(watch, all_pairs=True):
    torch.manual_seed(0)
    model = SchNet(all_pairs)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    types, pos, energy, forces = data()
    with watch(model) as w:
        optimizer.zero_grad()
        pos = pos.clone().requires_grad_(True)
        e = model(types, pos)
        f = -torch.autograd.grad(e.sum(), pos, create_graph=True)[0]
        loss = F.mse_loss(e, energy) + 10.0 * F.mse_loss(f, forces)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, e=e.detach(), f=f.detach(), loss=float(loss.detach()), grads=grads)


def truth(run):
    assert bool(torch.isfinite(run.e).all())
    assert bool(torch.isnan(run.f).all())
    assert math.isnan(run.loss)
    for n, g in run.grads.items():  # no force depends on the energy head's last bias
        assert bool(torch.isnan(g).any()) == (n != "atomwise.2.bias"), n
