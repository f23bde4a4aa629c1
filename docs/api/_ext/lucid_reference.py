"""The API reference's namespace pages: `.. lucid-namespace:: lucid.nn` documents every public
name of that namespace from its docstring; a name whose object a hand-written page (or an
earlier namespace) documents links there instead (see lucid_names.py)."""

from __future__ import annotations

import importlib
import inspect

from docutils import nodes
from docutils.statemachine import StringList
from lucid_names import hand_documented, homes, is_routine_or_class, public_names
from sphinx.util.docutils import SphinxDirective
from sphinx.util.inspect import stringify_signature


def _directive_for(value: object) -> str:
    if inspect.isclass(value):
        return "autoexception" if issubclass(value, BaseException) else "autoclass"
    if callable(value):
        return "autofunction"
    return "autodata"


def _class_members(cls: type, home: dict) -> list[str]:
    """The options and content of a class's entry: its own members, where a method that is a
    namespace's function (`Tensor.exp` is `lucid.exp`) links there instead of repeating it."""
    bound = [
        (name, home[id(value)][0])
        for name, value in vars(cls).items()
        if not name.startswith("_") and inspect.isroutine(value) and id(value) in home
    ]
    lines = ["   :members:"]
    if bound:
        lines.append(f"   :exclude-members: {', '.join(name for name, _ in bound)}")
        links = ", ".join(f"``{name}`` (:py:obj:`{target}`)" for name, target in bound)
        lines += ["", f"   Methods that are namespace functions: {links}."]
    return lines


def _data_entry(full: str, value: object) -> list[str]:
    """A constant, dtype or option table: its type and short value (its docstring would be its
    type's)."""
    lines = [f".. py:data:: {full}", f"   :type: {type(value).__name__}"]
    text = repr(value)
    if len(text) <= 60:
        lines.append(f"   :value: {text}")
    return [*lines, ""]


class NamespaceDirective(SphinxDirective):
    """Expand into one autodoc entry per public name of the namespace given; a name whose
    object is documented under another name links there."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        module_name = self.arguments[0]
        module = importlib.import_module(module_name)
        documented = hand_documented()
        home = homes()
        entries: list[str] = []
        elsewhere: list[str] = []
        for name in public_names(module_name):
            full = f"{module_name}.{name}"
            value = getattr(module, name)
            if full in documented:
                elsewhere.append(f"* ``{name}``: :py:obj:`{full}`")
                continue
            if is_routine_or_class(value) and home[id(value)][0] != full:
                elsewhere.append(f"* ``{name}``: the same object as :py:obj:`{home[id(value)][0]}`")
                continue
            directive = _directive_for(value)
            if directive == "autodata":
                entries.extend(_data_entry(full, value))
                continue
            entries.append(f".. {directive}:: {full}")
            if directive in ("autoclass", "autoexception"):
                entries.extend(_class_members(value, home))
            entries.append("")
        lines = entries
        if elsewhere:
            lines += ["Documented under another name", "-" * 29, "", *elsewhere, ""]
        source = self.get_source_info()[0]
        content = StringList(lines, source=source)
        container = nodes.section()
        container.document = self.state.document
        self.state.nested_parse(content, self.content_offset, container, match_titles=True)
        return container.children


def _init_signature(app, what, name, obj, options, signature, return_annotation):  # noqa: ANN001, ANN201, ARG001 - Sphinx's event arguments
    """A class whose `__new__` only passes `*args, **kwargs` on (NaNDetector picking its torch
    subclass) is shown with its `__init__`'s signature, which says what it takes."""
    if what != "class" or not isinstance(obj, type):
        return None
    if not (inspect.isfunction(obj.__new__) and inspect.isfunction(obj.__init__)):
        return None  # a builtin's: nothing to say
    kinds = {parameter.kind for parameter in inspect.signature(obj.__new__).parameters.values()}
    if not {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD} <= kinds:
        return None
    init = inspect.signature(obj.__init__)
    init = init.replace(parameters=list(init.parameters.values())[1:])
    return stringify_signature(init, show_return_annotation=False), return_annotation


def setup(app):  # noqa: ANN001, ANN201 - Sphinx's extension entry point
    app.add_directive("lucid-namespace", NamespaceDirective)
    app.connect("autodoc-process-signature", _init_signature)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
