"""odbatch: online dynamic batching for LLM and VLM training.

    import odbatch
    pipe = odbatch.Pipeline("pipeline.toml", tensors="torch")  # torchrun's RANK, WORLD_SIZE, ...
    for epoch in range(epochs):
        pipe.set_epoch(epoch)                     # as with DistributedSampler
        for batch in pipe:                        # a dict of tensors, nothing else
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            info = pipe.step_info                 # the StepInfo of the batch just taken
            loss = model(**batch).loss * info.loss_scale

Every rank yields the same number of batches per epoch; IDLE batches (info.idle, loss_scale 0)
keep the trainer's collectives aligned and must be run like any other step. docs/python.md has
the whole API.
"""

import json
import warnings
from os import fspath

from ._odbatch import (
    CheckpointError,
    ConfigError,
    DataError,
    PeerFailure,
    Reject,
    StepInfo,
    __version__,
    iterate_in_cpp,
    join_states,
    log_level,
    pinning_available,
    set_log_level,
)
from ._odbatch import Config as _Config
from ._odbatch import Pipeline as _NativePipeline
from ._odbatch import checkpoint_summary as _checkpoint_summary
from ._odbatch import load_state as _load_state
from ._odbatch import save_state as _save_state

__all__ = [
    "CheckpointError",
    "ConfigError",
    "DataError",
    "PeerFailure",
    "Pipeline",
    "Reject",
    "StepInfo",
    "__version__",
    "iterate_in_cpp",
    "join_state_dicts",
    "join_states",
    "load_state",
    "log_level",
    "pinning_available",
    "save_state",
    "set_log_level",
]

_TENSOR_KINDS = ("numpy", "torch")
_STATE_FORMAT = "odbatch.pipeline_state/1"


def save_state(file, part, timeout_seconds=600.0):
    """Every rank calls it with its pipe.state() at the same step; rank 0 waits for every part and
    writes the joined checkpoint to `file` (the ranks share a file system)."""
    _save_state(fspath(file), part, timeout_seconds)


def load_state(file):
    """A checkpoint file's content, for Pipeline(..., resume_from=...)."""
    return _load_state(fspath(file))


def _state_dict_of(checkpoint, rank, world_size):
    summary = _checkpoint_summary(checkpoint)
    return {
        "format": _STATE_FORMAT,
        "rank": rank,
        "world_size": summary["world_size"] if world_size is None else world_size,
        "epoch": summary["epoch"],
        "steps_taken": summary["steps_taken"],
        "ranks": summary["ranks"],
        "checkpoint": checkpoint,
    }


def join_state_dicts(state_dicts):
    """One state dict from every rank's state_dict(), for load_state_dict() at any world size."""
    parts = [_checkpoint_of(sd) for sd in state_dicts]
    return _state_dict_of(join_states(parts), None, None)


def _checkpoint_of(state_dict):
    if not isinstance(state_dict, dict) or state_dict.get("format") != _STATE_FORMAT:
        raise CheckpointError(
            f"not an odbatch Pipeline state dict (one from Pipeline.state_dict(), "
            f"whose 'format' is {_STATE_FORMAT!r})"
        )
    return state_dict["checkpoint"]


class Pipeline:
    """One data-parallel rank's loader, configured by a TOML file (docs/pipeline-toml.md).

    Iterating it yields the current epoch's batches as dicts of arrays (numpy, or torch tensors
    with tensors="torch"); pipe.step_info is the StepInfo of the batch last taken (or
    return_info=True yields (batch, info) pairs). set_epoch(e) chooses the next epoch, as with
    DistributedSampler; without it the epoch after the last one runs. See docs/python.md.

    The rank and world come from torchrun's environment variables (RANK, WORLD_SIZE, LOCAL_RANK,
    MASTER_ADDR, MASTER_PORT); without them, a single rank. The config file is read at once (a
    ConfigError says where it is wrong); the dataset is indexed, the tokenizer loaded and the
    ranks connected when the pipeline is first used (iterated, or a property read), so that
    load_state_dict() right after construction connects only once.

    dtypes overrides the tensors' dtypes: input_ids, labels, position_ids and image_grid_thw are
    int64 by default (int32 possible), attention_mask bool (uint8, int32, int64), cu_seqlens int32
    (int64). pin_memory=True makes every batch in page-locked memory, ready for
    .to(device, non_blocking=True); without a CUDA device it warns and does not pin, as torch's
    DataLoader does. resume_from takes a checkpoint (bytes from join_states(), load_state() or a
    rank's state()); load_state_dict() takes a state_dict(). on_abort(reason) is called from a
    loader thread as soon as the run fails on any rank (e.g. to abort the trainer's NCCL
    communicator); it must not call back into the pipeline. ledger names a file for
    `odbatch audit`.

    stages maps the type of each [[stage]] entry that names no plugin to a callable
    (docs/stages.md): a record stage gets the record as a dict (messages, images, fields,
    template_variables, id, source, seed), a sample stage numpy arrays (input_ids, labels, images'
    pixels); each returns the dict, changed or not, or raises odbatch.Reject(reason, detail).
    """

    def __init__(self, config, *, tensors="numpy", dtypes=None, pin_memory=False,
                 return_info=False, resume_from=None, on_abort=None, ledger=None, stages=None):
        if tensors not in _TENSOR_KINDS:
            raise ValueError(f"tensors must be one of {_TENSOR_KINDS}, not {tensors!r}")
        if on_abort is not None and not callable(on_abort):
            raise TypeError("on_abort must be callable with the reason (a str)")
        self._config = _Config(fspath(config))
        self._dtypes = dict(dtypes or {})
        self._pin = bool(pin_memory)
        if self._pin and not pinning_available():
            warnings.warn(
                "pin_memory=True but no CUDA device is available (or odbatch was built without "
                "CUDA): batches are not pinned",
                stacklevel=2,
            )
            self._pin = False
        self._return_info = bool(return_info)
        self._on_abort = on_abort
        self._ledger = None if ledger is None else fspath(ledger)
        self._stages = dict(stages or {})
        self._to_tensor = None
        self._bfloat16 = None
        if tensors == "torch":
            import torch  # only a torch user needs it

            self._to_tensor = torch.from_numpy
            # numpy has no bfloat16: the native arrays hold its bits as uint16.
            if self._config.pixel_dtype == "bfloat16":
                self._bfloat16 = torch.bfloat16
        self._native = None
        self._closed = False
        self._resume = resume_from
        self._chosen_epoch = None  # set_epoch()'s, until an epoch starts
        self._epoch = None  # the epoch started last
        self._ended = False  # whether it ended
        self._steps = 0  # steps of it taken
        self._step_info = None
        # (steps, global samples consumed) where the current round began, and (steps, samples)
        # of the last round finished: the pace estimated_len() extrapolates.
        self._round_began = (0, 0)
        self._last_round = None
        self._completed = {}  # epoch -> its steps, for the epochs this pipeline went through

    # -- the native pipeline, made on first use ------------------------------------------------

    def _pipeline(self):
        if self._closed:
            raise RuntimeError("the Pipeline is closed: make a new one (or do not close() it yet)")
        if self._native is None:
            resume, self._resume = self._resume, None
            self._native = _NativePipeline(self._config, self._ledger, resume, self._on_abort,
                                           self._dtypes, self._pin, self._stages)
            if resume is not None:
                summary = _checkpoint_summary(resume)
                self._epoch, self._ended = summary["epoch"], False
                self._steps, self._chosen_epoch = summary["steps_taken"], None
        return self._native

    # -- epochs ------------------------------------------------------------------------------

    def set_epoch(self, epoch):
        """Chooses the epoch the next iteration runs (DistributedSampler.set_epoch's meaning): its
        shard is a function of seed, epoch, rank and world size. Iterating while another epoch is
        unfinished raises; iterating the unfinished epoch itself goes on with it."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be a non-negative int, not {epoch!r}")
        self._chosen_epoch = epoch

    def epoch(self, epoch):
        """set_epoch(epoch), returning the pipeline: `for batch in pipe.epoch(e)` (the name of
        earlier versions, kept for their loops)."""
        self.set_epoch(epoch)
        return self

    @property
    def current_epoch(self):
        """The epoch being iterated (or last iterated); before any, the one set_epoch() chose."""
        return self._chosen_epoch if self._epoch is None else self._epoch

    def in_epoch(self):
        """Whether an epoch is started and unfinished."""
        return self._epoch is not None and not self._ended

    def start_epoch(self, epoch, *, restart=False):
        """Starts `epoch` now. An unfinished epoch is not dropped silently: that raises unless
        restart=True (allowed with a single rank only; several ranks must finish an epoch)."""
        native = self._pipeline()
        if self.in_epoch() and not restart:
            raise RuntimeError(
                f"epoch {self._epoch} is unfinished ({self._steps} steps taken): iterate it to "
                f"its end, or start_epoch({epoch}, restart=True) to drop the rest of it"
            )
        native.start_epoch(epoch)
        self._epoch, self._ended, self._steps = epoch, False, 0
        self._chosen_epoch = None
        self._step_info = None
        self._round_began, self._last_round = (0, 0), None

    def __iter__(self):
        self._pipeline()
        if self.in_epoch():
            if self._chosen_epoch is not None and self._chosen_epoch != self._epoch:
                raise RuntimeError(
                    f"set_epoch({self._chosen_epoch}) while epoch {self._epoch} is unfinished "
                    f"({self._steps} steps taken): iterate it to its end, or "
                    f"start_epoch({self._chosen_epoch}, restart=True) to drop the rest of it"
                )
            self._chosen_epoch = None
            return self
        self.start_epoch(self._next_epoch())
        return self

    def _next_epoch(self):
        if self._chosen_epoch is not None:
            return self._chosen_epoch
        return 0 if self._epoch is None else self._epoch + 1

    def __next__(self):
        native = self._pipeline()
        if self._epoch is None:
            self.start_epoch(self._next_epoch())
        if self._ended:
            raise StopIteration
        got = native.next_batch()
        if got is None:
            self._ended = True
            self._completed[self._epoch] = self._steps
            raise StopIteration
        batch, info = got
        previous = self._step_info
        if previous is not None and info.round != previous.round:
            began_steps, began_samples = self._round_began
            consumed = previous.global_samples_consumed
            self._last_round = (self._steps - began_steps, consumed - began_samples)
            self._round_began = (self._steps, consumed)
        self._steps += 1
        self._step_info = info
        if self._to_tensor is not None:
            if self._bfloat16 is not None:
                # Through int16: torch before 2.3 takes no uint16 arrays.
                batch["pixel_values"] = batch["pixel_values"].view("int16")
            for key, value in batch.items():
                batch[key] = self._to_tensor(value)
            if self._bfloat16 is not None:
                batch["pixel_values"] = batch["pixel_values"].view(self._bfloat16)
        return (batch, info) if self._return_info else batch

    def next_batch(self):
        """The next batch, or None at the end of the epoch."""
        try:
            return self.__next__()
        except StopIteration:
            return None

    @property
    def step_info(self):
        """The StepInfo of the batch last taken (None before the epoch's first)."""
        return self._step_info

    @property
    def steps_taken(self):
        """Batches of the current epoch taken so far (a resumed epoch counts from its start)."""
        return self._steps

    def __len__(self):
        """The current epoch's steps, when known: once the epoch's last round is planned (the
        pipeline plans ahead of the trainer, so shortly before the epoch's last batches are
        taken), or for an epoch this pipeline went through to its end. The step count depends on
        the samples' lengths, so it is not known sooner: until then a TypeError, as len() of a
        DataLoader over an IterableDataset; estimated_len() gives an estimate instead."""
        if self.in_epoch() or (self._epoch is not None and self._chosen_epoch is None):
            epoch = self._epoch
            if self.in_epoch() and self._native is not None:
                steps = self._native.epoch_steps
                if steps is not None:
                    return steps
        else:
            epoch = 0 if self._chosen_epoch is None else self._chosen_epoch
        if epoch in self._completed:
            return self._completed[epoch]
        raise TypeError(
            f"the number of steps of epoch {epoch} is not known before the epoch's last round: "
            "it depends on the lengths of the samples; use pipe.estimated_len() for an estimate"
        )

    def estimated_len(self):
        """An estimate of the current epoch's steps: exact when len() is known; else the mean of
        the completed epochs; else the steps taken plus the samples left at the pace of the last
        finished round (of the whole epoch so far while in the first round): rough during the
        warm-up's first rounds, whose steps hold fewer samples. None before any step."""
        try:
            return len(self)
        except TypeError:
            pass
        if self._completed:
            return round(sum(self._completed.values()) / len(self._completed))
        info = self._step_info
        if info is None or info.global_samples_consumed == 0:
            return None
        native = self._pipeline()
        left = native.shard_records * native.world_size - info.global_samples_consumed
        steps, samples = self._last_round or (self._steps, info.global_samples_consumed)
        if steps == 0 or samples == 0:
            steps, samples = self._steps, info.global_samples_consumed
        return self._steps + max(0, round(left * steps / samples))

    # -- checkpoints -------------------------------------------------------------------------

    def state(self):
        """This rank's part of a checkpoint after the batches taken so far (small bytes)."""
        return self._pipeline().state()

    def state_dict(self, *, gather=True):
        """The pipeline's position as a dict torch.save and torch.distributed.checkpoint can store
        (ints, a list and bytes), as StatefulDataLoader.state_dict(). With several ranks it holds
        every rank's part, gathered over torch.distributed's default process group: every rank
        calls it at the same step, and every rank gets the same dict, which load_state_dict()
        takes at any world size (exactly the same batches at the same one). gather=False gives
        this rank's part alone, without a collective (join_state_dicts() joins the parts)."""
        native = self._pipeline()
        mine = _state_dict_of(native.state(), native.rank, native.world_size)
        if not gather or native.world_size == 1:
            return mine
        import torch.distributed as dist

        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError(
                "state_dict() of one of several ranks gathers every rank's part over "
                "torch.distributed's default process group, and there is none: call "
                "init_process_group() first, or join every rank's state_dict(gather=False) with "
                "join_state_dicts()"
            )
        parts = [None] * dist.get_world_size()
        dist.all_gather_object(parts, mine)
        return join_state_dicts(parts)

    def load_state_dict(self, state_dict):
        """Goes on where `state_dict` (from state_dict() or join_state_dicts()) stood: the next
        iteration yields the rest of its epoch. Every rank loads the same one; at the world size
        it was saved at the batches are the very same, on another the samples the epoch had not
        emitted are spread over the new ranks, each once. Call it before
        iterating, like StatefulDataLoader; a pipeline already used is remade (its connections
        to the other ranks too)."""
        checkpoint = _checkpoint_of(state_dict)
        _checkpoint_summary(checkpoint)  # a corrupt one fails here, before anything is dropped
        if self._closed:
            self._pipeline()  # raises
        if self._native is not None:
            self._native.close()
            self._native = None
        self._resume = checkpoint
        self._step_info = None

    # -- the run -----------------------------------------------------------------------------

    def depart(self):
        """Leaves the run at an agreed step (every rank after the same number of batches)."""
        self._pipeline().depart()

    def abort(self, reason):
        """Fails the epoch on every rank with `reason`; every rank's on_abort hook is called."""
        self._pipeline().abort(reason)

    def close(self):
        """Stops the pipeline's threads now rather than when it is collected. Using it afterwards
        raises RuntimeError."""
        if self._native is not None:
            self._native.close()
        self._native = None
        self._closed = True

    @property
    def closed(self):
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def stats(self):
        """The pipeline's counters and rates as a dict (docs/metrics.md): samples/s, tokens/s,
        padding efficiency, queue depths, blocked time per stage, IDLE steps, rejections by
        reason, round latency."""
        return json.loads(self._pipeline().stats_json())

    @property
    def pin_memory(self):
        """Whether batches are made in pinned memory."""
        return self._pin

    @property
    def metrics_port(self):
        """The Prometheus endpoint's port ([metrics] in the TOML), 0 when it is off."""
        return self._pipeline().metrics_port

    @property
    def native(self):
        """The native pipeline (for iterate_in_cpp)."""
        return self._pipeline()

    @property
    def rank(self):
        return self._pipeline().rank

    @property
    def world_size(self):
        return self._pipeline().world_size

    @property
    def vocab_size(self):
        return self._pipeline().vocab_size

    @property
    def dataset_records(self):
        return self._pipeline().dataset_records

    @property
    def shard_records(self):
        return self._pipeline().shard_records

    @property
    def pixel_dtype(self):
        """What batches' pixel_values hold: "uint8", "float32" or "bfloat16"."""
        return self._config.pixel_dtype
