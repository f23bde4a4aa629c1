"""The construction and `expand` that families with a location and a scale share."""

from numbers import Number

import lucid
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all

__all__ = ["LocationScale"]


class LocationScale:
    """Mixed in before a Distribution class: `loc` and `scale` broadcast together, and the
    batch shape is theirs (empty when both are numbers)."""

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = lucid.Size()
        else:
            batch_shape = self.loc.size()
        Distribution.__init__(self, batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        # the family is the class that mixes this in; a subclass with its own __init__ must
        # bring its own expand, as torch requires
        family = next(cls for cls in type(self).__mro__ if LocationScale in cls.__bases__)
        new = self._get_checked_instance(family, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new
