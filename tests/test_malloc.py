"""lucid keeps freed array memory for reuse (glibc's mmap and trim thresholds), boundedly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lucid import _malloc

_GLIBC = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION") is not None


def _run(code: str, **environment: str) -> str:
    env = {**os.environ, **environment}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(not _GLIBC, reason="mallopt is glibc's")
def test_import_tunes_malloc_on_glibc():
    assert _malloc.is_malloc_tuned()


def test_lucid_malloc_tuning_0_leaves_malloc_alone():
    code = "import lucid, lucid._malloc as m; print(m.is_malloc_tuned())"
    assert _run(code, LUCID_MALLOC_TUNING="0") == "False"


@pytest.mark.skipif(not _GLIBC, reason="reads /proc/self/statm")
def test_memory_stays_bounded_over_repeated_steps():
    # a step's worth of large temporaries, many times over: the reused heap must not grow
    code = """
import numpy as np, lucid
def rss():
    return int(open('/proc/self/statm').read().split()[1]) * 4096
x = lucid.randn(256, 1024, requires_grad=True)
def step():
    y = (x.exp() * x).relu().sum()
    y.backward()
    x.grad = None
for _ in range(20):
    step()
before = rss()
for _ in range(500):
    step()
print(rss() - before)
"""
    growth = int(_run(code))
    assert growth < 16 * 1024 * 1024, growth


def test_training_results_do_not_depend_on_the_tuning():
    code = """
import lucid
lucid.manual_seed(0)
model = lucid.nn.Sequential(lucid.nn.Linear(64, 256), lucid.nn.ReLU(), lucid.nn.Linear(256, 1))
opt = lucid.optim.SGD(model.parameters(), lr=0.01)
x = lucid.randn(512, 64)
for _ in range(5):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
print(repr(loss.item()))
"""
    assert _run(code) == _run(code, LUCID_MALLOC_TUNING="0")
