"""odbatch.torch.IterableDataset under DDP: two processes with torchrun's environment and gloo,
a DataLoader(batch_size=None) per rank. Every rank takes the same number of steps per epoch, the
ranks together see every record once, and the pipeline's state dict resumes exactly at the same
world size and re-shards onto another (here one rank)."""

import json
import os
import unittest
from unittest import mock
from pathlib import Path

import torch

import odbatch
from support import ScratchTestCase, records
from torch_ddp_rank import ABORT_EPOCH, SAVE_AT


class DdpThroughTheAdapter(ScratchTestCase):
    def run_ranks(self, config, mode):
        prefix = self.dir / "rank"
        self.run_torchrun_ranks(Path(__file__).with_name("torch_ddp_rank.py"),
                                [config, mode, prefix])
        return [json.loads(Path(f"{prefix}-{mode}-{r}.json").read_text()) for r in (0, 1)]

    def test_equal_steps_and_state_dicts(self):
        lines = records(text=160, images=8)
        config = self.write_config(lines, budget=2048)
        trained = self.run_ranks(config, "train")
        for epoch in ("0", "1"):
            steps = [len(r["epochs"][epoch]["ids"]) for r in trained]
            self.assertEqual(steps[0], steps[1])
            self.assertGreater(steps[0], SAVE_AT + 2)
            self.assertEqual([r["epochs"][epoch]["len"] for r in trained], steps)
            seen = [i for r in trained for step in r["epochs"][epoch]["ids"] for i in step]
            self.assertEqual(sorted(seen), list(range(len(lines))))

        # The same world size: the very same batches.
        resumed = self.run_ranks(config, "resume")
        for before, after in zip(trained, resumed):
            self.assertEqual(after["epochs"]["1"]["ids"], before["epochs"]["1"]["ids"][SAVE_AT:])

        # Another world size: the same state dict (the same on both ranks) onto one rank.
        saved = [torch.load(self.dir / f"rank-state-{r}.pt") for r in (0, 1)]
        joined = [s["gathered"] for s in saved]
        self.assertEqual(joined[0], joined[1])
        self.assertEqual(joined[0]["ranks"], [0, 1])
        self.assertEqual([s["part"]["ranks"] for s in saved], [[0], [1]])
        self.assertEqual(odbatch.join_state_dicts([s["part"] for s in saved]), joined[0])
        single = odbatch.Pipeline(config, return_info=True)
        single.load_state_dict(joined[0])
        rest = [i for _, info in single for i in info.sample_ids.tolist()]
        expected = [i for r in trained for step in r["epochs"]["1"]["ids"][SAVE_AT:] for i in step]
        self.assertEqual(sorted(rest), sorted(expected))

    def test_an_abort_on_one_rank_is_a_peer_failure_on_the_other(self):
        config = self.write_config(records(text=200, images=0), budget=1024)
        state = self.dir / "state"  # the ranks' XDG state directory
        with mock.patch.dict(os.environ, {"XDG_STATE_HOME": str(state)}):
            results = self.run_ranks(config, "abort")
        self.assertEqual(results[1]["error"], "RuntimeError")
        self.assertIn("aborted: the trainer's loss is NaN", results[1]["message"])
        self.assertEqual(results[0]["error"], "PeerFailure", results[0]["message"])
        self.assertEqual(results[0]["peer"], 1)
        self.assertIsInstance(results[0]["round"], int)
        self.assertIn("the trainer's loss is NaN", results[0]["message"])
        # The epoch set_epoch() chose, on both ranks, and no other; one flight recorder note per
        # message: the rank's own.
        for rank, result in enumerate(results):
            self.assertIn(f"rank {rank}, epoch {ABORT_EPOCH}: ", result["message"])
            self.assertEqual(result["message"].count("epoch "),
                             result["message"].count(f"epoch {ABORT_EPOCH}"), result["message"])
            self.assertEqual(result["message"].count("(last rounds: "), 1, result["message"])
            # No flight_recorder_dir configured: the user's state directory, said to be the default.
            recorder_file = state / "odbatch" / "flight" / f"odbatch-flight-rank{rank}.json"
            self.assertIn(f"(last rounds: {recorder_file}, the default directory; [distributed] "
                          "flight_recorder_dir sets another)", result["message"])
            self.assertEqual(json.loads(recorder_file.read_text())["rank"], rank)
        for result in results:  # the abort hook, on both ranks
            self.assertEqual(len(result["hook"]), 1)
            self.assertIn("the trainer's loss is NaN", result["hook"][0])


if __name__ == "__main__":
    unittest.main()
