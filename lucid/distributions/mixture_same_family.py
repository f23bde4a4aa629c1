"""MixtureSameFamily: a mixture whose k components are one distribution's rightmost batch
dim, weighted by a Categorical."""

import lucid
from lucid.distributions import constraints
from lucid.distributions.categorical import Categorical
from lucid.distributions.constraints import MixtureSameFamilyConstraint
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import _EMPTY_SIZE

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A (batch of) mixture(s): mixture_distribution, a Categorical over k components, picks
    one of component_distribution's k distributions along its rightmost batch dim.

    Example::

        mix = Categorical(lucid.ones(5))
        components = Independent(Normal(lucid.randn(5, 2), lucid.rand(5, 2)), 1)
        gmm = MixtureSameFamily(mix, components)  # batch_shape (), event_shape (2,)
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(
        self, mixture_distribution, component_distribution, validate_args: bool | None = None
    ) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                " The Mixture distribution needs to be an "
                " instance of lucid.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution needs to be an "
                "instance of lucid.distributions.Distribution"
            )
        mixture_batch = mixture_distribution.batch_shape
        component_batch = component_distribution.batch_shape[:-1]
        for mixture_size, component_size in zip(reversed(mixture_batch), reversed(component_batch)):
            if mixture_size != 1 and component_size != 1 and mixture_size != component_size:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mixture_batch}) is not "
                    "compatible with `component_distribution."
                    f"batch_shape`({component_batch})"
                )
        mixture_count = mixture_distribution.logits.shape[-1]
        component_count = component_distribution.batch_shape[-1]
        if mixture_count != component_count:
            raise ValueError(
                f"`mixture_distribution component` ({mixture_count}) does not"
                " equal `component_distribution.batch_shape[-1]`"
                f" ({component_count})"
            )
        self._num_component = mixture_count
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(component_batch, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = lucid.Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        super(MixtureSameFamily, new).__init__(
            batch_shape, new._component_distribution.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        """x with a component dim (of size 1) in front of its event dims."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _weights(self):
        """The mixture probabilities, with a size-1 dim per event dim after the component
        dim, so they broadcast against the components' means and variances."""
        probs = self.mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        weighted = self._weights() * self.component_distribution.mean
        return weighted.sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance: E[Var(Y | X)] + Var(E[Y | X])
        weights = self._weights()
        component = self.component_distribution
        mean_of_variances = (weights * component.variance).sum(-1 - self._event_ndims)
        spread = (component.mean - self._pad(self.mean)).pow(2.0)
        variance_of_means = (weights * spread).sum(-1 - self._event_ndims)
        return mean_of_variances + variance_of_means

    def cdf(self, x):
        component_cdf = self.component_distribution.cdf(self._pad(x))
        return (component_cdf * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        component_log_prob = self.component_distribution.log_prob(self._pad(x))  # [S, B, k]
        log_weights = lucid.log_softmax(self.mixture_distribution.logits, dim=-1)  # [B, k]
        return lucid.logsumexp(component_log_prob + log_weights, dim=-1)

    def sample(self, sample_shape=_EMPTY_SIZE):
        sample_shape = lucid.Size(sample_shape)
        with lucid.no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            event_shape = self.event_shape
            # which component each draw takes: [S, B], broadcast from the mixture's batch
            mixture_batch = self.mixture_distribution.batch_shape
            missing = (1,) * (len(self.batch_shape) - len(mixture_batch))
            choices = self.mixture_distribution.sample(sample_shape)
            choices = choices.reshape(tuple(sample_shape) + missing + tuple(mixture_batch))
            choices = choices.expand(sample_shape + self.batch_shape)
            component_samples = self.component_distribution.sample(sample_shape)  # [S, B, k, E]
            index = choices.reshape(tuple(choices.shape) + (1,) * (len(event_shape) + 1))
            index = index.expand(tuple(choices.shape) + (1,) + tuple(event_shape))
            return component_samples.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        args_string = f"\n  {self.mixture_distribution},\n  {self.component_distribution}"
        return "MixtureSameFamily" + "(" + args_string + ")"
