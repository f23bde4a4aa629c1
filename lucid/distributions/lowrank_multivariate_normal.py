"""The multivariate normal distribution whose covariance is low rank plus diagonal,
W W^T + D, evaluated through the small capacitance matrix I + W^T D^-1 W."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.multivariate_normal import _batch_mahalanobis, _batch_mv, _half_log_det
from lucid.distributions.utils import _EMPTY_SIZE, _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(cov_factor, cov_diag):
    """The Cholesky factor of the capacitance matrix I + W^T D^-1 W (rank x rank)."""
    rank = cov_factor.size(-1)
    factor_t_over_diag = cov_factor.mT / cov_diag.unsqueeze(-2)
    capacitance = lucid.matmul(factor_t_over_diag, cov_factor) + lucid.eye(
        rank, dtype=cov_factor.dtype
    )
    return lucid.linalg.cholesky(capacitance)


def _batch_lowrank_logdet(cov_factor, cov_diag, capacitance_tril):
    # matrix determinant lemma: log|W W^T + D| = log|C| + log|D|
    return 2 * _half_log_det(capacitance_tril) + cov_diag.log().sum(-1)


def _batch_lowrank_mahalanobis(cov_factor, cov_diag, x, capacitance_tril):
    # Woodbury: (W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1, so the distance is
    # x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2
    factor_t_over_diag = cov_factor.mT / cov_diag.unsqueeze(-2)
    projected = _batch_mv(factor_t_over_diag, x)
    diagonal_term = (x.pow(2) / cov_diag).sum(-1)
    return diagonal_term - _batch_mahalanobis(capacitance_tril, projected)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal distribution with covariance cov_factor @ cov_factor.mT +
    diag(cov_diag); its log_prob, entropy and KL need only rank x rank factorizations.

    Example::

        m = LowRankMultivariateNormal(lucid.zeros(2), lucid.tensor([[1.0], [0.0]]), lucid.ones(2))
        m.sample().shape  # lucid.Size([2])
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, "
                "with optional leading batch dimensions"
            )
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")

        try:
            # loc and cov_diag broadcast as columns against cov_factor's (n, rank) matrices
            loc_column, self.cov_factor, cov_diag_column = lucid.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except RuntimeError as error:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from error
        self.loc = loc_column[..., 0]
        self.cov_diag = cov_diag_column[..., 0]
        batch_shape = self.loc.shape[:-1]

        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = lucid.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        variance = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return variance.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2, and the middle factor has every
        # eigenvalue >= 1, so its Cholesky is well conditioned (GPML, section 3.4.3)
        n = self._event_shape[0]
        diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled_factor = self._unbroadcasted_cov_factor / diag_sqrt
        inner = lucid.matmul(scaled_factor, scaled_factor.mT) + lucid.eye(
            n, dtype=scaled_factor.dtype
        )
        scale_tril = diag_sqrt * lucid.linalg.cholesky(inner)
        return scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_cov_factor
        covariance = lucid.matmul(factor, factor.mT) + lucid.diag_embed(
            self._unbroadcasted_cov_diag
        )
        return covariance.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - A^T A with A = L_C^-1 W^T D^-1
        factor_t_over_diag = self._unbroadcasted_cov_factor.mT / (
            self._unbroadcasted_cov_diag.unsqueeze(-2)
        )
        a = lucid.linalg.solve_triangular(self._capacitance_tril, factor_t_over_diag, upper=False)
        precision = lucid.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        factor_noise_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_factor = _standard_normal(factor_noise_shape, dtype=self.loc.dtype)
        eps_diag = _standard_normal(shape, dtype=self.loc.dtype)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_factor)
            + self._unbroadcasted_cov_diag.sqrt() * eps_diag
        )

    def _logdet(self):
        return _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            value - self.loc,
            self._capacitance_tril,
        )
        constant = self._event_shape[0] * math.log(2 * math.pi)
        return -0.5 * (constant + self._logdet() + mahalanobis)

    def entropy(self):
        constant = self._event_shape[0] * (1.0 + math.log(2 * math.pi))
        entropy = 0.5 * (constant + self._logdet())
        if len(self._batch_shape) == 0:
            return entropy
        return entropy.expand(self._batch_shape)
