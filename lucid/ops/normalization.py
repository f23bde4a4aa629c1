"""Neural-network ops: the normalization family (used through lucid.nn.functional)."""

from __future__ import annotations

__all__: list[str] = []
