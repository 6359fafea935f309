"""The ``list:`` namespace (siddhi-execution-list): functions on ``object`` lists, the
``list:collect`` and ``list:merge`` aggregators and the ``#list:tokenize`` stream processor.

Lists are Python lists.  As in Siddhi, ``add``, ``addAll``, ``remove``, ``removeAll``,
``removeByIndex``, ``retainAll``, ``setValue``, ``sort`` and ``clear`` change the list they are
given and return it (``clone`` copies); an argument that is not a list (or null), or an index
outside the list, is an error and the event is dropped.  ``list:create(null)`` is an empty list.

Values are compared as Java's ``equals`` compares them (``contains``, ``indexOf``, ``remove``,
...: :func:`~srota.engine.extensions._checks.java_equals`): a long value goes into a list, and
is looked for, as a :class:`~srota.engine.extensions._checks.JavaLong`, so that ``Long`` 1 is
not ``Integer`` 1 there; a float goes in as Java's ``Float`` prints.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import (
    ALL,
    BOOL,
    INT,
    OBJECT,
    REPEAT,
    STRING,
    CollectionState,
    HoldingArguments,
    JavaLong,
    aggregator,
    err,
    function,
    java_in,
    java_index,
    needs_holding,
    plain_function,
    tokenizer,
)
from srota.engine.registry import Param
from srota.grammar.model import Attribute, AttrType

_LIST = Param("list", OBJECT, dynamic=True, doc="A list.")
_GIVEN = Param("given.list", OBJECT, dynamic=True, doc="Another list.")
_VALUE = Param("value", ALL, dynamic=True, doc="A value.")
_INDEX = Param("index", INT, dynamic=True, doc="A position in the list (from 0).")


def _need_list(v: Any, position: str = "First") -> list[Any]:
    if not isinstance(v, list):
        raise TypeError(f"{position} attribute value must be of type java.util.List, but found "
                        f"'{'null' if v is None else type(v).__name__}'")
    return v


def _check_index(lst: list[Any], i: Any, size: int | None = None) -> int:
    size = len(lst) if size is None else size
    if i is None or not 0 <= i < size:
        raise IndexError(f"Index: {i}, Size: {len(lst)}")
    return int(i)


def _fn(name: str, params: tuple[Param, ...], returns: AttrType, doc: str, impl: Callable[..., Any],
        example: tuple[str, str], overloads: tuple[tuple[str, ...], ...] = (), holds: bool = False) -> None:
    plain_function("list", name, params, returns=returns, doc=doc, examples=(example,), overloads=overloads,
                   holds=holds)(impl)


def _create(*values: Any) -> list[Any]:
    if len(values) == 1 and values[0] is None:
        return []
    return list(values)


_fn("create", (Param("value1", ALL, optional=True, dynamic=True, doc="Values; more may follow."),),
    AttrType.OBJECT, "A new list of the arguments (no argument, or a single null, gives an empty list).",
    _create, ("list:create(1, 2, 3, 4, 5, 6)", "[1, 2, 3, 4, 5, 6]"),
    overloads=((), ("value1",), ("value1", REPEAT)), holds=True)


def _add(lst: Any, value: Any, *index: Any) -> Any:
    _need_list(lst)
    if index:
        lst.insert(_check_index(lst, index[0], len(lst) + 1), value)
    else:
        lst.append(value)
    return lst


def _is_distinct(flag: Any) -> bool:
    """The ``is.distinct`` argument: Siddhi unboxes it (``(boolean) data[n]``), so a null one is
    a NullPointerException and the event is dropped."""
    if flag is None:
        raise TypeError("is.distinct is null (Siddhi unboxes it: NullPointerException)")
    return bool(flag)


def _add_all(to: Any, frm: Any, *distinct: Any) -> Any:
    _need_list(to)
    _need_list(frm, "Second")
    if distinct and _is_distinct(distinct[0]):
        for v in list(frm):
            if not java_in(v, to):
                to.append(v)
    else:
        to.extend(list(frm))
    return to


def _remove(lst: Any, value: Any) -> Any:
    i = java_index(_need_list(lst), value)
    if i >= 0:
        del lst[i]
    return lst


def _remove_all(lst: Any, given: Any) -> Any:
    _need_list(lst)
    drop = _need_list(given, "Second")
    lst[:] = [v for v in lst if not java_in(v, drop)]
    return lst


def _retain_all(lst: Any, given: Any) -> Any:
    _need_list(lst)
    keep = _need_list(given, "Second")
    lst[:] = [v for v in lst if java_in(v, keep)]
    return lst


def _remove_by_index(lst: Any, index: Any) -> Any:
    del _need_list(lst)[_check_index(lst, index)]
    return lst


def _set_value(lst: Any, index: Any, value: Any) -> Any:
    _need_list(lst)[_check_index(lst, index)] = value
    return lst


def _clear(lst: Any) -> Any:
    _need_list(lst).clear()
    return lst


def _index_of(lst: Any, value: Any) -> int:
    return java_index(_need_list(lst), value)


def _last_index_of(lst: Any, value: Any) -> int:
    lst = _need_list(lst)
    return java_index(lst, value, range(len(lst) - 1, -1, -1))


_fn("add", (_LIST, _VALUE, Param("index", INT, optional=True, dynamic=True,
                                 doc="Where to insert (default: at the end).")),
    AttrType.OBJECT, "Adds the value to the list (at the index, when given) and returns the list.", _add,
    ("list:add(stockSymbols, 'IBM')", "the list with 'IBM' at the end"), holds=True,
    overloads=(("list", "value"), ("list", "value", "index")))
_fn("addAll", (Param("to.list", OBJECT, dynamic=True, doc="The list to add to."),
               Param("from.list", OBJECT, dynamic=True, doc="The values to add."),
               Param("is.distinct", BOOL, optional=True, default=False, dynamic=True,
                     doc="Only add values not yet in the list.")),
    AttrType.OBJECT, "Adds every value of from.list to to.list and returns it.", _add_all,
    ("list:addAll(toList, fromList, true)", "toList with the values of fromList it lacked"),
    overloads=(("to.list", "from.list"), ("to.list", "from.list", "is.distinct")))
_fn("clear", (_LIST,), AttrType.OBJECT, "Removes every value and returns the (empty) list.", _clear,
    ("list:clear(stockDetails)", "[]"))
_fn("clone", (_LIST,), AttrType.OBJECT, "A copy of the list.", lambda lst: list(_need_list(lst)),
    ("list:clone(stockSymbols)", "a new list with the same values"))
_fn("contains", (_LIST, _VALUE), AttrType.BOOL, "Whether the list contains the value.",
    lambda lst, v: java_in(v, _need_list(lst)), ("list:contains(stockSymbols, 'IBM')", "true for ['IBM', 'WSO2']"),
    holds=True)
_fn("containsAll", (_LIST, _GIVEN), AttrType.BOOL, "Whether the list contains every value of the given list.",
    lambda lst, g: all(java_in(v, _need_list(lst)) for v in _need_list(g, "Second")),
    ("list:containsAll(stockSymbols, latestStockSymbols)", "true when all are there"))
_fn("containsAny", (_LIST, _GIVEN), AttrType.BOOL, "Whether the list contains any value of the given list.",
    lambda lst, g: any(java_in(v, _need_list(lst)) for v in _need_list(g, "Second")),
    ("list:containsAny(stockSymbols, latestStockSymbols)", "true when one is there"))
def _get(lst: Any, i: Any) -> Any:
    # (Siddhi's GetFunctionExtension catches IndexOutOfBoundsException only: a null index is an error)
    _need_list(lst)
    if i is None:
        _check_index(lst, i)
    return lst[i] if 0 <= i < len(lst) else None


_fn("get", (_LIST, _INDEX), AttrType.OBJECT, "The value at the index, or null for an index outside the list.",
    _get, ("list:get(stockSymbols, 1)", "'WSO2' for ['IBM', 'WSO2']"))
_fn("indexOf", (_LIST, _VALUE), AttrType.INT, "The first index of the value, or -1.", _index_of,
    ("list:indexOf(stockSymbols, 'IBM')", "0 for ['IBM', 'WSO2']"), holds=True)
_fn("lastIndexOf", (_LIST, _VALUE), AttrType.INT, "The last index of the value, or -1.", _last_index_of,
    ("list:lastIndexOf(stockSymbols, 'IBM')", "2 for ['IBM', 'WSO2', 'IBM']"), holds=True)
_fn("isEmpty", (_LIST,), AttrType.BOOL, "Whether the list is empty.", lambda lst: not _need_list(lst),
    ("list:isEmpty(stockSymbols)", "false for ['IBM']"))
_fn("isList", (Param("arg", ALL, dynamic=True, doc="Any value."),), AttrType.BOOL, "Whether the value is a list.",
    lambda v: isinstance(v, list), ("list:isList(stockSymbols)", "true"))
_fn("remove", (_LIST, _VALUE), AttrType.OBJECT, "Removes the first occurrence of the value and returns the list.",
    _remove, ("list:remove(stockSymbols, 'IBM')", "the list without the first 'IBM'"), holds=True)
_fn("removeAll", (_LIST, _GIVEN), AttrType.OBJECT, "Removes every value found in the given list and returns the list.",
    _remove_all, ("list:removeAll(stockSymbols, latestStockSymbols)", "the list without those values"))
_fn("removeByIndex", (_LIST, _INDEX), AttrType.OBJECT, "Removes the value at the index and returns the list.",
    _remove_by_index, ("list:removeByIndex(stockSymbols, 0)", "the list without its first value"))
_fn("retainAll", (_LIST, _GIVEN), AttrType.OBJECT, "Keeps only the values found in the given list and returns the list.",
    _retain_all, ("list:retainAll(stockSymbols, latestStockSymbols)", "the shared values"))
_fn("setValue", (_LIST, _INDEX, _VALUE), AttrType.OBJECT, "Replaces the value at the index and returns the list.",
    _set_value, ("list:setValue(stockSymbols, 0, 'IBM')", "the list with 'IBM' first"), holds=True)
_fn("size", (_LIST,), AttrType.INT, "The number of values.", lambda lst: len(_need_list(lst)),
    ("list:size(stockSymbols)", "2 for ['IBM', 'WSO2']"))


@function("list", "sort",
          (_LIST, Param("order", STRING, optional=True, default="ASC",
                        doc="'ASC', 'DESC' or 'REV' (reverse the current order); a constant.")),
          overloads=(("list",), ("list", "order")), returns=AttrType.OBJECT,
          doc="Sorts the list in place (or reverses it) and returns it.",
          examples=(("list:sort(stockSymbols, 'asc')", "['GOOG', 'IBM', 'WSO2']"),))
def _sort(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    # REV (reverse, unsorted) when no order is given: Siddhi's documented default, which its
    # one-argument execute() does
    order = "REV"
    if len(infos) == 2:
        order = str(infos[1].value).upper()
        if order not in ("ASC", "DESC", "REV"):
            raise err(f"Sort types can be of types 'ASC/DESC/REV', however, found '{infos[1].value}'.")

    def sort(lst: Any, *_order: Any) -> Any:
        _need_list(lst)
        if order != "REV":
            _sort_ascending(lst)
        if order != "ASC":
            lst.reverse()
        return lst

    return AttrType.OBJECT, sort


def _sort_ascending(lst: list[Any]) -> None:
    """Siddhi's sortList: strings case-insensitively (String.CASE_INSENSITIVE_ORDER), numbers in
    their natural order, by the first element's kind; anything else is an error.  Java's
    comparison of a String or a number takes only one of its own class: a list mixing classes
    (Integer and Long, a number and a String, a null) throws, so the event is dropped."""
    if not lst:
        return
    first = lst[0]
    if not isinstance(first, (str, int, float)) or isinstance(first, bool):
        raise TypeError(f"list:sort() only supported for lists of type <STRING|INT|LONG|DOUBLE|FLOAT> but found "
                        f"'{type(first).__name__}'.")
    for v in lst:
        if v.__class__ is not first.__class__:
            # (any sort compares every two values that end next to each other, so with two
            # classes in the list Java's sort always meets one value of each)
            raise TypeError(f"list:sort(): {_java_class(v)} cannot be compared with {_java_class(first)} "
                            "(Java's ClassCastException)")
    if first.__class__ is str:
        lst.sort(key=_case_insensitive)
    elif first.__class__ is float:
        lst.sort(key=_double_order)
    else:
        lst.sort()


_JAVA_CLASSES = {str: "java.lang.String", int: "java.lang.Integer", JavaLong: "java.lang.Long",
                 float: "java.lang.Double", bool: "java.lang.Boolean", list: "java.util.List", dict: "java.util.Map"}


def _java_class(value: Any) -> str:
    return "null" if value is None else _JAVA_CLASSES.get(value.__class__, type(value).__name__)


def _case_insensitive(text: str) -> str:
    """The key of ``String.CASE_INSENSITIVE_ORDER``: Java (17) compares code points, each upper-
    then lower-cased by itself (``Character.toUpperCase(int)``, one code point to one), so ``ß``
    stays ``ß`` (after ``z``) where Python's ``upper()`` makes it ``SS``, and ``İ`` is ``i``."""
    if text.isascii():
        return text.lower()
    return "".join(map(_fold, text))


def _fold(char: str) -> str:
    upper = char.upper()
    if len(upper) != 1:  # (Python's full case mapping; Java's one-to-one mapping leaves the char)
        upper = char
    lower = upper.lower()
    if len(lower) != 1:
        lower = "i" if upper == "\u0130" else upper  # (İ: Java's one-to-one lower case is i)
    return lower


def _double_order(value: float) -> tuple[bool, float, float]:
    """The key of ``Double.compareTo``: -0.0 before 0.0, NaN after everything (equal to NaN)."""
    return value != value, value, math.copysign(1.0, value)


# ---------------------------------------------------------------------------- aggregators
class _Collect(CollectionState):
    __slots__ = ("pair",)

    def __init__(self, pair: bool) -> None:
        super().__init__()
        self.pair = pair  # (value, is.distinct) per event

    def add(self, value: Any) -> list[Any]:
        if self.pair:
            value, distinct = value
            if _is_distinct(distinct) and java_in(value, self.data):
                return list(self.data)
        self.data.append(value)
        return list(self.data)

    def remove(self, value: Any) -> list[Any]:
        if self.pair:
            value = value[0]
        i = java_index(self.data, value)
        if i >= 0:
            del self.data[i]
        return list(self.data)


class _HeldCollect(HoldingArguments, _Collect):
    """``list:collect`` of a long or a float value (held as Java's list holds it)."""

    __slots__ = ("kinds",)


@aggregator("list", "collect",
            (_VALUE, Param("is.distinct", BOOL, optional=True, default=False, dynamic=True,
                           doc="Skip values already collected.")),
            overloads=(("value",), ("value", "is.distinct")), returns=AttrType.OBJECT,
            doc="The values of the window (or group) as a list; an expired event removes its value.",
            examples=(("from StockStream#window.lengthBatch(10) select list:collect(symbol) as stockSymbols "
                       "insert into OutputStream;", "['IBM', 'WSO2', ...]"),))
def _collect(infos: list[ArgInfo]) -> tuple[AttrType, Any]:
    pair = len(infos) == 2
    if needs_holding(infos):
        kinds = tuple(info.type for info in infos)
        return AttrType.OBJECT, lambda: _HeldCollect(pair).holding(kinds)
    return AttrType.OBJECT, lambda: _Collect(pair)


class _Merge(_Collect):
    __slots__ = ()

    def add(self, value: Any) -> list[Any]:
        distinct = False
        if self.pair:
            value, distinct = value
            _need_list(value)  # (Siddhi checks the list before it unboxes the flag)
            distinct = _is_distinct(distinct)
        for v in _need_list(value):
            if not distinct or not java_in(v, self.data):
                self.data.append(v)
        return list(self.data)

    def remove(self, value: Any) -> list[Any]:
        if self.pair:
            value = value[0]
        drop = _need_list(value)
        self.data = [v for v in self.data if not java_in(v, drop)]
        return list(self.data)


@aggregator("list", "merge",
            (_LIST, Param("is.distinct", BOOL, optional=True, default=False, dynamic=True,
                          doc="Skip values already in the result.")),
            overloads=(("list",), ("list", "is.distinct")), returns=AttrType.OBJECT,
            doc="The concatenation of the lists of the window (an expired list removes its values).",
            examples=(("from StockStream#window.lengthBatch(2) select list:merge(list) as stockSymbols "
                       "insert into OutputStream;", "['IBM', 'WSO2', 'GOOG']"),))
def _merge(infos: list[ArgInfo]) -> tuple[AttrType, Any]:
    pair = len(infos) == 2
    return AttrType.OBJECT, lambda: _Merge(pair)


# ---------------------------------------------------------------------------- tokenize
def _positions_of_one(lists: list[Any]) -> Iterable[tuple[int, Any]]:
    return enumerate(lists[0])


def _positions(lists: list[Any]) -> Iterable[tuple[int, Any]]:
    for i in range(max(len(lst) for lst in lists)):
        yield i, [lst[i] if i < len(lst) else None for lst in lists]


tokenizer("list", _LIST, Attribute("index", AttrType.INT), list, "java.util.List", _positions_of_one, _positions,
          doc="Emits one event per position of the lists, with the input attributes plus `index` "
              "and `value` (with several lists, `value` is the list of their values, null where "
              "a list is shorter).",
          examples=(("from StockStream#list:tokenize(symbols) select index, value insert into "
                     "OutputStream;", "one event per list value"),))
