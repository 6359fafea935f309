"""How far a leading ``every`` reaches in a sequence with an absent state (Siddhi's grammar).

In a pattern, and in a sequence without a standalone ``not S for t``, ``every`` takes the one
state (or parenthesised group) it stands before, as Srota's grammar reads it.  Siddhi's
grammar reads a *sequence* holding an absent state with its own rule::

    every_absent_sequence_source_chain
        : EVERY? absent_sequence_source_chain within_time? ',' sequence_source_chain
        | EVERY? sequence_source within_time? ',' absent_sequence_source_chain

and ANTLR takes the first alternative whenever it parses: ``every`` then covers a whole chain
that holds the absent state, and only the states after it that have no absent state stay
outside.  So Siddhi runs ``every e1=A+, not B for 1 sec, e3=C`` as
``every (e1=A+, not B for 1 sec), e3=C``: the absent state's timer hands each partial match
back to ``every`` (its post processor re-arms ``e1``, and it moves ``e1``'s new partial matches
on), so an ``A`` after the wait starts a new match instead of extending the old one.

:func:`siddhi_every_scope` rebuilds the sequence's tree the way Siddhi's compiler builds it.
Which split ANTLR picks was read off SiddhiCompiler 5.1.33 (the element trees it builds):

* the alternatives of ``absent_sequence_source_chain`` in order (a parenthesised absent chain,
  a lone ``not S for t``, a left-absent chain, a right-absent chain), the first that leaves
  a plain chain after it;
* a left- or right-absent chain reaches as far as it can (its loops are greedy): up to the
  last state when that one is plain;
* when no split parses (the last state is absent, say), the second alternative: ``every``
  takes the first state alone, as in Srota's tree.

Next's nesting (Siddhi's chains nest to the left, Srota's to the right) changes nothing at
run time; only the reach of ``every`` does.  The states themselves are kept (the planner
numbers them by identity), so their order and ids do not change.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from srota.grammar.model import (
    AbsentStreamStateElement,
    EveryStateElement,
    GroupStateElement,
    NextStateElement,
)

# The kind of one state in a chain: a plain source (a stream, count or logical state, or a
# group holding only those), a standalone absent state, or a group holding an absent state,
# with the absent-chain forms its content parses as.
_PLAIN = "S"
_ABSENT = "A"


def siddhi_every_scope(el: Any) -> Any:
    """The sequence ``el`` with a leading ``every`` reaching as far as Siddhi's grammar has it."""
    if not isinstance(el, NextStateElement) or not isinstance(el.first, EveryStateElement):
        return el
    every = el.first
    items = [every.element, *_chain(el)[1:]]
    kinds = tuple(_kind(x) for x in items)
    if any(k is None for k in kinds) or all(k == _PLAIN for k in kinds):
        return el   # no absent state (or a chain Siddhi would not parse): every takes one state
    reach = _reach(kinds)
    if reach <= 1:
        return el
    inner = _join(items[:reach], el.pos)
    rest = _join(items[reach:], el.pos)
    return NextStateElement(EveryStateElement(inner, pos=every.pos), rest, pos=el.pos)


def _chain(el: Any) -> list[Any]:
    """The states of a chain ``a, b, c`` in order, a parenthesised chain as one.

    Srota's parser keeps no node for plain parentheses: a chain nests to the right, so a
    chain in first place was in parentheses, and one in next place was when its text ends
    before its parent's (at the closing parenthesis).
    """
    out = []
    while isinstance(el, NextStateElement):
        out.append(el.first)
        nxt = el.next
        if isinstance(nxt, NextStateElement) and _ends_before(nxt, el):
            out.append(nxt)
            return out
        el = nxt
    out.append(el)
    return out


def _ends_before(inner: Any, outer: Any) -> bool:
    a, b = inner.pos, outer.pos
    return a is not None and b is not None and a.end is not None and b.end is not None \
        and a.end < b.end


def _join(items: list[Any], pos: Any) -> Any:
    out = items[-1]
    for x in reversed(items[:-1]):
        out = NextStateElement(x, out, pos=pos)
    return out


def _kind(el: Any) -> Any:
    """``_PLAIN``, ``_ABSENT``, a group's ``(is_left, is_right, is_absent_chain)``, or None
    for what the grammar does not read (an ``every`` further on, a group it rejects)."""
    if isinstance(el, AbsentStreamStateElement):
        return _ABSENT
    if isinstance(el, EveryStateElement):
        return None
    if isinstance(el, (GroupStateElement, NextStateElement)):   # a parenthesised chain
        kinds = tuple(_kind(x) for x in _chain(el.element if isinstance(el, GroupStateElement) else el))
        if any(k is None for k in kinds):
            return None
        if all(k == _PLAIN for k in kinds):
            return _PLAIN
        n = len(kinds)
        forms = (_left(kinds, 0, n), _right(kinds, 0, n), _absent_chain(kinds, 0, n))
        return forms if any(forms) else None
    return _PLAIN


def _reach(kinds: tuple[Any, ...]) -> int:
    """How many leading states ``every`` covers (the first alternative's split), or 0."""
    n = len(kinds)
    first = kinds[0]
    if _plain(kinds, 1, n) and (first == _ABSENT or isinstance(first, tuple)):
        return 1   # a lone 'not S for t', or '(' absent_sequence_source_chain ')'
    for form in (_left, _right):
        for end in range(n - 1, 0, -1):   # greedy: the longest that leaves a plain chain
            if _plain(kinds, end, n) and form(kinds, 0, end):
                return end
    return 0


# ---------------------------------------------------------------- the grammar's chains
# Over kinds[i:j]; every rule is a sequence of states joined by ','.

@lru_cache(maxsize=4096)
def _plain(kinds: tuple[Any, ...], i: int, j: int) -> bool:
    """sequence_source_chain: plain states only."""
    return j > i and all(k == _PLAIN for k in kinds[i:j])


@lru_cache(maxsize=4096)
def _left(kinds: tuple[Any, ...], i: int, j: int) -> bool:
    """left_absent_sequence_source::

        '(' left ')' | absent ',' plain | left ',' left | left ',' absent | plain ',' left
    """
    if j - i < 1:
        return False
    if j - i == 1:
        k = kinds[i]
        return isinstance(k, tuple) and k[0]
    if kinds[i] == _ABSENT and _plain(kinds, i + 1, j):
        return True
    if kinds[j - 1] == _ABSENT and _left(kinds, i, j - 1):
        return True
    return any((_left(kinds, i, m) or _plain(kinds, i, m)) and _left(kinds, m, j)
               for m in range(i + 1, j))


@lru_cache(maxsize=4096)
def _right(kinds: tuple[Any, ...], i: int, j: int) -> bool:
    """right_absent_sequence_source::

        '(' right ')' | plain ',' absent | right ',' right | absent ',' right | right ',' plain
    """
    if j - i < 1:
        return False
    if j - i == 1:
        k = kinds[i]
        return isinstance(k, tuple) and k[1]
    if kinds[j - 1] == _ABSENT and _plain(kinds, i, j - 1):
        return True
    if kinds[i] == _ABSENT and _right(kinds, i + 1, j):
        return True
    return any(_right(kinds, i, m) and (_right(kinds, m, j) or _plain(kinds, m, j))
               for m in range(i + 1, j))


def _absent_chain(kinds: tuple[Any, ...], i: int, j: int) -> bool:
    """absent_sequence_source_chain: '(' absent_chain ')' | absent | left | right."""
    if j - i == 1:
        k = kinds[i]
        if k == _ABSENT or (isinstance(k, tuple) and k[2]):
            return True
    return _left(kinds, i, j) or _right(kinds, i, j)
