"""A FedAvg round written from centralised training code: the SGD optimizer was built once, on the
global model, and each client trains ``copy.deepcopy(global_model)`` with it.  The client's forward
and backward fill the client's ``.grad``; ``optimizer.step()`` walks the global model's parameters,
whose ``.grad`` is ``None``, and skips them; its ``zero_grad()`` resets only the global model's
``.grad``, so the client's is never reset and sums the passes.  Over two local epochs (4 steps) the
client never moves; the server averages two unchanged clients and the global model does not move
either.  Nothing raises, every gradient is finite and nonzero.

Source: https://commit-web.commit.tu-berlin.de/en/book/sc/chapter/ch09/section/s02 ("FedAvg
(McMahan et al. 2017) solves both: each selected user runs E local SGD steps before uploading";
"ClientUpdate(k, w): 1. For each local epoch e = 1, ..., E: 2. for each mini-batch B of D_k do 3.
w <- w - eta ..."; "w_(t+1) <- sum_(k in S_t) (n_k / n_tot) w_t^(k)").  Adapted: the optimizer
built on the global model (the page gives the algorithm, not the slip); two clients with 64
examples each of a 3-class problem, batches of 32, E = 2, an MLP ``Linear(8, 32), Tanh, Linear(32,
3)``, SGD at 0.1; the first client's local update is watched.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://commit-web.commit.tu-berlin.de/en/book/sc/chapter/ch09/section/s02"
DESCRIPTION = "FedAvg client = deepcopy(global), optimizer built on global: the client never moves"
ASK = []
MUST = [
    [
        r"not (held|stepped|updated|seen) by (the |an |any )?optimi[sz]er",
        r"(no|none of the|not in (the |any )?) ?optimi[sz]er",
        r"optimi[sz]er (does not|doesn't|never) (hold|contain|see|step|update)",
        r"optimi[sz]er (holds|steps|updates) (other|different)",
        r"(global|server)[ _]model",
        r"deep ?copy|copied|a copy",
        r"never (move|moved|moves|update|updated|change|changed)",
        r"(did|do|does) not (move|change|update)",
        r"unchanged",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"requires_grad\s*(=|is|was)?\s*False", r"\bdead\b"]
LOCAL_EPOCHS, LR = 2, 0.1


def mlp():
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 3))


def client_data():
    g = torch.Generator().manual_seed(1)
    w = torch.randn(8, 3, generator=g)
    shards = []
    for k in range(2):
        x = torch.randn(64, 8, generator=g) + 0.5 * k  # non-IID: shifted inputs
        shards.append((x, (x @ w).argmax(1)))
    return shards


def local_update(client, optimizer, shard, grads=None):
    x, y = shard
    for _ in range(LOCAL_EPOCHS):
        for i in range(0, len(x), 32):
            optimizer.zero_grad()
            F.cross_entropy(client(x[i : i + 32]), y[i : i + 32]).backward()
            if grads is not None:
                grads.append({n: p.grad.detach().clone() for n, p in client.named_parameters()})
            optimizer.step()


def step(watch, optimizer_on="global"):
    torch.manual_seed(0)
    global_model = mlp()
    optimizer = torch.optim.SGD(global_model.parameters(), lr=LR)  # built for centralised training
    shards = client_data()
    start = {n: p.detach().clone() for n, p in global_model.named_parameters()}
    clients, grads = [], []
    for k, shard in enumerate(shards):
        client = copy.deepcopy(global_model)
        if optimizer_on == "client":
            optimizer = torch.optim.SGD(client.parameters(), lr=LR)
        if k == 0:
            held = {id(p) for group in optimizer.param_groups for p in group["params"]}
            client_held = all(id(p) in held for p in client.parameters())
            with watch(client) as w:
                local_update(client, optimizer, shard, grads)
        else:
            local_update(client, optimizer, shard)
        clients.append(client)
    weights = [len(x) / sum(len(x) for x, _ in shards) for x, _ in shards]
    with torch.no_grad():  # the server's weighted average
        for n, p in global_model.named_parameters():
            p.copy_(
                sum(
                    dict(c.named_parameters())[n] * m for c, m in zip(clients, weights, strict=True)
                )
            )
    return Run(
        w=w,
        start=start,
        client=clients[0],
        global_model=global_model,
        grads=grads,
        client_held=client_held,
    )


def truth(run):
    assert len(run.grads) == 4 and not run.client_held
    for n, g in run.grads[3].items():  # two passes over each of two batches, never reset
        assert torch.allclose(g, 2 * run.grads[1][n], rtol=1e-5, atol=1e-7), n
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n, p in run.client.named_parameters():
        assert torch.equal(p.detach(), run.start[n]), n
    for n, p in run.global_model.named_parameters():
        assert torch.allclose(p.detach(), run.start[n], rtol=0, atol=1e-6), n
