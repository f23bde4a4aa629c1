"""torch is a test-only oracle: without it the suite still collects, and parity tests skip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.torch_oracle import _Absent

ROOT = Path(__file__).resolve().parent.parent

# Runs pytest in a fresh interpreter where every `import torch...` fails as if torch were not
# installed.
_COLLECT_WITHOUT_TORCH = """
import sys
from importlib.abc import MetaPathFinder

class RefuseTorch(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, RefuseTorch())
for name in [name for name in sys.modules if name == "torch" or name.startswith("torch.")]:
    del sys.modules[name]
import pytest
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests"]))
"""


def test_suite_collects_without_torch():
    result = subprocess.run(
        [sys.executable, "-c", _COLLECT_WITHOUT_TORCH],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"collection without torch failed:\n{output[-4000:]}"


def test_placeholder_names_the_missing_marker():
    functional = _Absent("torch").nn.functional
    assert "torch.nn.functional" in repr(functional)
    with pytest.raises(pytest.fail.Exception, match=r"torch\.nn\.functional\.relu\(\) needs torch"):
        functional.relu(1.0)

    class Subclass(_Absent("torch").nn.Module):
        pass

    assert Subclass.__mro__ == (Subclass, object)
