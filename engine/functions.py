"""Built-in scalar functions, registered through the extension registry.

A function extension's factory receives the arguments' :class:`ArgInfo` (type, and value when
constant) and the app context, checks them, and returns ``(return type, implementation)``.
The implementation is a callable taking the argument values, or an inline source template
(``"({0} if {0} is not None else {1})"``) that the compiler splices into generated code.
"""
from __future__ import annotations

import ast
import uuid
from collections.abc import Callable
from typing import Any

from srota.engine.aggregators import java_set, set_elements
from srota.engine.expression import ArgInfo
from srota.engine.registry import ANY_TYPE, NUMERIC_TYPES, Kind, Param, extension
from srota.engine.types import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    coerce,
    f32,
    java_double_str,
    java_float32_str,
    python_type_ok,
    wrap_int,
)
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType

_PRIMITIVES = (AttrType.STRING, AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE, AttrType.BOOL)

FunctionImpl = tuple[AttrType, "Callable[..., Any] | str"]


def _err(message: str) -> SiddhiAppCreationError:
    return SiddhiAppCreationError(message)


def _count(name: str, args: list[ArgInfo], low: int, high: int | None = None) -> None:
    high = low if high is None else high
    if not (low <= len(args) <= (high if high >= 0 else len(args))):
        want = str(low) if low == high else (f"at least {low}" if high < 0 else f"{low} to {high}")
        raise _err(f"{name}() takes {want} argument(s), {len(args)} given")


def _same_types(name: str, args: list[ArgInfo]) -> AttrType:
    first = args[0].type
    for a in args[1:]:
        if a.type != first:
            raise _err(f"{name}() needs arguments of one type, found {first.value} and {a.type.value}")
    return first


@extension(Kind.FUNCTION, "coalesce", params=(Param("args", ANY_TYPE, dynamic=True, repeat=True),),
           doc="The first argument that is not null.", pure=True)
def _coalesce(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("coalesce", args, 1, -1)
    rtype = _same_types("coalesce", args)
    if len(args) == 1:
        return rtype, "{0}"

    def coalesce(*values: Any) -> Any:
        for v in values:
            if v is not None:
                return v
        return None

    return rtype, coalesce


@extension(Kind.FUNCTION, "default",
           params=(Param("attribute", ANY_TYPE, dynamic=True), Param("default", ANY_TYPE)),
           doc="The attribute, or the default when the attribute is null.", pure=True)
def _default(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("default", args, 2)
    if not args[1].constant:
        raise _err("default(): the default must be a constant")
    if args[0].type != args[1].type:
        raise _err(f"default(): the default ({args[1].type.value}) must have the attribute's "
                   f"type ({args[0].type.value})")
    return args[0].type, "(lambda _v, _d: _d if _v is None else _v)({0}, {1})"


@extension(Kind.FUNCTION, "ifThenElse",
           params=(Param("condition", (AttrType.BOOL,), dynamic=True), Param("if.expression", ANY_TYPE, dynamic=True),
                   Param("else.expression", ANY_TYPE, dynamic=True)),
           doc="The second argument when the condition holds, else the third.", pure=True)
def _if_then_else(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("ifThenElse", args, 3)
    if args[0].type is not AttrType.BOOL:
        raise _err("ifThenElse() needs a bool condition as its first argument")
    if args[1].type != args[2].type:
        raise _err(f"ifThenElse(): both branches must have one type, found {args[1].type.value} "
                   f"and {args[2].type.value}")
    return args[1].type, "({1} if {0} is True else {2})"


def _instance_of(name: str, check: Callable[[Any, AttrType], bool]) -> None:
    """``instanceOfX(v)`` judges the value at run time, as Java's ``instanceof`` does.

    Python has one float and one int type, so float/double and int/long are told apart by
    the attribute's declared type (and, for ``object``, by the value's range).
    """

    def factory(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
        _count(name, args, 1)
        declared = args[0].type
        return AttrType.BOOL, lambda v: check(v, declared)

    extension(Kind.FUNCTION, name, params=(Param("arg", ANY_TYPE, dynamic=True),),
              doc=f"Whether the value is a {name[10:]}.", pure=True)(factory)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _fits_int(v: int) -> bool:
    return -(2 ** 31) <= v < 2 ** 31


_instance_of("instanceOfBoolean", lambda v, t: isinstance(v, bool))
_instance_of("instanceOfString", lambda v, t: isinstance(v, str))
_instance_of("instanceOfInteger", lambda v, t: _is_int(v) and (
    t is AttrType.INT or (t is not AttrType.LONG and _fits_int(v))))
_instance_of("instanceOfLong", lambda v, t: _is_int(v) and (
    t is AttrType.LONG or (t is not AttrType.INT and not _fits_int(v))))
_instance_of("instanceOfDouble", lambda v, t: isinstance(v, float) and t is not AttrType.FLOAT)
_instance_of("instanceOfFloat", lambda v, t: isinstance(v, float) and t is AttrType.FLOAT)


_CAST_NAMES = {"int": AttrType.INT, "long": AttrType.LONG, "float": AttrType.FLOAT, "double": AttrType.DOUBLE,
               "bool": AttrType.BOOL, "string": AttrType.STRING}


@extension(Kind.FUNCTION, "cast",
           params=(Param("to.be.caster", ANY_TYPE, dynamic=True), Param("cast.to", (AttrType.STRING,))),
           doc="Declares the value's type (no conversion: use convert for that).", pure=True)
def _cast(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("cast", args, 2)
    if not args[1].constant:
        raise _err("cast(): the second argument has to be a string constant naming one of the types "
                   "int, long, float, double, bool, string")
    # Siddhi's CastFunctionExecutor: these six names, in any case (no 'object', 'boolean', 'integer')
    target = _CAST_NAMES.get(str(args[1].value).lower())
    if target is None:
        raise _err("cast(): type must be one of int, long, float, double, bool, string, "
                   f"found '{args[1].value}'")
    if target is AttrType.FLOAT and args[0].type is AttrType.OBJECT:
        # a float held in a map, list or JSON document is the double of its shortest digits
        # (engine/extensions/_checks.py held_as_java_float): its Float again, as in Java
        return target, _held_float
    return target, "{0}"


def _held_float(value: Any, *_cast_to: Any) -> Any:
    return f32(value) if isinstance(value, float) else value


# convert()'s type names: Siddhi compares them with Attribute.Type's names, ignoring case
_CONVERT_NAMES = {"string": AttrType.STRING, "int": AttrType.INT, "long": AttrType.LONG, "float": AttrType.FLOAT,
                  "double": AttrType.DOUBLE, "bool": AttrType.BOOL}


def _java_d2i(value: float, low: int, high: int) -> int:
    """Java's ``(int)``/``(long)`` of a float or double: truncated, NaN 0, saturated at the ends."""
    if value != value:
        return 0
    if value >= high:
        return high
    if value <= low:
        return low
    return int(value)


def _converter(source: AttrType, target: AttrType) -> Callable[[Any], Any] | None:
    """``ConvertFunctionExecutor``'s conversion of a non-null ``source`` value to ``target``
    (None when the value needs none); a string that does not parse gives null."""
    from srota.engine.extensions._checks import java_str
    from srota.engine.javanumbers import parse_double, parse_float, parse_integer

    def parsed(parse: Callable[[str], Any]) -> Callable[[Any], Any]:
        def convert(value: Any) -> Any:
            try:
                return parse(value)
            except ValueError:  # NumberFormatException: null
                return None
        return convert

    if source is target:
        return None
    if target is AttrType.STRING:
        to_string: dict[AttrType, Callable[[Any], Any]] = {
            AttrType.FLOAT: java_float32_str, AttrType.DOUBLE: java_double_str, AttrType.BOOL: java_str,
            AttrType.OBJECT: java_str}
        return to_string.get(source, str)
    if source is AttrType.STRING:
        return parsed({
            AttrType.INT: lambda v: parse_integer(v, INT_MIN, INT_MAX),
            AttrType.LONG: lambda v: parse_integer(v, LONG_MIN, LONG_MAX),
            AttrType.FLOAT: parse_float,  # rounded once, not through a double
            AttrType.DOUBLE: parse_double,
            # Boolean.parseBoolean: "true" in any case, anything else false (never null)
            AttrType.BOOL: lambda v: v.lower() == "true",
        }[target])
    if source is AttrType.BOOL:
        return {AttrType.INT: int, AttrType.LONG: int, AttrType.FLOAT: float, AttrType.DOUBLE: float}[target]
    if target is AttrType.BOOL:
        return lambda v: v == 1  # Siddhi: a number is true when it is 1 (not when it is non-zero)
    if target is AttrType.INT:
        return wrap_int if source is AttrType.LONG else (lambda v: _java_d2i(v, INT_MIN, INT_MAX))
    if target is AttrType.LONG:
        return None if source is AttrType.INT else (lambda v: _java_d2i(v, LONG_MIN, LONG_MAX))
    if target is AttrType.FLOAT:
        return lambda v: f32(float(v))
    return float  # to double


@extension(Kind.FUNCTION, "convert",
           params=(Param("to.be.converted", ANY_TYPE, dynamic=True), Param("converted.to", (AttrType.STRING,))),
           doc="Converts the value to the given type (null when it cannot).", pure=True)
def _convert(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("convert", args, 2)
    if args[1].type is not AttrType.STRING or not args[1].constant:
        raise _err("convert(): the second argument must be a string constant, one of "
                   "(STRING, INT, LONG, FLOAT, DOUBLE, BOOL)")
    target = _CONVERT_NAMES.get(str(args[1].value).lower())
    if target is None:
        raise _err("convert(): the second argument must be one of (STRING, INT, LONG, FLOAT, DOUBLE, BOOL), "
                   f"found '{args[1].value}'")
    source = args[0].type
    if source is AttrType.OBJECT and target is not AttrType.STRING:
        raise _err(f"convert(): an object converts to 'string' only, not '{args[1].value}'")
    convert = _converter(source, target)
    if convert is None:
        return target, "{0}"

    def impl(value: Any, _type: Any = None) -> Any:
        return None if value is None else convert(value)

    return target, impl


def _extreme(name: str, pick: Callable[..., Any]) -> None:
    def factory(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
        _count(name, args, 1, -1)
        rtype = _same_types(name, args)
        if rtype not in NUMERIC_TYPES:
            raise _err(f"{name}() needs numeric arguments, found {rtype.value}")

        def impl(*values: Any) -> Any:
            present = [v for v in values if v is not None]
            # a NaN never wins, as in Siddhi's loop, whose comparisons with it are false
            # (Python's max and min would answer by the arguments' order)
            numbers = [v for v in present if v == v]
            return pick(numbers) if numbers else (present[0] if present else None)

        return rtype, impl

    extension(Kind.FUNCTION, name, params=(Param("arg", NUMERIC_TYPES, dynamic=True, repeat=True),),
              doc=f"The {name} of the arguments, ignoring nulls.", pure=True)(factory)


_extreme("maximum", max)
_extreme("minimum", min)


@extension(Kind.FUNCTION, "currentTimeMillis", doc="The app clock's current time (ms).")
def _current_time(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("currentTimeMillis", args, 0)
    clock = ctx.clock
    return AttrType.LONG, lambda: clock.now()


@extension(Kind.FUNCTION, "UUID", doc="A random UUID string.")
def _uuid(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("UUID", args, 0)
    return AttrType.STRING, lambda: str(uuid.uuid4())


@extension(Kind.FUNCTION, "createSet", params=(Param("input", _PRIMITIVES, dynamic=True),),
           doc="A set holding the value (for unionSet and sizeOfSet).")
def _create_set(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("createSet", args, 1)
    if args[0].type not in _PRIMITIVES:
        raise _err(f"createSet() needs a primitive argument, found {args[0].type.value}")
    if args[0].type is AttrType.FLOAT:  # (Java hashes a Float apart from a Double: unionSet's order)
        return AttrType.OBJECT, lambda v: java_set([v], float32=True)
    return AttrType.OBJECT, lambda v: {v}


@extension(Kind.FUNCTION, "sizeOfSet", params=(Param("set", (AttrType.OBJECT,), dynamic=True),),
           doc="The size of a set (0 for null).")
def _size_of_set(args: list[ArgInfo], ctx: Any) -> FunctionImpl:
    _count("sizeOfSet", args, 1)
    if args[0].type is not AttrType.OBJECT:
        raise _err(f"sizeOfSet() needs an object (set) argument, found {args[0].type.value}")

    def size(value: Any) -> int:
        if value is None:
            return 0
        if not isinstance(value, (set, frozenset)):
            raise TypeError(f"sizeOfSet() got {type(value).__name__}, not a set")
        return len(set_elements(value))

    return AttrType.INT, size


def _is_expression(line: str) -> bool:
    """Whether one line of a body is an expression (its value is the result), not a statement."""
    try:
        ast.parse(line.strip(), mode="eval")
    except SyntaxError:
        return False
    return True


def script_function(language: str, name: str, return_type: AttrType, body: str) -> Callable[..., Any]:
    """A function defined in the app (``define function f[python] return T {body}``, or
    ``[javascript]``: :mod:`engine.javascript`).

    The body sees the arguments as ``data`` (a list); it may ``return`` a value or be a single
    expression (``{ data[0] >= 1 }``).  Results are converted to the declared return type.
    Apps can be kept from defining them with ``Limits(python_functions=False)``.
    """
    if language.lower() in ("javascript", "js"):
        from srota.engine.javascript import javascript_function

        return javascript_function(name, return_type, body)
    if language.lower() not in ("python", "py"):
        raise _err(f"script language '{language}' is not supported (use python or javascript)")
    src = body.strip("\n")
    lines = [ln for ln in src.splitlines() if ln.strip()]
    indent = min((len(ln) - len(ln.lstrip()) for ln in lines), default=0)
    lines = [ln[indent:] for ln in lines]
    if len(lines) == 1 and _is_expression(lines[0]):
        lines = ["return " + lines[0]]
    code = "def _script(data):\n" + "".join("    " + ln + "\n" for ln in lines or ["return None"])
    ns: dict[str, Any] = {}
    try:
        exec(compile(code, f"<function {name}>", "exec"), ns)  # noqa: S102 - the app author's code
    except SyntaxError as exc:
        raise _err(f"function '{name}' does not compile: {exc.msg} (line {exc.lineno})") from None
    script = ns["_script"]

    def call(*args: Any) -> Any:
        value = script(list(args))
        if value is None or return_type is AttrType.OBJECT:
            return value
        if not python_type_ok(value, return_type):
            value = coerce(value, return_type)
        return value

    return call
