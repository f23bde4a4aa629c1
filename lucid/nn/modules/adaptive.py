"""Adaptive softmax: a head over frequent classes and clusters, a small tail model per cluster."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules.container import ModuleList, Sequential
from lucid.nn.modules.linear import Linear
from lucid.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of the target classes, and their mean negative, by adaptive softmax.

    Classes below cutoffs[0] (the shortlist) are scored by the head directly; each later
    range of classes is a cluster that the head scores as one entry, and a tail model of
    in_features // div_value**(i + 1) hidden features scores within it.
    """

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(cutoff) != cutoff for cutoff in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                    Linear(hidden, size, bias=False, device=device, dtype=dtype),
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for to_hidden, to_output in self.tail:
            to_hidden.reset_parameters()
            to_output.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        # PyTorch's reads, in its order: `size(0)` before `dim()`
        target_dim = target_.dim()
        if target_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size "
                    f"{input_.size()}"
                )
        elif target_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size "
                    f"{input_.size()}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        is_batched = target_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        labels = target.numpy().astype(np.int64)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{labels.min()}, {labels.max()}] were found. "
            )
        # cluster 0 is the shortlist; cluster i > 0 holds classes cutoffs[i-1] to cutoffs[i]
        cluster = np.searchsorted(self.cutoffs, labels, side="right")
        head_index = np.where(cluster == 0, labels, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = head_logprob.gather(1, lucid.from_numpy(head_index[:, None])).squeeze(1)
        # each row in a cluster adds its class's log-probability within the cluster
        rows_in_order = [np.flatnonzero(cluster == 0)]
        within = [lucid.zeros(len(rows_in_order[0]), dtype=output.dtype)]
        for i in range(1, self.n_clusters + 1):
            rows = np.flatnonzero(cluster == i)
            if rows.size == 0:
                continue
            cluster_input = input.index_select(0, lucid.from_numpy(rows))
            cluster_logprob = F.log_softmax(self.tail[i - 1](cluster_input), dim=1)
            relative = lucid.from_numpy(labels[rows, None] - self.cutoffs[i - 1])
            within.append(cluster_logprob.gather(1, relative).squeeze(1))
            rows_in_order.append(rows)
        order = np.argsort(np.concatenate(rows_in_order), kind="stable")
        output = output + lucid.cat(within)[lucid.from_numpy(order)]
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """Log-probabilities of all n_classes: the head's for the shortlist, and each
        cluster's own plus the head's for the cluster."""
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            cluster_entry = self.shortlist_size + i
            parts.append(cluster_logprob + head_logprob[:, cluster_entry : cluster_entry + 1])
        return lucid.cat(parts, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities (N, n_classes) of every class."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each row: log_prob(input).argmax(1), computing the tail
        models only for rows whose best head entry is a cluster."""
        head_output = self.head(input)
        output = lucid.argmax(head_output, dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not not_in_shortlist.any():
            return output
        if not_in_shortlist.all():
            return lucid.argmax(self._get_full_log_prob(input, head_output), dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist], head_output[not_in_shortlist])
        output[not_in_shortlist] = lucid.argmax(log_prob, dim=1)
        return output
