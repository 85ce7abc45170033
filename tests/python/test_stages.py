"""Python callables as user stages: a record stage edits the conversation, a sample stage sees
numpy arrays, odbatch.Reject and any other exception reject the one sample with a named reason,
and a sample stage that changes a sample's shape fails the epoch naming the stage."""

import json
import unittest
from pathlib import Path

import numpy as np

import odbatch
from support import ScratchTestCase, records


def read_ledger(path):
    steps, rejected = [], []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry["kind"] == "step":
            steps.append(entry["ids"])
        elif entry["kind"] == "rejected":
            rejected.append(entry)
    return steps, rejected


class PythonStages(ScratchTestCase):
    def config(self, stages, text=40, images=0):
        entries = "".join(
            f'[[stage]]\nname = "{name}"\nkind = "{kind}"\n' for name, kind in stages)
        written = self.write_config(records(text=text, images=images), extra=entries)
        # Each config a file of its own: write_config writes one name.
        self.configs = getattr(self, "configs", 0) + 1
        return written.rename(written.with_name(f"stages-{self.configs}.toml"))

    def run_epoch(self, config, stages, ledger=None):
        pipe = odbatch.Pipeline(config, stages=stages, return_info=True, ledger=ledger)
        pipe.set_epoch(0)
        return pipe, list(pipe)

    def test_a_record_stage_edits_the_conversation_the_tokenizer_sees(self):
        config = self.config([("prompt", "record")])
        seen = []

        def add_system_prompt(record):
            seen.append(record["id"])
            self.assertEqual(record["source"], 0)
            self.assertIsInstance(record["seed"], int)
            if record["messages"][0]["role"] != "system":
                record["messages"].insert(0, {"role": "system", "content": "Answer in English."})
            return record

        _, plain = self.run_epoch(self.config([]), {})
        _, prompted = self.run_epoch(config, {"prompt": add_system_prompt})
        self.assertEqual(sorted(seen), list(range(40)))
        tokens = lambda run: sum(info.tokens for _, info in run)  # noqa: E731
        self.assertGreater(tokens(prompted), tokens(plain))

    def test_a_record_stage_sees_tool_calls_and_can_flatten_them(self):
        tool_use = Path(__file__).parents[1] / "runtime/text/data/tool_use.jsonl"
        lines = tool_use.read_text(encoding="utf-8").splitlines(keepends=True)
        written = self.write_config(lines, extra='[[stage]]\nname = "flatten"\nkind = "record"\n')
        config = written.rename(written.with_name("tools.toml"))
        plain = self.write_config(lines)
        seen, seen_tools = {}, {}

        def flatten(record):
            messages = record["messages"]
            seen[record["id"]] = json.loads(json.dumps(messages))
            seen_tools[record["id"]] = record["tools"]
            flat = []
            for message in messages:
                if message["role"] == "tool":
                    flat.append({"role": "user", "content": "Result: " + message["content"]})
                elif message.get("tool_calls"):
                    calls = [c["function"]["name"] + json.dumps(c["function"]["arguments"])
                             for c in message["tool_calls"]]
                    flat.append({"role": "assistant", "content": "; ".join(calls)})
                else:
                    flat.append({"role": message["role"], "content": message["content"]})
            record["messages"] = flat
            record["tools"] = None
            record["chat_template_kwargs"] = {}
            return record

        ledger = self.dir / "plain.jsonl"
        self.run_epoch(plain, {}, ledger=ledger)
        steps, rejected = read_ledger(ledger)
        # The chatml preset renders no tool use: those records are rejected, naming why.
        self.assertEqual(sum(len(ids) for ids in steps), 1)
        self.assertEqual(len(rejected), len(lines) - 1)
        self.assertTrue(all("use tokenizer.template" in r["detail"] for r in rejected))
        ledger = self.dir / "flat.jsonl"
        self.run_epoch(config, {"flatten": flatten}, ledger=ledger)
        steps, rejected = read_ledger(ledger)
        self.assertEqual(sum(len(ids) for ids in steps), len(lines))
        self.assertEqual(rejected, [])
        # The stage saw each message as the record holds it, arguments decoded.
        self.assertEqual(len(seen_tools[0]), 1)
        self.assertEqual(seen_tools[0][0]["function"]["name"], "get_current_weather")
        weather = seen[0]
        self.assertEqual([m["role"] for m in weather], ["user", "assistant", "tool", "assistant"])
        self.assertIsNone(weather[1]["content"])
        self.assertEqual(weather[1]["tool_calls"][0]["function"]["arguments"],
                         {"location": "Boston, MA", "unit": "fahrenheit"})
        self.assertEqual(weather[2]["tool_call_id"], "call0Ab9z")

    def test_reject_and_exceptions_are_counted_rejections(self):
        config = self.config([("filter", "record"), ("crash", "sample")])
        ledger = self.dir / "ledger.jsonl"

        def drop_every_fourth(record):
            if record["id"] % 4 == 0:
                raise odbatch.Reject("every_fourth", f"id {record['id']}")
            return record

        def crash_on_odd(sample):
            if sample["id"] % 2 == 1:
                raise ValueError("odd sample " + str(sample["id"]))
            return sample

        pipe, run = self.run_epoch(config, {"filter": drop_every_fourth, "crash": crash_on_odd},
                                   ledger=ledger)
        steps, rejected = read_ledger(ledger)
        emitted = sorted(i for step in steps for i in step)
        self.assertEqual(emitted, [i for i in range(40) if i % 4 != 0 and i % 2 == 0])
        reasons = {}
        for entry in rejected:
            reasons.setdefault(entry["reason"], []).append(entry["id"])
        self.assertEqual(sorted(reasons["filter:every_fourth"]), list(range(0, 40, 4)))
        self.assertEqual(sorted(reasons["crash:exception"]), list(range(1, 40, 2)))
        self.assertTrue(all("ValueError: odd sample" in e["detail"] for e in rejected
                            if e["reason"] == "crash:exception"))

    def test_a_sample_stage_sees_numpy_arrays_and_may_change_their_values(self):
        config = self.config([("mask", "sample"), ("flip", "sample")], text=8, images=8)

        def mask_all_but_last(sample):
            self.assertEqual(sample["input_ids"].dtype, np.int32)
            labels = sample["labels"]
            supervised = np.flatnonzero(labels != -100)
            labels[supervised[:-1]] = -100
            return sample

        def flip(sample):
            for image in sample["images"]:
                h, w = image["grid"]
                self.assertEqual(image["pixels"].shape, (h * 14, w * 14, 3))
                image["pixels"] = image["pixels"][:, ::-1, :].copy()
            return sample

        _, plain = self.run_epoch(self.config([], text=8, images=8), {})
        _, staged = self.run_epoch(config, {"mask": mask_all_but_last, "flip": flip})
        self.assertEqual(sum(info.labels for _, info in staged),
                         sum(info.samples for _, info in staged))
        flipped = [b["pixel_values"] for b, _ in staged if len(b["pixel_values"])]
        original = [b["pixel_values"] for b, _ in plain if len(b["pixel_values"])]
        self.assertEqual(len(flipped), len(original))
        self.assertTrue(any(not np.array_equal(a, b) for a, b in zip(flipped, original)))

    def test_a_record_stage_crops_from_the_header_and_the_grid_follows(self):
        config = self.config([("crop", "record")], text=0, images=6)

        def left_half(record):
            for image in record["images"]:
                self.assertIsNone(image["crop"])
                image["crop"] = (0, 0, max(1, image["width"] // 2), image["height"])
            return record

        _, plain = self.run_epoch(self.config([], text=0, images=6), {})
        _, cropped = self.run_epoch(config, {"crop": left_half})
        columns = lambda run: sorted(int(c) for b, _ in run for c in b["image_grid_thw"][:, 2])  # noqa: E731
        self.assertEqual(len(columns(plain)), len(columns(cropped)))
        self.assertLess(sum(columns(cropped)), sum(columns(plain)))

    def test_a_sample_stage_that_changes_a_shape_fails_the_epoch_naming_it(self):
        config = self.config([("cut", "sample")], text=8)

        def cut(sample):
            sample["input_ids"] = sample["input_ids"][:-1]
            return sample

        with self.assertRaisesRegex(RuntimeError, "stage cut changed input_ids of sample"):
            self.run_epoch(config, {"cut": cut})

    def test_a_callable_for_no_stage_is_a_config_error(self):
        config = self.config([("prompt", "record")], text=4)
        with self.assertRaisesRegex(odbatch.ConfigError, "stages\\[other\\]"):
            self.run_epoch(config, {"prompt": lambda r: r, "other": lambda r: r})
        with self.assertRaisesRegex(odbatch.ConfigError, "stage\\[0\\].type"):
            self.run_epoch(config, {})


if __name__ == "__main__":
    unittest.main()
