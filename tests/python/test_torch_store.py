"""torch.distributed and odbatch side by side with no settings: two processes with torchrun's
variables only, each calling init_process_group("gloo") (whose rank 0 hosts torch's store on
MASTER_PORT) and creating a Pipeline (whose rank 0 hosts odbatch's store at MASTER_PORT + 1009),
in both orders, run an epoch with a collective per step and equal step counts."""

import json
import unittest
from pathlib import Path

from support import ScratchTestCase, records


class TorchStoreBesideOdbatch(ScratchTestCase):
    def run_ranks(self, order):
        config = self.write_config(records(text=120, images=6), budget=2048)
        prefix = self.dir / order
        self.run_torchrun_ranks(Path(__file__).with_name("torch_store_rank.py"),
                                [config, order, prefix])
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
