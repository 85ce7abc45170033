"""odbatch: online dynamic batching for LLM and VLM training.

    import odbatch
    pipe = odbatch.Pipeline("pipeline.toml")        # torchrun's RANK, WORLD_SIZE, MASTER_ADDR, ...
    for epoch in range(epochs):
        for batch in pipe.epoch(epoch):              # dicts of numpy arrays (or torch tensors)
            info = batch["step_info"]
            loss = model(batch) * info.loss_scale    # the rank's mean loss times its scale

Every rank yields the same number of batches per epoch; IDLE batches (info.idle, loss_scale 0)
keep the trainer's collectives aligned and must be run like any other step.

Arrays are views of the batch's own buffers, not copies: each keeps its batch alive, so they stay
valid for as long as they (or tensors made from them) are referenced; the batch's memory goes
back to the pipeline once none is.
"""

import json
from os import fspath

from ._odbatch import CheckpointError, StepInfo, __version__, iterate_in_cpp, join_states
from ._odbatch import Pipeline as _NativePipeline
from ._odbatch import load_state as _load_state
from ._odbatch import save_state as _save_state

__all__ = [
    "CheckpointError",
    "Pipeline",
    "StepInfo",
    "__version__",
    "iterate_in_cpp",
    "join_states",
    "load_state",
    "save_state",
]


def save_state(file, part, timeout_seconds=600.0):
    """Every rank calls it with its pipe.state() at the same step; rank 0 waits for every part and
    writes the joined checkpoint to `file` (the ranks share a file system)."""
    _save_state(fspath(file), part, timeout_seconds)


def load_state(file):
    """A checkpoint file's content, for Pipeline(..., resume_from=...)."""
    return _load_state(fspath(file))

_TENSOR_KINDS = ("numpy", "torch")


class Pipeline:
    """One data-parallel rank's pipeline, configured by a TOML file (docs/pipeline-toml.md).

    The rank and world come from torchrun's environment variables (RANK, WORLD_SIZE, LOCAL_RANK,
    MASTER_ADDR, MASTER_PORT); without them, a single rank. tensors="torch" yields torch tensors
    (zero-copy, on the CPU) instead of numpy arrays. pixel_values are uint8 bytes (every image's
    HWC pixels), or with [images] pixel_values = "float32" / "bfloat16" Qwen2-VL's
    (patches, 3 * temporal_patch_size * patch_size**2) matrix: float32, or bfloat16 as a
    torch.bfloat16 tensor (numpy arrays hold its bits as uint16). ledger names a file for
    `odbatch audit`.
    resume_from takes a checkpoint (bytes from join_states() or load_state(), or a single rank's
    state()): the pipeline goes on in the checkpoint's epoch where it stood, so iterating it
    yields the rest of that epoch (docs/checkpoint.md).
    """

    def __init__(self, config, *, tensors="numpy", ledger=None, resume_from=None):
        if tensors not in _TENSOR_KINDS:
            raise ValueError(f"tensors must be one of {_TENSOR_KINDS}, not {tensors!r}")
        self._to_tensor = None
        self._bfloat16 = None
        self._native = _NativePipeline(
            fspath(config), None if ledger is None else fspath(ledger), resume_from
        )
        if tensors == "torch":
            import torch  # only a torch user needs it

            self._to_tensor = torch.from_numpy
            # numpy has no bfloat16: the native arrays hold its bits as uint16.
            if self._native.pixel_dtype == "bfloat16":
                self._bfloat16 = torch.bfloat16

    def state(self):
        """This rank's part of a checkpoint after the batches taken so far (small bytes)."""
        return self._native.state()

    def start_epoch(self, epoch):
        """Starts an epoch: its shard is a function of seed, epoch, rank and world size."""
        self._native.start_epoch(epoch)

    def epoch(self, epoch):
        """Starts `epoch` and returns the iterator over its batches."""
        self.start_epoch(epoch)
        return self

    def __iter__(self):
        return self

    def __next__(self):
        batch = self._native.next_batch()
        if batch is None:
            raise StopIteration
        if self._to_tensor is not None:
            if self._bfloat16 is not None:
                # Through int16: torch before 2.3 takes no uint16 arrays.
                batch["pixel_values"] = batch["pixel_values"].view("int16")
            for key, value in batch.items():
                if key != "step_info":
                    batch[key] = self._to_tensor(value)
            if self._bfloat16 is not None:
                batch["pixel_values"] = batch["pixel_values"].view(self._bfloat16)
        return batch

    def next_batch(self):
        """The next batch, or None at the end of the epoch."""
        try:
            return self.__next__()
        except StopIteration:
            return None

    def depart(self):
        """Leaves the run at an agreed step (every rank after the same number of batches)."""
        self._native.depart()

    def abort(self, reason):
        """Fails the epoch on every rank with `reason`."""
        self._native.abort(reason)

    def close(self):
        """Stops the pipeline's threads now rather than when it is collected."""
        self._native = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def stats(self):
        """The pipeline's counters and rates as a dict (docs/metrics.md): samples/s, tokens/s,
        padding efficiency, queue depths, blocked time per stage, IDLE steps, rejections by
        reason, round latency."""
        return json.loads(self._native.stats_json())

    @property
    def metrics_port(self):
        """The Prometheus endpoint's port ([metrics] in the TOML), 0 when it is off."""
        return self._native.metrics_port

    @property
    def native(self):
        """The native pipeline (for iterate_in_cpp)."""
        return self._native

    @property
    def vocab_size(self):
        return self._native.vocab_size

    @property
    def dataset_records(self):
        return self._native.dataset_records

    @property
    def shard_records(self):
        return self._native.shard_records

    @property
    def pixel_dtype(self):
        """What batches' pixel_values hold: "uint8", "float32" or "bfloat16"."""
        return self._native.pixel_dtype
