"""A torch training loop over the real dataset, iterating the pipeline's torch tensors with the
loss scaled by step_info.loss_scale: the loss goes down."""

import unittest

import torch

import odbatch
from support import ScratchTestCase, records
from tiny_lm import TinyLM, mean_loss


class TorchTraining(ScratchTestCase):
    def test_loss_goes_down(self):
        torch.manual_seed(0)
        config = self.write_config(records(text=160, images=0), layout="packed", budget=2048)
        pipe = odbatch.Pipeline(config, tensors="torch")
        model = TinyLM(pipe.vocab_size)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
        epoch_losses = []
        for epoch in range(3):
            losses = []
            pipe.set_epoch(epoch)
            for batch in pipe:
                self.assertIsInstance(batch["input_ids"], torch.Tensor)
                info = pipe.step_info
                loss = mean_loss(model, batch)
                optimizer.zero_grad()
                (loss * info.loss_scale).backward()
                optimizer.step()
                losses.append(loss.item())
            epoch_losses.append(sum(losses) / len(losses))
        self.assertLess(epoch_losses[-1], epoch_losses[0] - 0.5, epoch_losses)


class BfloatPixelValues(ScratchTestCase):
    """pixel_values = "bfloat16" yields torch.bfloat16 tensors equal to torch's own rounding
    (.to(torch.bfloat16)) of the float32 pipeline's values."""

    def pipeline(self, dtype, tensors):
        config = self.write_config(records(text=10, images=12), layout="packed")
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("max_pixels = 200704\n",
                                       f'max_pixels = 200704\npixel_values = "{dtype}"\n'),
                          encoding="utf-8")
        return odbatch.Pipeline(config, tensors=tensors)

    def test_bfloat16_is_torch_rounding_of_float32(self):
        floats = [b["pixel_values"] for b in self.pipeline("float32", "torch")]
        halves = [b["pixel_values"] for b in self.pipeline("bfloat16", "torch")]
        self.assertEqual(len(floats), len(halves))
        self.assertGreater(sum(f.shape[0] for f in floats), 0)
        for single, half in zip(floats, halves):
            self.assertEqual(single.dtype, torch.float32)
            self.assertEqual(half.dtype, torch.bfloat16)
            self.assertEqual(half.shape, single.shape)
            self.assertTrue(torch.equal(single.to(torch.bfloat16), half))


if __name__ == "__main__":
    unittest.main()
