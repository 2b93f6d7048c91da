# One watched training step under DistributedDataParallel, 2 processes, CPU:
#     torchrun --standalone --nproc-per-node 2 ddp_watch.py
import torch
import torch.distributed as dist
from torch import nn

import gradarg


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
        self.digit = nn.Linear(64, 10)
        self.parity = nn.Linear(64, 2)  # built; the forward never calls it

    def forward(self, x):
        return self.digit(self.body(x))


dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)                        # same weights in every process
model = nn.parallel.DistributedDataParallel(TwoHeads())
torch.manual_seed(1 + rank)                 # each process its own batch
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))

with gradarg.watch(model) as w:
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
print(f"[process {rank}] {w.summary(checks=False)}")
try:
    model(x)                  # DDP's own check comes at the next forward
except RuntimeError as error:
    print(f"[process {rank}] next forward: {str(error).split('.')[0]}")
dist.destroy_process_group()
