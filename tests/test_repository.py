"""The repository's own promises: the license pyproject.toml declares, and the README's setup."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_license_file_is_the_mit_license_that_pyproject_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    assert declared == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the lucid authors\n")
    assert "Permission is hereby granted, free of charge" in text


def test_readme_opening_commands_stay_one_line_each() -> None:
    readme = (ROOT / "README.md").read_text()
    assert (
        'python3 -m venv .venv && .venv/bin/pip install -q -e ".[demo]" && '
        ".venv/bin/python examples/demo.py\n" in readme
    )
    assert (
        'python3 -m venv .venv && .venv/bin/pip install -q -e ".[test]" && '
        ".venv/bin/python -m pytest\n" in readme
    )


def test_readme_says_the_test_extra_pulls_the_cuda_build_and_how_to_get_the_cpu_one() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "CUDA build" in readme
    cpu_install = (
        ".venv/bin/pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
    )
    # the CPU wheel goes in first; installing the extra afterwards finds torch satisfied
    assert readme.index(cpu_install) < readme.index(
        '.venv/bin/pip install -q -e ".[test]"', readme.index(cpu_install)
    )


def _installed_by(extra: str, extras: dict) -> list[str]:
    """The package names an extra installs, with the extras of lucid's it includes expanded."""
    names = []
    for requirement in extras[extra]:
        name = re.split(r"[<>=!\[ ;]", requirement, maxsplit=1)[0]
        if name == "lucid-numerics":
            for included in re.findall(r"\w+", requirement.split("[", 1)[1]):
                names += _installed_by(included, extras)
        else:
            names.append(name)
    return names


def test_readme_names_every_package_the_test_extra_installs() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    readme = (ROOT / "README.md").read_text()
    described = readme[readme.index("Run the tests") : readme.index('".[test]"')].lower()
    packages = _installed_by("test", extras["optional-dependencies"])
    spoken = {"torch": "pytorch"}  # how the README names a package
    missing = [name for name in packages if spoken.get(name, name).lower() not in described]
    assert not missing, f"the README's test command does not say it installs {missing}"
