"""One rank started the way torchrun starts it (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT; nothing of odbatch's) with two Pipelines in one process, a training and an
evaluation one, connected in the order given: two training epochs, each followed by an
evaluation. Per step, one gloo allreduce stands for DDP's gradient collective. Writes the steps
and the sample ids each evaluation saw as JSON.
usage: two_pipelines_rank.py TRAIN.toml EVAL.toml training-first|evaluation-first OUT_PREFIX"""

import json
import os
import sys

import torch
import torch.distributed as dist

import odbatch


def steps_of(pipe, epoch, ids):
    steps = 0
    for _ in pipe.epoch(epoch):
        gradient = torch.ones(4)
        dist.all_reduce(gradient)  # hangs or fails if the ranks' step counts differ
        steps += 1
        ids += pipe.step_info.sample_ids.tolist()
    return steps


def main(train_config, eval_config, order, out_prefix):
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo")
    pipes = {"training": odbatch.Pipeline(train_config),
             "evaluation": odbatch.Pipeline(eval_config)}
    first, second = order.split("-")[0], "evaluation" if order.startswith("training") else "training"
    pipes[first].vocab_size  # a pipeline joins its ranks on first use
    pipes[second].vocab_size
    train, evaluation = pipes["training"], pipes["evaluation"]
    result = {"rank": rank, "train_steps": [], "eval_steps": [], "eval_ids": [],
              "eval_len": []}
    for epoch in (0, 1):
        result["train_steps"].append(steps_of(train, epoch, []))
        ids = []
        result["eval_steps"].append(steps_of(evaluation, epoch, ids))
        result["eval_ids"].append(ids)
        result["eval_len"].append(len(evaluation))
    evaluation.close()
    train.close()
    dist.destroy_process_group()
    with open(f"{out_prefix}-{rank}.json", "w", encoding="utf-8") as out:
        json.dump(result, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
