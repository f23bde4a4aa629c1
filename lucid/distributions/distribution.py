"""Distribution: the base class, with shapes, argument and sample validation, and the
defaults every distribution shares."""

import warnings

import lucid
from lucid.distributions import constraints
from lucid.distributions.utils import _EMPTY_SIZE, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The base class of probability distributions."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions created from now on."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape=_EMPTY_SIZE,
        event_shape=_EMPTY_SIZE,
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    + "Please set `arg_constraints = {}` or initialize the distribution "
                    + "with `validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                # a lazily derived parameter (logits from probs) was not given: skip it
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param), lazy_property
                ):
                    continue
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with batch dimensions expanded to batch_shape."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Each argument's name and the constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint naming the distribution's support."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=_EMPTY_SIZE):
        """A sample of shape sample_shape + batch_shape + event_shape, outside autograd."""
        with lucid.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_EMPTY_SIZE):
        """A reparameterized sample, differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int):
        """n samples, or n batches of samples."""
        warnings.warn(
            "sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2
        )
        return self.sample(lucid.Size((n,)))

    def log_prob(self, value):
        """The log of the probability density or mass function at value."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at value."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at value."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        """Every value of a discrete distribution's support, along dim 0."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, batched over batch_shape."""
        raise NotImplementedError

    def perplexity(self):
        """The perplexity, exp(entropy), batched over batch_shape."""
        return lucid.exp(self.entropy())

    def _extended_shape(self, sample_shape=_EMPTY_SIZE):
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, lucid.Size):
            sample_shape = lucid.Size(sample_shape)
        return lucid.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value) -> None:
        """Check that value's rightmost dims fit batch_shape + event_shape and that it lies in
        the support."""
        if not lucid.is_tensor(value):
            raise ValueError("The value argument to log_prob must be a Tensor")

        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.size()} vs {self._event_shape}."
            )

        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {lucid.Size(expected_shape)}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                + "sample validation. Please initialize the distribution with "
                + "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"
