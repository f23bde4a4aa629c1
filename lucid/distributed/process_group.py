"""Process groups on MPI: initialisation, the default group, work handles and the deadline every
blocking call waits under.

mpi4py is imported by `init_process_group` only, so `import lucid.distributed` costs nothing
and works without MPI installed.
"""

from __future__ import annotations

import atexit
import enum
import os
import sys
import time
import warnings
from datetime import timedelta
from typing import Any

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "default_pg_timeout",
    "destroy_process_group",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "new_group",
]

default_pg_timeout = timedelta(minutes=30)
# How long a wait polls MPI without sleeping before it backs off.
_SPIN_SECONDS = 0.02

_NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)
# lucid-numerics is installed from a checkout, not from PyPI, so the extra's name is no command
# a user can run elsewhere; the packages themselves are on PyPI (mpich as a wheel with mpiexec).
_INSTALL_COMMAND = (
    'pip install mpi4py mpich (from a lucid checkout: pip install -e ".[distributed]")'
)
_INSTALL_HINT = f"lucid.distributed needs mpi4py and an MPI library: {_INSTALL_COMMAND}"
_GLOO_NOTE = (
    "lucid.distributed runs backend='gloo' on MPI: the ranks communicate through the MPI job "
    "they were started in (mpiexec or python -m lucid.distributed.run), with the same "
    "collectives and results"
)
# torch's wording on a build without NCCL, then why lucid has none
_NO_NCCL = (
    "Distributed package doesn't have NCCL built in: NCCL needs CUDA, and lucid computes on "
    "the CPU only; use backend='gloo' or backend='mpi', which both run on MPI"
)


class DistError(RuntimeError):
    """A failure in distributed communication."""

    __module__ = "lucid.distributed"


class DistBackendError(DistError):
    """A collective failed or did not finish within the process group's timeout."""

    __module__ = "lucid.distributed"


class Backend(str):
    """The name of a communication backend. lucid communicates through one, MPI; torch's names
    'gloo' and 'nccl' are valid names, and `init_process_group` runs 'gloo' on MPI and refuses
    'nccl' (it needs CUDA)."""

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = name.lower()
        if value not in (cls.MPI, cls.GLOO, cls.NCCL):
            raise ValueError(
                f"Invalid backend: '{name}'. lucid.distributed runs on MPI (backend='mpi', or "
                "torch's CPU backend 'gloo', which lucid runs on MPI)"
            )
        return super().__new__(cls, value)


class ReduceOp:
    """Reduction operations for `all_reduce`, `reduce` and `reduce_scatter_tensor`."""

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


class ProcessGroup:
    """A set of ranks that communicate: an MPI communicator of its own (a duplicate, so a user's
    own MPI traffic never matches lucid's), its members' global ranks and its timeout."""

    def __init__(self, comm: Any, ranks: list[int], timeout: timedelta) -> None:
        self._comm = comm
        self._ranks = ranks
        self._timeout = timeout

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return Backend.MPI

    def __repr__(self) -> str:
        return f"ProcessGroup(backend='mpi', rank={self.rank()}, size={self.size()})"


class GroupMember:
    """Placeholders as torch's: `WORLD` is the default group, `NON_GROUP_MEMBER` what
    `new_group` returns on ranks outside the new group."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


class _State:
    """The process-wide distributed state (one default group per process, as torch's)."""

    mpi: Any = None
    default_group: ProcessGroup | None = None
    groups: list[ProcessGroup] = []
    # Set once a collective has failed: the peers' state is unknown, so MPI_Finalize at exit
    # could wait forever; the exit handler aborts the job instead.
    broken = False
    exit_handler_registered = False
    gloo_noted = False


def _check_backend(backend: Any) -> None:
    """Accept what CPU scripts pass: 'mpi', or torch's CPU backend 'gloo', which MPI serves
    (noted once per process); refuse 'nccl', which needs CUDA."""
    if backend is None:
        return
    name = Backend(backend)
    if name == Backend.NCCL:
        raise RuntimeError(_NO_NCCL)
    if name == Backend.GLOO and not _State.gloo_noted:
        _State.gloo_noted = True
        # stacklevel 3: the line of the script that called init_process_group or new_group
        warnings.warn(_GLOO_NOTE, stacklevel=3)


def _import_mpi() -> Any:
    if _State.mpi is None:
        try:
            from mpi4py import MPI
        except ImportError as error:
            raise RuntimeError(_INSTALL_HINT) from error
        _State.mpi = MPI
    return _State.mpi


def is_available() -> bool:
    """True: lucid.distributed is always built; `init_process_group` needs mpi4py."""
    return True


def is_mpi_available() -> bool:
    """Whether mpi4py (and so an MPI library) can be imported."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def is_initialized() -> bool:
    return _State.default_group is not None


def _default_group() -> ProcessGroup:
    if _State.default_group is None:
        raise ValueError(_NOT_INITIALIZED)
    return _State.default_group


def _resolve_group(group: ProcessGroup | None) -> ProcessGroup:
    if group is None or group is GroupMember.WORLD:
        return _default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified: this rank is not a member")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup or None, not {type(group).__name__}")
    _default_group()
    return group


def _check_timeout(timeout: Any) -> timedelta:
    if timeout is None:
        return default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta, got {timeout}"
        )
    return timeout


def _exit_handler() -> None:
    # Registered after mpi4py's own finalisation hook, so it runs first.
    if _State.broken and _State.mpi is not None:
        _abort_job(1)


def _abort_job(status: int) -> None:
    """End every rank of the MPI job now, with exit status `status`."""
    sys.stdout.flush()
    sys.stderr.flush()
    # MPI's launcher tears the job down at once; give it a moment to forward this rank's last
    # output (the traceback that says why) first.
    time.sleep(0.2)
    _State.mpi.COMM_WORLD.Abort(status)


def _install_exception_hook() -> None:
    """An uncaught exception on one rank ends the whole job: without it, this rank would wait in
    MPI_Finalize for peers that wait in their next collective for it."""
    previous = sys.excepthook

    def abort_after_printing(kind: Any, value: Any, traceback: Any) -> None:
        previous(kind, value, traceback)
        if is_initialized():
            _State.broken = True

    sys.excepthook = abort_after_printing


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
    _ranks: list[int] | None = None,
) -> None:
    """Join the default process group of the MPI job this process was started in.

    Ranks and world size come from MPI (start the job with `mpiexec -n N python script.py` or
    `python -m lucid.distributed.run --nproc-per-node N script.py`); `world_size` and `rank`,
    if given, must agree with it. `timeout` bounds every blocking call: one that does not
    finish in time raises DistBackendError instead of hanging. `backend` is 'mpi' or, as CPU
    torch scripts write, 'gloo', which runs on MPI too (a UserWarning says so, once per
    process); 'nccl' raises, as on a torch build without NCCL.

    Example::

        import lucid.distributed as dist
        dist.init_process_group("mpi")
        x = lucid.ones(3) * dist.get_rank()
        dist.all_reduce(x)
    """
    if _State.default_group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    _check_backend(backend)
    if init_method not in (None, "env://"):
        raise ValueError(
            f"init_method {init_method!r} is not supported: MPI's launcher (mpiexec) connects "
            "the ranks, so leave init_method as None"
        )
    if store is not None:
        raise ValueError("store is not supported: MPI's launcher (mpiexec) connects the ranks")
    if device_id is not None and str(device_id) != "cpu":
        raise ValueError(f"lucid computes on the CPU; device_id {device_id!r} is not available")
    group_timeout = _check_timeout(timeout)
    MPI = _import_mpi()
    world = MPI.COMM_WORLD
    if world_size not in (-1, world.Get_size()):
        raise ValueError(
            f"world_size={world_size} does not match the MPI job's {world.Get_size()} ranks"
        )
    if rank not in (-1, world.Get_rank()):
        raise ValueError(f"rank={rank} does not match this process's MPI rank {world.Get_rank()}")
    if not _State.exit_handler_registered:
        atexit.register(_exit_handler)
        _install_exception_hook()
        _State.exit_handler_registered = True
    # Non-blocking, so that a rank that never joins fails the others within the timeout too.
    comm, request = world.Idup()
    group = ProcessGroup(comm, list(range(comm.Get_size())), group_timeout)
    Work([request], group, "init_process_group").wait()
    _State.default_group = group
    _State.groups = [group]
    GroupMember.WORLD = group
    # What torchrun sets, for scripts that read them; plain mpiexec leaves them unset.
    os.environ.setdefault("RANK", str(comm.Get_rank()))
    os.environ.setdefault("WORLD_SIZE", str(comm.Get_size()))
    os.environ.setdefault("LOCAL_RANK", os.environ.get("MPI_LOCALRANKID", str(comm.Get_rank())))
    os.environ.setdefault(
        "LOCAL_WORLD_SIZE", os.environ.get("MPI_LOCALNRANKS", str(comm.Get_size()))
    )


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave a group (by default the default group and every group made from it).

    MPI itself stays initialised (MPI cannot start twice in one process), so
    `init_process_group` may be called again.
    """
    if _State.default_group is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is GroupMember.WORLD or group is _State.default_group:
        groups = _State.groups
        _State.groups = []
        _State.default_group = None
        GroupMember.WORLD = None
    else:
        groups = [group]
        _State.groups = [member for member in _State.groups if member is not group]
    if not _State.broken:
        for member in groups:
            member._comm.Free()


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in `group` (the default group when None)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve_group(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of ranks in `group` (the default group when None)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve_group(group).size()


def get_backend(group: ProcessGroup | None = None) -> Backend:
    _resolve_group(group)
    return Backend(Backend.MPI)


def new_group(
    ranks: list[int] | None = None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id: Any = None,
    sort_ranks: bool = True,
) -> Any:
    """A group of some of the default group's ranks; every rank of the default group must call
    it. Ranks outside it get `GroupMember.NON_GROUP_MEMBER`."""
    world = _default_group()
    _check_backend(backend)
    members = list(range(world.size())) if ranks is None else list(ranks)
    for member in members:
        if not isinstance(member, int) or not 0 <= member < world.size():
            raise ValueError(
                f"Invalid rank {member} for new_group: ranks must be in [0, {world.size()})"
            )
    if len(set(members)) != len(members):
        raise ValueError(f"new_group ranks must be unique, got {members}")
    if sort_ranks:
        members = sorted(members)
    group_timeout = world._timeout if timeout is None else _check_timeout(timeout)
    MPI = _State.mpi
    me = world.rank()
    color = 0 if me in members else MPI.UNDEFINED
    key = members.index(me) if me in members else 0
    # MPI's split blocks without a deadline: meet every rank under the timeout first, so a
    # missing one fails here instead of hanging there.
    Work([world._comm.Ibarrier()], world, "new_group").wait()
    comm = world._comm.Split(color, key)
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    group = ProcessGroup(comm, members, group_timeout)
    _State.groups.append(group)
    return group


def _group_rank(
    group: ProcessGroup, rank: int | None, group_rank: int | None, role: str, name: str
) -> int:
    """The rank in `group` of a peer given as a global rank or as `group_<role>`."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
    elif rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    elif group is _State.default_group:
        group_rank = rank
    elif rank not in group._ranks:
        raise ValueError(f"Global rank {rank} is not part of group {group}")
    else:
        group_rank = group._ranks.index(rank)
    if not 0 <= group_rank < group.size():
        raise RuntimeError(f"ProcessGroupMPI::{name}: invalid root rank: {group_rank}")
    return group_rank


def _this_rank() -> int:
    return _State.mpi.COMM_WORLD.Get_rank()


def _fail(group: ProcessGroup, collective: str, timeout: timedelta, waited: float) -> None:
    _State.broken = True
    raise DistBackendError(
        f"[Rank {_this_rank()}] {collective} did not finish within the process group's timeout "
        f"of {timeout} (waited {waited:.1f} s) in a group of {len(group._ranks)} ranks: "
        f"another rank has died, stalled or not called {collective}. "
        "The process group is unusable now; at exit this rank aborts the MPI job."
    )


def _check_usable(group: ProcessGroup, collective: str) -> None:
    if _State.broken:
        raise DistBackendError(
            f"[Rank {_this_rank()}] {collective}: the process group is broken by an earlier "
            "failed collective; start a new job"
        )


class Work:
    """The handle of a communication started with `async_op=True` (or isend/irecv).

    `wait()` blocks until it is done (at most the group's timeout) and finishes it (copies
    results back into the tensors); `is_completed()` asks without blocking.
    """

    def __init__(
        self,
        requests: list[Any],
        group: ProcessGroup,
        collective: str,
        finish: Any = None,
        result: list[Any] | None = None,
    ) -> None:
        self._requests = requests
        self._group = group
        self._collective = collective
        self._finish = finish
        self._result = result if result is not None else []
        self._completed = False
        self._failed = False
        # An MPI.Status for a receive from any rank: it tells the sender.
        self._status: Any = None

    def _test(self) -> bool:
        try:
            if self._status is not None:
                return self._requests[0].Test(self._status)
            return _State.mpi.Request.Testall(self._requests)
        except _State.mpi.Exception as error:
            self._failed = True
            _State.broken = True
            raise DistBackendError(
                f"[Rank {_this_rank()}] {self._collective} "
                f"failed in MPI: {error.Get_error_string()}"
            ) from None

    def _complete(self) -> None:
        self._completed = True
        if self._finish is not None:
            self._finish()
            self._finish = None

    def is_completed(self) -> bool:
        if not self._completed and self._test():
            self._complete()
        return self._completed

    def is_success(self) -> bool:
        return self._completed and not self._failed

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until done; DistBackendError if that takes longer than `timeout` (by default
        the group's)."""
        if self._completed:
            return True
        limit = self._group._timeout if timeout is None else _check_timeout(timeout)
        start = time.monotonic()
        deadline = start + limit.total_seconds()
        # MPI progresses non-blocking collectives only inside MPI calls, and a sleeping rank
        # stalls its peers' progress too: poll without pause for a while (as MPI's own Wait
        # does), then back off to a millisecond so that a long wait leaves the cores to others.
        spin_until = start + _SPIN_SECONDS
        delay = 0.0
        while not self._test():
            now = time.monotonic()
            if now > deadline:
                self._failed = True
                _fail(self._group, self._collective, limit, now - start)
            if now > spin_until:
                time.sleep(delay)
                delay = min(max(delay * 2, 1e-5), 1e-3)
        self._complete()
        return True

    def result(self) -> list[Any]:
        return self._result

    def source_rank(self) -> int:
        """The sender of a completed `irecv` from any rank, as a global rank."""
        if self._status is None or not self._completed:
            raise RuntimeError(
                "source_rank() is only available on a completed receive from any source"
            )
        return self._group._ranks[self._status.Get_source()]

    def synchronize(self) -> None:
        self.wait()
