"""``{{attribute}}`` templates: ``@payload`` bodies and dynamic sink options (``topic='{{symbol}}'``).

A template is checked against the stream schema when it is created (an unknown attribute is a
creation error) and compiled to one function ``render(row) -> str``.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from srota.engine.codegen import CodeGen
from srota.grammar.model import Attribute, AttrType
from srota.mappers._convert import format_value

_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")

Formatter = Callable[[AttrType], Callable[[Any], str]]
#: A formatter that also sees where its placeholder stands: (type, template text, start).
PlacedFormatter = Callable[[AttrType, str, int], Callable[[Any], str]]


class TemplateError(ValueError):
    """A template names an attribute the stream does not have."""


def _text_formatter(type_: AttrType) -> Callable[[Any], str]:
    def fmt(value: Any) -> str:
        return format_value(value, type_)
    return fmt


def is_template(text: Any) -> bool:
    """Whether ``text`` contains a ``{{...}}`` placeholder."""
    return isinstance(text, str) and _PLACEHOLDER.search(text) is not None


def is_one_placeholder(text: str) -> bool:
    """Whether ``text`` is a single ``{{...}}`` placeholder and nothing else (but spaces)."""
    return _PLACEHOLDER.fullmatch(text.strip()) is not None


class Template:
    """A compiled ``{{attribute}}`` template over one stream schema.

    ``formatter(type)`` returns the function that renders a value of that type; the default
    renders text as Siddhi does (``55.6``, ``true``, ``null``).  ``placed(type, text, start)``,
    given instead, also sees where the placeholder stands in the template: the JSON and XML
    sink mappers escape a value where it stands inside a string (or an element) and write it
    as it is elsewhere.
    """

    def __init__(self, text: str, attributes: Sequence[Attribute], formatter: Formatter | None = None,
                 *, placed: PlacedFormatter | None = None) -> None:
        self.text = text
        index = {a.name: (i, a.type) for i, a in enumerate(attributes)}
        fmt = formatter or _text_formatter
        gen = CodeGen()
        parts: list[str] = []
        names: list[str] = []
        pos = 0
        for m in _PLACEHOLDER.finditer(text):
            if m.start() > pos:
                parts.append(gen.ref(text[pos:m.start()], "s"))
            name = m.group(1)
            if name not in index:
                raise TemplateError(f"template {text!r} uses '{{{{{name}}}}}', which is not an attribute "
                                    f"of the stream ({', '.join(index)})")
            i, type_ = index[name]
            render = placed(type_, text, m.start()) if placed is not None else fmt(type_)
            parts.append(f"{gen.ref(render, 'f')}(r[{i}])")
            names.append(name)
            pos = m.end()
        if pos < len(text):
            parts.append(gen.ref(text[pos:], "s"))
        self.attribute_names: tuple[str, ...] = tuple(names)
        expr = " + ".join(parts) if parts else "''"
        self.render: Callable[[Sequence[Any]], str] = gen.function("_render", "r", [f"return {expr}"])
        self.render.__doc__ = "The template rendered for one row."

    def __repr__(self) -> str:
        return f"Template({self.text!r})"


def option_templates(options: Mapping[str, Any], attributes: Sequence[Attribute]) -> dict[str, Template]:
    """Templates for the sink options whose value has ``{{attribute}}`` placeholders.

    ``@sink(type='kafka', topic='alerts-{{region}}', key='{{deviceId}}')`` gives
    ``{'topic': Template(...), 'key': Template(...)}``; the host renders them per event (see
    :func:`map_for_sink`) and passes the results to the sink as transport properties.
    Raises :class:`TemplateError` for an unknown attribute.
    """
    return {k: Template(v, attributes) for k, v in options.items() if is_template(v)}
