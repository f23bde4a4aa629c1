"""Lines of a test file found by a trailing `# <marker>` comment, so assertions on reported
line numbers survive edits above them."""

from __future__ import annotations

from pathlib import Path


def marked_line(path: str | Path, marker: str) -> int:
    """The one line of `path` whose trailing comment is `# <marker>`."""
    tag = f"# <{marker}>"
    lines = Path(path).read_text().splitlines()
    hits = [number for number, text in enumerate(lines, 1) if text.rstrip().endswith(tag)]
    assert len(hits) == 1, f"{tag} must mark exactly one line of {path}, found {hits}"
    return hits[0]
