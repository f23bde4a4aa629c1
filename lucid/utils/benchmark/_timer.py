"""Timer: timeit.Timer with torch's measurement protocol (warm-up, a block size that makes the
timer's overhead negligible, many replicates) and lucid's thread count."""

from __future__ import annotations

import enum
import textwrap
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
from lucid.utils.benchmark._common import Measurement, TaskSpec, set_torch_threads

__all__ = ["Timer", "timer", "Language"]

# Block sizes stay below a 32-bit integer, as torch's (which may hand them to C++) do.
_MAX_BLOCK_SIZE = 2147483647


def timer() -> float:
    """The clock Timer reads: timeit's. lucid has no accelerator queue to wait for first."""
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Time a Python statement, as torch.utils.benchmark.Timer does.

    `stmt` runs after `setup` with `globals` (where ``lucid`` is predefined), on
    `num_threads` BLAS threads; `label`, `sub_label`, `description` and `env` name the
    measurement in its repr and in Compare's table. lucid has no C++ API, so
    ``language="cpp"`` raises.

    Example::

        timer = Timer("a @ b", globals={"a": lucid.randn(64, 64), "b": lucid.randn(64, 64)})
        print(timer.blocked_autorange(min_run_time=0.2))
    """

    _timer_cls: type = timeit.Timer

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("lucid", lucid)
            if global_setup:
                raise ValueError(
                    f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                    "simply be moved to `setup`."
                )
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("C++ timing is not supported: lucid has no C++ API.")
        else:
            raise ValueError(f"Invalid language `{language}`.")

        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        # never zero, so that ratios to a time stay finite
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement `number` times as one measurement, after a warm-up of a hundredth
        as many (at least two)."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return Measurement(
                number_per_run=number,
                raw_times=[self._timeit(number=number)],
                task_spec=self._task_spec,
            )

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(
        self,
        number: int,
        stop_hook: Callable[[list[float]], bool],
        min_run_time: float,
        max_run_time: float | None = None,
        callback: Callable[[int, float], Any] | None = None,
    ) -> list[float]:
        """Time blocks of `number` executions until `min_run_time` has passed and stop_hook
        agrees, or `max_run_time` has passed."""
        total_time = 0.0
        can_stop = False
        times: list[float] = []
        with set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                time_spent = self._timeit(number)
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """The smallest power of ten of executions whose time dwarfs the timer's own overhead
        (10^4 times) and is a thousandth of `min_run_time`; also the warm-up."""
        with set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                time_taken = self._timeit(number)
                relative_overhead = overhead / time_taken
                if relative_overhead <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time:
                    break
                if number * 10 > _MAX_BLOCK_SIZE:
                    break
                number *= 10
        return number

    def blocked_autorange(
        self,
        callback: Callable[[int, float], Any] | None = None,
        min_run_time: float = 0.2,
    ) -> Measurement:
        """Time blocks of executions for at least `min_run_time` seconds, with a block size
        chosen so that reading the clock costs a negligible share of each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(
            number, lambda times: True, min_run_time=min_run_time, callback=callback
        )
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], Any] | None = None,
    ) -> Measurement:
        """As blocked_autorange, but go on until there are more than three blocks whose
        interquartile range is under `threshold` of their median, or `max_run_time` passed."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list[float]) -> bool:
            if len(times) > 3:
                measurement = Measurement(
                    number_per_run=number, raw_times=times, task_spec=self._task_spec
                )
                return measurement.meets_confidence(threshold=threshold)
            return False

        times = self._measurement_loop(number, stop_hook, min_run_time, max_run_time, callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
