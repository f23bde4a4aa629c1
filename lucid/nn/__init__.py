"""lucid.nn: modules, parameters, functional API and initialisation, mirroring torch.nn."""

from lucid.nn import functional

__all__ = ["functional"]
