"""Random apps of siddhi-execution-json's, -list's and -map's extensions (``--family collection_fn``).

Each query reads a stream of its own, ``S<n> (j string, o string, p string, k string, s string,
i int, l long, x <num>, kd double, b bool)``, and every event goes to each stream alone: a query
that throws on an event keeps it from the queries after it on the same stream in Siddhi
(docs/siddhi-differences.md, "A query that throws on an event"), and one event per chunk keeps a
failure to its own event. The columns: ``j`` a JSON text drawn from a grammar (nested objects
and arrays, unicode, escaped keys and strings, surrogate pairs, numbers of every form: ``-0``,
``1.0``, ``1e5``, ``-2.5e+2``, ``2147483648``, ``9223372036854775808``, and past a long or past
18 characters, json-smart's ``BigInteger`` and ``BigDecimal``; booleans, null, now and then a
duplicate key, json-smart's unquoted, single-quoted, useless-comma and trailing-data forms, or
text that is no JSON at all); ``o`` always a strict JSON object; ``p`` a JSONPath; ``k`` a key
name of the documents; ``s`` a string of every kind; ``x`` a ``float`` in some cases and a
``double`` in others; ``kd`` a short double. Each query is one of:

* a function: the ``json:`` reads (``getString/Int/Long/Double/Float/Bool/Object``,
  ``isExists``) of a document (the text, ``json:toObject`` of it, a literal, or a map or list
  built in the query) at a path drawn from a grammar (names with dots and brackets, indexes and
  negative ones, wildcards, deep scans, slices, unions, several names, filters with every
  operator, path functions, and broken paths), ``json:setElement`` (with and without a key, of
  every kind of element), ``json:toObject``, ``json:toString`` (with and without escaping);
  the ``list:`` functions (``create``, ``add``, ``addAll``, ``remove``, ``removeAll``,
  ``retainAll``, ``removeByIndex``, ``setValue``, ``clear``, ``clone``, ``get``, ``contains``,
  ``containsAll``, ``containsAny``, ``indexOf``, ``lastIndexOf``, ``isEmpty``, ``isList``,
  ``size``, ``sort``) and the ``map:`` functions (``create``, ``put``, ``putIfAbsent``,
  ``putAll``, ``remove``, ``replace``, ``replaceAll``, ``clear``, ``clone``, ``get`` with and
  without a default, ``containsKey``, ``containsValue``, ``keys``, ``values``, ``size``,
  ``isEmpty``, ``isMap``, ``combineByKey``, ``toXML``), nested in each other, over the columns
  of every type and literals; now and then behind a ``[json:isExists(...)]`` filter;
* an aggregator: ``list:collect``, ``list:merge``, ``map:collect``, ``map:merge``,
  ``json:group`` and ``json:groupAsObject`` (enclosing element, distinct), over no window or a
  sliding ``length`` window, now and then grouped by a column;
* a stream processor: ``#json:tokenize`` and ``#json:tokenizeAsObject`` (with and without
  ``fail.on.missing.attribute``), ``#list:tokenize`` and ``#map:tokenize`` of one or several
  collections.

One case in five has only queries that never fail (aggregators of values never null, list and
map tokenizers) and sends its events in chunks of 1-4 (sharing a time, so that time never goes
back from one stream to the next).

Kept out of the way, and why:

* a ``Float`` and a ``Double`` in one list or map (docs/siddhi-differences.md, "Not yet as
  Siddhi"): a case's number column and number literals are all floats or all doubles, the
  double column ``kd`` and double keys only in the cases of doubles;
* map keys Java keeps apart and a Python dict merges (``1``, ``1L``, ``1.0``, ``true``,
  ``0.0``/``-0.0``; same section): a case's maps all have keys of one type (string, int, long
  or double, never ``-0.0``), and only string-keyed maps meet ``json:toObject``'s objects;
* ``json:groupAsObject`` with ``group by`` (Siddhi shares one collection across groups) and a
  ``json:setElement`` element Gson cannot read back from its ``toString()`` (a string that is
  not JSON, a map whose keys hold spaces; both "Deliberate" in engine/extensions/json.py and
  docs/siddhi-differences.md): string elements are JSON texts or plain words, map elements
  have words for keys and numbers for values;
* JSONPath filters comparing a whole JSON literal (``@.t == [1,2]``; "Not yet as Siddhi"):
  the lists in filters hold strings only;
* an aggregator over a window whose argument can fail: Siddhi drops the rest of the chunk
  after a failing expired event (Srota goes on with the chunk's current event), and then fails
  on removing what it never added, for good ("Crashes"); over a window the arguments are never
  null and never fail (the ``o`` column for ``json:group``); and no batch windows (an
  aggregator gives null on the reset event in Siddhi, where ``list:size`` throws: "Crashes");
* a function that changes a list or a map that outlives its event: lists and maps are built
  per event, and aggregators' results are only read;
* ``map:toXML`` of a map that holds ``json:toObject``'s objects or arrays, whose ``toString``
  is their JSON in Java ("Not yet as Siddhi"): its maps are built in the query;
* ``#json:tokenize`` in a chunk: where its path finds no list (nothing, an object, a string),
  Siddhi puts the input event itself into its output chunk, still linked to the rest of the
  input chunk, and loops for ever ("Crashes"): the json tokenizers get their events alone;
* NaN and infinities are not drawn (the runner's Gson will not write them in a collection).

``map:toJSON``, ``map:createFromJSON`` and ``map:createFromXML`` are not generated: the jar of
the reference engine here was built without them (org.json and Axiom are absent).
"""
from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from tests.differential.functions import BASE_TS

_KEYS = ("a", "b", "c", "name", "x", "ü", "a b", "0", "é", "id")
_STRINGS = ("", "a", "A", "b", "ü", "Ärger", "x y", "1", "1.5", "true", "null", "é", "😀", 'a"b',
            "back\\slash", "<tag>", "&amp;", '{"a": 1}', "[1, 2]", "tab\there", "line\nbreak", "ß", "Z", "z")
_WORDS = ("a", "b", "zz", "name", "q")
_INTS = (0, 1, 2, 3, -1, 5, 42, 2147483647, -2147483648)
_LONGS = (0, 1, 2, 3, -1, 5, 42, 2147483648, 1 << 40, 9223372036854775807, -9223372036854775808)
_DOUBLES = (0.0, -0.0, 1.5, 2.0, -3.25, 0.1, 1.0, 3.0, 1e10, 2.5e-7)
_KEY_DOUBLES = (0.5, 1.5, 2.0, -3.25, 0.1, 1.0)
_FLOATS = (0.0, 1.5, 0.1, -2.25, 3.0, 1.0, 65.1)
_NUMBER_TEXTS = ("0", "1", "-1", "-0", "1.0", "-0.0", "1e5", "1E-3", "-2.5e+2", "2147483647", "2147483648",
                 "-2147483649", "9223372036854775807", "9223372036854775808", "12345678901234567890",
                 "0.1", "3.14159", "1.5", "100", "2.0E10", "7",
                 # past a long and past 18 characters: json-smart's BigInteger and BigDecimal
                 "123456789012345678901234567890", "-18446744073709551616", "0.12345678901234567890",
                 "12345678901234567.5", "-0.000000000000000001", "1.00000000000000000000", "1234567890123456789E+5",
                 "1.0e0", "-1E+2", "1.5e300")
_STRING_TEXTS = ('""', '"x"', '"ü"', '"\\u00e9"', '"a\\"b"', '"\\\\"', '"line\\nbreak"', '"\\ud83d\\ude00"',
                 '"tab\\t"', '"<&>=\'"', '"IBM"', '"1"', '"true"', '"x y"', '"/"', '"\\/"')


# ---------------------------------------------------------------------------- JSON documents
def _json(rng: random.Random, depth: int) -> str:
    """A JSON value's text, as a grammar draws it."""
    roll = rng.random()
    if depth > 0 and roll < 0.35:
        return _object(rng, depth - 1)
    if depth > 0 and roll < 0.55:
        return "[" + ", ".join(_json(rng, depth - 1) for _ in range(rng.randint(0, 4))) + "]"
    if roll < 0.75:
        return rng.choice(_NUMBER_TEXTS)
    if roll < 0.9:
        return rng.choice(_STRING_TEXTS)
    return rng.choice(("true", "false", "null"))


def _key_text(rng: random.Random, key: str) -> str:
    """A key's JSON text, its non-ASCII letters now and then escaped (``\\u00fc``)."""
    if rng.random() < 0.2:
        key = "".join(c if c.isascii() else f"\\u{ord(c):04x}" for c in key)
    return '"' + key + '"'


def _object(rng: random.Random, depth: int) -> str:
    keys = rng.sample(_KEYS, rng.randint(0, 4))
    if keys and rng.random() < 0.05:  # a duplicate key: json-smart keeps the last
        keys.append(keys[0])
    return "{" + ", ".join(f"{_key_text(rng, k)}: {_json(rng, depth)}" for k in keys) + "}"


def _document(rng: random.Random) -> str:
    """A document: mostly an object, some arrays and scalars, some permissive or broken text."""
    roll = rng.random()
    if roll < 0.70:
        return _object(rng, rng.randint(1, 3))
    if roll < 0.80:
        return "[" + ", ".join(_json(rng, 2) for _ in range(rng.randint(0, 4))) + "]"
    if roll < 0.84:
        return _json(rng, 0)
    if roll < 0.90:  # json-smart's permissive forms
        return rng.choice(("{a: 1, b: 'x'}", "{'a': [1, 2], 'name': 'q'}", "{a: {b: true}}", "[a, b]",
                           "{\"a\": 1,}", "{\"a\": [1, 2, ]}"))
    return rng.choice(("not json", "{", '{"a": }', "[1, 2", "", '{"a" 1}', "}", "{\"a\": 1} x", "nul"))


# ---------------------------------------------------------------------------- JSONPaths
def _name(rng: random.Random) -> str:
    return rng.choice(_KEYS[:6] + ("missing", "length"))


def _step(rng: random.Random) -> str:
    name = _name(rng)
    roll = rng.random()
    if roll < 0.35:
        return f".{name}" if name.isalnum() else f"['{name}']"
    if roll < 0.45:
        return rng.choice((f"['{name}']", f'["{name}"]'))
    if roll < 0.60:
        return f"[{rng.choice((0, 1, 2, -1, -2, 5))}]"
    if roll < 0.68:
        return rng.choice(("[*]", ".*"))
    if roll < 0.76:
        return rng.choice((f"..{name}" if name.isalnum() else f"..['{name}']", "..*"))
    if roll < 0.83:
        return rng.choice(("[0:2]", "[1:]", "[:2]", "[-2:]", "[0,1]", "[2:1]", "[0:-1]"))
    if roll < 0.88:
        return f"['{_name(rng)}','{_name(rng)}']"
    return f"[?({_filter(rng)})]"


def _filter(rng: random.Random) -> str:
    item = "@" + rng.choice((".a", ".b", ".name", ".x", "['a']", ".a.b", "", "['a b']", ".ü", "[0]", ".length()",
                             ".a.length()", "..a", ".*"))
    roll = rng.random()
    if roll < 0.15:
        one = item
    elif roll < 0.55:
        operand = rng.choice(("1", "0", "-1", "1.5", "2147483648", "'x'", "'IBM'", "'1'", "true", "null",
                              "$.a", "@.b", "1e2", "-0", "2.0", "'ü'", "''", "$..a", "$.b[0]", "9223372036854775808"))
        one = f"{item} {rng.choice(('==', '!=', '<', '<=', '>', '>=', '===', '!=='))} {operand}"
    elif roll < 0.65:
        one = f"{item} =~ /{rng.choice(('x.*', 'I.*', '.*', '[a-z]+'))}/{rng.choice(('', 'i'))}"
    elif roll < 0.80:  # lists of strings only: a number in a filter's list compares as Python's (documented)
        one = f"{item} {rng.choice(('in', 'nin', 'subsetof'))} ['x', 'IBM', 'a']"
    elif roll < 0.90:
        one = f"{item} {rng.choice(('size', 'empty', 'contains'))} " + rng.choice(("2", "true", "false", "'x'"))
    else:
        one = f"!({item})"
    if rng.random() < 0.15:
        return f"{one} {rng.choice(('&&', '||'))} {_filter(rng)}"
    return one


def _path(rng: random.Random) -> str:
    """A JSONPath: mostly from ``$``, with a path function or a broken form now and then."""
    roll = rng.random()
    if roll < 0.04:
        return rng.choice(("$.", "$[", "$['a'", "a.b", "$..", "$.a[?(@.b ==)]", "", "$.a.", "@.a", "$[?(@.a]",
                           "$.a.anyof"))
    steps = "".join(_step(rng) for _ in range(rng.randint(0, 3)))
    if rng.random() < 0.12:
        steps += rng.choice((".length()", ".size()", ".min()", ".max()", ".avg()", ".sum()", ".stddev()",
                             ".concat('-', 'z')", ".append(9)", ".sum(5)"))
    return "$" + steps


def _literal_document(rng: random.Random) -> str:
    """A document for a literal."""
    return _document(rng)


def _quote(text: str) -> str:
    """A SiddhiQL string literal of ``text``. SiddhiQL has no escapes: a '...' literal holds no
    quote and no control character, a "..." one no double quote, and a \"\"\"...\"\"\" one
    anything but three double quotes in a row or one at either end (a JSON text gets a space
    there instead); both engines read every literal verbatim."""
    if not any(c in text for c in "'\"") and text.isprintable():
        return f"'{text}'"
    if '"' not in text and text.isprintable():
        return f'"{text}"'
    if text.startswith('"') or text.endswith('"'):
        text = f" {text} "
    return f'"""{text}"""'


# ---------------------------------------------------------------------------- expressions
class _Drawer:
    """Draws a case's expressions: its number column is a float or a double, its maps' keys one type."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.num_type = rng.choice(("float", "double"))
        # double keys (the column kd) only where the numbers are doubles too: a float and a
        # double in one collection compare apart in Java only (docs/siddhi-differences.md)
        doubles = ("double",) if self.num_type == "double" else ()
        self.key_type = rng.choice(("string", "string", "int", "long") + doubles)
        self.kd = "kd" if doubles else "x"
        self.json_objects = True  # whether a map drawn may be json:toObject's

    # -- scalars
    def number_literal(self) -> str:
        r = self.rng
        if self.num_type == "float":
            return f"{r.choice(_FLOATS)}f"
        return repr(r.choice(_DOUBLES[:8]))

    def scalar(self) -> str:
        """An expression of any primitive type: an attribute or a literal."""
        r = self.rng
        return r.choice(("s", "k", "i", "l", "x", "b", "s", "i", self.number_literal(),
                         str(r.choice(_INTS[:7])), f"{r.choice(_LONGS[:7])}L", _quote(r.choice(_STRINGS)),
                         r.choice(("true", "false"))))

    def key(self) -> str:
        """A map key of the case's key type."""
        r = self.rng
        if self.key_type == "string":
            return r.choice(("k", "k", _quote(r.choice(_KEYS))))
        if self.key_type == "int":
            return r.choice(("i", "i", str(r.choice(_INTS[:7]))))
        if self.key_type == "long":
            return r.choice(("l", "l", f"{r.choice(_LONGS[:7])}L"))
        return r.choice(("kd", "kd", repr(r.choice(_KEY_DOUBLES))))

    def index(self) -> str:
        return self.rng.choice(("i", "0", "1", "2", "-1", "3"))

    # -- lists
    def list_expr(self, depth: int = 2) -> str:
        """An expression giving a list (or, now and then, not one: the function then fails)."""
        r = self.rng
        roll = r.random()
        if depth <= 0 or roll < 0.4:
            values = [self.value(depth - 1) for _ in range(r.randint(0, 4))]
            if not values:
                return "list:create()" if r.random() < 0.2 else f"list:create({self.scalar()})"
            return f"list:create({', '.join(values)})"
        lst = self.list_expr(depth - 1)
        choices: list[Callable[[], str]] = [
            lambda: f"list:add({lst}, {self.value(depth - 1)})",
            lambda: f"list:add({lst}, {self.value(depth - 1)}, {self.index()})",
            lambda: f"list:addAll({lst}, {self.list_expr(depth - 1)})",
            lambda: f"list:addAll({lst}, {self.list_expr(depth - 1)}, {r.choice(('true', 'false', 'b'))})",
            lambda: f"list:remove({lst}, {self.value(depth - 1)})",
            lambda: f"list:removeAll({lst}, {self.list_expr(depth - 1)})",
            lambda: f"list:retainAll({lst}, {self.list_expr(depth - 1)})",
            lambda: f"list:removeByIndex({lst}, {self.index()})",
            lambda: f"list:setValue({lst}, {self.index()}, {self.value(depth - 1)})",
            lambda: f"list:clear({lst})",
            lambda: f"list:clone({lst})",
            lambda: f"list:sort({lst})" if r.random() < 0.5 else f"list:sort({lst}, '{r.choice(('ASC', 'DESC'))}')",
            lambda: f"map:keys({self.map_expr(depth - 1)})",
            lambda: f"map:values({self.map_expr(depth - 1)})",
        ]
        return r.choice(choices)()

    def value(self, depth: int) -> str:
        """A list member or map value: mostly a scalar, now and then a list or a map."""
        r = self.rng
        if depth > 0 and r.random() < 0.12:
            return self.list_expr(depth - 1) if r.random() < 0.5 else self.map_expr(depth - 1)
        return self.scalar()

    # -- maps
    def map_expr(self, depth: int = 2) -> str:
        """An expression giving a map of the case's key type."""
        r = self.rng
        roll = r.random()
        if self.key_type == "string" and roll < 0.08 and self.json_objects:
            return "json:toObject(j)"
        if depth <= 0 or roll < 0.4:
            n = r.randint(1, 3)
            return "map:create(" + ", ".join(f"{self.key()}, {self.value(depth - 1)}" for _ in range(n)) + ")"
        m = self.map_expr(depth - 1)
        choices: list[Callable[[], str]] = [
            lambda: f"map:put({m}, {self.key()}, {self.value(depth - 1)})",
            lambda: f"map:putIfAbsent({m}, {self.key()}, {self.value(depth - 1)})",
            lambda: f"map:putAll({m}, {self.map_expr(depth - 1)})",
            lambda: f"map:remove({m}, {self.key()})",
            lambda: f"map:replace({m}, {self.key()}, {self.value(depth - 1)})",
            lambda: f"map:replaceAll({m}, {self.map_expr(depth - 1)})",
            lambda: f"map:clear({m})",
            lambda: f"map:clone({m})",
            lambda: f"map:combineByKey({m}, {self.map_expr(depth - 1)})",
            lambda: f"map:combineByKey({m}, {self.map_expr(depth - 1)}, {self.map_expr(0)})",
        ]
        return r.choice(choices)()

    # -- json
    def document(self) -> str:
        """An expression giving a JSON document: the text, its object, a list or map, or a literal."""
        r = self.rng
        roll = r.random()
        if roll < 0.6:
            return "j"
        if roll < 0.75:
            return "json:toObject(j)"
        if roll < 0.8:
            return _quote(_literal_document(r))
        if roll < 0.9:
            return self.map_expr(1)
        return self.list_expr(1)

    def path(self) -> str:
        return "p" if self.rng.random() < 0.15 else _quote(_path(self.rng))

    def element(self) -> str:
        """``json:setElement``'s element: an attribute, a JSON text, a plain word, an object or a
        map. (Siddhi reads an element it adds to an array or puts under a key with Gson from its
        ``toString()``, which fails on some: a string that is no JSON, a map whose keys or values
        hold spaces or quotes; the maps here have words for keys and numbers for values.)"""
        r = self.rng
        word_map = f"map:create({_quote(r.choice(_WORDS))}, {r.choice(('i', 'l', self.kd))})"
        return r.choice(("i", "l", "x", "b", self.number_literal(), _quote(r.choice(_WORDS)),
                         _quote(r.choice(('{"z": 1}', "[1, 2]", '{"n": {"m": [true, null]}}', "[]", "{}"))),
                         "json:toObject(o)", word_map))

    def json_fn(self) -> str:
        r = self.rng
        roll = r.random()
        if roll < 0.55:
            fn = r.choice(("getString", "getInt", "getLong", "getDouble", "getFloat", "getBool", "getObject",
                           "isExists", "getString", "getObject"))
            return f"json:{fn}({self.document()}, {self.path()})"
        if roll < 0.75:
            key = f", {_quote(r.choice(_KEYS + ('new',)))}" if r.random() < 0.5 else ""
            return f"json:setElement({self.document()}, {self.path()}, {self.element()}{key})"
        if roll < 0.85:
            return "json:toObject(" + r.choice(("j", "s", "json:toString(json:toObject(j))")) + ")"
        escape = f", {r.choice(('true', 'false'))}" if r.random() < 0.4 else ""
        return f"json:toString({r.choice((self.document(), 's', 'k'))}{escape})"

    def list_fn(self) -> str:
        r = self.rng
        lst = self.list_expr()
        choices: list[Callable[[], str]] = [
            lambda: lst,
            lambda: f"list:get({lst}, {self.index()})",
            lambda: f"list:contains({lst}, {self.scalar()})",
            lambda: f"list:containsAll({lst}, {self.list_expr(1)})",
            lambda: f"list:containsAny({lst}, {self.list_expr(1)})",
            lambda: f"list:indexOf({lst}, {self.scalar()})",
            lambda: f"list:lastIndexOf({lst}, {self.scalar()})",
            lambda: f"list:isEmpty({lst})",
            lambda: f"list:isList({r.choice((lst, self.scalar(), self.map_expr(0)))})",
            lambda: f"list:size({lst})",
        ]
        return r.choice(choices)()

    def map_fn(self) -> str:
        r = self.rng
        if r.random() < 0.1:
            # json:toObject's objects and arrays are json-smart's, whose toString (what toXML
            # writes of a value) is their JSON text: not yet so in Srota (docs/siddhi-differences.md)
            self.json_objects = False
            m = self.map_expr()
            self.json_objects = True
            return f"map:toXML({m})" if r.random() < 0.5 else f"map:toXML({m}, {_quote(r.choice(_WORDS))})"
        m = self.map_expr()
        choices: list[Callable[[], str]] = [
            lambda: m,
            lambda: f"map:get({m}, {self.key()})",
            lambda: f"map:get({m}, {self.key()}, {self.scalar()})",
            lambda: f"map:containsKey({m}, {self.key()})",
            lambda: f"map:containsValue({m}, {self.scalar()})",
            lambda: f"map:keys({m})",
            lambda: f"map:values({m})",
            lambda: f"map:size({m})",
            lambda: f"map:isEmpty({m})",
            lambda: f"map:isMap({r.choice((m, self.scalar(), self.list_expr(0)))})",
        ]
        return r.choice(choices)()

    # -- aggregators
    def safe_scalar(self) -> str:
        """A value that is never null: a key column or a literal."""
        r = self.rng
        number = "kd" if self.num_type == "double" else self.number_literal()
        return r.choice(("k", "i", "l", number, self.number_literal(), str(r.choice(_INTS[:7])),
                         f"{r.choice(_LONGS[:7])}L", _quote(r.choice(_STRINGS)), r.choice(("true", "false"))))

    def aggregator(self, safe: bool) -> str:
        """An aggregator; ``safe``: one whose argument never fails (over a window, where Siddhi
        drops the rest of a chunk after a failing expired event, and then fails on removing what
        it never added)."""
        r = self.rng
        distinct = f", {r.choice(('true', 'false'))}" if r.random() < 0.4 else ""
        value = self.safe_scalar if safe else self.scalar
        if safe:
            lst = "list:create(" + ", ".join(value() for _ in range(r.randint(1, 3))) + ")"
            m = f"map:create({self.key()}, {value()})"
            doc = "o"
        else:
            lst, m, doc = self.list_expr(1), self.map_expr(1), r.choice(("j", "o", "json:toObject(j)"))
        choices: list[Callable[[], str]] = [
            lambda: f"list:collect({value()}{distinct})",
            lambda: f"list:size(list:collect({value()}{distinct}))",
            lambda: f"list:merge({lst}{distinct})",
            lambda: f"map:collect({self.key()}, {value()})",
            lambda: f"map:keys(map:collect({self.key()}, {value()}))",
            lambda: f"map:merge({m})",
            lambda: f"json:group({doc}{self.group_args()})",
            lambda: f"json:groupAsObject({doc}{self.group_args()})",
        ]
        return r.choice(choices)()

    def group_args(self) -> str:
        r = self.rng
        roll = r.random()
        if roll < 0.3:
            return ""
        if roll < 0.5:
            return f", {r.choice(('true', 'false'))}"
        enclosing = _quote(r.choice(("result", "a", "")))
        return f", {enclosing}" + (f", {r.choice(('true', 'false'))}" if r.random() < 0.5 else "")


# ---------------------------------------------------------------------------- queries
def _query(drawer: _Drawer, n: int) -> str:
    """The ``n``-th query: a function, an aggregator or a stream processor, from ``S<n>`` into ``O<n>``."""
    r = drawer.rng
    roll = r.random()
    handler, group = "", ""
    if roll < 0.6:
        select = r.choice((drawer.json_fn, drawer.json_fn, drawer.list_fn, drawer.map_fn))() + " as r"
        if r.random() < 0.08:
            handler = f"[json:isExists(j, {drawer.path()})]"
    elif roll < 0.8:
        if r.random() < 0.5:
            handler = f"#window.length({r.randint(1, 4)})"
        aggregate = drawer.aggregator(safe=bool(handler))
        if "groupAsObject" not in aggregate and r.random() < 0.3:  # Siddhi's shares a collection across groups
            group = f"\ngroup by {r.choice(('b', 'k'))}"
        select = f"{aggregate} as r"
    else:
        handler, select = _processor(drawer)
    return f"@info(name='q{n}')\nfrom S{n}{handler}\nselect {select}{group}\ninsert into O{n};"


def _processor(drawer: _Drawer) -> tuple[str, str]:
    """A stream processor (its handler) and what the query selects of its output."""
    r = drawer.rng
    roll = r.random()
    if roll < 0.5:
        name = r.choice(("tokenize", "tokenizeAsObject"))
        fail = f", {r.choice(('true', 'false'))}" if r.random() < 0.4 else ""
        doc = r.choice(("j", "j", "json:toObject(j)"))
        return f"#json:{name}({doc}, {drawer.path()}{fail})", r.choice(("jsonElement", "jsonElement, k"))
    if roll < 0.75:
        lists = ", ".join(drawer.list_expr(1) for _ in range(r.choice((1, 1, 2))))
        return f"#list:tokenize({lists})", r.choice(("index, value", "value, index, s"))
    maps = ", ".join(drawer.map_expr(1) for _ in range(r.choice((1, 1, 2))))
    return f"#map:tokenize({maps})", r.choice(("key, value", "value, i"))


# ---------------------------------------------------------------------------- events
def _row(rng: random.Random, drawer: _Drawer) -> list[Any]:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.04 else value
    number = rng.choice(_FLOATS) if drawer.num_type == "float" else rng.choice(_DOUBLES)
    # the key columns (k, i, l, kd) are never null: a null key prints "null" from Siddhi's map
    # and "None" from Srota's (the harness writes a map's keys with str)
    return [maybe(_document(rng)), _object(rng, rng.randint(0, 2)), maybe(_path(rng)), rng.choice(_KEYS), maybe(rng.choice(_STRINGS)),
            rng.choice(_INTS), rng.choice(_LONGS), maybe(number), rng.choice(_KEY_DOUBLES), maybe(rng.random() < 0.5)]


def _chunked_query(drawer: _Drawer, n: int) -> str:
    """The ``n``-th query of a case whose events go in chunks: one that never fails (an
    aggregator of values never null, a list's or map's tokenizer), since a failing event takes
    the rest of its chunk with it in Siddhi ("A query that throws on an event")."""
    r = drawer.rng
    roll = r.random()
    if roll < 0.6:
        handler = f"#window.length({r.randint(1, 4)})" if r.random() < 0.5 else ""
        group = f"\ngroup by {r.choice(('b', 'k'))}" if r.random() < 0.3 else ""
        aggregate = drawer.aggregator(safe=True)
        if "groupAsObject" in aggregate:
            group = ""
        return f"@info(name='q{n}')\nfrom S{n}{handler}\nselect {aggregate} as r{group}\ninsert into O{n};"
    # (no #json:tokenize here: where its path finds no list, Siddhi puts the input event itself
    # into its output chunk, still linked to the rest of the input chunk, and loops for ever)
    if roll < 0.8:
        values = ", ".join(drawer.safe_scalar() for _ in range(r.randint(1, 4)))
        handler, select = f"#list:tokenize(list:create({values}))", "index, value"
    else:
        pairs = ", ".join(f"{drawer.key()}, {drawer.safe_scalar()}" for _ in range(r.randint(1, 3)))
        handler, select = f"#map:tokenize(map:create({pairs}))", "key, value"
    return f"@info(name='q{n}')\nfrom S{n}{handler}\nselect {select}\ninsert into O{n};"


def family(rng: random.Random) -> dict[str, Any]:
    """A case of 1-5 ``json:``/``list:``/``map:`` queries over 3-10 events (see the module doc);
    one case in five has only queries that never fail, and sends its events in chunks of 1-4."""
    drawer = _Drawer(rng)
    attrs = f"j string, o string, p string, k string, s string, i int, l long, x {drawer.num_type}, kd double, b bool"
    chunked = rng.random() < 0.2
    draw = _chunked_query if chunked else _query
    queries = [draw(drawer, n) for n in range(rng.randint(1, 5))]
    # a stream per query: a query that throws on an event keeps it from the queries after it on
    # the same stream in Siddhi (docs/siddhi-differences.md, "A query that throws on an event")
    definitions = "".join(f"define stream S{n} ({attrs});\n" for n in range(len(queries)))
    app = "@app:playback\n" + definitions + "\n" + "\n".join(queries) + "\n"
    ts = BASE_TS + rng.randint(0, 5000)
    steps = []
    pending = rng.randint(3, 10)
    while pending:  # (a chunk's events share a time: each stream gets them in turn, and time never goes back)
        ts += rng.choice((0, 1, rng.randint(1, 900)))
        events = [[ts, _row(rng, drawer)] for _ in range(min(pending, rng.randint(1, 4) if chunked else 1))]
        pending -= len(events)
        steps.extend({"stream": f"S{n}", "events": events} for n in range(len(queries)))
    return {"app": app, "streams": [f"O{n}" for n in range(len(queries))], "queries": [], "steps": steps}
