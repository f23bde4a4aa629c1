"""ExponentialFamily: distributions of the form exp(<t(x), θ> - F(θ) + k(x)), whose entropy
follows from the log normalizer F by autograd."""

import lucid
from lucid.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base class of exponential-family distributions."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        # H = F(θ) - <θ, ∇F(θ)> - E[k(x)], the Bregman divergence form
        result = -self._mean_carrier_measure
        natural_params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*natural_params)
        gradients = lucid.autograd.grad(log_normalizer.sum(), natural_params, create_graph=True)
        result = result + log_normalizer
        for param, gradient in zip(natural_params, gradients):
            result = result - (param * gradient).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
