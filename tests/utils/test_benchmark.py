"""lucid.utils.benchmark: Measurement's statistics and repr, Compare's tables (against
torch.utils.benchmark's for the same times), and Timer's measurement protocol."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import lucid
from lucid.utils.benchmark import (
    Compare,
    Language,
    Measurement,
    TaskSpec,
    Timer,
    select_unit,
    trim_sigfig,
    unit_to_english,
)
from tests.torch_oracle import TORCH_AVAILABLE, requires_torch, torch

if TORCH_AVAILABLE:
    import torch.utils.benchmark  # a submodule `import torch` does not load


def _measurement(module, times, number=100, **spec) -> Measurement:
    spec.setdefault("stmt", "x + 1")
    spec.setdefault("setup", "pass")
    return module.Measurement(number, list(times), module.TaskSpec(**spec))


def _lucid(times, number=100, **spec) -> Measurement:
    return _measurement(lucid.utils.benchmark, times, number, **spec)


def test_statistics_are_per_execution_quantiles_of_the_runs() -> None:
    raw = [4.0, 1.0, 3.0, 2.0, 10.0]
    measurement = _lucid(raw, number=2)
    assert measurement.times == [2.0, 0.5, 1.5, 1.0, 5.0]
    per_execution = np.array(sorted(measurement.times))
    assert measurement.median == np.quantile(per_execution, 0.5) == 1.5
    assert measurement.mean == pytest.approx(2.0, rel=1e-15)
    # linear interpolation between order statistics: p25 = 1.0, p75 = 2.0
    assert measurement.iqr == 1.0


def test_wide_spread_warns_in_the_repr() -> None:
    steady = _lucid([1.0, 1.01, 0.99, 1.0])
    assert not steady.has_warnings and steady.meets_confidence()
    noisy = _lucid([1.0, 2.0, 3.0, 4.0])
    assert noisy.has_warnings and not noisy.meets_confidence(0.25)
    assert "WARNING: Interquartile range is" in repr(noisy)
    assert "This suggests significant environmental influence." in repr(noisy)


def test_repr_shape() -> None:
    measurement = _lucid([2e-4, 2.2e-4, 1.8e-4, 2e-4], number=100, label="add", sub_label="8")
    lines = repr(measurement).splitlines()
    assert re.fullmatch(
        r"<lucid\.utils\.benchmark\._common\.Measurement object at 0x\w+>", lines[0]
    )
    assert lines[1:] == [
        "add: 8",
        "  Median: 2.00 us",
        "  IQR:    0.10 us (1.95 to 2.05)",
        "  4 measurements, 100 runs per measurement, 1 thread",
    ]


def test_repr_of_a_single_run_has_no_median_or_iqr_line() -> None:
    lines = repr(_lucid([3e-3], number=10, num_threads=2)).splitlines()
    assert lines[1:] == ["x + 1", "  300.00 us", "  1 measurement, 10 runs , 2 threads"]


def test_task_spec_fields_read_through_the_measurement() -> None:
    measurement = _lucid([1.0], label="L", sub_label="s", description="d", env="e")
    assert (measurement.label, measurement.sub_label, measurement.description) == ("L", "s", "d")
    assert (measurement.env, measurement.num_threads, measurement.stmt) == ("e", 1, "x + 1")
    assert measurement.title == "L: s" and measurement.as_row_name == "s"


def test_merge_pools_runs_of_the_same_task() -> None:
    spec = TaskSpec(stmt="pass", setup="pass")
    merged = Measurement.merge([Measurement(2, [4.0], spec), Measurement(1, [3.0, 1.0], spec)])
    assert len(merged) == 1
    assert merged[0].number_per_run == 1 and merged[0].times == [2.0, 3.0, 1.0]


def test_units_and_significant_figures() -> None:
    assert select_unit(2.5e-8) == ("ns", 1e-9)
    assert select_unit(1e-6) == ("us", 1e-6)
    assert select_unit(0.5) == ("ms", 1e-3)
    assert select_unit(12.0) == ("s", 1)
    assert unit_to_english("us") == "microsecond"
    assert trim_sigfig(3.14159, 2) == pytest.approx(3.1, rel=1e-6)
    assert trim_sigfig(1234.5, 1) == 1000.0
    with pytest.raises(AssertionError, match="must be an integer"):
        trim_sigfig(1.0, 1.5)


RNG_SEEDS = [0, 1, 2]


def _run_sets(seed: int) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return [
        [1e-4],
        [1e-4, 1.1e-4],
        [1e-4, 1.2e-4, 0.9e-4, 1.05e-4],
        list(rng.uniform(1e-4, 2e-4, 20)),
        list(rng.uniform(1e-2, 1.05e-2, 50)),
        list(rng.uniform(3e-7, 9e-7, 7)),
    ]


SPECS = {
    "plain": {},
    "labelled": {"label": "L", "sub_label": "s", "description": "d", "num_threads": 2},
    "multiline": {"stmt": "a\nb", "setup": "y=1\nz=2"},
    "setup": {"setup": "y = 1", "sub_label": "sub"},
}


def _without_address(text: str) -> str:
    return re.sub(r"<[\w.]+Measurement object at 0x\w+>", "<Measurement>", text)


@requires_torch
@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_measurement_matches_torch(seed: int, spec: str) -> None:
    for times in _run_sets(seed):
        for number in (1, 100):
            ours = _measurement(lucid.utils.benchmark, times, number, **SPECS[spec])
            theirs = _measurement(torch.utils.benchmark, times, number, **SPECS[spec])
            for name in ("median", "iqr", "significant_figures", "has_warnings", "times"):
                assert getattr(ours, name) == getattr(theirs, name), name
            # torch's float64 mean sums in its own order; lucid's is exactly rounded
            assert math.isclose(ours.mean, theirs.mean, rel_tol=1e-15)
            assert _without_address(repr(ours)) == _without_address(repr(theirs))


def _grid(module, seed: int) -> list:
    """Two labels; threads 1 and 4 with two envs; two statements; two sizes; one empty cell."""
    rng = np.random.default_rng(seed)
    results = []
    for threads, envs in ((1, ["A"]), (4, ["A", "Bee"])):
        for env in envs:
            for stmt in ("x + 1", "x * 2"):
                for n in (10, 1000):
                    base = 1e-6 * math.sqrt(n) * (1 if stmt == "x + 1" else 3) / threads
                    times = rng.uniform(base, base * (1.02 if n == 10 else 1.4), 12)
                    results.append(
                        _measurement(
                            module,
                            times,
                            10,
                            stmt=stmt,
                            label="add",
                            description=str(n),
                            num_threads=threads,
                            env=env,
                        )  # fmt: skip
                    )
    results.append(_measurement(module, [5e-3] * 6, 1, stmt="f()", label="two", description="1"))
    results.append(
        _measurement(module, [2e-6] * 5, 10, stmt="z", label="add", description="10", env="A")
    )
    return results


OPTIONS = {
    "plain": [],
    "trimmed": ["trim_significant_figures"],
    "colorized": ["colorize"],
    "colorized_rowwise": ["colorize_rowwise"],
    "warnings": ["highlight_warnings"],
    "trimmed_warnings": ["trim_significant_figures", "highlight_warnings"],
}


def _configure(compare, options: list[str]) -> None:
    for option in options:
        if option == "colorize_rowwise":
            compare.colorize(rowwise=True)
        else:
            getattr(compare, option)()


@requires_torch
@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_compare_table_matches_torch(seed: int, option: str) -> None:
    ours = Compare(_grid(lucid.utils.benchmark, seed))
    theirs = torch.utils.benchmark.Compare(_grid(torch.utils.benchmark, seed))
    _configure(ours, OPTIONS[option])
    _configure(theirs, OPTIONS[option])
    assert str(ours) == str(theirs)


def test_compare_rows_columns_and_footer() -> None:
    results = [
        _lucid([318e-8] * 4, 10, stmt="x + 1", label="add", description="10"),
        _lucid([4247e-8] * 4, 10, stmt="x + 1", label="add", description="1000"),
        _lucid([320e-8] * 4, 10, stmt="y.sum()", label="add", description="10"),
    ]
    assert str(Compare(results)).splitlines() == [
        "[------------- add --------------]",
        "               |    10   |   1000 ",
        "1 threads: -----------------------",
        "      x + 1    |  318.0  |  4247.0",
        "      y.sum()  |  320.0  |        ",
        "",
        "Times are in nanoseconds (ns).",
    ]


def test_compare_accepts_only_measurements() -> None:
    with pytest.raises(
        ValueError, match="Expected an instance of `Measurement`, got <class 'int'>"
    ):
        Compare([1])


def test_compare_prints_its_tables(capsys) -> None:
    Compare([_lucid([1e-3] * 4, 1, label="one", description="a")]).print()
    assert capsys.readouterr().out.startswith("[")


def test_compare_without_descriptions_has_one_unheaded_column() -> None:
    lines = str(Compare([_lucid([1e-3] * 4, 1, label="one")])).splitlines()
    assert lines[1].split("|")[1].strip() == ""
    assert lines[3].split("|")[1].strip() == "1.0"


def test_timeit_measures_number_executions_once() -> None:
    calls = []
    timer = Timer("calls.append(1)", globals={"calls": calls})
    measurement = timer.timeit(50)
    # a warm-up of two (a hundredth of 50, at least 2), then the 50 measured
    assert len(calls) == 52
    assert measurement.number_per_run == 50 and len(measurement.raw_times) == 1


def test_blocked_autorange_runs_for_at_least_min_run_time() -> None:
    seen = []
    timer = Timer("sum(range(100))")
    measurement = timer.blocked_autorange(lambda number, time: seen.append(number), 0.02)
    assert sum(measurement.raw_times) >= 0.02
    assert seen == [measurement.number_per_run] * len(measurement.raw_times)
    # the block size is a power of ten
    assert math.log10(measurement.number_per_run).is_integer()


def test_adaptive_autorange_stops_at_max_run_time_or_confidence() -> None:
    measurement = Timer("sum(range(100))").adaptive_autorange(max_run_time=0.1)
    assert len(measurement.raw_times) > 3 or sum(measurement.raw_times) > 0.1


def test_statement_sees_globals_setup_and_lucid() -> None:
    timer = Timer("y = lucid.add(x, offset)", setup="offset = 1.0", globals={"x": lucid.ones(2)})
    assert timer.timeit(3).raw_times[0] > 0


def test_statements_are_dedented() -> None:
    timer = Timer("\n    a = 1\n    b = a + 1\n")
    assert timer._task_spec.stmt == "a = 1\nb = a + 1"


def test_num_threads_is_set_while_timing_and_restored() -> None:
    prior = lucid.get_num_threads()
    seen = []
    Timer("seen.append(lucid.get_num_threads())", globals={"seen": seen}, num_threads=1).timeit(1)
    assert set(seen) == {1}
    assert lucid.get_num_threads() == prior


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"stmt": lambda: None}, ValueError, "Currently only a `str` stmt is supported."),
        ({"global_setup": "int x;"}, ValueError, "global_setup is C++ only, got `int x;`"),
        ({"language": "rust"}, ValueError, "Invalid language `rust`."),
        ({"language": Language.CPP}, NotImplementedError, "lucid has no C++ API"),
        ({"language": "c++"}, NotImplementedError, "lucid has no C++ API"),
    ],
)
def test_timer_argument_errors(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        Timer(**kwargs)


def test_repeat_and_autorange_point_to_blocked_autorange() -> None:
    for method in (Timer().repeat, Timer().autorange):
        with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
            method()


def test_benchmark_is_an_attribute_of_utils() -> None:
    assert lucid.utils.benchmark.Timer is Timer
