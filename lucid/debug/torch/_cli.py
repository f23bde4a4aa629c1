"""`python -m lucid.debug run` on a PyTorch program: the script runs unchanged under `watch()`,
and the first non-finite step is replayed and reported.

A birth inside the model is found by replaying the model's calls in-process. One in the loss
code (or a step the replay does not reproduce) needs the whole step: the script is run again,
in a new process, with that step under the exact instrument from its start (`--rerun auto`
does so when the first run took at most a few minutes, else prints the command). The rerun
compares its per-step losses with the first run's, and says whether it took the same path.
"""

from __future__ import annotations

import json
import os
import runpy
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

from lucid.debug.torch._repro import save_torch_repro
from lucid.debug.torch._watch import ARM_STEP_VARIABLE, NonFiniteError, watch

__all__ = ["LOSSES_VARIABLE", "run_torch_program"]

_EXIT_ANOMALY = 1
# A first run at most this long is rerun by itself (--rerun auto).
_RERUN_SECONDS = 300.0
LOSSES_VARIABLE = "LUCID_DEBUG_TORCH_LOSSES"


def run_torch_program(
    target: str,
    args: Sequence[str],
    is_module: bool,
    report: Callable[[str], None],
    rerun: str = "auto",
    repro_path: str | None = None,
) -> int | None:
    """Run the script (or `-m` module) under `watch()`: None when it ran clean (the caller
    then returns the script's own exit status), else the exit code after the report."""
    started = time.monotonic()
    watcher = watch()
    try:
        with watcher:
            if is_module:
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(os.path.abspath(target), run_name="__main__")
    except NonFiniteError as error:
        return _stopped(
            error,
            watcher,
            target,
            args,
            is_module,
            report,
            rerun,
            time.monotonic() - started,
            repro_path,
        )
    except SystemExit as exit_:
        if isinstance(exit_.__context__, NonFiniteError):
            return _stopped(
                exit_.__context__,
                watcher,
                target,
                args,
                is_module,
                report,
                rerun,
                time.monotonic() - started,
                repro_path,
            )
        raise
    return None


def _stopped(
    error: NonFiniteError,
    watcher: object,
    target: str,
    args: Sequence[str],
    is_module: bool,
    report: Callable[[str], None],
    rerun: str,
    elapsed: float,
    repro_path: str | None,
) -> int:
    text = _report_text(error)
    report(text + "\n" + _saved_bundle(error, repro_path, text))
    event = error.nan_event
    in_rerun = os.environ.get(ARM_STEP_VARIABLE) is not None
    if event is None or in_rerun or rerun == "never" or not _needs_the_whole_step(event):
        return _EXIT_ANOMALY
    command = [
        sys.executable,
        "-m",
        "lucid.debug",
        "run",
        "--torch",
        "--rerun",
        "never",
        *(["-m"] if is_module else []),
        target,
        *args,
    ]
    if rerun == "auto" and elapsed > _RERUN_SECONDS:
        report(
            f"  to name the op, run the script again with step {event.step} under the "
            f"instrument:\n    {ARM_STEP_VARIABLE}={event.step} {shlex.join(command)}"
        )
        return _EXIT_ANOMALY
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as losses:
        json.dump(watcher.step_losses[: event.step], losses)
    environment = dict(os.environ)
    environment[ARM_STEP_VARIABLE] = str(event.step)
    environment[LOSSES_VARIABLE] = losses.name
    report(
        f"\nlucid.debug: running the script again with step {event.step} under the "
        "instrument, to name the op."
    )
    try:
        return subprocess.run(command, env=environment).returncode
    finally:
        os.unlink(losses.name)


def _saved_bundle(error: NonFiniteError, repro_path: str | None, text: str) -> str:
    if repro_path is None:
        return "  reproducer: not saved (--no-repro)"
    try:
        path = save_torch_repro(error.event, repro_path, text)
    except (OSError, ValueError, ImportError) as problem:
        return f"  reproducer: not saved ({problem})"
    return (
        f"  reproducer: {path} (the op and its arguments)\n"
        f"  re-raise it with: python -m lucid.debug repro {path}"
    )


def _needs_the_whole_step(event: object) -> bool:
    return (event.phase == "loss" and event.op is None) or event.replayed == "no"


def _report_text(error: NonFiniteError) -> str:
    return "\n".join(
        [
            "",
            "lucid.debug: the run stopped at the first non-finite value (a torch program).",
            str(error),
        ]
    )
