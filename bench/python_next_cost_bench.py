"""What next() costs in Python on a batch that is already waiting, per tensor kind and dtypes.

Each variant's pipeline (prefetch 64) is left idle until its queue is full, then 60 batches are
taken back to back; the time per batch is the binding's and the package's cost: taking the batch
off the queue, converting it (int64 ids and labels, a bool mask by default; none with the native
int32/uint8 dtypes, whose arrays are views), building the dict of arrays or tensors and the
StepInfo. Variants alternate in ABBA order over the rounds; the report gives the median per
variant.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_next_cost_bench.py --out next_cost.json
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import odbatch
from python_iterator_bench import ROOT, print_report, write_config

NATIVE_DTYPES = {"input_ids": "int32", "labels": "int32", "attention_mask": "uint8",
                 "image_grid_thw": "int32"}
VARIANTS = [
    ("torch, default dtypes", {"tensors": "torch"}),
    ("torch, native dtypes", {"tensors": "torch", "dtypes": NATIVE_DTYPES}),
    ("numpy, default dtypes", {"tensors": "numpy"}),
    ("numpy, native dtypes", {"tensors": "numpy", "dtypes": NATIVE_DTYPES}),
]
TAKEN = 60  # of the 64 a full queue holds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--budget", type=int, default=1024, help="token budget per batch")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--fill-seconds", type=float, default=1.5,
                        help="idle time for a queue to fill before the batches are taken")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="odbatch-pybench-") as scratch:
        config = write_config(Path(scratch), args.data, args.records, args.budget)
        config.write_text(config.read_text(encoding="utf-8").replace("prefetch = 8", "prefetch = 64"),
                          encoding="utf-8")
        pipes = {name: odbatch.Pipeline(config, **options) for name, options in VARIANTS}
        microseconds = {name: [] for name, _ in VARIANTS}
        for r in range(args.rounds):
            order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]
            for name, _ in order:
                pipe = pipes[name]
                pipe.start_epoch(r, restart=True)
                batches = iter(pipe)
                time.sleep(args.fill_seconds)
                start = time.perf_counter()
                for _ in range(TAKEN):
                    next(batches)
                    pipe.step_info.loss_scale  # read per step, as a trainer does
                microseconds[name].append((time.perf_counter() - start) / TAKEN * 1e6)
    report = {
        "benchmark": "python_next_cost",
        "records": args.records,
        "token_budget": args.budget,
        "batches_per_round": TAKEN,
        "us_per_batch": {name: [round(v, 2) for v in values] for name, values in microseconds.items()},
        "median_us_per_batch": {name: round(statistics.median(values), 2)
                                for name, values in microseconds.items()},
    }
    print_report(report, args.out)


if __name__ == "__main__":
    main()
