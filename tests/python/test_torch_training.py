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
            for batch in pipe.epoch(epoch):
                self.assertIsInstance(batch["input_ids"], torch.Tensor)
                info = batch["step_info"]
                loss = mean_loss(model, batch)
                optimizer.zero_grad()
                (loss * info.loss_scale).backward()
                optimizer.step()
                losses.append(loss.item())
            epoch_losses.append(sum(losses) / len(losses))
        self.assertLess(epoch_losses[-1], epoch_losses[0] - 0.5, epoch_losses)


if __name__ == "__main__":
    unittest.main()
