"""The multivariate normal distribution, parameterized by a covariance, a precision or a
lower-triangular scale matrix."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import _EMPTY_SIZE, _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(matrix, vector):
    return lucid.matmul(matrix, vector.unsqueeze(-1)).squeeze(-1)


def _half_log_det(tril):
    """log det L for a triangular L with a positive diagonal (the sum of its log diagonal):
    half the log determinant of L L^T."""
    return tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _batch_mahalanobis(scale_tril, x):
    """The squared Mahalanobis distance x^T (L L^T)^-1 x, by one triangular solve."""
    n = x.size(-1)
    if scale_tril.dim() == 2:
        # one factor for every x: one solve with the x's as its columns, not one per x
        columns = x.reshape(-1, n).transpose(0, 1)
        solved = lucid.linalg.solve_triangular(scale_tril, columns, upper=False)
        return solved.pow(2).sum(0).reshape(x.shape[:-1])
    factor_batch = tuple(scale_tril.shape[:-2])
    x_batch = tuple(x.shape[:-1])
    sample_ndim = len(x_batch) - len(factor_batch)
    if sample_ndim > 0 and x_batch[sample_ndim:] == factor_batch:
        # samples of a batch of factors: the sample dims become the columns of one solve per
        # factor, instead of a copy of every factor for every sample
        columns = x.reshape((-1,) + factor_batch + (n,)).movedim(0, -1)
        solved = lucid.linalg.solve_triangular(scale_tril, columns, upper=False)
        return solved.pow(2).sum(-2).movedim(-1, 0).reshape(x_batch)
    scale_tril = scale_tril.expand(x_batch + (n, n))
    solved = lucid.linalg.solve_triangular(scale_tril, x.unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    # the Cholesky factor of the flipped precision gives L^-1 without inverting P first
    flipped_factor = lucid.linalg.cholesky(lucid.flip(precision, (-2, -1)))
    scale_tril_inverse = lucid.transpose(lucid.flip(flipped_factor, (-2, -1)), -2, -1)
    identity = lucid.eye(precision.shape[-1], dtype=precision.dtype)
    return lucid.linalg.solve_triangular(scale_tril_inverse, identity, upper=False)


class MultivariateNormal(Distribution):
    """A multivariate normal distribution with mean loc and exactly one of
    covariance_matrix, precision_matrix or scale_tril (its lower Cholesky factor).

    Example::

        m = MultivariateNormal(lucid.zeros(2), covariance_matrix=lucid.eye(2))
        m.rsample((3,)).shape  # lucid.Size([3, 2])
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = (covariance_matrix is not None) + (scale_tril is not None)
        if given + (precision_matrix is not None) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError(
                    "scale_tril matrix must be at least two-dimensional, with optional leading "
                    "batch dimensions"
                )
            batch_shape = lucid.broadcast_shapes(scale_tril.shape[:-2], loc.shape[:-1])
            self.scale_tril = scale_tril.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError(
                    "covariance_matrix must be at least two-dimensional, with optional leading "
                    "batch dimensions"
                )
            batch_shape = lucid.broadcast_shapes(covariance_matrix.shape[:-2], loc.shape[:-1])
            self.covariance_matrix = covariance_matrix.expand(tuple(batch_shape) + (-1, -1))
        else:
            if precision_matrix.dim() < 2:
                raise ValueError(
                    "precision_matrix must be at least two-dimensional, with optional leading "
                    "batch dimensions"
                )
            batch_shape = lucid.broadcast_shapes(precision_matrix.shape[:-2], loc.shape[:-1])
            self.precision_matrix = precision_matrix.expand(tuple(batch_shape) + (-1, -1))
        batch_shape = lucid.Size(batch_shape)
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = lucid.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = lucid.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        if "covariance_matrix" in self.__dict__:
            new.covariance_matrix = self.covariance_matrix.expand(cov_shape)
        if "scale_tril" in self.__dict__:
            new.scale_tril = self.scale_tril.expand(cov_shape)
        if "precision_matrix" in self.__dict__:
            new.precision_matrix = self.precision_matrix.expand(cov_shape)
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_scale_tril
        return lucid.matmul(factor, factor.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # (L L^T)^-1 = L^-T L^-1
        factor = self._unbroadcasted_scale_tril
        identity = lucid.eye(factor.shape[-1], dtype=factor.dtype)
        factor_inverse = lucid.linalg.solve_triangular(factor, identity, upper=False)
        return lucid.matmul(factor_inverse.mT, factor_inverse).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (
            self._unbroadcasted_scale_tril.pow(2)
            .sum(-1)
            .expand(self._batch_shape + self._event_shape)
        )

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis) - half_log_det

    def entropy(self):
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        entropy = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return entropy
        return entropy.expand(self._batch_shape)
