"""``validate.json``'s reader: what Gson 2.8's lenient ``fromJson(text, Object.class)`` accepts."""
from __future__ import annotations

import pytest
from srota.mappers._gson import lenient_json_error, lenient_json_loads


@pytest.mark.parametrize("text", [
    '{"a":1}', "[1, 2.5, true, null]", '"text"', "12", "",  # JSON, and an empty document
    '{"Volume":undefined}', "{'a':'b'}", "{a:b}", "{a=1; b=>2}",  # unquoted, single quotes, = and ;
    "[1,,2]", "[,]", "// note\n{\"a\":1}", "/* c */ [1] # end", ")]}'\n[1]",
    '{"a":"\\u00e9\\n\\/"}', "null trailing",  # a null result skips the full-consumption check
])
def test_accepted(text: str) -> None:
    assert lenient_json_error(text) is None


@pytest.mark.parametrize(("text", "reason"), [
    ('{"a":1', "end of input"), ("[1, 2", "end of input"), ('{"a":"x}', "unterminated string"),
    ('{"a" 1}', "expected ':'"), ('{"a":1,}', "expected a name"), ('{"a":"\\x"}', "invalid escape"),
    ('{"a":"\\u12"}', "malformed unicode"), ("[1] [2]", "not fully consumed"), ("{} x", "not fully consumed"),
    ("/* open", "unterminated comment"), ("[1 2]", "unterminated array"), ('{"a":1 "b":2}', "unterminated object"),
])
def test_rejected(text: str, reason: str) -> None:
    got = lenient_json_error(text)
    assert got is not None and reason in got


def test_loads_gives_what_gson_reads() -> None:
    text = "[{'event':{symbol:WSO2, price:55.6, n=>-2e1; ok:TRUE}}, [1,,2], 'x\\u00e9\\n', null, 01]"
    assert lenient_json_loads(text) == [{"event": {"symbol": "WSO2", "price": 55.6, "n": -20.0, "ok": True}},
                                        [1, None, 2], "x\u00e9\n", None, "01"]
    assert lenient_json_loads("") is None and lenient_json_loads("null trailing") is None
    with pytest.raises(ValueError, match="end of input"):
        lenient_json_loads("{'a': 1")


def test_deep_nesting_and_huge_numbers_are_answered_at_once() -> None:
    """Hostile text: nesting is bounded (an error, not a RecursionError) and a number with more
    digits than int() takes reads as a double, as Gson reads numbers."""
    assert "nested deeper" in (lenient_json_error("[" * 10_000 + "]" * 10_000) or "")
    assert lenient_json_loads("[" + "9" * 100_000 + "]") == [float("inf")]


def test_a_surrogate_pair_of_escapes_is_one_character_and_a_lone_surrogate_is_refused() -> None:
    """JSON writes a character beyond U+FFFF as two ``\\u`` escapes (a UTF-16 pair): one Python
    character, as orjson reads it.  A lone half is no character (it cannot be written as UTF-8
    again): refused with the reason, as orjson refuses it, instead of failing a sink later."""
    assert lenient_json_loads('{"\\ud800\\udc00": "x"}') == {"\U00010000": "x"}
    assert lenient_json_loads("'\\uD83D\\uDE00!'") == "\U0001F600!"
    for text in ('"\\ud800"', '"\\ud800x"', '"\\ud800\\u0041"', '"\\udc00"'):
        got = lenient_json_error(text)
        assert got is not None and "surrogate" in got, text
