"""The Wishart distribution over positive-definite matrices, given df and a covariance,
precision or lower Cholesky scale; sampled by the Bartlett decomposition."""

import math
import warnings
from numbers import Number

import lucid
from lucid.distributions import constraints
from lucid.distributions.chi2 import Chi2
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.multivariate_normal import _half_log_det, _precision_to_scale_tril
from lucid.distributions.utils import _EMPTY_SIZE, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma function: sum of digamma(x - i / 2) for i < p."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = lucid.arange(p, dtype=x.dtype).div(2).expand(tuple(x.shape) + (-1,))
    return lucid.digamma(x.unsqueeze(-1) - halves).sum(-1)


def _clamp_above_eps(x):
    # the Bartlett diagonal is a square root of chi-squared draws, which may round to 0
    return x.clamp(min=lucid.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """A Wishart distribution with df degrees of freedom (more than dim - 1) and exactly one
    of covariance_matrix, precision_matrix or scale_tril; all computation goes through
    scale_tril, which is cheapest to give.

    Example::

        w = Wishart(lucid.tensor(5.0), covariance_matrix=lucid.eye(2))
        w.sample().shape  # lucid.Size([2, 2]); its mean is df * covariance_matrix
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args: bool | None = None,
    ) -> None:
        given = (covariance_matrix is not None) + (scale_tril is not None)
        if given + (precision_matrix is not None) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        for param in (covariance_matrix, precision_matrix, scale_tril):
            if param is not None:
                break
        if param.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if isinstance(df, Number):
            batch_shape = lucid.Size(param.shape[:-2])
            self.df = lucid.tensor(df, dtype=param.dtype)
        else:
            batch_shape = lucid.Size(lucid.broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(
                f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}."
            )
        matrix_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
        else:
            self.precision_matrix = param.expand(matrix_shape)
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]

        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = lucid.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(self.df, batch_shape)

    def _bartlett_chi2(self, df, batch_shape):
        """The chi-squared laws of the Bartlett factor's squared diagonal: df - i for row i."""
        rows = lucid.arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=df.unsqueeze(-1) - rows.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = lucid.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        if "covariance_matrix" in self.__dict__:
            new.covariance_matrix = self.covariance_matrix.expand(cov_shape)
        if "scale_tril" in self.__dict__:
            new.scale_tril = self.scale_tril.expand(cov_shape)
        if "precision_matrix" in self.__dict__:
            new.precision_matrix = self.precision_matrix.expand(cov_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    def _df_as_matrix_scale(self):
        """df, shaped to scale a batch of matrices (a plain-number df has shape ())."""
        return self.df.expand(self._batch_shape).reshape(tuple(self._batch_shape) + (1, 1))

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_scale_tril
        return (factor @ factor.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        identity = lucid.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        inverse = lucid.cholesky_solve(identity, self._unbroadcasted_scale_tril)
        return inverse.expand(self._matrix_shape())

    @property
    def mean(self):
        return self._df_as_matrix_scale() * self.covariance_matrix

    @property
    def mode(self):
        # the mode (df - p - 1) V exists only for df > p + 1
        factor = self._df_as_matrix_scale() - self.covariance_matrix.shape[-1] - 1
        factor = lucid.where(factor > 0, factor, lucid.full_like(factor, math.nan))
        return factor * self.covariance_matrix

    @property
    def variance(self):
        covariance = self.covariance_matrix
        diagonal = covariance.diagonal(dim1=-2, dim2=-1)
        outer = diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2)
        return self._df_as_matrix_scale() * (covariance.pow(2) + outer)

    def _bartlett_sampling(self, sample_shape=_EMPTY_SIZE):
        # W = (L A)(L A)^T with A lower triangular: sqrt(chi2(df - i)) on the diagonal and
        # standard normals below it
        p = self._event_shape[-1]
        diagonal = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        below = lucid.randn(
            tuple(sample_shape) + tuple(self._batch_shape) + (p, p), dtype=diagonal.dtype
        ).tril(-1)
        factor = self._unbroadcasted_scale_tril @ (lucid.diag_embed(diagonal) + below)
        return factor @ factor.mT

    def _singular(self, sample, sample_shape):
        """Which of the sample_shape draws hold a matrix that is not positive definite."""
        singular = ~self.support.check(sample)
        if self._batch_shape:
            singular = singular.reshape(tuple(sample_shape) + (-1,)).any(-1)
        return singular

    def rsample(self, sample_shape=_EMPTY_SIZE, max_try_correction=None):
        """A draw by the Bartlett decomposition. Rounding can make a draw singular (its
        log_prob is then -inf): such draws are redrawn, up to max_try_correction (10) times,
        with a warning; a draw still singular after that is returned as it is."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = lucid.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample, sample_shape)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sampling(sample_shape)
                mask = singular.reshape(
                    tuple(singular.shape) + (1,) * (sample.dim() - len(sample_shape))
                )
                sample = lucid.where(mask, redrawn, sample)
                singular = self._singular(sample, sample_shape)
                if not bool(singular.any()):
                    break
        return sample

    def _half_log_det_scale(self):
        return _half_log_det(self._unbroadcasted_scale_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        trace_term = (
            lucid.cholesky_solve(value, self._unbroadcasted_scale_tril)
            .diagonal(dim1=-2, dim2=-1)
            .sum(dim=-1)
        )
        return (
            -nu * (p * _LOG_2 / 2 + self._half_log_det_scale())
            - lucid.mvlgamma(nu / 2, p=p)
            + (nu - p - 1) / 2 * lucid.linalg.slogdet(value).logabsdet
            - trace_term / 2
        )

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return (
            (p + 1) * (p * _LOG_2 / 2 + self._half_log_det_scale())
            + lucid.mvlgamma(nu / 2, p=p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        half_shape = y + (p + 1) / 2
        log_det = lucid.linalg.slogdet(-2 * x).logabsdet
        return half_shape * (-log_det + _LOG_2 * p) + lucid.mvlgamma(half_shape, p=p)
