"""grammar/states.py: SiddhiQL.g4's rules for patterns and sequences, on flat chains.

Each verdict here was checked on Siddhi 5.1.33 (every chain of up to four plain or absent
states, with and without `every`, and a few thousand random chains, agree with it).
"""
from __future__ import annotations

import pytest
from srota.grammar.states import Chain, Every, Group, Shape, Unit, accepted, why_refused

p, x = Unit("stream"), Unit("absent")


def chain(*items: Shape) -> Chain:
    return Chain(tuple(items))


@pytest.mark.parametrize(("shape", "ok"), [
    (x, True),
    (chain(x, p), True),
    (chain(p, x), True),
    (chain(x, x), False),
    (chain(x, x, p), False),
    (chain(p, x, x), False),
    (chain(x, p, x, x), True),   # ((X -> p) -> X) -> X: left_absent -> every_absent twice
    (chain(x, x, p, x), True),   # X -> (X -> (p -> X)): every_absent -> right_absent
    (chain(x, x, p, p), False),
    (chain(Group(x), p), False),  # a parenthesised absent state only stands alone
    (Every(Group(chain(x, p))), True),
    (Every(Group(chain(Every(p), p))), False),
    (chain(Unit("mark"), p), False),
    (chain(Unit("absent_no_wait"), p), False),
    (chain(Unit("logical_absent"), p), True),
])
def test_patterns(shape: Shape, ok: bool) -> None:
    assert accepted(shape, sequence=False) is ok


@pytest.mark.parametrize(("shape", "ok"), [
    (chain(p, p), True),
    (chain(Every(p), p), True),
    (chain(p, Every(p)), False),
    (Every(Group(chain(p, p))), False),
    (chain(Every(Group(p)), p), False),
    (chain(Group(chain(p, p)), p), False),
    (chain(p, Group(chain(p, p))), True),
    (chain(x, x, p), False),
    (chain(Every(x), p), True),
    (chain(Every(Group(chain(x, p))), p), True),
    (chain(Every(Group(Unit("logical_absent"))), p), True),  # '(' logical_absent ')' keeps its kind
    (chain(Unit("mark"), p), True),
    (Group(chain(p, p)), False),
])
def test_sequences(shape: Shape, ok: bool) -> None:
    assert accepted(shape, sequence=True) is ok


def test_why_names_the_cause_and_where() -> None:
    second = Unit("absent", pos="here")
    assert why_refused(chain(x, second, p), sequence=False) == (
        "two absent states ('not S for <time>') cannot follow each other here", "here")
    message, _ = why_refused(chain(p, Every(p)), sequence=True)
    assert message.startswith("'every' can only begin a sequence")
