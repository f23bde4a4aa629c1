"""The logistic-normal distribution: a normal pushed onto the simplex by stick breaking."""

from lucid.distributions import constraints
from lucid.distributions.normal import Normal
from lucid.distributions.transformed_distribution import TransformedDistribution
from lucid.distributions.transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """A logistic-normal distribution on the K-simplex with the loc and scale of its base
    normal over K - 1 dims: ``StickBreakingTransform()(x)`` for x ~ Normal(loc, scale).

    Example::

        m = LogisticNormal(lucid.zeros(3), lucid.ones(3))
        m.rsample()  # four entries summing to one
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        # stick breaking needs a vector to break: a scalar normal becomes one of length 1
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
