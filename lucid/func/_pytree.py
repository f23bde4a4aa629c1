"""Nested tuples, lists and dicts of leaves (pytrees): flattening, rebuilding and the structure
string torch.func's errors print."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class TreeSpec:
    """The shape of a pytree without its leaves; a leaf's spec has no type."""

    __slots__ = ("type", "context", "children")

    def __init__(self, type: type | None, context: Any, children: list[TreeSpec]) -> None:
        self.type = type
        self.context = context
        self.children = children

    @property
    def is_leaf(self) -> bool:
        return self.type is None

    @property
    def num_leaves(self) -> int:
        if self.is_leaf:
            return 1
        return sum(child.num_leaves for child in self.children)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (
            self.type is other.type
            and self.context == other.context
            and self.children == other.children
        )

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return self._describe(0)

    def _describe(self, indent: int) -> str:
        # torch's layout, since vmap's and jvp's error messages embed it word for word.
        if self.is_leaf:
            return "*"
        text = ""
        if self.children:
            indent += 2
            parts = [self.children[0]._describe(indent)]
            parts += ["\n" + " " * indent + child._describe(indent) for child in self.children[1:]]
            text = ",".join(parts)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{text}])"


LEAF = TreeSpec(None, None, [])


def _is_node(tree: Any) -> bool:
    # Only exact tuples, lists and dicts nest; a namedtuple or a subclass is a leaf.
    return type(tree) in (tuple, list, dict)


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """(the leaves in order, the spec that rebuilds the tree from them)."""
    leaves: list[Any] = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree: Any, leaves: list[Any]) -> TreeSpec:
    if not _is_node(tree):
        leaves.append(tree)
        return LEAF
    if type(tree) is dict:
        keys = list(tree)
        return TreeSpec(dict, keys, [_flatten_into(tree[key], leaves) for key in keys])
    return TreeSpec(type(tree), None, [_flatten_into(child, leaves) for child in tree])


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """The tree of `spec` holding `leaves` in order."""
    iterator = iter(leaves)
    return _build(iterator, spec)


def _build(iterator: Any, spec: TreeSpec) -> Any:
    if spec.is_leaf:
        return next(iterator)
    children = [_build(iterator, child) for child in spec.children]
    if spec.type is dict:
        return dict(zip(spec.context, children))
    return spec.type(children)


def tree_map(function: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([function(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix: Any, tree: Any) -> list[Any] | None:
    """The leaves of `prefix` repeated over the subtree of `tree` each stands for, one per
    leaf of `tree`; None when `prefix` is not a prefix of `tree`'s structure."""
    result: list[Any] = []
    if _broadcast_into(prefix, tree, result):
        return result
    return None


def _broadcast_into(prefix: Any, tree: Any, result: list[Any]) -> bool:
    if not _is_node(prefix):
        result.extend([prefix] * tree_flatten(tree)[1].num_leaves)
        return True
    if type(prefix) is not type(tree) or len(prefix) != len(tree):
        return False
    if type(prefix) is dict:
        if list(prefix) != list(tree) and set(prefix) != set(tree):
            return False
        return all(_broadcast_into(prefix[key], tree[key], result) for key in tree)
    return all(_broadcast_into(p, t, result) for p, t in zip(prefix, tree))
