"""A structure head trained with AlphaFold's frame aligned point error (FAPE) whose inverse frame
applies the rotation instead of its transpose: ``local = R_i (x_j - t_i)`` where FAPE expresses
every atom in every residue's frame, ``T_i^-1 x_j = R_i^T (x_j - t_i)``.  FAPE is meant to be
invariant to a global rotation and translation of the prediction; written this way it is not: the
true structure scores 0.001, the same structure turned by a global rotation 0.56 (the untrained
head's prediction scores 0.48), and the gradient pulls the structure toward one orientation as much
as toward the true shape.  The step itself is ordinary: the loss is finite and every gradient
finite and nonzero; nothing raises.

Source: https://sungsoo-ahn.github.io/protein-ai-s26/lectures/10-alphafold-implementation
("This lecture dissects AlphaFold2's architecture ... the Structure Module, and the FAPE loss—with
simplified PyTorch implementations"; "| 4 | FAPE loss | Defines what "correct structure" means for
training |").  Adapted: one residue frame per residue from a quaternion ``(1, b, c, d)`` and a
translation, predicted by an MLP ``Linear(16, 64), SiLU, Linear(64, 6)`` from fixed per-residue
features of 16 residues; the atoms are the residues' origins; distances ``sqrt(|.|^2 + 1e-4)``,
clamped at 10 and divided by 10, as the supplement's FAPE; random true frames on a random chain;
Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://sungsoo-ahn.github.io/protein-ai-s26/lectures/10-alphafold-implementation"
DESCRIPTION = "FAPE with R (x - t) instead of R^T (x - t): not invariant to a global rotation"
ASK = []
MUST = [
    [r"transpos\w*", r"R\^?T\b|R\.T\b|R\.transpose|\.mT\b", r"invers\w*", r"einsum"],
    [r"invarian\w*", r"global (rotation|frame|orientation)", r"rotat\w*", r"frame\w*"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
RESIDUES, CLAMP, EPS = 16, 10.0, 1e-4


def rotation(q):  # (..., 4) unnormalised quaternion -> (..., 3, 3)
    a, b, c, d = (q / q.norm(dim=-1, keepdim=True)).unbind(-1)
    return torch.stack(
        [
            torch.stack([a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)], -1),
            torch.stack([2 * (b * c + a * d), a * a - b * b + c * c - d * d, 2 * (c * d - a * b)], -1),
            torch.stack([2 * (b * d - a * c), 2 * (c * d + a * b), a * a - b * b - c * c + d * d], -1),
        ],
        -2,
    )  # fmt: skip


def to_local(rot, trans, x, transposed):
    centred = x[None, :, :] - trans[:, None, :]  # (frames, atoms, 3)
    if transposed:
        return torch.einsum("fji,fpj->fpi", rot, centred)  # R^T (x - t)
    return torch.einsum("fij,fpj->fpi", rot, centred)  # R (x - t)


def fape(rot, trans, rot_true, trans_true, transposed):
    pred = to_local(rot, trans, trans, transposed)
    true = to_local(rot_true, trans_true, trans_true, transposed)
    dist = torch.sqrt(((pred - true) ** 2).sum(-1) + EPS)
    return dist.clamp(max=CLAMP).mean() / CLAMP


class StructureHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.SiLU(), nn.Linear(64, 6))

    def forward(self, s):
        out = self.net(s)
        quat = torch.cat([torch.ones(s.shape[0], 1), out[:, :3]], -1)  # AlphaFold's (1, b, c, d)
        return rotation(quat), 4.0 * out[:, 3:]


def data():
    g = torch.Generator().manual_seed(1)
    s = torch.randn(RESIDUES, 16, generator=g)
    steps = torch.randn(RESIDUES, 3, generator=g)
    trans_true = (3.8 * steps / steps.norm(dim=-1, keepdim=True)).cumsum(0)
    rot_true = rotation(torch.randn(RESIDUES, 4, generator=g))
    return s, rot_true, trans_true


def step(watch, transposed=False):
    torch.manual_seed(0)
    model = StructureHead()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    s, rot_true, trans_true = data()
    with watch(model) as w:
        optimizer.zero_grad()
        rot, trans = model(s)
        loss = fape(rot, trans, rot_true, trans_true, transposed)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    # probes with torch alone: the true structure, and the same structure turned globally
    turn = rotation(torch.tensor([0.3, 0.8, -0.5, 0.2]))
    exact = fape(rot_true, trans_true, rot_true, trans_true, transposed)
    turned = fape(turn @ rot_true, trans_true @ turn.T + 5.0, rot_true, trans_true, transposed)
    return Run(
        w=w, grads=grads, loss=float(loss.detach()), exact=float(exact), turned=float(turned)
    )


def truth(run):
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.exact < 1e-2  # the true structure scores about sqrt(eps) / 10
    assert run.turned > 0.3  # the same structure turned globally scores like a poor one
