"""``define function f[javascript] return T { ... }``: Siddhi's JavaScript script functions.

The body is a JavaScript function body that sees the arguments as ``data`` (``data[0]`` ...
``data[n]``) and ``return``s a value, as in siddhi-script-js.  It runs in QuickJS (the
maintained quickjs-ng fork, through its Python binding: the optional extra ``srota[js]``),
one JavaScript context per function.  Why QuickJS: measured here, a call costs about 0.6 us
through quickjs-ng against about 330 us through mini-racer (V8 behind a thread and JSON) and
100 us through the older ``quickjs`` package's thread-wrapped functions; QuickJS is small,
embeds in the process, and has the per-call time and memory limits a runaway script needs.

* Arguments that are strings, numbers, booleans or null go in as they are; objects, maps and
  lists go in as JSON (the body sees plain JavaScript values).
* The value returned is converted to the declared type (a JavaScript number to ``int`` or
  ``long`` drops the fraction as Java's ``intValue`` does, ``bool`` follows JavaScript's
  truthiness only for booleans); ``undefined`` and ``null`` are null; ``return object`` takes
  the value through JSON.
* Each call may run for ``TIME_LIMIT_S`` (1 s) and the context may hold ``MEMORY_LIMIT``
  (64 MB): beyond that the call raises, so the event that ran it fails (its stream's
  ``@OnError`` decides where it goes) and the app goes on.
* The app lock serialises calls of one app; a context is never used by two threads at once.
"""
from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from typing import Any

from srota.engine.types import coerce, python_type_ok
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType

TIME_LIMIT_S = 1.0
MEMORY_LIMIT = 64 * 1024 * 1024
_PLAIN = (str, int, float, bool, type(None))


def _engine() -> Any:
    try:
        import quickjs
    except ImportError:
        raise SiddhiAppCreationError("JavaScript functions need the QuickJS engine: pip install 'srota[js]' "
                                     "(the quickjs-ng package)") from None
    if not hasattr(quickjs, "Context"):
        raise SiddhiAppCreationError("the installed 'quickjs' module is not quickjs-ng: pip install 'srota[js]'")
    return quickjs


def javascript_function(name: str, return_type: AttrType, body: str) -> Callable[..., Any]:
    """Compile ``body`` once; returns ``call(*args)`` (see the module docstring)."""
    quickjs = _engine()
    ctx = quickjs.Context()
    ctx.set_time_limit(TIME_LIMIT_S)
    ctx.set_memory_limit(MEMORY_LIMIT)
    fn = f"__srota_{name}"
    source = (f"function {fn}(data) {{\n{body}\n}}\n"
              f"function {fn}_args(...data) {{ return {fn}(data); }}\n"
              f"function {fn}_json(text) {{ var v = {fn}(JSON.parse(text)); "
              f"return v === undefined ? null : JSON.stringify(v); }}\n")
    try:
        ctx.eval(source)
    except quickjs.JSException as exc:
        raise SiddhiAppCreationError(f"function '{name}' does not compile: {_first_line(exc)}") from None
    direct = ctx.get(f"{fn}_args")
    via_json = ctx.get(f"{fn}_json")
    lock = threading.Lock()
    as_json = return_type is AttrType.OBJECT

    def call(*args: Any) -> Any:
        with lock:
            try:
                if as_json or not all(isinstance(a, _PLAIN) for a in args):
                    text = via_json(json.dumps(list(args), default=_json_default))
                    value = json.loads(text) if text is not None else None
                else:
                    value = direct(*args)
            except quickjs.JSException as exc:
                raise RuntimeError(f"javascript function '{name}': {_first_line(exc)}") from None
        return _convert(value, return_type, name)

    return call


def _json_default(value: Any) -> Any:
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    if "interrupted" in text:
        return f"ran longer than {TIME_LIMIT_S:g} s and was stopped"
    return text.splitlines()[0] if text else type(exc).__name__


def _convert(value: Any, return_type: AttrType, name: str) -> Any:
    if value is None or return_type is AttrType.OBJECT:
        return value
    if not isinstance(value, _PLAIN):  # a JavaScript object for a primitive return type
        raise TypeError(f"javascript function '{name}' returned an object, not {return_type.value}")
    if return_type in (AttrType.INT, AttrType.LONG) and isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"javascript function '{name}' returned {value} for an {return_type.value}")
        return int(value)  # Java's Number.intValue()/longValue(): the fraction is dropped
    if python_type_ok(value, return_type):
        return value
    return coerce(value, return_type)
