"""A training and an evaluation Pipeline in each of two processes with torchrun's variables only
(rank 0 hosts one odbatch store for both, each Pipeline under a namespace of its own), connected
in both orders: the training epochs take equal steps on both ranks, and each evaluation reads
every record exactly once over the ranks, each rank the same records every time, with IDLE steps
evening out the ranks."""

import json
import unittest
from pathlib import Path

from support import ScratchTestCase, records


class TwoPipelinesPerProcess(ScratchTestCase):
    def write_named_config(self, name, lines, extra=""):
        config = self.write_config(lines, budget=2048, extra=extra)
        data = self.dir / f"{name}.jsonl"
        (self.dir / "records.jsonl").rename(data)
        text = config.read_text(encoding="utf-8").replace(str(self.dir / "records.jsonl"), str(data))
        named = self.dir / f"{name}.toml"
        named.write_text(text, encoding="utf-8")
        return named

    def run_ranks(self, order):
        lines = records(text=160, images=8)
        train = self.write_named_config("train", lines[:120] + lines[160:164])
        evaluation = self.write_named_config("eval", lines[120:160] + lines[164:],
                                             extra='mode = "evaluation"')
        prefix = self.dir / order
        self.run_torchrun_ranks(Path(__file__).with_name("two_pipelines_rank.py"),
                                [train, evaluation, order, prefix])
        results = [json.loads(Path(f"{prefix}-{r}.json").read_text()) for r in (0, 1)]
        self.assertEqual(results[0]["train_steps"], results[1]["train_steps"])
        self.assertGreater(min(results[0]["train_steps"]), 2)
        eval_records = 40 + 4
        for epoch in (0, 1):
            self.assertEqual(results[0]["eval_steps"][epoch], results[1]["eval_steps"][epoch])
            ids = results[0]["eval_ids"][epoch] + results[1]["eval_ids"][epoch]
            self.assertEqual(sorted(ids), list(range(eval_records)))
            for result in results:
                self.assertEqual(result["eval_len"][epoch], result["eval_steps"][epoch])
        # Without shuffling every evaluation gives each rank the same samples (the order of the
        # steps within a round still follows the epoch).
        for result in results:
            self.assertEqual(sorted(result["eval_ids"][0]), sorted(result["eval_ids"][1]))

    def test_training_first(self):
        self.run_ranks("training-first")

    def test_evaluation_first(self):
        self.run_ranks("evaluation-first")


if __name__ == "__main__":
    unittest.main()
