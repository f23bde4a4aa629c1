"""lucid.fft: PyTorch's torch.fft API, the discrete Fourier transforms of lucid.ops.spectral.

Example::

    import lucid
    x = lucid.randn(8)
    spectrum = lucid.fft.rfft(x)            # complex64, 5 entries
    lucid.fft.irfft(spectrum, n=8)          # ~= x
"""

from lucid._tensor import Tensor
from lucid.ops.spectral import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
    "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq",
    "fftshift", "ifftshift", "Tensor",
]  # fmt: skip


def _name_as_torch(function: object, name: str) -> None:
    # torch.fft's functions are named fft_<name> (an unknown keyword: `fft_fft() got an
    # unexpected keyword argument`); a wrapper's inner function raises, so it is named too
    while function is not None:
        function.__name__ = function.__qualname__ = f"fft_{name}"
        function = getattr(function, "__wrapped__", None)


for _name in __all__[:-1]:
    _name_as_torch(globals()[_name], _name)
del _name
