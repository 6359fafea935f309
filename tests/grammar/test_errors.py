"""Syntax errors carry line, column, the source line and the expected tokens."""
from __future__ import annotations

import pytest
from srota.grammar import (
    SiddhiAppCreationError,
    SiddhiParserError,
    parse,
    parse_expression,
    parse_on_demand_query,
)

S_DEF = "define stream S (symbol string, price float);\n"


def error_of(text: str) -> SiddhiParserError:
    with pytest.raises(SiddhiParserError) as info:
        parse(text)
    return info.value


def test_misspelt_keyword() -> None:
    err = error_of(S_DEF + "from S selct symbol insert into O;")
    assert (err.line, err.column) == (2, 8)
    assert err.message.startswith("unexpected 'selct', expected one of: ")
    assert "'select'" in err.expected and "'insert'" in err.expected
    assert "did you mean 'select'?" in err.message
    assert err.source_line == "from S selct symbol insert into O;"
    # the rendered text shows the line with a caret under the column
    assert str(err).splitlines()[-1] == "    " + " " * 7 + "^"


def test_missing_semicolon_between_statements() -> None:
    err = error_of("define stream S (a int)\nfrom S select a insert into O;")
    assert (err.line, err.column) == (2, 1)
    assert set(err.expected) == {"';'", "end of input"}


def test_unexpected_end_of_input() -> None:
    err = error_of(S_DEF + "from S select symbol")
    assert err.message.startswith("unexpected end of input")
    assert (err.line, err.column) == (2, 21)
    assert set(err.expected) == {"'insert'", "'delete'", "'update'", "'return'", "'output'"}


def test_missing_operand() -> None:
    err = error_of(S_DEF + "from S[price > ] select symbol insert into O")
    assert (err.line, err.column) == (2, 16)
    assert "identifier" in err.expected and "integer" in err.expected and "string" in err.expected


def test_bad_attribute_type() -> None:
    err = error_of("define stream S (a integer);")
    assert (err.line, err.column) == (1, 20)
    assert set(err.expected) == {"'string'", "'int'", "'long'", "'float'", "'double'", "'bool'", "'object'"}


def test_unexpected_character() -> None:
    err = error_of(S_DEF + "from S select symbol\n  $ insert into O;")
    assert (err.line, err.column) == (3, 3)
    assert err.message.startswith("unexpected character '$'")
    assert err.source_line == "  $ insert into O;"


def test_unterminated_string() -> None:
    err = error_of(S_DEF + "from S[symbol == 'IBM] select symbol insert into O;")
    assert (err.line, err.column) == (2, 18)
    assert "unterminated string" in err.message


def test_plain_outer_join() -> None:
    err = error_of(S_DEF + "define table T (symbol string);\nfrom S outer join T select * insert into O")
    assert (err.line, err.column) == (3, 8)
    assert "'left'" in err.expected and "'join'" in err.expected


def test_window_definition_without_event_type() -> None:
    err = error_of("define window W (a int) length(5) output;")
    assert err.line == 1


def test_semantic_errors_have_positions() -> None:
    err = error_of(S_DEF + "from e1=S#window.length(2) -> e2=S select e1.price insert into O")
    assert (err.line, err.column) == (2, 10)
    assert "window" in err.message
    err = error_of(S_DEF + "from S select symbol limit price insert into O")
    assert (err.line, err.column) == (2, 28)
    err = error_of("define stream S (a int, a string)")
    assert (err.line, err.column) == (1, 25)
    err = error_of(S_DEF + "from S#window.time(30 sec 1 min) select * insert into O")
    assert (err.line, err.column) == (2, 27)


def test_unterminated_function_body() -> None:
    err = error_of("define function f[js] return int { return 1;\n")
    assert (err.line, err.column) == (1, 34)


def test_definition_after_query() -> None:
    err = error_of(S_DEF + "from S insert into O;\ndefine table O (a int);")
    assert err.line == 3


def test_integer_out_of_range() -> None:
    err = error_of(S_DEF + "from S[price > 2147483648] select * insert into O")
    assert "out of range" in err.message


def test_is_a_creation_error() -> None:
    assert issubclass(SiddhiParserError, SiddhiAppCreationError)


def test_expression_and_on_demand_errors() -> None:
    with pytest.raises(SiddhiParserError) as info:
        parse_expression("a +")
    assert info.value.message.startswith("unexpected end of input")
    with pytest.raises(SiddhiParserError) as info:
        parse_on_demand_query("from T select")
    assert info.value.line == 1


def test_non_string_input() -> None:
    with pytest.raises(TypeError):
        parse(b"define stream S (a int)")  # type: ignore[arg-type]
