"""lucid.profiler: PyTorch's torch.profiler API over lucid's autograd profiler.

`profile` records what `lucid.autograd.profiler.profile` records (every op, backward node and
`record_function` region of the thread that entered it) and adds torch.profiler's step
schedule: with `schedule=`, each `prof.step()` moves through wait, warmup and active steps,
each active cycle is recorded by a fresh autograd profile inside a `ProfilerStep#N` region per
step, and `on_trace_ready(prof)` is called when a cycle ends. lucid computes on the CPU only,
so `ProfilerActivity.CPU` is the one activity it records; there is no Kineto, and
`kineto_available()` says so.

Example::

    from lucid.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
        on_trace_ready=tensorboard_trace_handler("./log"),
    ) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
"""

from __future__ import annotations

import enum
import gzip
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from lucid._atomic import write_atomically
from lucid.autograd import profiler as _autograd_profiler
from lucid.autograd.profiler import record_function

__all__ = [
    "profile",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "DeviceType",
    "record_function",
]


class ProfilerActivity(enum.Enum):
    """The kinds of activity torch's profiler can record; lucid records CPU only."""

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What a schedule asks of one step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


class DeviceType(enum.Enum):
    """torch's device types, by the numbers torch gives them (lucid runs on CPU)."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


def supported_activities() -> set[ProfilerActivity]:
    """The activities this build can record: the CPU."""
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """False: lucid records its own events, without torch's Kineto library."""
    return False


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:  # fmt: skip
    """The step schedule of torch.profiler: skip `skip_first` steps, then cycles of `wait`
    idle steps, `warmup` steps and `active` recorded steps, the last of which saves the trace;
    `repeat` cycles (0: until the profile ends). `skip_first_wait` drops the first cycle's
    wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
) -> Callable[[profile], None]:
    """An `on_trace_ready` that writes each cycle's Chrome trace into `dir_name`, named as
    TensorBoard's profiler plugin looks for them: `<worker>.<time ns>.pt.trace.json[.gz]`, the
    worker `<hostname>_<pid>` unless named."""

    def write(prof: profile) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as error:
                raise RuntimeError("Can't create directory: " + dir_name) from error
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        # nanoseconds keep the names of cycles exported in quick succession apart
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name), use_python_export)

    return write


def _record_every_step(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class profile:
    """torch.profiler.profile: record ops, backward nodes and regions, by steps.

    Without a schedule the whole `with` block is one recording. With one, `step()` ends a
    step; the recording of each active cycle is handed to `on_trace_ready(prof)`, and
    `key_averages()`, `events()` and `export_chrome_trace()` read the last recording.
    `with_flops`, `with_modules`, `experimental_config`, `execution_trace_observer`,
    `acc_events`, `custom_trace_id_callback` and `post_processing_timeout_s` are accepted and
    have nothing to act on (lucid counts no FLOPs and keeps no execution trace).
    """

    def __init__(
        self,
        *,
        activities: Iterable[Any] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[..., Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback: Callable[[], str] | None = None,
        post_processing_timeout_s: float | None = None,
    ) -> None:
        if activities is not None:
            chosen: set = set()
            for item in activities:
                if isinstance(item, ProfilerActivity):
                    chosen.add(item)
                elif isinstance(item, dict):
                    chosen.update(item.keys())
        else:
            chosen = supported_activities()
        if use_cuda is not None:
            warnings.warn(
                "`use_cuda` is deprecated, use `activities` argument instead",
                FutureWarning,
                stacklevel=2,
            )
            if use_cuda:
                chosen.add(ProfilerActivity.CUDA)
            else:
                chosen.discard(ProfilerActivity.CUDA)
        if not chosen:
            raise AssertionError("No valid profiler activities found")
        self.activities = chosen
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.with_flops = bool(with_flops)
        self.with_modules = bool(with_modules)
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _record_every_step
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        if self.current_action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError(
                "ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not "
                "be returned by a user-provided schedule"
            )
        # the autograd profile recording now, and the last one that finished
        self._recording: _autograd_profiler.profile | None = None
        self.profiler: _autograd_profiler.profile | None = None
        self._step_region: record_function | None = None

    # ------------------------------------------------------------------ lifetime
    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        self._enter_action(self.current_action)
        self._open_step_region()

    def stop(self) -> None:
        self._close_step_region()
        if self._recording is not None:
            self._finish_recording(save=True)

    def step(self) -> None:
        """End the current step: the schedule decides whether the next one is recorded."""
        self._close_step_region()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous == ProfilerAction.RECORD_AND_SAVE:
            self._finish_recording(save=True)
        elif previous == ProfilerAction.RECORD and self.current_action in (
            ProfilerAction.NONE,
            ProfilerAction.WARMUP,
        ):
            warnings.warn(
                f"Incorrect schedule: RECORD followed by {self.current_action.name}", stacklevel=2
            )
            self._finish_recording(save=False)
        elif previous == ProfilerAction.WARMUP and self.current_action == ProfilerAction.NONE:
            warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=2)
        self._enter_action(self.current_action)
        self._open_step_region()

    def _enter_action(self, action: ProfilerAction) -> None:
        recorded = action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if recorded and self._recording is None:
            self._recording = _autograd_profiler.profile(
                record_shapes=self.record_shapes,
                with_stack=self.with_stack,
                profile_memory=self.profile_memory,
            )
            self._recording.__enter__()

    def _finish_recording(self, save: bool) -> None:
        recording, self._recording = self._recording, None
        if recording is None:
            return
        recording.__exit__(None, None, None)
        self.profiler = recording
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _open_step_region(self) -> None:
        if self.record_steps and self._recording is not None:
            self._step_region = record_function(f"ProfilerStep#{self.step_num}")
            self._step_region.__enter__()

    def _close_step_region(self) -> None:
        if self._step_region is not None:
            self._step_region.__exit__(None, None, None)
            self._step_region = None

    # ------------------------------------------------------------------- results
    def _finished(self) -> _autograd_profiler.profile:
        if self.profiler is None:
            raise RuntimeError("the profiler has recorded no step yet")
        return self.profiler

    def events(self) -> _autograd_profiler.EventList:
        """Every event of the last recording, in the order they began."""
        return self._finished().events()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> _autograd_profiler.EventList:
        """Averages over the events of one name (and input shape, or top of stack); lucid's
        ops have no overloads, so `group_by_overload_name` changes nothing."""
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """The last recording as a Chrome trace; a path ending in `.gz` is gzipped. The file
        is replaced atomically."""
        events = self.events()
        if str(path).endswith(".gz"):
            data = gzip.compress(events._chrome_trace_text().encode())
            write_atomically(path, lambda stream: stream.write(data))
        else:
            events.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Each recorded stack and its self time, one `frame;frame;... time` line per event
        (the folded format of flame-graph tools); it needs `with_stack=True`."""
        if not self.with_stack:
            raise RuntimeError("export_stacks() requires with_stack=True")
        if metric not in ("self_cpu_time_total", "self_cuda_time_total"):
            raise ValueError(f"metric should be one of: self_cpu_time_total, got {metric}")
        lines = []
        for event in self.events():
            if event.stack and event.self_cpu_time_total > 0:
                frames = ";".join(reversed(event.stack))
                lines.append(f"{frames};{event.name} {int(event.self_cpu_time_total)}\n")
        write_atomically(path, lambda stream: stream.writelines(lines), binary=False)


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
