"""Utilities: removable hook handles (and, later, data loading and serialization)."""

from lucid.utils import hooks

__all__ = ["hooks"]
