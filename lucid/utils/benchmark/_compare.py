"""Compare: many measurements as tables, one per label, a row per statement (or sub-label) and
thread count, a column per description, in torch's layout."""

from __future__ import annotations

import collections
import enum
import math
import operator
from typing import Any

from lucid.utils.benchmark._common import (
    Measurement,
    _log10_single,
    ordered_unique,
    select_unit,
    trim_sigfig,
    unit_to_english,
)

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(value: float) -> int:
    return math.ceil(_log10_single(value))


class _Column:
    """One description's cells: a shared number format wide enough for every cell."""

    def __init__(
        self,
        grouped_results: list[tuple[Measurement | None, ...]],
        time_scale: float,
        trim_significant_figures: bool,
        highlight_warnings: bool,
    ) -> None:
        self._grouped_results = grouped_results
        flat_results = [result for group in grouped_results for result in group]
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings and any(
            result.has_warnings for result in flat_results if result
        )
        digits = [
            _leading_digits(result.median / time_scale) if result else None
            for result in flat_results
        ]
        unit_digits = max(d for d in digits if d is not None)
        decimal_digits = 1
        if trim_significant_figures:
            decimal_digits = min(
                max(result.significant_figures - d, 0)
                for d, result in zip(digits, flat_results, strict=True)
                if result is not None and d is not None
            )
        length = unit_digits + decimal_digits + (1 if decimal_digits else 0)
        warning_width = 7 if self._highlight_warnings else 0
        self._template = f"{{:>{length}.{decimal_digits}f}}{{:>{warning_width}}}"

    def get_results_for(self, group: int) -> tuple[Measurement | None, ...]:
        return self._grouped_results[group]

    def num_to_str(self, value: float | None, estimated_sigfigs: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim_significant_figures:
            value = trim_sigfig(value, estimated_sigfigs)
        flag = ""
        if self._highlight_warnings and spread is not None:
            flag = f" (! {spread * 100:.0f}%)"
        return self._template.format(value, flag)


class _Row:
    """One statement at one thread count (and env): its name cell and a cell per column."""

    def __init__(
        self,
        results: list[Measurement | None],
        row_group: int,
        render_env: bool,
        env_str_len: int,
        time_scale: float,
        colorize: Colorize,
        num_threads: int | None = None,
    ) -> None:
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._columns: tuple[_Column, ...] = ()
        self._num_threads = num_threads

    def register_columns(self, columns: tuple[_Column, ...]) -> None:
        self._columns = columns

    def as_column_strings(self) -> list[str]:
        concrete = [result for result in self._results if result is not None]
        env = f"({concrete[0].env})" if self._render_env else ""
        output = ["  " + env.ljust(self._env_str_len + 4) + concrete[0].as_row_name]
        for result, column in zip(self._results, self._columns, strict=False):
            if result is None:
                output.append(column.num_to_str(None, 1, None))
                continue
            spread = result.iqr / result.median if result.has_warnings else None
            output.append(
                column.num_to_str(
                    result.median / self._time_scale, result.significant_figures, spread
                )
            )
        return output

    @staticmethod
    def color_segment(segment: str, value: float, best_value: float) -> str:
        # within 1% (or 100 ns) of the best is best; ten times slower or more is marked worst
        if value <= best_value * 1.01 or value <= best_value + 100e-9:
            return BEST + BOLD + segment + TERMINATE * 2
        if value <= best_value * 1.1:
            return GOOD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 5:
            return VERY_BAD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 2:
            return BAD + segment + TERMINATE * 2
        return segment

    def row_separator(self, overall_width: int) -> list[str]:
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def finalize_column_strings(
        self, column_strings: list[str], col_widths: list[int]
    ) -> list[str]:
        best_values: list[Any] = [-1 for _ in column_strings]
        if self._colorize == Colorize.ROWWISE:
            row_min = min(result.median for result in self._results if result is not None)
            best_values = [row_min for _ in column_strings]
        elif self._colorize == Colorize.COLUMNWISE:
            best_values = []
            for column in self._columns:
                medians = [r.median for r in column.get_results_for(self._row_group) if r]
                best_values.append(min(medians) if medians else None)
        row_contents = [column_strings[0].ljust(col_widths[0])]
        for text, width, result, best_value in zip(
            column_strings[1:], col_widths[1:], self._results, best_values, strict=False
        ):
            text = text.center(width)
            if self._colorize != Colorize.NONE and result is not None and best_value is not None:
                text = self.color_segment(text, result.median, best_value)
            row_contents.append(text)
        return row_contents


class _Table:
    """The table of the measurements of one label."""

    def __init__(
        self,
        results: list[Measurement],
        colorize: Colorize,
        trim_significant_figures: bool,
        highlight_warnings: bool,
    ) -> None:
        if len({result.label for result in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self._colorize = colorize
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings
        self.label = results[0].label
        self.time_unit, self.time_scale = select_unit(min(result.median for result in results))
        self.row_keys = ordered_unique([self.row_fn(result) for result in results])
        # by thread count and env only, so statements keep the order they came in
        self.row_keys.sort(key=operator.itemgetter(slice(2)))
        self.column_keys = ordered_unique([self.col_fn(result) for result in results])
        self.rows, self.columns = self._populate_rows_and_columns()

    @staticmethod
    def row_fn(measurement: Measurement) -> tuple[int, str | None, str]:
        return measurement.num_threads, measurement.env, measurement.as_row_name

    @staticmethod
    def col_fn(measurement: Measurement) -> str | None:
        return measurement.description

    def _populate_rows_and_columns(self) -> tuple[tuple[_Row, ...], tuple[_Column, ...]]:
        ordered: list[list[Measurement | None]] = [
            [None for _ in self.column_keys] for _ in self.row_keys
        ]
        row_position = {key: i for i, key in enumerate(self.row_keys)}
        column_position = {key: i for i, key in enumerate(self.column_keys)}
        for result in self.results:
            ordered[row_position[self.row_fn(result)]][column_position[self.col_fn(result)]] = (
                result
            )

        unique_envs = {result.env for result in self.results}
        render_env = len(unique_envs) > 1
        env_str_len = max(len(env) for env in unique_envs) if render_env else 0

        rows: list[_Row] = []
        rows_by_group: list[list[list[Measurement | None]]] = []
        prior_num_threads = -1
        prior_env: str | None = ""
        row_group = -1
        for (num_threads, env, _), row in zip(self.row_keys, ordered, strict=True):
            thread_transition = num_threads != prior_num_threads
            if thread_transition:
                prior_num_threads = num_threads
                prior_env = ""
                row_group += 1
                rows_by_group.append([])
            rows.append(
                _Row(
                    results=row,
                    row_group=row_group,
                    render_env=render_env and env != prior_env,
                    env_str_len=env_str_len,
                    time_scale=self.time_scale,
                    colorize=self._colorize,
                    num_threads=num_threads if thread_transition else None,
                )
            )
            rows_by_group[-1].append(row)
            prior_env = env

        columns = tuple(
            _Column(
                grouped_results=[tuple(row[i] for row in group) for group in rows_by_group],
                time_scale=self.time_scale,
                trim_significant_figures=self._trim_significant_figures,
                highlight_warnings=self._highlight_warnings,
            )
            for i in range(len(self.column_keys))
        )
        for row in rows:
            row.register_columns(columns)
        return tuple(rows), columns

    def render(self) -> str:
        # measurements without a description share one column with no heading, where torch's
        # table fails on the missing heading
        headings = ["" if key is None else key for key in self.column_keys]
        string_rows = [["", *headings]]
        string_rows.extend(row.as_column_strings() for row in self.rows)
        num_cols = max(len(cells) for cells in string_rows)
        for cells in string_rows:
            cells.extend("" for _ in range(num_cols - len(cells)))
        col_widths = [
            max(len(cell) for cell in column) for column in zip(*string_rows, strict=True)
        ]
        header = "  |  ".join(
            cell.center(width) for cell, width in zip(string_rows[0], col_widths, strict=True)
        )
        lines = [header]
        overall_width = len(header)
        for cells, row in zip(string_rows[1:], self.rows, strict=True):
            lines.extend(row.row_separator(overall_width))
            lines.append("  |  ".join(row.finalize_column_strings(cells, col_widths)))
        has_warnings = self._highlight_warnings and any(r.has_warnings for r in self.results)
        title = f" {self.label or ''} ".center(overall_width - 2, "-")
        footer = f"Times are in {unit_to_english(self.time_unit)}s ({self.time_unit}).\n"
        if has_warnings:
            footer += "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
        return f"[{title}]\n" + "\n".join(lines) + "\n\n" + footer


class Compare:
    """Tables of many measurements, one per label: a row per statement (or sub-label) and
    thread count, a column per description, each cell a median. Print it or take `str()`.

    Example::

        results = [
            Timer("x.sum()", globals={"x": lucid.ones(n)}, label="sum", description=str(n))
            .blocked_autorange()
            for n in (10, 1000)
        ]
        Compare(results).print()
    """

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results: list[Measurement]) -> None:
        """Add measurements (only Measurement instances) to the table."""
        for result in results:
            if not isinstance(result, Measurement):
                raise ValueError(
                    f"Expected an instance of `Measurement`, got {type(result)} instead."
                )
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print each cell with only the figures its measurement supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour each cell by how close it is to the best of its column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Flag cells whose measurement varies a lot with its IQR / median."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list[str]:
        results = Measurement.merge(self._results)
        by_label: dict[str | None, list[Measurement]] = collections.defaultdict(list)
        for result in results:
            by_label[result.label].append(result)
        return [
            _Table(
                group, self._colorize, self._trim_significant_figures, self._highlight_warnings
            ).render()
            for group in by_label.values()
        ]
