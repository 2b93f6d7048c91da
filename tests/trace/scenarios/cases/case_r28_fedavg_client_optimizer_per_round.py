"""The control of ``fedavg_client_copy_optimizer_on_global``: the same FedAvg round with the
optimizer built for each client on the client's own copy, after ``copy.deepcopy(global_model)``.
Each client runs two local epochs (4 SGD steps) and moves; the server's size-weighted average of the
two clients moves the global model.  The watched client gets a finite, nonzero gradient for every
parameter at every step.

Source: https://pmc.ncbi.nlm.nih.gov/articles/PMC9147951/table/array1 ("Algorithm 1
FederatedAveraging. The K clients are indexed by k, B is the local minibatch size, E is the number
of local epochs, and eta is the learning rate"; "Client update(k,w): Split local dataset in B ...
for epoch e in 1,E do for batch b in B do w <- w - eta grad l(w;b) ... return w to server").
Adapted: the bug's clients, model and data with one SGD optimizer per client copy.
"""

import torch
from case_r28_fedavg_client_copy_optimizer_on_global import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://pmc.ncbi.nlm.nih.gov/articles/PMC9147951/table/array1"
DESCRIPTION = "control: FedAvg, a new SGD per client copy: clients move, the average moves global"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"not (held|stepped|updated|seen) by (the |an |any )?optimi[sz]er",
    r"never (move|moved|moves|update|learn)",
    r"all[- ]zero",
]


def step(watch):
    return _step(watch, optimizer_on="client")


def truth(run):
    assert len(run.grads) == 4 and run.client_held
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n, p in run.client.named_parameters():
        assert not torch.equal(p.detach(), run.start[n]), n
    for n, p in run.global_model.named_parameters():
        assert not torch.allclose(p.detach(), run.start[n], rtol=0, atol=1e-6), n
