"""torch.distributed and odbatch side by side with no settings: two processes with torchrun's
variables only, each calling init_process_group("gloo") (whose rank 0 hosts torch's store on
MASTER_PORT) and creating a Pipeline (whose rank 0 hosts odbatch's store at MASTER_PORT + 1009),
in both orders, run an epoch with a collective per step and equal step counts."""

import json
import os
import socket
import subprocess
import sys
import unittest
from pathlib import Path

from support import ScratchTestCase, records


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TorchStoreBesideOdbatch(ScratchTestCase):
    def run_ranks(self, order):
        config = self.write_config(records(text=120, images=6), budget=2048)
        script = Path(__file__).with_name("torch_store_rank.py")
        # MASTER_PORT + 1009 must be free too; a port below 64000 keeps it in range.
        port = free_port()
        while port > 64000:
            port = free_port()
        environment = {k: v for k, v in os.environ.items() if not k.startswith("ODBATCH_STORE")}
        environment.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2")
        prefix = self.dir / order
        ranks = [subprocess.Popen([sys.executable, str(script), str(config), order, str(prefix)],
                                  env={**environment, "RANK": str(r), "LOCAL_RANK": str(r)},
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for r in (0, 1)]
        outputs = [rank.communicate(timeout=300)[0] for rank in ranks]
        for rank, output in zip(ranks, outputs):
            self.assertEqual(rank.returncode, 0, output)
        results = [json.loads(Path(f"{prefix}-{r}.json").read_text()) for r in (0, 1)]
        self.assertEqual(results[0]["steps"], results[1]["steps"])
        self.assertGreater(results[0]["steps"], 2)
        self.assertEqual(results[0]["all_ranks_steps"], 2 * results[0]["steps"])

    def test_torch_first(self):
        self.run_ranks("torch-first")

    def test_pipeline_first(self):
        self.run_ranks("pipeline-first")


if __name__ == "__main__":
    unittest.main()
