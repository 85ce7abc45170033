"""The habits of a torch user: iterating the pipeline, set_epoch, len, state_dict, tensors in a
dict with StepInfo beside it in torch's dtypes, pin_memory, typed errors, the abort hook, the
IterableDataset adapter in a DataLoader, and the log level."""

import ast
import io
import os
import tempfile
import time
import unittest
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

import odbatch
from odbatch.torch import IterableDataset
from support import ScratchTestCase, records


def ids_of(pipe):
    """The sample ids of each remaining batch of the current epoch."""
    out = []
    for _ in pipe:
        out.append(pipe.step_info.sample_ids.tolist())
    return out


class Iteration(ScratchTestCase):
    def setUp(self):
        super().setUp()
        self.config = self.write_config(records(text=120, images=0), budget=1024)

    def test_set_epoch_chooses_the_epoch_and_iteration_goes_on_to_the_next(self):
        pipe = odbatch.Pipeline(self.config, tensors="torch")
        pipe.set_epoch(3)
        third = ids_of(pipe)
        self.assertEqual(pipe.step_info.epoch, 3)
        fourth = ids_of(pipe)  # no set_epoch: the epoch after
        self.assertEqual(pipe.step_info.epoch, 4)
        pipe.set_epoch(3)
        self.assertEqual(ids_of(pipe), third)  # the same epoch, the same batches
        self.assertNotEqual(third, fourth)

    def test_len_is_known_after_the_epoch_and_estimated_before(self):
        config = self.write_config(records(text=400, images=0), budget=1024)
        pipe = odbatch.Pipeline(config)
        with self.assertRaisesRegex(TypeError, "not known before the epoch's last round.*estimated_len"):
            len(pipe)
        self.assertIsNone(pipe.estimated_len())
        iterator = iter(pipe)
        taken = 0
        # The warm-up's rounds (2, 4, 8 and 16 of the window's 32 samples) make small steps: the
        # estimate goes by the last finished round, here the first whole window.
        while taken == 0 or pipe.step_info.round < 5:
            next(iterator)
            taken += 1
        estimate = pipe.estimated_len()
        with self.assertRaises(TypeError):  # prefetch 4: the last round is far ahead
            len(pipe)
        steps = taken + sum(1 for _ in iterator)
        self.assertGreater(steps, 20)
        self.assertEqual(len(pipe), steps)
        self.assertLess(abs(estimate - steps), steps / 2)
        pipe.set_epoch(0)
        self.assertEqual(len(pipe), steps)  # a completed epoch's count is exact
        pipe.set_epoch(1)
        with self.assertRaises(TypeError):
            len(pipe)
        self.assertEqual(pipe.estimated_len(), steps)
        # list() asks len() first and takes the TypeError as "unknown".
        self.assertGreater(len(list(pipe)), 0)

    def test_len_is_known_once_the_last_round_is_planned(self):
        config = self.write_config(records(text=120, images=0), budget=1024,
                                   extra="prefetch = 64\n")
        whole = sum(1 for _ in odbatch.Pipeline(config))
        self.assertLess(whole, 64)
        pipe = odbatch.Pipeline(config)
        next(iter(pipe))
        # The whole epoch fits the queue: its last round is planned while one batch is taken.
        deadline = time.monotonic() + 60
        while True:
            try:
                known = len(pipe)
                break
            except TypeError:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)
        self.assertEqual(known, whole)
        self.assertEqual(pipe.steps_taken, 1)

    def test_no_silent_restart_mid_epoch(self):
        pipe = odbatch.Pipeline(self.config)
        iterator = iter(pipe)
        next(iterator)
        next(iterator)
        with self.assertRaisesRegex(RuntimeError, "epoch 0 is unfinished.*restart=True"):
            pipe.start_epoch(1)
        pipe.set_epoch(5)
        with self.assertRaisesRegex(RuntimeError, r"set_epoch\(5\) while epoch 0 is unfinished"):
            iter(pipe)
        pipe.set_epoch(0)
        rest = sum(1 for _ in pipe)  # the unfinished epoch itself goes on
        self.assertEqual(rest + 2, len(pipe))
        iterator = iter(pipe)
        next(iterator)
        pipe.start_epoch(0, restart=True)
        self.assertEqual(sum(1 for _ in pipe), len(pipe))

    def test_next_after_close_is_a_clear_error(self):
        pipe = odbatch.Pipeline(self.config)
        next(iter(pipe))
        pipe.close()
        self.assertTrue(pipe.closed)
        with self.assertRaisesRegex(RuntimeError, "the Pipeline is closed"):
            next(pipe)
        with self.assertRaisesRegex(RuntimeError, "the Pipeline is closed"):
            pipe.state_dict()


class Batches(ScratchTestCase):
    def test_tensors_in_a_dict_in_torch_dtypes(self):
        config = self.write_config(records(text=40, images=0), budget=1024)
        pipe = odbatch.Pipeline(config, tensors="torch")
        batch = next(iter(pipe))
        self.assertEqual(set(batch), {"input_ids", "labels", "attention_mask", "pixel_values",
                                      "image_grid_thw"})
        moved = {k: v.to("cpu", non_blocking=True) for k, v in batch.items()}
        self.assertEqual(moved["input_ids"].dtype, torch.int64)
        self.assertEqual(moved["labels"].dtype, torch.int64)
        self.assertEqual(moved["attention_mask"].dtype, torch.bool)
        self.assertIsInstance(pipe.step_info, odbatch.StepInfo)
        logits = torch.zeros(*batch["labels"].shape, 7)
        targets = batch["labels"].clamp(max=6).masked_fill(batch["labels"] < 0, -100)
        self.assertTrue(torch.isfinite(F.cross_entropy(logits.flatten(0, 1), targets.flatten(),
                                                       ignore_index=-100)))
        # The mask is where the ids are not padding.
        self.assertTrue(torch.equal(batch["attention_mask"].sum(1) > 0,
                                    torch.ones(batch["input_ids"].shape[0], dtype=torch.bool)))

    def test_dtypes_by_option_and_return_info(self):
        config = self.write_config(records(text=40, images=0), layout="packed", budget=1024)
        pipe = odbatch.Pipeline(config, tensors="torch", return_info=True,
                                dtypes={"input_ids": "int32", "position_ids": "int32",
                                        "cu_seqlens": "int64"})
        batch, info = next(iter(pipe))
        self.assertEqual(batch["input_ids"].dtype, torch.int32)
        self.assertEqual(batch["labels"].dtype, torch.int64)
        self.assertEqual(batch["position_ids"].dtype, torch.int32)
        self.assertEqual(batch["cu_seqlens"].dtype, torch.int64)
        self.assertEqual(int(batch["cu_seqlens"][-1]), batch["input_ids"].shape[0])
        self.assertEqual(info.step, 0)

    def test_pin_memory_without_cuda_warns_and_does_not_pin(self):
        config = self.write_config(records(text=20, images=0), budget=1024)
        if odbatch.pinning_available():
            pipe = odbatch.Pipeline(config, tensors="torch", pin_memory=True)
            self.assertTrue(all(t.is_pinned() for t in next(iter(pipe)).values()))
            return
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pipe = odbatch.Pipeline(config, tensors="torch", pin_memory=True)
        self.assertTrue(any("pin_memory=True but no CUDA device" in str(w.message) for w in caught))
        self.assertFalse(pipe.pin_memory)
        self.assertIsInstance(next(iter(pipe))["input_ids"], torch.Tensor)


class StateDicts(ScratchTestCase):
    def test_state_dict_round_trips_through_torch_save_and_resumes_exactly(self):
        config = self.write_config(records(text=150, images=6), budget=1024)
        pipe = odbatch.Pipeline(config)
        pipe.set_epoch(2)
        whole = ids_of(pipe)
        self.assertGreater(len(whole), 6)
        pipe.set_epoch(2)
        iterator = iter(pipe)
        for _ in range(4):
            next(iterator)
        state = pipe.state_dict()
        self.assertEqual((state["epoch"], state["steps_taken"]), (2, 4))
        buffer = io.BytesIO()
        torch.save({"dataloader": state}, buffer)
        buffer.seek(0)
        loaded = torch.load(buffer)["dataloader"]
        resumed = odbatch.Pipeline(config)
        resumed.load_state_dict(loaded)
        self.assertEqual(ids_of(resumed), whole[4:])
        # Loading into a pipeline already in use remakes it.
        pipe.load_state_dict(loaded)
        self.assertEqual(ids_of(pipe), whole[4:])
        # A state dict at an epoch's end names the next epoch.
        self.assertEqual(pipe.state_dict()["epoch"], 3)

    def test_a_foreign_dict_is_refused(self):
        config = self.write_config(records(text=20, images=0))
        pipe = odbatch.Pipeline(config)
        with self.assertRaisesRegex(odbatch.CheckpointError, "not an odbatch Pipeline state dict"):
            pipe.load_state_dict({"samples_yielded": 3})
        state = pipe.state_dict()
        state["checkpoint"] = b"garbage"
        with self.assertRaisesRegex(odbatch.CheckpointError, "not an odbatch checkpoint"):
            pipe.load_state_dict(state)


class AbortHook(ScratchTestCase):
    def test_abort_calls_the_hook_and_fails_the_epoch(self):
        config = self.write_config(records(text=120, images=0), budget=1024)
        reasons = []
        pipe = odbatch.Pipeline(config, on_abort=reasons.append)
        next(iter(pipe))
        pipe.abort("the trainer's NCCL timed out")
        with self.assertRaisesRegex(RuntimeError, "aborted: the trainer's NCCL timed out"):
            for _ in pipe:
                pass
        self.assertEqual(len(reasons), 1)
        self.assertIn("the trainer's NCCL timed out", reasons[0])
        pipe.close()

    def test_the_hook_must_be_callable(self):
        config = self.write_config(records(text=20, images=0))
        with self.assertRaisesRegex(TypeError, "on_abort must be callable"):
            odbatch.Pipeline(config, on_abort="print")


class DataLoaderAdapter(ScratchTestCase):
    def test_a_dataloader_with_batch_size_none_passes_the_batches_on(self):
        config = self.write_config(records(text=120, images=0), budget=1024)
        direct = odbatch.Pipeline(config, tensors="torch")
        expected = [b["input_ids"].clone() for b in direct]
        dataset = IterableDataset(odbatch.Pipeline(config, tensors="torch"))
        loader = dataset.dataloader()
        dataset.set_epoch(0)
        got = [b["input_ids"] for b in loader]
        self.assertEqual(len(got), len(expected))
        self.assertTrue(all(torch.equal(a, b) for a, b in zip(got, expected)))
        self.assertEqual(len(loader), len(expected))  # known once the epoch is done
        self.assertEqual(dataset.step_info.step, len(expected) - 1)
        with self.assertRaisesRegex(ValueError, "batch_size is the pipeline's"):
            dataset.dataloader(batch_size=4)
        with self.assertRaisesRegex(ValueError, 'tensors="torch"'):
            IterableDataset(odbatch.Pipeline(config))

    def test_workers_are_refused(self):
        config = self.write_config(records(text=20, images=0))
        dataset = IterableDataset(odbatch.Pipeline(config, tensors="torch"))
        loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=1)
        with self.assertRaisesRegex(RuntimeError, "num_workers=0"):
            next(iter(loader))


class Logging(ScratchTestCase):
    def stderr_of(self, action):
        """What the process writes to file descriptor 2 (where odbatch logs) during action()."""
        with tempfile.TemporaryFile() as captured:
            saved = os.dup(2)
            os.dup2(captured.fileno(), 2)
            try:
                action()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            captured.seek(0)
            return captured.read().decode()

    def test_info_logs_the_epoch_with_the_rank(self):
        config = self.write_config(records(text=60, images=0))
        before = odbatch.log_level()
        odbatch.set_log_level("info")
        try:
            self.assertEqual(odbatch.log_level(), "info")
            text = self.stderr_of(lambda: list(odbatch.Pipeline(config)))
        finally:
            odbatch.set_log_level(before)
        self.assertIn("[odbatch] [info] [rank 0] pipeline ready: 60 records", text)
        self.assertIn("[odbatch] [info] [rank 0] epoch 0 ended after ", text)
        self.assertEqual(self.stderr_of(lambda: list(odbatch.Pipeline(config))), "")

    def test_an_unknown_level_is_refused(self):
        with self.assertRaisesRegex(ValueError, "log level loud: expected trace, debug"):
            odbatch.set_log_level("loud")


class TypeStubs(unittest.TestCase):
    """The .pyi stubs beside the package name everything it offers, so IDEs complete it all."""

    def stub_names(self, module):
        stub = Path(module.__file__).with_suffix(".pyi")
        tree = ast.parse(stub.read_text(encoding="utf-8"))
        names, classes = set(), {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            if isinstance(node, ast.AnnAssign):
                names.add(node.target.id)
            if isinstance(node, ast.ClassDef):
                classes[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                classes[node.name] |= {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
        return names, classes

    def public(self, cls):
        return {n for n in vars(cls) if not n.startswith("_")} | (
            {"__init__", "__iter__", "__next__", "__len__"} & set(vars(cls)))

    def test_the_package(self):
        names, classes = self.stub_names(odbatch)
        self.assertLessEqual(set(odbatch.__all__), names)
        self.assertLessEqual(self.public(odbatch.Pipeline), classes["Pipeline"])
        step_info = {n for n in dir(odbatch.StepInfo) if not n.startswith("_")}
        self.assertLessEqual(step_info, classes["StepInfo"])
        self.assertEqual(classes["ConfigError"], {"file", "line", "column", "key"})
        self.assertEqual(classes["PeerFailure"], {"rank", "round"})
        self.assertTrue((Path(odbatch.__file__).parent / "py.typed").exists())

    def test_the_torch_adapter(self):
        import odbatch.torch as adapter

        _, classes = self.stub_names(adapter)
        self.assertLessEqual(self.public(adapter.IterableDataset), classes["IterableDataset"])


if __name__ == "__main__":
    unittest.main()
