"""`python -m lucid.debug`: run a training script under lucid's NaN checks and report the root
cause of the first non-finite value, or re-raise a saved reproducer.

`run` executes the script as `python script.py args...` would (same `sys.argv`, `__name__`
and `sys.path[0]`) with the sentinel on, anomaly mode's checks (forward and backward, NaN and
Inf) and a `NaNDetector` on each outermost module with parameters that gets called.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import runpy
import sys
import threading
import warnings
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import lucid
import lucid.distributed as dist
from lucid._core.sentinel import AnomalyError, is_sentinel_enabled, set_sentinel
from lucid.debug.detector import NaNDetector
from lucid.debug.replay import _anomaly_in, _full_checks
from lucid.debug.report import _root_cause_report
from lucid.debug.repro import read_repro, save_repro
from lucid.nn.modules.module import (
    Module,
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from lucid.nn.parallel.distributed import (
    DistributedDataParallel,
    DistributedNonFiniteError,
    NonFiniteReport,
)

__all__ = ["main"]

_DESCRIPTION = """\
Find where a NaN or Inf is born in a lucid training script.

  python -m lucid.debug run train.py [args...]
      Run train.py (with its own arguments) under lucid's checks: the sentinel, anomaly
      mode on every forward and backward op (NaN and Inf), and a NaNDetector on each
      top-level model. At the first non-finite value the script stops and a root-cause
      report is printed: the op, the line with its source text, the module, the step
      (the training iteration: optimizer steps taken), the op's input statistics and the
      mechanism (0/0, overflow, ...). A reproducer bundle (batch, RNG state, model state,
      the op's inputs) is saved; the exit code is 1.
      A clean run exits with the script's own exit code (0).

  python -m lucid.debug run [--torch] [-m] train.py [args...]
      A PyTorch program (one that imports torch and not lucid, or with --torch) runs
      unchanged under lucid.debug.torch.watch(): one fused check per step, and the first
      non-finite step replayed to name the op, line, module, phase and step. -m runs a
      module as python -m does.

  python -m lucid.debug repro BUNDLE
      Re-run the culprit op saved in BUNDLE under anomaly mode and print its error
      (exit code 1 when it reproduces, 2 when it does not or the bundle is unusable).

Checks cost time (about what detect_anomaly costs) and memory: every op's forward
arguments are kept until its backward has run, so that a backward failure can be saved.
"""

# Detectors attached at most: a script that builds models in a loop keeps bounded state.
_MAX_WATCHED_MODELS = 16
_EXIT_ANOMALY = 1
_EXIT_NOT_REPRODUCED = 2


class _Depth(threading.local):
    value = 0


class _Session:
    """Watches the outermost module calls of a run: counts steps, keeps the latest batch and
    RNG state of each model, and attaches a NaNDetector to each model with parameters.

    Every top-level call of a model is one step, as NaNDetector counts them (evaluation
    calls included). Modules without parameters (a loss, an activation) are left to anomaly
    mode, which sees every op anyway.
    """

    def __init__(self) -> None:
        self.depth = _Depth()
        self.detectors: list[NaNDetector] = []
        # Keyed by id; the entry keeps a weak reference to tell a reused id apart.
        self.calls: dict[int, list[Any]] = {}
        self.latest: weakref.ref | None = None

    def before(self, module: Module, args: tuple) -> None:
        depth = self.depth
        depth.value += 1
        if depth.value > 1:
            return
        entry = self.calls.get(id(module))
        if entry is None or entry[0]() is not module:
            has_parameters = any(True for _ in module.parameters())
            if len(self.calls) >= _MAX_WATCHED_MODELS or not has_parameters:
                return
            entry = self.calls[id(module)] = [weakref.ref(module), -1, (), None]
            detector = NaNDetector(module, stop_on_first=True, verbose=False)
            # Attached inside this call: its own hooks run for the call already.
            self.detectors.append(detector.attach())
        entry[1] += 1
        entry[2] = args
        entry[3] = lucid.get_rng_state()
        self.latest = entry[0]

    def after(self, module: Module, args: tuple, output: Any) -> None:
        self.depth.value = max(self.depth.value - 1, 0)

    def model_state(self) -> tuple[Module | None, int | None, tuple, Any]:
        """The model called last, its step, and that call's batch and starting RNG state."""
        model = None if self.latest is None else self.latest()
        if model is None:
            return None, None, (), None
        _, step, args, rng_state = self.calls[id(model)]
        return model, step, args, rng_state

    @contextmanager
    def installed(self) -> Iterator[_Session]:
        handles = [
            register_module_forward_pre_hook(self.before),
            register_module_forward_hook(self.after, always_call=True),
        ]
        try:
            yield self
        finally:
            for handle in handles:
                handle.remove()
            for detector in self.detectors:
                detector.detach()

    def first_detector_event(self) -> Any:
        for detector in self.detectors:
            if detector.triggered:
                return detector.event
        return None


@contextmanager
def _script_environment(script: str, args: Sequence[str]) -> Iterator[None]:
    """sys.argv and sys.path[0] as `python script.py args...` sets them, restored after."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        yield
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def _print(text: str) -> None:
    # One write for the whole report: the reports of two ranks sharing a terminal must not
    # interleave mid-line.
    sys.stderr.flush()
    data = (text + "\n").encode(sys.stderr.encoding or "utf-8", "replace")
    try:
        descriptor = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
        return
    while data:
        data = data[os.write(descriptor, data) :]


def _report_anomaly(error: AnomalyError, session: _Session, repro_path: str | None) -> None:
    event = error.event
    model, step, args, rng_state = session.model_state()
    detector_event = session.first_detector_event()
    if event.step is None:
        event.step = step
    step_note = (" (the training iteration, from 0: optimizer steps taken, or model calls "
                 "where no optimizer is used)")  # fmt: skip
    lines = [
        "",
        "lucid.debug: the run stopped at the first non-finite value.",
        str(error).splitlines()[0],
        _root_cause_report(event, model, step_note),
    ]
    if detector_event is not None and detector_event.batch_idx == event.step:
        lines.append(f"  detector:  {detector_event.headline()}")
    lines.append(_saved_repro(event, repro_path, model=model, batch=args, rng_state=rng_state))
    _print("\n".join(lines))


def _report_other_rank(report: NonFiniteReport) -> None:
    lines = [
        "",
        f"lucid.debug: rank {report.rank} stopped with every rank at the first non-finite value.",
        report.describe(),
        f"  reproducer: saved by rank {report.birth_rank}, where the value was born",
    ]
    _print("\n".join(lines))


def _leave_with_the_other_ranks() -> None:
    """Every rank stopped at the same agreed step: wait until all have reported (and the birth
    rank has saved its reproducer), since MPI's launcher ends the whole job as soon as one
    process exits with a failure."""
    if dist.is_initialized():
        dist.barrier()


def _report_detector(event: Any, repro_path: str | None) -> None:
    lines = [
        "",
        "lucid.debug: the run produced a non-finite value that no op raised an error for.",
        str(event),
        _saved_repro(event, repro_path),
    ]
    _print("\n".join(lines))


def _saved_repro(event: Any, repro_path: str | None, **overrides: Any) -> str:
    if repro_path is None:
        return "  reproducer: not saved (--no-repro)"
    try:
        path = save_repro(event, repro_path, **overrides)
    except (OSError, TypeError, ValueError) as error:
        return f"  reproducer: could not be saved ({error})"
    return (f"  reproducer: {path}\n"
            f"  re-raise it with: python -m lucid.debug repro {path}")  # fmt: skip


def _is_torch_program(script: str) -> bool:
    """A script that imports torch and not lucid: it is debugged with lucid.debug.torch."""
    try:
        tree = ast.parse(open(script, encoding="utf-8").read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.add(node.module.split(".")[0])
    return "torch" in imported and "lucid" not in imported


def run_torch(
    target: str, args: Sequence[str], is_module: bool, rerun: str, repro_path: str | None = None
) -> int:
    """A PyTorch program, unchanged, under lucid.debug.torch.watch()."""
    from lucid.debug.torch._cli import run_torch_program

    script = target if not is_module else target.replace(".", os.sep) + ".py"
    if repro_path is not None:
        repro_path = os.path.abspath(repro_path)  # before the script may chdir
    with _script_environment(script, args):
        try:
            code = run_torch_program(target, args, is_module, _print, rerun, repro_path)
        except SystemExit as exit_:
            return _exit_status(exit_.code)
    return 0 if code is None else code


def run_script(
    script: str,
    args: Sequence[str],
    repro_path: str | None,
    torch: bool = False,
    is_module: bool = False,
    rerun: str = "auto",
) -> int:
    """Run `script` under the checks; the exit code `python -m lucid.debug run` returns."""
    if is_module:
        if torch:
            return run_torch(script, args, True, rerun, repro_path)
        return _run_module(script, args)
    if not os.path.isfile(script):
        _print(f"python -m lucid.debug run: can't open file {script!r}: no such file")
        return 2
    if torch or _is_torch_program(script):
        return run_torch(script, args, False, rerun, repro_path)
    session = _Session()
    sentinel_was_on = is_sentinel_enabled()
    set_sentinel(True)
    exit_code = 0
    anomaly = None
    try:
        with (
            _script_environment(script, args),
            session.installed(),
            warnings.catch_warnings(),
        ):
            # Anomaly mode's own "Error detected in ..." warning repeats the report.
            warnings.filterwarnings("ignore", message="Error detected in ")
            try:
                with _full_checks():
                    # An absolute path keeps reported locations valid if the script chdirs.
                    runpy.run_path(os.path.abspath(script), run_name="__main__")
            except SystemExit as exit_:
                anomaly = _anomaly_in(exit_.__context__)
                if anomaly is None:
                    exit_code = _exit_status(exit_.code)
            except Exception as error:
                anomaly = _anomaly_in(error)
                if anomaly is None and isinstance(error, DistributedNonFiniteError):
                    # Under DistributedDataParallel: born on another rank, which saves the
                    # one reproducer; this rank says where to look.
                    _report_other_rank(error.report)
                    _leave_with_the_other_ranks()
                    return _EXIT_ANOMALY
                if anomaly is None:
                    raise
            if anomaly is not None:
                _report_anomaly(anomaly, session, repro_path)
                model = session.model_state()[0]
                if isinstance(model, DistributedDataParallel) and model.nonfinite_report:
                    _leave_with_the_other_ranks()
                return _EXIT_ANOMALY
            event = session.first_detector_event()
            if event is not None:
                _report_detector(event, repro_path)
                return _EXIT_ANOMALY
    finally:
        set_sentinel(sentinel_was_on)
    return exit_code


def _run_module(module: str, args: Sequence[str]) -> int:
    """`-m package.module` for a lucid program: found as Python finds it, run as a script."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        _print(f"python -m lucid.debug run: no module named {module!r}")
        return 2
    return run_script(spec.origin, args, None)


def _exit_status(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _is_torch_bundle(path: str) -> bool:
    """Whether a safetensors file is a torch program's reproducer (its header says so)."""
    try:
        with open(path, "rb") as file:
            length = int.from_bytes(file.read(8), "little")
            header = json.loads(file.read(min(length, 1 << 24)))
    except (OSError, ValueError):
        return False
    return isinstance(header, dict) and "lucid_torch_repro" in header.get("__metadata__", {})


def show_repro(path: str) -> int:
    """Re-raise the reproducer at `path`; the exit code of `python -m lucid.debug repro`."""
    if _is_torch_bundle(path):
        from lucid.debug.torch._repro import show_torch_repro

        return show_torch_repro(path, _print)
    try:
        bundle = read_repro(path)
        _print(str(bundle))
        bundle.reexecute()
    except AnomalyError as error:
        _print("\n".join([f"reproduced: {error}", *getattr(error, "__notes__", ())]))
        return _EXIT_ANOMALY
    except (RuntimeError, OSError) as error:
        _print(str(error))
    return _EXIT_NOT_REPRODUCED


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m lucid.debug`; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m lucid.debug",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="{run,repro}")
    commands.required = True
    run = commands.add_parser(
        "run", help="run a training script under lucid's NaN checks",
        description="Run a training script under lucid's NaN checks (see python -m "
                    "lucid.debug --help).",
    )  # fmt: skip
    run.add_argument(
        "--repro",
        metavar="PATH",
        default="lucid_repro.safetensors",
        help="where to save the reproducer bundle (default: %(default)s)",
    )
    run.add_argument("--no-repro", action="store_true", help="do not save a reproducer")
    run.add_argument(
        "--torch",
        action="store_true",
        help="a PyTorch program (found by itself when the script imports torch "
        "and not lucid): run it unchanged under lucid.debug.torch.watch()",
    )
    run.add_argument(
        "--rerun",
        choices=("auto", "never", "always"),
        default="auto",
        help="torch programs: run the script again with the failing step under the "
        "instrument when the replay cannot name the op (auto: when the first "
        "run was short)",
    )
    run.add_argument(
        "-m",
        dest="module",
        action="store_true",
        help="the target is a module to run as `python -m` would",
    )
    run.add_argument("script", help="the training script (or, with -m, the module)")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    repro = commands.add_parser(
        "repro", help="re-raise the error saved in a reproducer bundle",
        description="Re-run the culprit op of a reproducer bundle under anomaly mode.",
    )  # fmt: skip
    repro.add_argument("bundle", help="a bundle written by run or lucid.debug.save_repro")
    options = parser.parse_args(argv)
    if options.command == "repro":
        return show_repro(options.bundle)
    return run_script(
        options.script,
        options.args,
        None if options.no_repro else options.repro,
        torch=options.torch,
        is_module=options.module,
        rerun=options.rerun,
    )
