"""The binding yields exactly the C++ API's batches, as zero-copy views that keep their batch
alive, with step info, and reports bad input the way the C++ API does."""

import gc
import json
import subprocess
import unittest
import urllib.request

import numpy as np

import odbatch
from support import BATCH_DUMP, ScratchTestCase, records


class SameBatchesAsCpp(ScratchTestCase):
    def check_layout(self, layout):
        config = self.write_config(records(text=120, images=12), layout=layout)
        dump = self.dir / f"{layout}.jsonl"
        subprocess.run([BATCH_DUMP, str(config), "1", str(dump)], check=True)
        expected = [json.loads(line) for line in dump.read_text().splitlines()]
        pipe = odbatch.Pipeline(config, return_info=True)
        pipe.set_epoch(1)
        got = list(pipe)
        self.assertGreater(len(expected), 3)
        self.assertEqual(len(got), len(expected))
        for (batch, info), want in zip(got, expected):
            self.assertNotIn("step_info", batch)
            self.assertEqual(info.step, want["step"])
            self.assertEqual(info.idle, want["idle"])
            self.assertEqual(info.loss_scale, want["loss_scale"])
            self.assertEqual(info.samples_this_step, want["samples_this_step"])
            self.assertEqual(info.sample_ids.tolist(), want["sample_ids"])
            # Plain values for logs: the dict goes through JSON and back unchanged.
            plain = info.to_dict()
            self.assertEqual(json.loads(json.dumps(plain)), plain)
            self.assertEqual(plain["sample_ids"], want["sample_ids"])
            self.assertEqual((plain["step"], plain["idle"], plain["loss_scale"]),
                             (info.step, info.idle, info.loss_scale))
            names = ["input_ids", "labels", "pixel_values", "image_grid_thw"]
            names += ["attention_mask"] if layout == "padded" else ["cu_seqlens", "position_ids"]
            for name in names:
                with self.subTest(step=info.step, array=name):
                    self.assertTrue(np.array_equal(batch[name].reshape(-1), np.array(want[name], dtype=batch[name].dtype)))
            if layout == "padded":
                self.assertEqual(batch["input_ids"].shape, (want["rows"], want["seq_len"]))
            else:
                self.assertEqual(batch["input_ids"].shape, (want["seq_len"],))
            self.assertEqual(batch["image_grid_thw"].shape[1:], (3,))
        self.assertTrue(any(len(b["pixel_values"]) > 0 for b, _ in got))
        # Defaults a torch trainer wants: int64 ids and labels, a bool mask.
        batch = got[0][0]
        self.assertEqual(batch["input_ids"].dtype, np.int64)
        self.assertEqual(batch["labels"].dtype, np.int64)
        self.assertEqual(batch["image_grid_thw"].dtype, np.int64)
        if layout == "padded":
            self.assertEqual(batch["attention_mask"].dtype, np.bool_)
        else:
            self.assertEqual(batch["position_ids"].dtype, np.int64)
            self.assertEqual(batch["cu_seqlens"].dtype, np.int32)

    def test_padded(self):
        self.check_layout("padded")

    def test_packed(self):
        self.check_layout("packed")


class Views(ScratchTestCase):
    def test_arrays_are_views_that_keep_their_batch(self):
        config = self.write_config(records(text=200, images=0), budget=1024)
        pipe = odbatch.Pipeline(config, dtypes={"input_ids": "int32"})
        pipe.start_epoch(0)
        first = pipe.next_batch()
        ids = first["input_ids"]
        kept = ids.copy()
        self.assertFalse(ids.flags["OWNDATA"])  # a view of the batch's buffer
        del first
        gc.collect()
        # Later batches reuse returned buffers; one still referenced is never reused.
        rest = 0
        for batch in pipe:
            rest += 1
        self.assertGreater(rest, 3)
        self.assertTrue(np.array_equal(ids, kept))
        self.assertEqual(ids.dtype, np.int32)

    def test_epoch_end_and_iteration_protocol(self):
        config = self.write_config(records(text=40, images=0))
        with odbatch.Pipeline(config) as pipe:
            first = sum(1 for _ in pipe)
            self.assertIsNone(pipe.next_batch())  # stays ended until the next epoch
            second = sum(1 for _ in pipe)
            self.assertEqual(pipe.current_epoch, 1)
            self.assertGreater(first, 0)
            self.assertGreater(second, 0)
            self.assertEqual(pipe.dataset_records, 40)
            self.assertGreater(pipe.vocab_size, 1000)


class Stats(ScratchTestCase):
    def test_stats_and_metrics_endpoint(self):
        config = self.write_config(
            records(text=60, images=0), extra="[metrics]\nenabled = true\nport = 0\n"
        )
        pipe = odbatch.Pipeline(config, return_info=True)
        batches = list(pipe)
        stats = pipe.stats()
        self.assertEqual(stats["batches"], len(batches))
        self.assertEqual(stats["samples_emitted"], sum(info.samples for _, info in batches))
        self.assertGreater(stats["tokens_per_second"], 0)
        port = pipe.metrics_port
        self.assertGreater(port, 0)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as reply:
            text = reply.read().decode()
        self.assertIn(f'odbatch_batches_total{{rank="0"}} {len(batches)}', text.splitlines())


class Checkpoints(ScratchTestCase):
    def test_resume_yields_the_rest_of_the_epoch(self):
        config = self.write_config(records(text=150, images=6), budget=1024)
        whole = [i.sample_ids.tolist() for _, i in odbatch.Pipeline(config, return_info=True)]
        self.assertGreater(len(whole), 6)
        pipe = odbatch.Pipeline(config)
        for _ in range(5):
            next(pipe)
        file = self.dir / "state.ckpt"
        odbatch.save_state(file, pipe.state())
        del pipe
        resumed = odbatch.Pipeline(config, return_info=True, resume_from=odbatch.load_state(file))
        rest = [info.sample_ids.tolist() for _, info in resumed]
        self.assertEqual(rest, whole[5:])
        self.assertEqual(odbatch.join_states([odbatch.load_state(file)]), odbatch.load_state(file))

    def test_a_corrupt_checkpoint_is_refused(self):
        config = self.write_config(records(text=20, images=0))
        with self.assertRaisesRegex(odbatch.CheckpointError, "not an odbatch checkpoint"):
            odbatch.Pipeline(config, resume_from=b"nonsense").vocab_size


class PixelValues(ScratchTestCase):
    """[images] pixel_values = "float32" / "bfloat16": Qwen2-VL's (patches, 1176) matrix."""

    def config_with(self, dtype):
        config = self.write_config(records(text=10, images=12), layout="packed")
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("max_pixels = 200704\n",
                                       f'max_pixels = 200704\npixel_values = "{dtype}"\n'),
                          encoding="utf-8")
        return config

    def check(self, dtype, numpy_dtype):
        pipe = odbatch.Pipeline(self.config_with(dtype))
        self.assertEqual(pipe.pixel_dtype, dtype)
        patches = 0
        for batch in pipe:
            values, grids = batch["pixel_values"], batch["image_grid_thw"]
            self.assertEqual(values.dtype, numpy_dtype)
            self.assertEqual(values.shape, (int(grids.prod(axis=1).sum()), 1176))
            patches += values.shape[0]
        self.assertGreater(patches, 0)

    def test_float32(self):
        self.check("float32", np.float32)

    def test_bfloat16_bits(self):
        self.check("bfloat16", np.uint16)

    def test_uint8_stays_bytes(self):
        pipe = odbatch.Pipeline(self.config_with("uint8"))
        self.assertEqual(pipe.pixel_dtype, "uint8")
        batches = [b for b in pipe if len(b["image_grid_thw"])]
        self.assertTrue(batches)
        for batch in batches:
            pixels, grids = batch["pixel_values"], batch["image_grid_thw"]
            self.assertEqual(pixels.dtype, np.uint8)
            # Rows of RGB, as the C++ Batch::pixel_values_shape(): each image's height x width
            # pixels (grid x 14 on each side), one image after another.
            self.assertEqual(pixels.shape, (int(grids.prod(axis=1).sum()) * 14 * 14, 3))


class Errors(ScratchTestCase):
    def test_unknown_key_is_a_config_error_with_its_place(self):
        config = self.write_config(records(text=5, images=0), extra="no_such_key = 1\n")
        with self.assertRaisesRegex(odbatch.ConfigError, "no_such_key") as raised:
            odbatch.Pipeline(config)
        error = raised.exception
        self.assertIsInstance(error, ValueError)
        self.assertEqual(error.file, str(config))
        lines = config.read_text(encoding="utf-8").splitlines()
        self.assertEqual(lines[error.line - 1], "no_such_key = 1")
        self.assertEqual(error.key, "pipeline.no_such_key")

    def test_missing_file(self):
        with self.assertRaisesRegex(odbatch.ConfigError, "does-not-exist.toml") as raised:
            odbatch.Pipeline(self.dir / "does-not-exist.toml")
        self.assertEqual(raised.exception.file, str(self.dir / "does-not-exist.toml"))
        self.assertIsNone(raised.exception.line)

    def test_a_missing_dataset_is_a_data_error(self):
        config = self.write_config(records(text=5, images=0))
        (self.dir / "records.jsonl").unlink()
        with self.assertRaisesRegex(odbatch.DataError, "records.jsonl"):
            odbatch.Pipeline(config).vocab_size

    def test_a_bad_record_under_fail_is_a_data_error(self):
        config = self.write_config(records(text=30, images=0))
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("[source]\n", '[source]\non_bad_record = "fail"\n'),
                          encoding="utf-8")
        with (self.dir / "records.jsonl").open("a", encoding="utf-8") as data:
            data.write("{not json\n")
        with self.assertRaisesRegex(odbatch.DataError, "records.jsonl:31: malformed JSON"):
            list(odbatch.Pipeline(config))

    def test_bad_dtypes(self):
        config = self.write_config(records(text=5, images=0))
        with self.assertRaisesRegex(ValueError, "attention_mask.*float16"):
            odbatch.Pipeline(config, dtypes={"attention_mask": "float16"}).vocab_size
        with self.assertRaisesRegex(ValueError, "no tensor is named .inputs"):
            odbatch.Pipeline(config, dtypes={"inputs": "int32"}).vocab_size

    def test_bad_tensor_kind(self):
        with self.assertRaisesRegex(ValueError, "tensors"):
            odbatch.Pipeline(self.dir / "x.toml", tensors="jax")


if __name__ == "__main__":
    unittest.main()
