"""Control: softmax loss plus center loss (Wen et al.): a feature extractor, a classifier on its
2-D features, and a ``CenterLoss`` module whose class centers are an ``nn.Parameter`` trained by
their own SGD optimizer at a higher learning rate.  Both optimizers are zeroed, one backward of
``CE + lambda * center``, both stepped: the model's parameters get the sum of both losses'
gradients, the centers of the classes in the batch move towards their features.  The watch is on
the model; nothing is wrong.

Source: https://www.codegenes.net/blog/center-loss-pytorch ("the centers c_j for each class j are
also updated"; "self.centers = nn.Parameter(torch.randn(num_classes, feat_dim))";
"optimizer_model = optim.SGD(model.parameters(), lr=0.001)" and a second optimizer for the
centers).
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://www.codegenes.net/blog/center-loss-pytorch"
DESCRIPTION = "control: CE + center loss, centers in their own SGD optimizer: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"(updated|stepped) twice",
]


class CenterLoss(nn.Module):
    def __init__(self, num_classes, feat_dim):
        super().__init__()
        self.num_classes = num_classes
        self.centers = nn.Parameter(torch.randn(num_classes, feat_dim))

    def forward(self, x, labels):
        batch_size = x.size(0)
        distmat = (
            torch.pow(x, 2).sum(dim=1, keepdim=True).expand(batch_size, self.num_classes)
            + torch.pow(self.centers, 2)
            .sum(dim=1, keepdim=True)
            .expand(self.num_classes, batch_size)
            .t()
        )
        distmat.addmm_(x, self.centers.t(), beta=1, alpha=-2)
        classes = torch.arange(self.num_classes).long()
        mask = labels.unsqueeze(1).expand(batch_size, self.num_classes).eq(classes)
        dist = distmat * mask.float()
        return dist.clamp(min=1e-12, max=1e12).sum() / batch_size


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
        self.classifier = nn.Linear(2, 10)

    def forward(self, x):
        f = self.features(x)
        return f, self.classifier(f)


def step(watch):
    torch.manual_seed(0)
    model, center_loss = Net(), CenterLoss(10, 2)
    softmax_loss = nn.CrossEntropyLoss()
    optimizer_model = torch.optim.SGD(model.parameters(), lr=0.001)
    optimizer_centers = torch.optim.SGD(center_loss.parameters(), lr=0.5)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 10, generator=g), torch.randint(0, 10, (32,), generator=g)
    centers_before = center_loss.centers.detach().clone()
    with watch(model) as w:
        optimizer_model.zero_grad()
        optimizer_centers.zero_grad()
        feats, logits = model(x)
        loss = softmax_loss(logits, y) + 0.1 * center_loss(feats, y)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        optimizer_model.step()
        optimizer_centers.step()
    moved = (center_loss.centers.detach() - centers_before).abs().sum(1) > 0
    return Run(w=w, grads=grads, moved=moved, present=torch.bincount(y, minlength=10) > 0)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert torch.equal(run.moved, run.present)  # the centers of the batch's classes moved
