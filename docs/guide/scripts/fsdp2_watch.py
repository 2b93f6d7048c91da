# One watched training step under FSDP2 (fully_shard), two processes on CPU:
#     torchrun --standalone --nproc-per-node 2 fsdp2_watch.py
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard

import gradarg

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(),
                      nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
for layer in model:
    if isinstance(layer, nn.Linear):
        fully_shard(layer)          # each layer's parameters split in two
fully_shard(model)
torch.manual_seed(1 + rank)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))

with gradarg.watch(model) as w:
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
print(f"[process {rank}] {w.summary(checks=False)}")
if rank == 0:
    print(w.table())
dist.destroy_process_group()
