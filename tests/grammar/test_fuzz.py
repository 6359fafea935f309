"""The parser either returns a SiddhiApp or raises SiddhiParserError, whatever the input."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from srota.grammar import SiddhiParserError, parse, parse_expression
from srota.grammar.model import SiddhiApp

CASES = Path(__file__).parents[2] / ".." / "shared" / "conformance" / "cases"


def _seed_apps() -> list[str]:
    apps = [
        "define stream S (a int, b string); @info(name='q') from S[a > 1]#window.length(2) "
        "select a, b insert into O;",
        "define stream S (a int); from every e1=S[a>1] -> e2=S[a>e1.a]<2:> within 1 sec "
        "select e1.a, e2[last].a as l insert into O;",
        "define stream S (a int); define table T (a int); from S join T on S.a == T.a "
        "select S.a update or insert into T set T.a = S.a on T.a == S.a;",
        "define stream S (a int); partition with (a of S) begin from S select a insert into #I; end;",
        "define function f[js] return int { return {a: 1}.a; }; define stream S (a int);",
    ]
    if CASES.is_dir():
        for path in sorted(CASES.glob("*.json"))[:40]:
            for case in json.loads(path.read_text())[:2]:
                apps.append(case["app"])
    return apps


SEEDS = _seed_apps()
TOKENS = ["define", "stream", "from", "select", "insert", "into", "every", "->", ",", ";", "(", ")",
          "[", "]", "#", "!", "@", "=", "==", "and", "or", "not", "'x'", '"""y"""', "1", "1.5f",
          "sec", "e1", "S", "window", ".", ":", "<", ">", "*", "+", "?", "{", "}", "--", "/*", "`"]

FUZZ = settings(max_examples=250, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


def _check(text: str) -> None:
    try:
        result = parse(text)
    except SiddhiParserError as e:
        assert e.message
        if e.line is not None:
            assert e.line >= 1 and e.column is not None and e.column >= 1
        return
    assert isinstance(result, SiddhiApp)


@FUZZ
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    _check(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_random_token_soup(tokens: list[str]) -> None:
    _check(" ".join(tokens))


@FUZZ
@given(st.sampled_from(SEEDS), st.data())
def test_mutated_real_apps(app: str, data: st.DataObject) -> None:
    text = app
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(["delete", "insert", "token", "truncate"]))
        if action == "delete":
            j = data.draw(st.integers(i, min(len(text), i + 10)))
            text = text[:i] + text[j:]
        elif action == "insert":
            text = text[:i] + data.draw(st.text(max_size=5)) + text[i:]
        elif action == "token":
            text = text[:i] + " " + data.draw(st.sampled_from(TOKENS)) + " " + text[i:]
        else:
            text = text[:i]
    _check(text)


@FUZZ
@given(st.text(alphabet="ab1.5()+-*/%<>=!andornotis null'\"", max_size=60))
def test_random_expressions(text: str) -> None:
    try:
        parse_expression(text)
    except SiddhiParserError:
        pass


def test_deep_nesting() -> None:
    _check("define stream S (a int); from S[" + "(" * 3000 + "a" + ")" * 3000 + "] insert into O")
