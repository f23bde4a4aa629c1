"""Linear-algebra ops: einsum, inner, tensordot, trace, diagonal."""

from __future__ import annotations

__all__: list[str] = []
