"""Two torch ranks as processes with torchrun's environment (set by `odbatch launch`): every rank
takes the same number of steps under DDP, and together they see every record once."""

import json
import subprocess
import sys
import unittest
from pathlib import Path

from support import CLI, ScratchTestCase, records


class TorchrunEnvironment(ScratchTestCase):
    def test_two_ranks_under_ddp(self):
        lines = records(text=150, images=10)
        config = self.write_config(lines, budget=2048)
        rank_script = Path(__file__).with_name("torchrun_rank.py")
        out_prefix = self.dir / "rank"
        run = subprocess.run(
            [CLI, "launch", "--nproc", "2", "--", sys.executable, str(rank_script), str(config),
             str(self.dir / "rendezvous"), str(out_prefix)],
            capture_output=True, text=True, timeout=600,
        )
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        results = [json.loads(Path(f"{out_prefix}-{rank}.json").read_text()) for rank in (0, 1)]
        self.assertEqual(results[0]["steps"], results[1]["steps"])
        self.assertGreater(results[0]["steps"], 3)
        ids = results[0]["ids"] + results[1]["ids"]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertEqual(sorted(ids), list(range(len(lines))))


if __name__ == "__main__":
    unittest.main()
