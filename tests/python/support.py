"""What the binding's tests share: subsets of the real dataset under data/ (tools/prepare-data.sh),
pipeline configs over them, and the paths ctest passes in the environment."""

import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

DATA_DIR = Path(os.environ.get("ODBATCH_DATA_DIR", Path(__file__).resolve().parents[2] / "data"))
BATCH_DUMP = os.environ.get("ODBATCH_BATCH_DUMP")
CLI = os.environ.get("ODBATCH_CLI")


def require_dataset(test):
    for path in (DATA_DIR / "sft/mixed.jsonl", DATA_DIR / "tokenizer/odbatch-unigram-8k.model"):
        if not path.exists():
            test.fail(f"{path} is missing: run tools/prepare-data.sh")


def _images_of(record):
    if "image" in record:
        return [record["image"]]
    return list(record.get("images", []))


def records(text, images):
    """The first `text` records without images and the first `images` with (no wallpapers)."""
    chosen_text, chosen_images = [], []
    with open(DATA_DIR / "sft/mixed.jsonl", encoding="utf-8") as lines:
        for line in lines:
            paths = _images_of(json.loads(line))
            if not paths and len(chosen_text) < text:
                chosen_text.append(line)
            elif paths and len(chosen_images) < images:
                if not any(p.startswith("lomiri-wallpapers/") for p in paths):
                    chosen_images.append(line)
            if len(chosen_text) == text and len(chosen_images) == images:
                break
    return chosen_text + chosen_images


class ScratchTestCase(unittest.TestCase):
    """A test with a temporary directory and config files written into it."""

    def setUp(self):
        require_dataset(self)
        self._scratch = tempfile.TemporaryDirectory(prefix="odbatch-python-")
        self.dir = Path(self._scratch.name)

    def tearDown(self):
        self._scratch.cleanup()

    def write_config(self, lines, layout="padded", budget=2048, extra=""):
        data = self.dir / "records.jsonl"
        data.write_text("".join(lines), encoding="utf-8")
        config = self.dir / f"pipeline-{layout}.toml"
        config.write_text(
            f"""[source]
files = ["{data}"]
image_root = "{DATA_DIR / 'images'}"
[tokenizer]
model = "{DATA_DIR / 'tokenizer/odbatch-unigram-8k.model'}"
workers = 1
[images]
workers = 1
max_pixels = 200704
[batching]
token_budget = {budget}
max_seq_len = {budget}
window = 32
seed = 3
[pipeline]
layout = "{layout}"
scheduler_threads = 2
{extra}""",
            encoding="utf-8",
        )
        return config

    def run_torchrun_ranks(self, script, arguments, world=2):
        """Starts `world` processes of `script` the way torchrun starts them (RANK, WORLD_SIZE,
        LOCAL_RANK, MASTER_ADDR, MASTER_PORT, nothing of odbatch's) and checks each exits 0."""
        port = _torchrun_style_port()
        environment = {k: v for k, v in os.environ.items() if not k.startswith("ODBATCH_STORE")}
        environment.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world))
        ranks = [subprocess.Popen([sys.executable, str(script), *map(str, arguments)],
                                  env={**environment, "RANK": str(r), "LOCAL_RANK": str(r)},
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for r in range(world)]
        outputs = [rank.communicate(timeout=300)[0] for rank in ranks]
        for rank, output in zip(ranks, outputs):
            self.assertEqual(rank.returncode, 0, output)


def _torchrun_style_port():
    """A MASTER_PORT below the ephemeral range, as torchrun's default 29500 is, with it and
    odbatch's MASTER_PORT + 1009 free: a port the kernel hands out to outgoing connections and to
    Gloo's listeners (bound to port 0) could be taken by the time odbatch's store binds it."""
    with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as ports:
        ephemeral_start = int(ports.read().split()[0])
    candidates = list(range(20000, ephemeral_start - 1009))
    random.shuffle(candidates)
    for port in candidates:
        if _bindable(port) and _bindable(port + 1009):
            return port
    raise RuntimeError(f"no free port pair below {ephemeral_start}")


def _bindable(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
