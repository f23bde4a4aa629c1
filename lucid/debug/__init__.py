"""Training-loop tools for finding where NaNs and exploding gradients come from.

`lucid.debug.torch` brings them to unmodified PyTorch programs; it loads (with torch) on first
use only.
"""

import importlib

from lucid._core.sentinel import allow_nonfinite, set_step
from lucid.debug.detector import NaNDetector, train_with_nan_guard
from lucid.debug.events import GradEvent, NaNEvent
from lucid.debug.grad_norm import GradNormEvent, GradNormGuard
from lucid.debug.headroom import HeadroomWarning
from lucid.debug.replay import replay_step
from lucid.debug.repro import (
    BackwardCall,
    ReplayResult,
    ReproBundle,
    load_repro,
    read_repro,
    save_repro,
)

__all__ = [
    "GradNormEvent",
    "GradNormGuard",
    "NaNDetector",
    "NaNEvent",
    "GradEvent",
    "HeadroomWarning",
    "allow_nonfinite",
    "set_step",
    "train_with_nan_guard",
    "BackwardCall",
    "ReplayResult",
    "replay_step",
    "ReproBundle",
    "load_repro",
    "read_repro",
    "save_repro",
]


def __getattr__(name: str):
    if name == "torch":
        return importlib.import_module("lucid.debug.torch")
    raise AttributeError(f"module 'lucid.debug' has no attribute '{name}'")
