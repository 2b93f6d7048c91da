"""Control, a recipe: a linear-chain CRF tagger trained by its negative log-likelihood. Emission
scores come from an embedding and a linear layer; the CRF holds a transition matrix and start and
end scores. The loss is ``log Z - score(gold path)``, with ``log Z`` computed by the forward
algorithm in log space (``torch.logsumexp`` at each position). The NLL is positive, ``log Z`` equals
the log-sum-exp over all 5^5 tag paths, and every parameter (emissions, transitions, start and end
scores) gets a finite, nonzero gradient.

Source: http://coloradmin.cn/o/92993.html ("NER任务的CRF-layer的原理" (the principle of the CRF
layer for NER): "3.1. 发射(Emission)分数", "3.2. 转移(Transition)分数", "3.3. CRF损失函数",
"3.4. 实际路径得分", "3.5. 所有可能的路径的得分" (emission scores, transition scores, the CRF loss,
the score of the real path, the score of all possible paths); "2.3. CRF层可以从训练数据中学到约束" (the
CRF layer can learn constraints from the training data)). Adapted: 5 tags, a 20-token vocabulary,
8 sentences of 5 tokens, synthetic tags, Adam.
"""

import itertools

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "http://coloradmin.cn/o/92993.html"
DESCRIPTION = "control: linear-chain CRF NLL (forward algorithm with logsumexp): healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"negative (loss|nll|log-likelihood)"]
TAGS, VOCAB, LEN = 5, 20, 5


class CRFTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.emit = nn.Linear(16, TAGS)
        self.transitions = nn.Parameter(0.1 * torch.randn(TAGS, TAGS))
        self.start = nn.Parameter(0.1 * torch.randn(TAGS))
        self.end = nn.Parameter(0.1 * torch.randn(TAGS))

    def emissions(self, ids):
        return self.emit(torch.tanh(self.embed(ids)))

    def log_partition(self, e):
        alpha = self.start + e[:, 0]
        for t in range(1, e.shape[1]):
            alpha = torch.logsumexp(alpha.unsqueeze(2) + self.transitions, dim=1) + e[:, t]
        return torch.logsumexp(alpha + self.end, dim=1)

    def path_score(self, e, tags):
        score = self.start[tags[:, 0]] + self.end[tags[:, -1]]
        score = score + e.gather(2, tags.unsqueeze(2)).squeeze(2).sum(1)
        return score + self.transitions[tags[:, :-1], tags[:, 1:]].sum(1)

    def nll(self, ids, tags):
        e = self.emissions(ids)
        return (self.log_partition(e) - self.path_score(e, tags)).mean()


def data():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (8, LEN), generator=g)
    return ids, ids % TAGS


def step(watch):
    torch.manual_seed(0)
    model = CRFTagger()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    ids, tags = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        loss = model.nll(ids, tags)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, ids=ids, tags=tags, loss=loss.item(), grads=grads)


def truth(run):
    torch.manual_seed(0)
    model = CRFTagger()
    with torch.no_grad():
        e = model.emissions(run.ids)
        paths = torch.tensor(list(itertools.product(range(TAGS), repeat=LEN)))
        scores = torch.stack(
            [model.path_score(e[i : i + 1].expand(len(paths), -1, -1), paths) for i in range(8)]
        )
        brute = torch.logsumexp(scores, dim=1)
        assert torch.allclose(model.log_partition(e), brute, atol=1e-4)  # every path counted
        gold = model.path_score(e, run.tags)
        assert abs(float((brute - gold).mean()) - run.loss) < 1e-4
    assert run.loss > 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
