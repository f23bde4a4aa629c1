"""DistributedDataParallel: one model replica per process, gradients averaged across processes
by bucketed, non-blocking all-reduces launched from gradient hooks while backward still runs.

Beyond PyTorch, every step also agrees, across ranks, on whether a NaN or Inf was born and
where (docs/numerics.md, "Decisions"): each rank writes what its sentinel saw into a flag slot of
its own at the end of the last gradient bucket, so the agreement costs no collective of its
own; only when a slot is set do the birth's details travel, from the rank of the first birth.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

import lucid.distributed as dist
from lucid._core.grad_mode import local_state
from lucid._core.sentinel import (
    AnomalyError,
    AnomalyEvent,
    NonFiniteWarning,
    add_birth_listener,
    input_event,
    is_nonfinite_allowed,
    is_sentinel_enabled,
    nonfinite_kind,
    remove_birth_listener,
    warn_at_user_line,
)
from lucid._tensor import Tensor
from lucid.autograd import is_grad_enabled
from lucid.factories import from_numpy
from lucid.nn.modules.module import Module

__all__ = ["DistributedDataParallel", "NonFiniteReport", "DistributedNonFiniteError"]

# The first bucket is small so that its all-reduce starts early in backward.
_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25

# What a rank saw in a step, numbered in the order a step runs, so that the smallest code
# across ranks is the first birth (ties go to the lowest rank).
_CLEAN = 0
_RECEIVED_IN_DATA = 1
_BORN_IN_FORWARD = 2
_BORN_IN_BACKWARD = 3
_NONFINITE_GRADIENT = 4
# Added to a code when that rank raises (anomaly mode): every rank then raises with it.
_RAISING = 8

_UNFINISHED_REDUCTION = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `lucid.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
)


@dataclass
class NonFiniteReport:
    """What every rank knows of a step in which some rank saw a NaN or Inf: the rank of the
    first birth (the earliest phase: batch, forward, backward, then the lowest rank) and
    that rank's facts; `ranks` lists every rank that saw one, and `received` is True on the
    others (the value reached them through the gradient all-reduce, it was not born there)."""

    rank: int
    birth_rank: int
    received: bool
    ranks: list[int]
    kind: str
    op: str | None
    phase: str
    mechanism: str | None = None
    location: str | None = None
    module_path: str | None = None
    step: int | None = None
    batch_idx: int | None = None
    sample_indices: list[int] | None = None
    details: str = ""
    action: str = "raise"

    def describe(self) -> str:
        if self.op == "input":
            what = f"{_article(self.kind)} arrived in the input batch of rank {self.birth_rank}"
        elif self.phase == "gradient":
            what = (f"rank {self.birth_rank} produced {self.kind} gradients, but its sentinel "
                    f"recorded no birth ({self.op})")  # fmt: skip
        else:
            what = (f"{_article(self.kind)} was born on rank {self.birth_rank} in {self.op} "
                    f"({self.phase})")  # fmt: skip
            if self.location:
                what += f" at {self.location}"
        lines = [what]
        if self.module_path:
            lines.append(f"  module: {self.module_path}")
        if self.step is not None:
            lines.append(f"  step: {self.step}")
        if self.batch_idx is not None:
            lines.append(f"  batch: {self.batch_idx}")
        if self.sample_indices is not None:
            lines.append(f"  samples: {self.sample_indices}")
        if len(self.ranks) > 1:
            lines.append(f"  ranks that saw a non-finite value: {self.ranks}")
        if self.received:
            lines.append(
                f"  on rank {self.rank} it was received through the gradient all-reduce, not born"
            )
        elif self.rank != self.birth_rank:
            lines.append(f"  rank {self.rank} saw a non-finite value of its own later in the step")
        if self.details:
            lines.append(f"rank {self.birth_rank}'s report:")
            lines.append(self.details)
        return "\n".join(lines)


class DistributedNonFiniteError(RuntimeError):
    """Raised on every rank together when a step saw a NaN or Inf (`report` names the rank
    and op of its birth)."""

    def __init__(self, message: str, report: NonFiniteReport) -> None:
        super().__init__(message)
        self.report = report


class _Bucket:
    """Gradients of a few parameters laid end to end in one array, all-reduced together."""

    __slots__ = ("indices", "views", "array", "tensor", "pending", "work", "dtype")

    def __init__(self, indices: list[int], params: list[Tensor], extra: int) -> None:
        self.indices = indices
        self.dtype = params[indices[0]]._data.dtype
        sizes = [params[index]._data.size for index in indices]
        self.array = np.zeros(sum(sizes) + extra, dtype=self.dtype)
        self.tensor = _as_tensor(self.array)
        self.views = []
        start = 0
        for size in sizes:
            self.views.append(self.array[start : start + size])
            start += size
        self.pending = len(indices)
        self.work = None


def _distributed() -> Any:
    return dist


def _tensors_in(value: Any) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item)


class DistributedDataParallel(Module):
    """Data parallelism across the processes of the default process group (PyTorch's API).

    Parameters and buffers are broadcast from rank 0 at construction; during backward each
    parameter's gradient, once accumulated, goes into its bucket, and a full bucket's
    all-reduce starts at once, in bucket order; the last gradient hook waits for them all and
    writes the averages back into `.grad`. GPU-only arguments are accepted and ignored.

    lucid only: `on_nonfinite` says what every rank does, together, when a NaN or Inf was
    seen on any rank in the step: "raise" (DistributedNonFiniteError), "skip" (gradients set
    to None, so the optimizer step changes nothing, with a NonFiniteWarning) or "warn" (keep
    the non-finite gradients). `set_batch` names the batch (and its sample indices) in reports.

    Example::

        dist.init_process_group("mpi")
        model = DistributedDataParallel(Net())
        loss_fn(model(x_shard), y_shard).backward()   # gradients are averaged here
        optimizer.step()
    """

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool | None = None,
        init_sync: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params: Any = None,
        param_to_hook_all_reduce: Any = None,
        mixed_precision: Any = None,
        device_mesh: Any = None,
        skip_all_reduce_unused_params: bool = False,
        bucket_cap_mb_list: list[int] | None = None,
        batched_grad_copy: bool = False,
        forward_sync_buffers: bool | None = None,
        *,
        on_nonfinite: str = "raise",
    ) -> None:
        super().__init__()
        dist = _distributed()
        if not dist.is_initialized():
            raise ValueError(
                "Default process group has not been initialized, please make sure to call "
                "init_process_group."
            )
        if on_nonfinite not in ("raise", "skip", "warn"):
            raise ValueError(
                f"on_nonfinite must be 'raise', 'skip' or 'warn', got {on_nonfinite!r}"
            )
        params = []
        for param in module.parameters():
            if param.requires_grad and not any(param is known for known in params):
                params.append(param)
        if not params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        self.module = module
        self.process_group = process_group
        self.dim = dim
        self.device_ids = device_ids
        self.output_device = output_device
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.on_nonfinite = on_nonfinite
        self.nonfinite_report: NonFiniteReport | None = None
        self._rank = dist.get_rank(process_group)
        self._world_size = dist.get_world_size(process_group)
        self._params = params
        self._param_names = {}
        for name, param in module.named_parameters():
            for index, known in enumerate(params):
                if known is param and index not in self._param_names:
                    self._param_names[index] = name
        cap = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        first_cap = _FIRST_BUCKET_BYTES if bucket_cap_mb is None else cap * 1024 * 1024
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        self._buckets = self._make_buckets(first_cap, self.bucket_bytes_cap)
        self._bucket_of = {}
        for bucket_index, bucket in enumerate(self._buckets):
            for position, index in enumerate(bucket.indices):
                self._bucket_of[index] = (bucket_index, position)
        self._used = np.zeros(len(params), dtype=bool)
        self._ready = np.zeros(len(params), dtype=bool)
        self._step_active = False
        self._next_bucket = 0
        self._unfinished = False
        # The step's earliest sighting on this rank (a birth, or a non-finite batch), and
        # whether this rank raises (anomaly mode): sightings count only when this rank's
        # gradients are non-finite, since values born and then masked out harm nothing.
        self._local_code = _CLEAN
        self._local_event: AnomalyEvent | None = None
        self._raising = False
        # The batch set_batch named for the coming step, and the one of the step running.
        self._next_batch: tuple[int | None, list[int] | None] = (None, None)
        self._batch: tuple[int | None, list[int] | None] = (None, None)
        self._steps = 0
        # Seconds this process spent blocked in the final wait for the all-reduces, and in
        # the NaN agreement's own work (flags, the gradient finiteness pass): benchmarks read them.
        self._wait_seconds = 0.0
        self._agreement_seconds = 0.0
        if init_sync:
            self._broadcast_from_rank0([*params, *module.buffers()])
        self._handles = []
        reference = weakref.ref(self)
        for index, param in enumerate(params):
            self._handles.append(param.register_post_accumulate_grad_hook(
                _GradientReady(reference, index)
            ))  # fmt: skip
        self._birth_listener = _BirthListener(reference)
        add_birth_listener(self._birth_listener)

    def __del__(self) -> None:
        listener = self.__dict__.get("_birth_listener")
        if listener is not None:
            remove_birth_listener(listener)

    # --------------------------------------------------------------- set-up
    def _make_buckets(self, first_cap: float, cap: float) -> list[_Bucket]:
        """Parameters in reverse order (gradients arrive roughly so in backward), one dtype
        per bucket; the last bucket carries a flag slot per rank, and with
        find_unused_parameters a used-count slot per parameter."""
        groups: list[list[int]] = []
        open_groups: dict[Any, list] = {}
        limits: dict[Any, float] = {}
        for index in reversed(range(len(self._params))):
            array = self._params[index]._data
            entry = open_groups.get(array.dtype)
            if entry is None:
                entry = open_groups[array.dtype] = [[], 0]
            entry[0].append(index)
            entry[1] += array.nbytes
            if entry[1] >= limits.get(array.dtype, first_cap):
                groups.append(entry[0])
                del open_groups[array.dtype]
                limits[array.dtype] = cap
        groups.extend(entry[0] for entry in open_groups.values())
        extra = self._world_size + (len(self._params) if self.find_unused_parameters else 0)
        return [
            _Bucket(indices, self._params, extra if position == len(groups) - 1 else 0)
            for position, indices in enumerate(groups)
        ]

    def _broadcast_from_rank0(self, tensors: list[Tensor]) -> None:
        """One broadcast per dtype of everything flattened, then copied back in place."""
        dist = _distributed()
        by_dtype: dict[Any, list[np.ndarray]] = {}
        for tensor in tensors:
            by_dtype.setdefault(tensor._data.dtype, []).append(tensor._data)
        for dtype, arrays in by_dtype.items():
            flat = np.concatenate([array.reshape(-1) for array in arrays]).astype(dtype)
            carrier = _as_tensor(flat)
            dist.broadcast(carrier, 0, group=self.process_group)
            flat = carrier._data
            start = 0
            for array in arrays:
                array[...] = flat[start : start + array.size].reshape(array.shape)
                start += array.size

    # -------------------------------------------------------------- forward
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._unfinished:
            self._raise_unfinished()
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers and self._world_size > 1:
                self._broadcast_from_rank0(buffers)
        self._step_active = is_grad_enabled() and self.require_backward_grad_sync
        if self._step_active:
            start = time.perf_counter()
            self._begin_step()
            self._check_inputs(inputs, kwargs)
            self._agreement_seconds += time.perf_counter() - start
        try:
            output = self.module(*inputs, **kwargs)
        except AnomalyError as error:
            # Anomaly mode raises here on this rank only; the others are on their way to the
            # gradient all-reduce: meet them there first, so that they raise too.
            if self._step_active:
                self._note(_BORN_IN_FORWARD, error.event)
                self._agree_now()
            raise
        if self._step_active and self.find_unused_parameters:
            self._mark_unused(output)
        return output

    def _begin_step(self) -> None:
        self._steps += 1
        self._batch, self._next_batch = self._next_batch, (None, None)
        self._ready[:] = False
        self._next_bucket = 0
        self._local_code = _CLEAN
        self._local_event = None
        self._raising = False
        self._unfinished = True
        for bucket in self._buckets:
            bucket.pending = len(bucket.indices)
            bucket.work = None

    def _check_inputs(self, inputs: tuple, kwargs: dict) -> None:
        """A non-finite value in the batch is received, not born: note it as this rank's."""
        if not is_sentinel_enabled() or is_nonfinite_allowed():
            return
        for tensor in _tensors_in((inputs, kwargs)):
            if not tensor.requires_grad:
                kind = nonfinite_kind(tensor._data)
                if kind is not None:
                    self._note(_RECEIVED_IN_DATA, input_event(kind, "input"))
                    return

    def _mark_unused(self, output: Any) -> None:
        """Parameters the output does not depend on are ready now (PyTorch walks the graph
        from the outputs the same way)."""
        reached = set()
        seen = set()
        stack = [tensor.grad_fn for tensor in _tensors_in(output) if tensor.grad_fn is not None]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if variable is not None:
                reached.add(id(variable))
            for next_node, _ in node.next_functions:
                if next_node is not None:
                    stack.append(next_node)
        for index, param in enumerate(self._params):
            if id(param) not in reached:
                self._gradient_ready(index, used=False)

    def _raise_unfinished(self) -> None:
        missing = [index for index in range(len(self._params)) if not self._ready[index]]
        names = ", ".join(self._param_names.get(index, "?") for index in missing)
        self._unfinished = False
        raise RuntimeError(
            _UNFINISHED_REDUCTION
            + f"Parameter indices which did not receive grad for rank {self._rank}: "
            + " ".join(str(index) for index in missing)
            + f"\nParameters which did not receive grad for rank {self._rank}: {names}"
        )

    # ------------------------------------------------------------- backward
    def _gradient_ready(self, index: int, used: bool = True) -> None:
        if used:
            self._used[index] = True
        if not self._step_active:
            return
        if self._ready[index]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by one of "
                f"the following reasons: the parameter {self._param_names.get(index, index)} "
                "has been marked as ready twice. This means that multiple autograd engine "
                "hooks have fired for this particular parameter during this iteration."
            )
        self._ready[index] = True
        bucket_index, position = self._bucket_of[index]
        bucket = self._buckets[bucket_index]
        grad = self._params[index].grad
        if grad is None:
            bucket.views[position].fill(0)
        else:
            bucket.views[position][...] = grad._data.reshape(-1)
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()

    def _launch_ready_buckets(self) -> None:
        # Collectives must start in the same order on every rank: bucket by bucket.
        buckets = self._buckets
        while self._next_bucket < len(buckets) and buckets[self._next_bucket].pending == 0:
            self._launch(self._next_bucket)
            self._next_bucket += 1
        if self._next_bucket == len(buckets):
            self._finish()

    def _launch(self, bucket_index: int) -> None:
        bucket = self._buckets[bucket_index]
        if bucket_index == len(self._buckets) - 1:
            start = time.perf_counter()
            self._write_slots(bucket)
            self._agreement_seconds += time.perf_counter() - start
        elif bucket_index:
            # MPI moves a non-blocking collective only inside MPI calls: a test of the
            # previous one lets it progress while backward goes on.
            self._buckets[bucket_index - 1].work.is_completed()
        bucket.work = _distributed().all_reduce(
            bucket.tensor, group=self.process_group, async_op=True
        )

    def _write_slots(self, bucket: _Bucket) -> None:
        """This rank's flag (and used parameters): the tail of the last bucket."""
        if self._raising:
            flag = self._local_code + _RAISING
        elif self._gradients_nonfinite():
            if self._local_code == _CLEAN:
                self._local_code = _NONFINITE_GRADIENT
            flag = self._local_code
        else:
            flag = _CLEAN
        world = self._world_size
        tail = bucket.array[bucket.array.size - self._slot_count() :]
        tail.fill(0)
        tail[self._rank] = flag
        if self.find_unused_parameters:
            tail[world:] = self._used

    def _slot_count(self) -> int:
        return self._world_size + (len(self._params) if self.find_unused_parameters else 0)

    def _gradients_nonfinite(self) -> bool:
        """One pass over this rank's gradients (a dot product per bucket): a non-finite
        gradient that no birth explains (the sentinel off, or a parameter already held it)
        must stop every rank too."""
        extra = self._slot_count()
        last = len(self._buckets) - 1
        for position, bucket in enumerate(self._buckets):
            array = bucket.array[: bucket.array.size - extra] if position == last else bucket.array
            if nonfinite_kind(array) is not None:
                return True
        return False

    def _finish(self) -> None:
        """Wait for every bucket, average into `.grad`, then act on the agreed flags."""
        world = self._world_size
        start = time.perf_counter()
        for bucket in self._buckets:
            bucket.work.wait()
            bucket.work = None
        self._wait_seconds += time.perf_counter() - start
        self._step_active = False
        self._unfinished = False
        last = self._buckets[-1]
        slots = last.array[last.array.size - self._slot_count() :]
        codes = np.rint(slots[:world]).astype(np.int64)
        used = slots[world:] > 0 if self.find_unused_parameters else None
        for bucket in self._buckets:
            for index, view in zip(bucket.indices, bucket.views):
                if used is not None and not used[index]:
                    continue
                param = self._params[index]
                average = (view / world).reshape(param.shape)
                if param.grad is None:
                    param.grad = _as_tensor(average)
                else:
                    param.grad._data[...] = average
        self._used[:] = False
        if codes.any():
            self._act_on(codes)

    # ------------------------------------------------------ NaN agreement
    def _note(self, code: int, event: AnomalyEvent | None) -> None:
        """Keep this rank's earliest sighting of the step."""
        if self._local_code == _CLEAN or code < self._local_code:
            self._local_code = code
            self._local_event = event

    def _on_birth(self, event: AnomalyEvent) -> None:
        if not self._step_active:
            if not (_anomaly_raises(event) and self._steps and self.training and is_grad_enabled()
                    and self.require_backward_grad_sync):  # fmt: skip
                return
            # Anomaly mode is about to raise on this rank between two steps (preparing the
            # next batch): the other ranks will meet the next step's all-reduces, so this
            # rank takes its part in them now, with its flag set.
            self._begin_step()
            self._step_active = True
        phase = _BORN_IN_FORWARD if event.phase == "forward" else _BORN_IN_BACKWARD
        self._note(phase, event)
        if _anomaly_raises(event):
            # Anomaly mode raises right after this on this rank alone.
            self._agree_now()

    def _agree_now(self) -> None:
        """Launch every bucket not yet launched (with whatever it holds) and finish the step,
        so that the other ranks' collectives complete and they learn of this rank's flag."""
        if not self._step_active:
            return
        self._raising = True
        for bucket in self._buckets[self._next_bucket :]:
            bucket.pending = 0
        self._launch_ready_buckets()

    def _act_on(self, codes: np.ndarray) -> None:
        ranks = [int(rank) for rank in np.flatnonzero(codes)]
        birth_rank = min(ranks, key=lambda rank: (codes[rank] % _RAISING, rank))
        raising = bool((codes >= _RAISING).any())
        facts = [self._facts() if self._rank == birth_rank else None]
        _distributed().broadcast_object_list(facts, src=birth_rank, group=self.process_group)
        action = "raise" if raising else self.on_nonfinite
        report = NonFiniteReport(
            rank=self._rank,
            birth_rank=birth_rank,
            received=self._rank not in ranks,
            ranks=ranks,
            action=action,
            **facts[0],
        )
        self.nonfinite_report = report
        if raising and self._rank == birth_rank and self._raising:
            return  # this rank's own anomaly error follows, with every detail
        message = report.describe()
        if action == "raise":
            raise DistributedNonFiniteError(message, report)
        if action == "skip":
            for param in self._params:
                param.grad = None
            message += "\n  the step is skipped on every rank: gradients were set to None"
        warn_at_user_line(NonFiniteWarning(message, None))

    def _facts(self) -> dict[str, Any]:
        """The birth rank's facts, JSON-able, for the other ranks."""
        batch_idx, samples = self._batch
        if batch_idx is None:
            batch_idx = self._steps - 1
        event = self._local_event
        code = self._local_code
        if event is None:
            kind = "nan"
            for param in self._params:
                if param.grad is not None:
                    kind = nonfinite_kind(param.grad._data) or kind
            return {"kind": kind, "op": "no recorded birth", "phase": "gradient",
                    "step": self._steps - 1, "batch_idx": batch_idx,
                    "sample_indices": samples}  # fmt: skip
        phase = event.phase if code != _RECEIVED_IN_DATA else "forward"
        return {
            "kind": event.kind,
            "op": event.op,
            "phase": phase,
            "mechanism": event.mechanism,
            "location": event.location,
            "module_path": event.module_path,
            "step": event.step if event.step is not None else self._steps - 1,
            "batch_idx": batch_idx,
            "sample_indices": samples,
            "details": event.describe(),
        }

    # ----------------------------------------------------------- the public rest
    def set_batch(self, batch_idx: int, sample_indices: Any = None) -> None:
        """Name the batch of the coming step (and its dataset indices, as a
        DistributedSampler hands them out) in non-finite reports; a step with none named is
        reported by its count."""
        samples = None if sample_indices is None else [int(index) for index in sample_indices]
        self._next_batch = (int(batch_idx), samples)

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Gradients accumulate locally inside; the first backward outside averages them."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


class _GradientReady:
    """A parameter's post-accumulate-grad hook; holds the DDP module weakly."""

    __slots__ = ("owner", "index")

    def __init__(self, owner: weakref.ref, index: int) -> None:
        self.owner = owner
        self.index = index

    def __call__(self, param: Tensor) -> None:
        owner = self.owner()
        if owner is not None:
            owner._gradient_ready(self.index)


class _BirthListener:
    __slots__ = ("owner",)

    def __init__(self, owner: weakref.ref) -> None:
        self.owner = owner

    def __call__(self, event: AnomalyEvent, node: Any, inputs: tuple, output: Any) -> None:
        owner = self.owner()
        if owner is not None:
            owner._on_birth(event)


def _as_tensor(array: np.ndarray) -> Tensor:
    return from_numpy(array)


def _anomaly_raises(event: AnomalyEvent) -> bool:
    """Whether anomaly mode raises at this birth (it is on and checks this kind and phase)."""
    state = local_state
    if not state.anomaly_enabled:
        return False
    if not (state.anomaly_check_nan if event.kind == "nan" else state.anomaly_check_inf):
        return False
    return event.phase != "forward" or state.anomaly_check_forward


def _article(kind: str) -> str:
    return f"an {kind}" if kind == "inf" else f"a {kind}"
