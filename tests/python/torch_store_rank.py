"""One rank started the way torchrun starts it (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT; nothing of odbatch's), which calls torch.distributed.init_process_group("gloo") from
that environment (rank 0's torch store then holds MASTER_PORT) and creates a Pipeline, in the
order given. Per step, one gloo allreduce stands for DDP's gradient collective. Writes its step
count as JSON.   usage: torch_store_rank.py PIPELINE.toml torch-first|pipeline-first OUT_PREFIX"""

import json
import os
import sys

import torch
import torch.distributed as dist

import odbatch


def main(config, order, out_prefix):
    rank = int(os.environ["RANK"])
    if order == "torch-first":
        dist.init_process_group("gloo")
        pipe = odbatch.Pipeline(config)
    else:
        pipe = odbatch.Pipeline(config)
        pipe.vocab_size  # the pipeline connects on first use: here, before torch's group
        dist.init_process_group("gloo")
    steps = 0
    for _ in pipe.epoch(0):
        gradient = torch.ones(4)
        dist.all_reduce(gradient)  # hangs or fails if the ranks' step counts differ
        steps += 1
    total = torch.tensor([steps])
    dist.all_reduce(total)
    pipe.close()
    dist.destroy_process_group()
    with open(f"{out_prefix}-{rank}.json", "w", encoding="utf-8") as out:
        json.dump({"rank": rank, "steps": steps, "all_ranks_steps": int(total)}, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
