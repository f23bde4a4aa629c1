"""LKJCholesky: the LKJ distribution over lower Cholesky factors of correlation matrices,
sampled by the onion method (Lewandowski, Kurowicka and Joe, 2009, section 3.2)."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.beta import Beta
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import _EMPTY_SIZE, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution of L, the lower Cholesky factor of a dim x dim correlation matrix
    M = L L^T, with density proportional to det(M)^(concentration - 1); concentration 1 is
    uniform over correlation matrices.

    Unlike torch 2.13, whose onion sampler draws row i's squared norm from Beta(i - 1/2, .)
    instead of Beta(i / 2, .), samples here follow the LKJ law: every off-diagonal
    correlation has the same marginal, Beta(c - 1 + dim / 2, c - 1 + dim / 2) on (-1, 1).

    Example::

        l = LKJCholesky(3, 0.5).sample()  # l @ l.mT is a 3 x 3 correlation matrix
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = lucid.Size((dim, dim))
        # the onion method: row i >= 1 has i off-diagonal entries, whose squared norm is
        # Beta(i / 2, c + (dim - 2) / 2 - (i - 1) / 2) for concentration c; all rows are drawn
        # at once, and the first row (no off-diagonal part) draws a placeholder that is unused
        marginal_concentration = self.concentration + 0.5 * (self.dim - 2)
        offset = lucid.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = lucid.cat([lucid.zeros(1, dtype=offset.dtype), offset])
        self._beta = Beta(0.5 * (offset + 1), marginal_concentration.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=_EMPTY_SIZE):
        with lucid.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            normal = lucid.randn(shape, dtype=y.dtype).tril(-1)
            # each row's direction is uniform on its sphere; the first row has no
            # off-diagonal entries (norm 0), so it is divided by 1 and stays zero
            norm = normal.norm(dim=-1, keepdim=True)
            direction = normal / lucid.where(norm > 0, norm, lucid.ones_like(norm))
            w = y.sqrt() * direction
            # the diagonal completes each row to unit norm; tiny keeps it positive
            tiny = lucid.finfo(w.dtype).tiny
            diagonal = lucid.clamp(1 - w.pow(2).sum(-1), min=tiny).sqrt()
            return w + lucid.diag_embed(diagonal)

    def log_prob(self, value):
        # det(M)^(c - 1) is prod L_ii^(2c - 2), and the Jacobian from L to M is
        # prod L_ii^(dim - i), so the density of L is prod L_ii^(2c - 2 + dim - i)
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = lucid.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(-1)
        # the normalizing constant (LKJ 2009, p. 1999); mvlgamma's own pi term is
        # (dim - 1)(dim - 2) / 4 log(pi), which leaves (dim - 1) / 2 log(pi) to add
        dim_minus_one = self.dim - 1
        alpha = self.concentration + 0.5 * dim_minus_one
        denominator = lucid.lgamma(alpha) * dim_minus_one
        numerator = lucid.mvlgamma(alpha - 0.5, dim_minus_one)
        pi_constant = 0.5 * dim_minus_one * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)
