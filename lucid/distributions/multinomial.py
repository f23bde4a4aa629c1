"""The multinomial distribution: the counts of each category in total_count categorical
draws."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.binomial import Binomial
from lucid.distributions.categorical import Categorical
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import _EMPTY_SIZE, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """A multinomial distribution of total_count trials (one int for the whole batch) over the
    categories of probs or logits (not both), normalized along the last dim. log_prob scores
    counts of any total (validation only checks that they do not exceed total_count).

    Example::

        counts = Multinomial(100, lucid.tensor([1.0, 1.0, 2.0])).sample()
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(
        self, total_count: int = 1, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=_EMPTY_SIZE):
        sample_shape = lucid.Size(sample_shape)
        samples = self._categorical.sample(lucid.Size((self.total_count,)) + sample_shape)
        # the trials' dim goes last, where scatter_add_ counts them into their categories
        order = list(range(samples.dim()))
        order.append(order.pop(0))
        samples = samples.permute(*order)
        counts = lucid.zeros(self._extended_shape(sample_shape), dtype=samples.dtype)
        counts.scatter_add_(-1, samples, lucid.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        n = lucid.tensor(self.total_count)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - lucid.lgamma(n + 1)
        # E[sum_i log(x_i!)], each x_i binomial, over x_i >= 1 (log 0! = 0)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = lucid.exp(self._binomial.log_prob(support))
        weights = lucid.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = lucid.lgamma(value.sum(-1) + 1)
        log_factorial_xs = lucid.lgamma(value + 1).sum(-1)
        # a category of probability 0 drawn 0 times contributes 0 * log 0 = 0, not nan
        logits[(value == 0) & (logits == -math.inf)] = 0
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
