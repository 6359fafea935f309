"""The regex: namespace and the Java regular-expression translation it rests on."""
from __future__ import annotations

import re

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.extensions.regex import java_regex, java_replace, java_split

STREAM = "define stream S (s string, r string, i int);\n"


@pytest.mark.parametrize("select, row, expected", [
    ("regex:find(r, s)", ["21 products by WSO2", "\\d\\d(.*)WSO2", 0], True),
    ("regex:find(r, s, i)", ["21 products by WSO2", "\\d\\d", 1], False),
    ("regex:find(r, s, i)", ["x", "x", None], False),
    ("regex:find(r, s)", [None, "x", 0], False),
    ("regex:group(r, s, i)", ["21 products by WSO2 now", "(\\d\\d)(.*)(WSO2.*)", 3], "WSO2 now"),
    ("regex:group(r, s, i)", ["WSO2 x middleware", "WSO2(.*)middleware", 2], None),
    ("regex:lookingAt(r, s)", ["WSO2 is middleware", "WSO2(.*)middleware", 0], True),
    ("regex:lookingAt(r, s)", ["21 WSO2 middleware", "WSO2", 0], False),
    ("regex:matches(r, s)", ["WSO2 is middleware company", "WSO2(.*)middleware", 0], False),
    ("regex:matches(r, s)", ["WSO2 is middleware company", "WSO2(.*)middleware(.*)", 0], True),
    ("regex:matches('(?<y>\\d{4})-\\p{Alpha}+', s)", ["2024-abc", None, 0], True),
])
def test_functions(select_one, select, row, expected):
    assert select_one(f"{select} as v", row) == [expected]


def test_null_regex_is_an_error(select_one):
    assert select_one("regex:matches(r, s) as v", ["x", None, 0]) == []


@pytest.mark.parametrize("select", ["regex:find(r)", "regex:find(r, i)", "regex:group(r, s, s)",
                                    "regex:matches(i, s)", "regex:lookingAt('(', s)"])
def test_creation_errors(select):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S select {select} as v insert into Out;")
    assert info.value.line == 2


def test_java_syntax_translation():
    assert java_regex(r"\p{Lower}+\z").fullmatch("abc")
    assert not java_regex(r"\d").match("\u0663")  # Java's \d is ASCII only
    assert java_regex(r"\Qa.b\E").fullmatch("a.b") and not java_regex(r"\Qa.b\E").fullmatch("axb")
    assert java_regex(r"[\p{Upper}_]+").fullmatch("AB_C")


def test_java_replacement_and_split():
    assert java_replace(java_regex("(a)(b)?"), "ab a", "<$1$2>") == "<ab> <a>"
    assert java_replace(java_regex("(?<x>o)"), "foo", "${x}0") == "fo0o0"
    assert java_replace(java_regex("o"), "foo", "\\$") == "f$$"
    assert java_split(java_regex(","), "a,b,,") == ["a", "b"]
    assert java_split(java_regex(","), "") == [""]
    assert java_split(java_regex(""), "abc") == ["a", "b", "c"]


@pytest.mark.parametrize("pattern, text, found", [
    ("(?u)\\w+", "abc", True),            # UNICODE_CASE: no Python form, and no effect without (?i)
    ("a(?i)b", "aB", True),               # a flag in mid-pattern holds to the end of its group
    ("(a(?i)b)B", "abB", True),
    ("(a(?i)b)b", "aBB", False),
    ("[[:alpha:]]", "l", True),           # a nested class is a union: [:alph] here
    ("[a[bc]]+", "abc", True),
    ("\\1(a)", "aa", False),              # a reference to a group not yet closed matches nothing
    ("(a)\\2", "aa", False),
    ("(a)\\1", "aa", True),
    ("\\bß", "ß", True),                  # Java's \b knows every letter, \w only ASCII ones
    ("\\p{L}+", "\u01c5", True),          # \p{L} is every letter, \p{Alpha} only ASCII ones
    ("\\cA\\0101", "\x01A", True),
    ("x\\Ry", "x\r\ny", True),
    ("^[a-z&&[^b]]+$", "ac", True),       # an intersection: one character both classes match
    ("[a-z&&[^b]]", "b", False),
    ("^[\\w&&\\d]+$", "12", True),
    ("[\\w&&\\d]", "a", False),
    ("^\\p{Lu}\\p{Ll}$", "\u00c9\u00e9", True),  # Unicode general categories
    ("\\p{IsLu}", "\u01c5", False),        # a title-case letter is Lt
    ("^[\\p{Nd}x]+$", "x\u0661", True),
    ("^[\\P{L}]+$", "1 2", True),
    ("[\\P{L}]", "a", False),
])
def test_java_patterns(pattern, text, found):
    assert (java_regex(pattern).search(text) is not None) is found


@pytest.mark.parametrize("pattern", ["a{", "x{y}", "a{,3}", "[a-\\d]", "\\0", "(?<a_b>x)", "[\\b]", "\\x{110000}",
                                     "\\k<n>(?<n>x)", "(?z)", "\\ca\\c", "a)", "*a", "a**", "\\p{alpha}"])
def test_java_rejects(pattern):
    with pytest.raises(re.error):
        java_regex(pattern)


# Found by the differential generator (tests/differential/functions_regex.py) against Java 17's
# java.util.regex, each answer checked there.
@pytest.mark.parametrize("pattern, text, found", [
    ("\\p{javaLowerCase}\\p{javaUpperCase}", "éÉ", True),  # the java* classes
    ("^\\p{javaWhitespace}$", "\u2028", True),
    ("\\p{javaWhitespace}", "\xa0", False),
    ("\\p{javaLetterOrDigit}", "\u0663", True),
    ("\\p{IsAlpha}", "é", True),              # Is + a POSIX name is its Unicode form
    ("\\p{IsPunct}", "¡", True),
    ("\\p{IsDigit}", "\u0663", True),
    ("\\p{IsWhite_Space}", "\x85", True),
    ("\\p{Punct}", "¡", False),                # without Is it is ASCII
    ("(?i)\\p{javaLowerCase}", "A", True),     # under (?i) the case classes are every cased letter
    ("(?i)\\p{Lu}", "é", True),
    ("(?i)\\p{Lower}", "A", True),
    ("(?i)\\p{Lower}", "é", False),
])
def test_java_properties(pattern, text, found):
    assert (java_regex(pattern).search(text) is not None) is found


@pytest.mark.parametrize("pattern, text, found", [
    ("a.b", "a\rb", False),                    # . stops at every Java line terminator
    ("a.b", "a\x85b", False),
    ("a.b", "a\u2028b", False),
    ("(?d)a.b", "a\rb", True),                 # but \n alone under UNIX_LINES
    ("(?s)a.b", "a\u2028b", True),
    ("a$", "a\r\n", True),                     # $ before a final line terminator of any kind
    ("a$", "a\u2028", True),
    ("a$", "a\r\r", False),
    ("a\\Z", "a\x85", True),
    ("a\\z", "a\n", False),
    ("(?m)a$\\r", "a\r\n", True),
    ("(?m)a\\r$", "a\r\n", False),            # never between \r and \n
    ("(?m)^", "", False),                       # Java's multi-line ^ never matches at the end
    ("(?m)\\n^", "a\n", False),
    ("(?m)\\r^\\n", "\r\n", False),
    ("(?m)\\u2028^b", "\u2028b", True),
    ("(?dm)\\r^b", "\rb", False),
])
def test_line_terminators(pattern, text, found):
    assert (java_regex(pattern).search(text) is not None) is found


@pytest.mark.parametrize("pattern, text, found", [
    ("(?i)é", "É", False),                      # CASE_INSENSITIVE alone is ASCII
    ("(?i)[k]", "\u212a", False),
    ("(?iu)é", "É", True),                      # UNICODE_CASE: Character.toUpperCase/toLowerCase
    ("(?iu)[é]", "É", True),
    ("(?iu)s", "ſ", True),
    ("(?iu)k", "\u212a", True),
    ("(?iu)[a-z]", "ſ", True),                  # a range: the character, its upper case or that one's lower
    ("(?iu)[a-z]", "\u212a", True),
    ("(?iu)σ", "ς", True),
    ("(?iu)i", "İ", True),
    ("(?iu)\\w", "\u212a", False),              # predefined classes and properties never fold
    ("(?u)é", "É", False),
])
def test_case_folding(pattern, text, found):
    assert (java_regex(pattern).search(text) is not None) is found


@pytest.mark.parametrize("pattern, text, found", [
    ("(a(?i)b|c)", "C", True),                  # a flag alone holds on in the later alternatives
    ("(?-s)a", "a", True),
    ("(?x)( ?:a)", "a", True),                  # comments mode: blanks ignored, in classes too
    ("(?x)[a b]", " ", False),
    ("(?x)a#c\nb", "ab", True),
    ("(?x)a\\ b", "a b", True),
    ("\\x{61}\\x{1F600}", "a\U0001F600", True),
    ("(?<n1>x)\\k<n1>", "xx", True),
    ("\\N{LATIN SMALL LETTER A}", "a", True),
    ("{2}x", "x", True),                        # a counted closure after nothing repeats nothing
    ("a\\Q\\E*", "", True),                     # an empty quote leaves a* behind
    ("\\A?+b", "ab", True),                     # a quantified anchor
    ("\\B", "", True),
    ("\\b", "", False),
    ("a\\b", "a\u0301", False),                # a non-spacing mark after a letter is a word character
    ("[a&&]", "a", True),
    ("[a[^b]]", "c", True),                     # a negated nested class, && under ^, && nested
    ("[^a&&b]", "a", True),
    ("[^a-z&&[^b]]", "b", True),
    ("[a-z&&[b-y&&[^c]]]", "c", False),
    ("^\\R{2}$", "\r\n", False),               # a repeated \R never splits a \r\n
    ("^\\R\\n$", "\r\n", True),
    ("(?<=[a&&b]|c)d", "cd", True),             # an empty class is still one character wide
])
def test_java_syntax(pattern, text, found):
    assert (java_regex(pattern).search(text) is not None) is found


def test_find_start_counts_utf16_units_and_compiles_first(select_one):
    assert select_one("regex:find(r, s, i) as v", ["\U0001F600x", "^x", 2]) == [False]
    assert select_one("regex:find(r, s, i) as v", ["\U0001F600x", "x", 2]) == [True]
    assert select_one("regex:find(r, s, i) as v", ["\U0001F600x", "x", 4]) == []  # past the end
    assert select_one("regex:find(r, s, i) as v", ["b", "[", None]) == []  # the bad regex, not the null
    # a start between the halves of a surrogate pair: Java matches from the lone low surrogate
    assert select_one("regex:find(r, s, i) as v", ["\U0001F600!", "^.!", 1]) == [False]
    assert select_one("regex:find(r, s, i) as v", ["\U0001F600!", ".!", 1]) == [True]


@pytest.mark.parametrize(("pattern", "text", "found"), [
    # Java looks behind for alternatives of different widths (Java 17's answers)
    ("(?<=ab|c)x", "abx cx bx", ["2:x", "5:x"]),
    ("(?<!ab|c)x", "abx cx bx", ["8:x"]),
    ("(?<=(a)|(bb))y", "ay bby cy", ["1:y[a,None]", "5:y[None,bb]"]),
    ("(?<!.\\0111|[k&&\\s]\u00e9\\p{IsWord})[^a\\u00e9]|\\r{2,}?|\\}", "\u03c2\u00df", ["0:\u03c2", "1:\u00df"]),
])
def test_lookbehind_alternatives_of_different_widths(pattern, text, found):
    r = java_regex(pattern)
    got = [f"{m.start()}:{m.group()}" + (f"[{m.group(1)},{m.group(2)}]" if r.groups >= 2 else "")
           for m in r.finditer(text)]
    assert got == found
