"""What a user stage costs: identity stages (C++ from a plugin, Python callables) against none.

For each variant the whole epoch of a pipeline file (examples/pipeline.toml by default) runs
through the Python binding; variants alternate in ABBA order over the rounds and the report gives
medians. Per variant: samples/s (wall), process CPU per sample, and the stage's own CPU per item
from the pipeline's stats (the time spent in the stage call and its checks). The overhead of a
stage per sample is its process CPU per sample minus that of the run without stages.

    cmake --build build --target odbatch_bench_identity_stage
    PYTHONPATH=build/python /usr/bin/python3 bench/stage_overhead_bench.py --out stages.json
    PYTHONPATH=build/python /usr/bin/python3 bench/stage_overhead_bench.py --text-only
"""

import argparse
import os
import platform
import re
import statistics
import tempfile
import time
from pathlib import Path

import odbatch
from python_iterator_bench import ROOT, print_report


def identity(value):
    return value


VARIANTS = [
    ("none", None, None),
    ("C++ record stage", "record", "identity_record"),
    ("C++ sample stage", "sample", "identity_sample"),
    ("Python record stage", "record", None),
    ("Python sample stage", "sample", None),
]


def absolute_config(config):
    """The pipeline file's text with its relative paths made absolute."""
    base = config.parent
    text = config.read_text(encoding="utf-8")

    def absolute(match):
        key, path = match.group(1), match.group(2)
        return f'{key} = "{(base / path).resolve()}"'

    text = re.sub(r'^(model|image_root) = "([^"]+)"', absolute, text, flags=re.M)
    return re.sub(r'^files = \["([^"]+)"\]',
                  lambda m: f'files = ["{(base / m.group(1)).resolve()}"]', text, flags=re.M)


def variant_config(directory, base_text, name, kind, plugin_type, plugin):
    text = base_text
    if kind is not None:
        text += f'\n[[stage]]\nname = "identity"\nkind = "{kind}"\nworkers = 1\n'
        if plugin_type:
            text += f'type = "{plugin_type}"\nplugin = "{plugin}"\n'
    path = directory / (re.sub(r"\W+", "_", name) + ".toml")
    path.write_text(text, encoding="utf-8")
    return path


def run_epoch(config, kind, plugin_type, epoch):
    stages = {"identity": identity} if kind is not None and not plugin_type else None
    pipe = odbatch.Pipeline(config, stages=stages)
    pipe.set_epoch(epoch)
    start_cpu, start = time.process_time(), time.perf_counter()
    batches = sum(1 for _ in pipe)
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    stats = pipe.stats()
    pipe.close()
    samples = stats["samples_emitted"]
    stage = stats["stages"].get("identity")
    return {
        "batches": batches,
        "samples": samples,
        "samples_per_second": samples / wall,
        "process_cpu_us_per_sample": 1e6 * cpu / samples,
        "stage_cpu_ns_per_item": (1e9 * stage["cpu_seconds"] / stage["items"]) if stage else None,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "examples/pipeline.toml")
    parser.add_argument("--plugin", type=Path,
                        default=ROOT / "build/bench/libodbatch_bench_identity_stage.so")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--text-only", action="store_true",
                        help="read data/sft/openai.jsonl (no images) instead of the config's "
                             "files, so that a stage's cost is not lost in image decoding")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    odbatch.set_log_level("error")
    runs = {name: [] for name, _, _ in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="odbatch-stagebench-") as scratch:
        base_text = absolute_config(args.config.resolve())
        if args.text_only:
            base_text = re.sub(r'^files = \[[^\]]*\]',
                               f'files = ["{ROOT / "data/sft/openai.jsonl"}"]', base_text,
                               flags=re.M)
        configs = {name: variant_config(Path(scratch), base_text, name, kind, plugin_type,
                                        args.plugin.resolve())
                   for name, kind, plugin_type in VARIANTS}
        for r in range(args.rounds):
            order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]
            for name, kind, plugin_type in order:
                runs[name].append(run_epoch(configs[name], kind, plugin_type, epoch=0))
    none_cpu = statistics.median(run["process_cpu_us_per_sample"] for run in runs["none"])
    report = {"bench": "stage_overhead", "config": str(args.config), "text_only": args.text_only,
              "rounds": args.rounds,
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
              "variants": {}}
    for name, _, _ in VARIANTS:
        median = {key: statistics.median(run[key] for run in runs[name])
                  for key in ("samples_per_second", "process_cpu_us_per_sample")}
        stage_ns = [run["stage_cpu_ns_per_item"] for run in runs[name]
                    if run["stage_cpu_ns_per_item"] is not None]
        median["stage_cpu_ns_per_item"] = statistics.median(stage_ns) if stage_ns else None
        median["overhead_us_per_sample"] = median["process_cpu_us_per_sample"] - none_cpu
        median["samples"] = runs[name][0]["samples"]
        report["variants"][name] = median
    print_report(report, args.out)


if __name__ == "__main__":
    main()
