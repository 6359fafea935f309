"""Which arrangements of states SiddhiQL's grammar takes as a pattern or a sequence.

Srota's lark grammar reads any chain of states joined by ``->`` or ``,`` (see siddhi.lark);
Siddhi's ANTLR grammar (SiddhiQL.g4) is narrower, and refuses with a syntax error, among
others: two absent states next to each other (``not A for 1 sec -> not B for 1 sec -> e3=C``),
``every`` anywhere in a sequence but over its first state, a sequence that starts with a
parenthesised group, ``*``/``+``/``?`` in a pattern, and ``not S`` without ``for`` in a chain.
Its rules are ambiguous and left-recursive, so rather than restating them as a lark grammar
they are checked here on the parsed chain: :func:`accepted` runs the g4's rules as a CYK
recogniser over the flat list of a chain's items (a parenthesised group is one item).

The categories are the g4's rule names, shortened:

=======  =============================================================================
PS       pattern_source: a stream state, a counted one (``<n:m>``), ``and``/``or``
PSC      pattern_source_chain: PS joined by ``->``, in parentheses or not
EPSC     every_pattern_source_chain: PSC, ``every PS``, ``every (PSC)``, EPSC -> EPSC
XA       every_absent_pattern_source: ``[every] not S for t``
L, R     left_ / right_absent_pattern_source: chains with absent states on the left / right
APSC     absent_pattern_source_chain: XA, L or R, also in parentheses
SS       sequence_source: a stream state, counted (``<n:m>``, ``*``, ``+``, ``?``), ``and``/``or``
SSC      sequence_source_chain: SS joined by ``,``, in parentheses or not
BX       basic_absent_pattern_source: ``not S for t`` (no ``every`` in a sequence)
LS, RS   left_ / right_absent_sequence_source
ASSC     absent_sequence_source_chain: BX, LS or RS, also in parentheses
=======  =============================================================================
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: A state: "stream" (plain, ``<n:m>``-counted, or ``and``/``or`` of two), "logical_absent"
#: (``and``/``or`` with an absent side, which keeps its kind in parentheses), "mark" (counted
#: with ``*``, ``+`` or ``?``), "absent" (``not S for t``) or "absent_no_wait" (``not S``).
UNIT_KINDS = ("stream", "logical_absent", "mark", "absent", "absent_no_wait")


@dataclass(frozen=True)
class Unit:
    """One state of the chain."""

    kind: str
    pos: Any = None


@dataclass(frozen=True)
class Every:
    """``every`` over a state or a parenthesised group."""

    inner: Unit | Group
    pos: Any = None


@dataclass(frozen=True)
class Group:
    """A parenthesised state or chain."""

    inner: Shape
    pos: Any = None


@dataclass(frozen=True)
class Chain:
    """States joined by one kind of separator (``->`` or ``,``), flat."""

    items: tuple[Shape, ...]
    pos: Any = None


Shape = Unit | Every | Group | Chain

_PATTERN_JOINS = {("PSC", "PSC"): "PSC", ("EPSC", "EPSC"): "EPSC",
                  ("XA", "EPSC"): "L", ("L", "L"): "L", ("L", "XA"): "L", ("EPSC", "L"): "L",
                  ("EPSC", "XA"): "R", ("R", "R"): "R", ("XA", "R"): "R", ("R", "EPSC"): "R"}
_SEQUENCE_JOINS = {("SSC", "SSC"): "SSC",
                   ("BX", "SSC"): "LS", ("LS", "LS"): "LS", ("LS", "BX"): "LS", ("SSC", "LS"): "LS",
                   ("SSC", "BX"): "RS", ("RS", "RS"): "RS", ("BX", "RS"): "RS", ("RS", "SSC"): "RS"}


def _close(cats: set[str]) -> frozenset[str]:
    """Add what the g4's single-alternative rules derive (PS is a PSC, an XA an APSC, ...)."""
    if "PS" in cats:
        cats.add("PSC")
    if "PSC" in cats:
        cats.add("EPSC")
    if cats & {"XA", "L", "R"}:
        cats.add("APSC")
    if "SS" in cats:
        cats.add("SSC")
    if cats & {"BX", "LS", "RS"}:
        cats.add("ASSC")
    return frozenset(cats)


def _kept_in_parentheses(inner: frozenset[str]) -> set[str]:
    # '(' X ')' is an X for these rules only: a PS, XA or BX in parentheses is no longer one.
    return set(inner & {"PSC", "EPSC", "L", "R", "APSC", "SSC", "LS", "RS", "ASSC"})


def _categories(shape: Shape, sequence: bool) -> frozenset[str]:
    if isinstance(shape, Unit):
        if shape.kind == "absent":
            return _close({"BX"} if sequence else {"XA"})
        if shape.kind in ("stream", "logical_absent") or (shape.kind == "mark" and sequence):
            return _close({"SS"} if sequence else {"PS"})
        return frozenset()  # a mark in a pattern, `not S` without a waiting time
    if isinstance(shape, Group):
        core = shape.inner
        while isinstance(core, Group):
            core = core.inner
        if isinstance(core, Unit) and core.kind == "logical_absent":  # '(' logical_absent_stateful_source ')'
            return _categories(core, sequence)
        return _close(_kept_in_parentheses(_categories(shape.inner, sequence)))
    if isinstance(shape, Every):
        if sequence:  # only before a sequence's first state: accepted() takes that one off
            return frozenset()
        inner = _categories(shape.inner, sequence)
        if isinstance(shape.inner, Group):  # EVERY '(' PSC ')', EVERY? '(' L | R | APSC ')'
            cats = {"EPSC"} if "PSC" in inner else set()
            return _close(cats | (inner & {"L", "R", "APSC"}))
        return _close(({"EPSC"} if "PS" in inner else set()) | (inner & {"XA"}))
    spans = _spans(shape.items, sequence)
    return spans[0, len(shape.items)]


def _spans(items: tuple[Shape, ...], sequence: bool) -> dict[tuple[int, int], frozenset[str]]:
    """CYK: the categories of every run ``items[i:j]`` of the chain."""
    joins = _SEQUENCE_JOINS if sequence else _PATTERN_JOINS
    n = len(items)
    table = {(i, i + 1): _categories(item, sequence) for i, item in enumerate(items)}
    for width in range(2, n + 1):
        for i in range(n - width + 1):
            j = i + width
            cats: set[str] = set()
            for k in range(i + 1, j):
                for left in table[i, k]:
                    for right in table[k, j]:
                        made = joins.get((left, right))
                        if made:
                            cats.add(made)
            table[i, j] = _close(cats)
    return table


def accepted(shape: Shape, sequence: bool) -> bool:
    """Whether SiddhiQL.g4 takes ``shape`` as a pattern (``->``) or a sequence (``,``) input."""
    if not sequence:  # pattern_stream: every_pattern_source_chain | absent_pattern_source_chain
        return bool(_categories(shape, False) & {"EPSC", "APSC"})
    # sequence_stream: EVERY? SS ',' SSC | EVERY? ASSC ',' SSC | EVERY? SS ',' ASSC
    items = shape.items if isinstance(shape, Chain) else (shape,)
    if isinstance(items[0], Every):
        items = (items[0].inner, *items[1:])
    spans = _spans(items, True)
    n = len(items)
    return any(("SS" in spans[0, k] and spans[k, n] & {"SSC", "ASSC"}) or
               ("ASSC" in spans[0, k] and "SSC" in spans[k, n]) for k in range(1, n))


def why_refused(shape: Shape, sequence: bool) -> tuple[str, Any]:
    """What to tell about a shape :func:`accepted` refuses, and where: the first cause found."""
    def walk(s: Shape, top: bool) -> tuple[str, Any] | None:
        if isinstance(s, Unit):
            if s.kind == "mark" and not sequence:
                return "'*', '+' and '?' count states in a sequence; a pattern counts with <min:max>", s.pos
            if s.kind == "absent_no_wait":
                return "an absent state needs a waiting time here: 'not S for <time>'", s.pos
            return None
        if isinstance(s, Every):
            if sequence and not top:
                return "'every' can only begin a sequence, over its first state ('every e1=A, e2=B')", s.pos
            return walk(s.inner, False)
        if isinstance(s, Group):
            return walk(s.inner, False)
        for n, item in enumerate(s.items):
            found = walk(item, top and n == 0)
            if found:
                return found
        for a, b in zip(s.items, s.items[1:], strict=False):
            if _is_absent(a) and _is_absent(b):
                return "two absent states ('not S for <time>') cannot follow each other here", b.pos
        return None

    found = walk(shape, True)
    if found:
        return found
    first = shape.items[0] if isinstance(shape, Chain) else shape
    if sequence and isinstance(first, Every) and isinstance(first.inner, Group):
        return "'every' in a sequence can only be over its first state, not over a parenthesised group " \
               "('every e1=A, e2=B')", first.pos
    if sequence and isinstance(first, Group):
        return "a sequence cannot begin with a parenthesised group of states", first.pos
    kind = "sequence" if sequence else "pattern"
    return f"SiddhiQL has no {kind} of this shape (see the pattern and sequence rules of SiddhiQL.g4)", shape.pos


def _is_absent(s: Shape) -> bool:
    if isinstance(s, Every):
        s = s.inner
    return isinstance(s, Unit) and s.kind in ("absent", "absent_no_wait")
