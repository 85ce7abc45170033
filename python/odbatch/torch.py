"""odbatch for trainers that take a torch IterableDataset or DataLoader (HF Trainer, Lightning,
accelerate, or a plain loop):

    from odbatch.torch import IterableDataset
    dataset = IterableDataset(odbatch.Pipeline("pipeline.toml", tensors="torch"))
    loader = dataset.dataloader()          # DataLoader(dataset, batch_size=None, num_workers=0)
    for epoch in range(epochs):
        dataset.set_epoch(epoch)           # accelerate and HF Trainer call it themselves
        for batch in loader:               # the pipeline's batches as they are: dicts of tensors
            loss = model(**batch).loss * dataset.step_info.loss_scale

The pipeline batches already (batch_size=None: the DataLoader passes every batch on unchanged) and
runs its own threads, so the DataLoader must have no workers. Every rank yields the same number of
batches per epoch, IDLE ones included: a trainer that runs every batch it is given keeps its
collectives aligned without DDP's Join.
"""

import torch.utils.data

import odbatch


class IterableDataset(torch.utils.data.IterableDataset):
    """A Pipeline as a torch IterableDataset whose items are whole batches (dicts of tensors).

    set_epoch, len (TypeError while unknown, so trainers fall back to max_steps), state_dict and
    load_state_dict go to the pipeline; so a torchdata StatefulDataLoader over it saves and
    restores the pipeline's position."""

    def __init__(self, pipeline):
        if not isinstance(pipeline, odbatch.Pipeline):
            raise TypeError(f"IterableDataset takes an odbatch.Pipeline, not {type(pipeline).__name__}")
        if pipeline._to_tensor is None or pipeline._return_info:
            raise ValueError(
                "IterableDataset needs a Pipeline made with tensors=\"torch\" and without "
                "return_info (its items go to the model as they are)"
            )
        super().__init__()
        self.pipeline = pipeline

    def __iter__(self):
        if torch.utils.data.get_worker_info() is not None:
            raise RuntimeError(
                "an odbatch pipeline cannot run in DataLoader worker processes: use "
                "DataLoader(dataset, batch_size=None, num_workers=0) (dataset.dataloader())"
            )
        return iter(self.pipeline)

    def __len__(self):
        return len(self.pipeline)

    def set_epoch(self, epoch):
        self.pipeline.set_epoch(epoch)

    @property
    def step_info(self):
        """The StepInfo of the batch last yielded: its loss_scale, idle, sample ids, ..."""
        return self.pipeline.step_info

    def state_dict(self):
        return self.pipeline.state_dict()

    def load_state_dict(self, state_dict):
        self.pipeline.load_state_dict(state_dict)

    def dataloader(self, **options):
        """torch.utils.data.DataLoader(self, batch_size=None, num_workers=0, **options)."""
        for fixed in ("batch_size", "num_workers", "sampler", "batch_sampler", "shuffle"):
            if fixed in options:
                raise ValueError(f"dataloader(): {fixed} is the pipeline's to decide")
        return torch.utils.data.DataLoader(self, batch_size=None, num_workers=0, **options)
