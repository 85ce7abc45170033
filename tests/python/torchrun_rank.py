"""One rank of a data-parallel torch job under torchrun's environment (here `odbatch launch`):
DDP over gloo (its own file rendezvous, since rank 0's pipeline hosts odbatch's store on
MASTER_PORT), the pipeline's torch tensors, the loss times step_info.loss_scale. Writes its steps,
sample ids and losses as JSON.   usage: torchrun_rank.py PIPELINE.toml RENDEZVOUS_FILE OUT_PREFIX"""

import json
import os
import sys

import torch
import torch.distributed as dist

import odbatch
from tiny_lm import TinyLM, mean_loss


def main(config, rendezvous, out_prefix):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    pipe = odbatch.Pipeline(config, tensors="torch")  # reads RANK, WORLD_SIZE, MASTER_ADDR, ...
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(TinyLM(pipe.vocab_size))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    steps, idle, ids, losses = 0, 0, [], []
    for batch in pipe:
        info = pipe.step_info
        loss = mean_loss(model, batch)
        optimizer.zero_grad()
        (loss * info.loss_scale).backward()  # DDP averages the scaled gradients over the ranks
        optimizer.step()
        steps += 1
        idle += int(info.idle)
        ids += info.sample_ids.tolist()
        losses.append(loss.item())
    dist.destroy_process_group()
    with open(f"{out_prefix}-{rank}.json", "w", encoding="utf-8") as out:
        json.dump({"rank": rank, "steps": steps, "idle": idle, "ids": ids, "losses": losses}, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
