"""A tiny torch language model for the binding's training tests: an embedding and a linear layer
over the vocabulary, trained on a batch's next-token targets."""

import torch
import torch.nn.functional as F


class TinyLM(torch.nn.Module):
    def __init__(self, vocab_size, dim=32):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab_size, dim)
        self.out = torch.nn.Linear(dim, vocab_size)

    def forward(self, input_ids):
        return self.out(self.embed(input_ids))


def mean_loss(model, batch):
    """The rank's mean next-token loss over the batch's targets (-100 is ignored). Padded rows
    shift within the row; a packed stream shifts whole, since each row's first label is -100."""
    logits = model(batch["input_ids"])
    targets = batch["labels"]  # int64: cross_entropy takes it as it is
    if logits.dim() == 3:
        logits, targets = logits[:, :-1], targets[:, 1:]
    else:
        logits, targets = logits[:-1], targets[1:]
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
