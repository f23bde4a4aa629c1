"""Random number generation: Generator (NumPy's PCG64), the default generator and its seed
and state functions, which factories, random fills and dropout all draw from."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lucid._core import dtypes
from lucid._core.devices import check_device
from lucid._core.tensor import TensorBase, _wrap

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "Generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "default_generator",
]


class Generator:
    """A seeded source of random numbers (wraps NumPy's PCG64)."""

    def __init__(self, device: str = "cpu") -> None:
        check_device(device)
        self._seed = 67280421310721
        self._numpy_generator: np.random.Generator | None = None

    @property
    def _rng(self) -> np.random.Generator:
        # made on the first draw: importing numpy.random is a tenth of `import lucid`
        if self._numpy_generator is None:
            self._numpy_generator = np.random.Generator(np.random.PCG64(self._seed))
        return self._numpy_generator

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        # PyTorch reads the seed as a 64-bit integer, signed or unsigned, and keeps it unsigned
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        seed &= (1 << 64) - 1
        self._seed = seed
        self._numpy_generator = None
        return self

    def seed(self) -> int:
        new_seed = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
        self.manual_seed(new_seed)
        return new_seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The generator state as a uint8 tensor (JSON of the bit generator state)."""
        import json

        encoded = json.dumps(self._rng.bit_generator.state).encode()
        return _wrap(np.frombuffer(encoded, dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        import json

        if getattr(new_state, "dtype", None) is not dtypes.uint8:
            name = "Tensor" if isinstance(new_state, TensorBase) else type(new_state).__name__
            raise TypeError(f"expected a lucid.ByteTensor, but got {name}")

        state = json.loads(bytes(np.asarray(new_state._data, dtype=np.uint8)).decode())
        self._rng.bit_generator.state = state
        return self

    @property
    def device(self) -> str:
        return "cpu"


default_generator = Generator()


def _rng(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator)._rng


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)
