"""What a benchmark measured (Measurement, with the TaskSpec that describes it) and the number
formatting that Measurement's repr and Compare's table share."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

import lucid

__all__ = [
    "TaskSpec",
    "Measurement",
    "select_unit",
    "unit_to_english",
    "trim_sigfig",
    "ordered_unique",
    "set_torch_threads",
]

_MAX_SIGNIFICANT_FIGURES = 4
# Below 25 ns the timer's own resolution dominates, so no finer interval is claimed.
_MIN_CONFIDENCE_INTERVAL = 25e-9
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _log10_single(x: float) -> float:
    """log10 of `x` in single precision, correctly rounded: torch computes the unit, the
    leading digits and the significant figures of its tables on float32 tensors, and the
    figures printed depend on which side of an integer the logarithm falls."""
    return float(np.float32(math.log10(float(np.float32(x)))))


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer measures and how it is labelled (everything but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label, else the statement, with the sub-label after a colon."""
        sub_label = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub_label
        if "\n" not in self.stmt:
            return self.stmt + sub_label
        bracketed = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{bracketed}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The TaskSpec's lines of a Measurement's repr."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(
            f"{section}\n" if "\n" in section else section for section in sections if section
        )


# the TaskSpec fields a Measurement answers for (env and title are its own properties)
_TASK_SPEC_FIELDS = ("stmt", "setup", "global_setup", "label", "sub_label", "description",
                     "num_threads")  # fmt: skip


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of one or more runs of a statement, each run executing it `number_per_run`
    times, with their statistics (median, mean, iqr) and a readable repr.

    Example::

        >>> Timer("x + 1", globals={"x": lucid.ones(8)}).blocked_autorange()
        <lucid.utils.benchmark._common.Measurement object at 0x...>
        x + 1
          Median: 2.31 us
          IQR:    0.05 us (2.29 to 2.34)
          ...
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # for the user's payload; lucid reads none of it

    def __post_init__(self) -> None:
        # the statistics are computed on first read, then kept
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = -1.0
        self._mean = -1.0
        self._p25 = -1.0
        self._p75 = -1.0

    # the TaskSpec's fields, read through the Measurement as torch's are (by __getattr__,
    # so that they are no members of the class, as in torch)
    def __getattr__(self, name: str) -> Any:
        if name in _TASK_SPEC_FIELDS and "task_spec" in self.__dict__:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def times(self) -> list[float]:
        """The time of one execution of the statement, per run."""
        return [time / self.number_per_run for time in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the interquartile runs support: from a 90%
        confidence interval of their mean (z = 1.645), between 1 and 4."""
        self._lazy_init()
        count = len(self._sorted_times)
        interquartile = self._sorted_times[count // 4 : math.ceil(3 * count / 4)]
        # single precision, as torch computes this estimate
        spread = float(np.std(np.asarray(interquartile, dtype=np.float32)))
        interval = max(1.645 * spread / math.sqrt(len(interquartile)), _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(_log10_single(self._median / interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        times = np.asarray(self._sorted_times, dtype=np.float64)
        # linear interpolation between order statistics, torch.quantile's default
        self._median = float(np.quantile(times, 0.5))
        # exactly rounded, so the mean does not depend on a summation order
        self._mean = math.fsum(self._sorted_times) / len(self._sorted_times)
        self._p25 = float(np.quantile(times, 0.25))
        self._p75 = float(np.quantile(times, 0.75))
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, message: str) -> None:
        relative_iqr = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {relative_iqr:.1f}% "
            f"of the median measurement.\n           {message}",
        )

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is under `threshold` of the median."""
        return self.iqr / self.median < threshold

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        count = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize()]
        median_name = "Median: " if count > 1 else ""
        lines.append(f"  {median_name}{self._median / scale:.2f} {unit}")
        # an interquartile range of fewer than four runs says nothing
        if count >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        runs = "runs per measurement," if count > 1 else "runs ,"
        threads = "threads" if self.num_threads > 1 else "thread"
        plural = "s" if count > 1 else ""
        lines.append(
            f"  {count} measurement{plural}, {self.number_per_run} {runs} {self.num_threads} "
            f"{threads}"
        )
        lines.append("\n".join(self._warnings))
        return "\n".join("\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Pool the runs of measurements of the same TaskSpec into one each, as times of a
        single execution (`number_per_run=1`), dropping their metadata."""
        grouped: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for measurement in measurements:
            grouped[measurement.task_spec].extend(measurement.times)
        return [
            Measurement(number_per_run=1, raw_times=times, task_spec=task_spec, metadata=None)
            for task_spec, times in grouped.items()
        ]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (ns, us, ms or s) in which `t` seconds reads with one to three digits, and its
    scale."""
    exponent = int(_log10_single(t) // 3)
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exponent, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """`x` rounded to `n` significant figures (3.14159, 2 -> 3.1), in single precision as
    torch's."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = math.ceil(_log10_single(abs(x)))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Run the block with `n` BLAS threads (lucid.set_num_threads), then restore the count."""
    prior_num_threads = lucid.get_num_threads()
    try:
        lucid.set_num_threads(n)
        yield
    finally:
        lucid.set_num_threads(prior_num_threads)
