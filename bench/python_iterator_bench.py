"""Overhead of the Python iterator per batch against the C++ API, at a fixed step time.

Each round runs the same epoch twice on one pipeline, once iterated in C++ (odbatch.iterate_in_cpp:
next_batch() and a busy step, the GIL released) and once in Python (`for batch in pipe`, a dict
of numpy arrays or torch tensors per batch in the default dtypes, int64 ids and labels and a bool
mask converted in C++, with the StepInfo beside it, the same busy step), in ABBA order so drift
cancels. --native-dtypes keeps the pipeline's int32/uint8 (zero-copy views) instead. The report
gives the per-batch time of each, their ratio per round and its median.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_iterator_bench.py --out py_iter.json
"""

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import odbatch

ROOT = Path(__file__).resolve().parents[1]


def print_report(report, out):
    """The report as indented JSON on stdout and, when `out` is a path, in that file."""
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        out.write_text(text + "\n", encoding="utf-8")


def busy(seconds):
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def python_epoch(pipe, epoch, step_seconds, in_next):
    """The epoch in Python; adds the time spent in next() (the conversion and the binding's
    overhead, and any wait for a batch not yet ready) to in_next[0]."""
    start = time.perf_counter()
    batches = 0
    pipe.start_epoch(epoch, restart=True)
    iterator = iter(pipe)
    while True:
        before = time.perf_counter()
        try:
            next(iterator)
        except StopIteration:
            break
        in_next[0] += time.perf_counter() - before
        pipe.step_info.loss_scale  # read per step, as a trainer does
        busy(step_seconds)
        batches += 1
    return batches, time.perf_counter() - start


def cpp_epoch(pipe, epoch, step_seconds, in_next):
    pipe.start_epoch(epoch, restart=True)  # the wrapper does not see the C++ loop end it
    return odbatch.iterate_in_cpp(pipe.native, step_seconds)


def write_config(directory, data_dir, records, budget):
    lines = []
    with open(data_dir / "sft/mixed.jsonl", encoding="utf-8") as source:
        for line in source:
            record = json.loads(line)
            if "image" not in record and "images" not in record:
                lines.append(line)
            if len(lines) == records:
                break
    (directory / "records.jsonl").write_text("".join(lines), encoding="utf-8")
    config = directory / "pipeline.toml"
    config.write_text(
        f"""[source]
files = ["{directory / 'records.jsonl'}"]
[tokenizer]
model = "{data_dir / 'tokenizer/odbatch-unigram-8k.model'}"
workers = 1
[batching]
token_budget = {budget}
max_seq_len = {budget}
window = 64
[pipeline]
prefetch = 8
""",
        encoding="utf-8",
    )
    return config


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--budget", type=int, default=1024, help="token budget per batch")
    parser.add_argument("--step-ms", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--tensors", choices=["numpy", "torch"], default="numpy")
    parser.add_argument("--native-dtypes", action="store_true",
                        help="int32 ids and labels, uint8 mask: zero-copy views, no conversion")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    step = args.step_ms / 1000.0
    with tempfile.TemporaryDirectory(prefix="odbatch-pybench-") as scratch:
        config = write_config(Path(scratch), args.data, args.records, args.budget)
        native = {"input_ids": "int32", "labels": "int32", "attention_mask": "uint8",
                  "image_grid_thw": "int32"}
        pipe = odbatch.Pipeline(config, tensors=args.tensors,
                                dtypes=native if args.native_dtypes else None)
        python_epoch(pipe, 0, step, [0.0])  # warm-up: page cache, allocations, the batch pool
        rounds = []
        for r in range(args.rounds):
            order = [("cpp", cpp_epoch), ("python", python_epoch)]
            if r % 2:
                order.reverse()
            times = {}
            in_next = [0.0]
            for name, run in order:
                batches, seconds = run(pipe, 0, step, in_next)
                times[name] = (batches, seconds)
            per_batch = {name: seconds / batches for name, (batches, seconds) in times.items()}
            rounds.append({
                "batches": times["cpp"][0],
                "cpp_ms_per_batch": round(per_batch["cpp"] * 1e3, 4),
                "python_ms_per_batch": round(per_batch["python"] * 1e3, 4),
                "ratio": round(per_batch["python"] / per_batch["cpp"], 4),
                "python_next_us_per_batch": round(in_next[0] / times["python"][0] * 1e6, 2),
            })
            if times["cpp"][0] != times["python"][0]:
                raise RuntimeError(f"the same epoch gave {times['cpp'][0]} and {times['python'][0]} batches")
    ratios = [r["ratio"] for r in rounds]
    report = {
        "benchmark": "python_iterator",
        "step_ms": args.step_ms,
        "tensors": args.tensors,
        "dtypes": "native" if args.native_dtypes else "default",
        "records": args.records,
        "token_budget": args.budget,
        "rounds": rounds,
        "median_ratio": round(statistics.median(ratios), 4),
        "median_overhead_percent": round((statistics.median(ratios) - 1.0) * 100.0, 2),
        "median_python_next_us_per_batch": statistics.median(
            r["python_next_us_per_batch"] for r in rounds),
    }
    print_report(report, args.out)


if __name__ == "__main__":
    main()
