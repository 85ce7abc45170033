"""One rank of a DDP job (torchrun's environment, gloo) fed through odbatch.torch.IterableDataset
in a DataLoader(batch_size=None). "train": two epochs, saving the pipeline's state dicts (gathered
over the ranks, and the rank's own part) at step 2 of epoch 1; "resume": loads the gathered one
and runs the rest of that epoch; "abort": no DDP, rank 1 aborts the run mid-epoch, in epoch
ABORT_EPOCH. Writes what it saw as JSON.   usage: torch_ddp_rank.py PIPELINE.toml train|resume|abort OUT_PREFIX"""

import json
import os
import sys

import torch
import torch.distributed as dist

import odbatch
from odbatch.torch import IterableDataset
from tiny_lm import TinyLM, mean_loss

SAVE_AT = 2  # steps into epoch 1
ABORT_EPOCH = 3  # chosen by set_epoch(), so that the errors must name it and not epoch 0


def abort_on_rank_1(config, out_prefix):
    """Rank 1 aborts after 2 steps; rank 0 goes on until the failure reaches it."""
    rank = int(os.environ["RANK"])
    reasons = []
    pipe = odbatch.Pipeline(config, tensors="torch", on_abort=reasons.append)
    result = {"rank": rank}
    steps = 0
    pipe.set_epoch(ABORT_EPOCH)
    try:
        for _ in pipe:
            steps += 1
            if rank == 1 and steps == 2:
                pipe.abort("the trainer's loss is NaN")
    except odbatch.PeerFailure as e:
        result.update(error="PeerFailure", peer=e.rank, round=e.round, message=str(e))
    except RuntimeError as e:
        result.update(error=type(e).__name__, message=str(e))
    result["hook"] = reasons
    pipe.close()
    with open(f"{out_prefix}-abort-{rank}.json", "w", encoding="utf-8") as out:
        json.dump(result, out)


def main(config, mode, out_prefix):
    if mode == "abort":
        return abort_on_rank_1(config, out_prefix)
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo")
    dataset = IterableDataset(odbatch.Pipeline(config, tensors="torch"))
    loader = dataset.dataloader()
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(TinyLM(dataset.pipeline.vocab_size))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    result = {"rank": rank, "epochs": {}}
    if mode == "resume":
        dataset.load_state_dict(torch.load(f"{out_prefix}-state-{rank}.pt")["gathered"])
        epochs = [1]
    else:
        epochs = [0, 1]
    for epoch in epochs:
        dataset.set_epoch(epoch)
        ids = []
        for batch in loader:
            info = dataset.step_info
            loss = mean_loss(model, batch)
            optimizer.zero_grad()
            (loss * info.loss_scale).backward()  # DDP's allreduce: equal steps or a hang
            optimizer.step()
            ids.append(info.sample_ids.tolist())
            if mode == "train" and epoch == 1 and len(ids) == SAVE_AT:
                torch.save({"gathered": dataset.state_dict(),
                            "part": dataset.pipeline.state_dict(gather=False)},
                           f"{out_prefix}-state-{rank}.pt")
        result["epochs"][epoch] = {"ids": ids, "len": len(loader)}
    dataset.pipeline.close()
    dist.destroy_process_group()
    with open(f"{out_prefix}-{mode}-{rank}.json", "w", encoding="utf-8") as out:
        json.dump(result, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
