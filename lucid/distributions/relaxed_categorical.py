"""The relaxed one-hot categorical (Concrete, Gumbel-softmax) distribution and its log,
ExpRelaxedCategorical: continuous, reparameterizable stand-ins for a OneHotCategorical
(Maddison et al. 2017; Jang et al. 2017)."""

import lucid
from lucid.distributions import constraints
from lucid.distributions.categorical import Categorical
from lucid.distributions.distribution import Distribution
from lucid.distributions.transformed_distribution import TransformedDistribution
from lucid.distributions.transforms import ExpTransform
from lucid.distributions.utils import _EMPTY_SIZE, broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical with a temperature and probs or logits (not
    both): ``log_softmax((logits + G) / temperature)`` for G standard Gumbel noise."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    # the samples lie on a submanifold of this: their exps sum to one
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        # the inner Categorical checks its parameters by default whatever validate_args says,
        # as torch's does
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        super(ExpRelaxedCategorical, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        # clamped away from 0 and 1 so that both logs are finite
        uniforms = clamp_probs(lucid.rand(shape, dtype=self.logits.dtype))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # the density's normalizer: (K - 1)! temperature^(K - 1)
        log_scale = lucid.full_like(self.temperature, float(K)).lgamma()
        log_scale = log_scale - self.temperature.log().mul(-(K - 1))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A relaxed one-hot categorical on the simplex with a temperature and probs or logits
    (not both): the exp of an ExpRelaxedCategorical, with reparameterized samples.

    Example::

        m = RelaxedOneHotCategorical(lucid.tensor([2.2]), lucid.tensor([0.1, 0.2, 0.3, 0.4]))
        m.rsample()  # on the simplex, differentiable in temperature and probs
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
