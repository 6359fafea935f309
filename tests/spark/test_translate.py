"""The Spark SQL translation of per-event expressions against the engine's own compiled code.

Each expression is a latest value of an aggregation; Spark evaluates its translation over rows
with nulls, zeros, NaN, infinities and the ends of the int and long ranges, and the engine
evaluates the same expression over the same rows: every value must be the same (Siddhi's rules,
engine/expression.py: ``!=`` is true on a null, ``/`` and ``%`` by zero are null, int and long
wrap, an int or long compared with a float is compared as floats, bool functions are never null).
"""
from __future__ import annotations

import math
from typing import Any

import pytest
from srota.engine.types import f32

pytestmark = [pytest.mark.spark, pytest.mark.integration]

STREAM = ("define stream S (i int, j int, l long, m long, f float, g float, d double, e double, "
          "s string, t string, b bool, c bool, ts long);")

EXPRESSIONS = [
    # != is true when either side is null; the other comparisons are false
    "i != j", "l != m", "f != g", "d != e", "s != t", "b != c", "i != 3", "not (i != j)", "(i != j) or b",
    "i == j", "i < j", "d >= e", "s == t",
    # an int or long against a float compares as floats, a long against a double as doubles
    "l == f", "i == f", "l < f", "l == d", "i < d", "f == d", "l != f",
    # NaN equals nothing and orders with nothing
    "d < e", "d == d", "f > g",
    # division and remainder by zero are null, for every type; MIN / -1 wraps
    "i / j", "i % j", "l / m", "l % m", "f / g", "f % g", "d / e", "d % e", "i / 0", "l % 0", "d / 0.0",
    "f / l", "d / i", "i / l", "i % m",
    # int and long arithmetic wraps as Java's
    "i + j", "i * j", "i - j", "l + m", "l * m", "l - m", "i * 2147483647", "l * 3",
    # float arithmetic converts an int or long to float first
    "f + l", "f * i", "f - m", "f + 16777217",
    # bool functions give false, never null
    "ifThenElse(b, c, false)", "coalesce(b, c)", "default(b, false)", "ifThenElse(b, i, j)",
    "coalesce(d, e)", "default(l, 7L)",
]

I_MIN, I_MAX, L_MIN, L_MAX = -2 ** 31, 2 ** 31 - 1, -2 ** 63, 2 ** 63 - 1
ROWS = [
    # i, j, l, m, f, g, d, e, s, t, b, c
    (1, 2, 3, 4, 1.5, 2.5, 1.0, 2.0, "a", "b", True, False),
    (3, 3, 3, 3, 3.0, 3.0, 3.0, 3.0, "a", "a", True, True),
    (None, 2, None, 4, None, 2.5, None, 2.0, None, "b", None, False),
    (1, None, 3, None, 1.5, None, 1.0, None, "a", None, True, None),
    (None, None, None, None, None, None, None, None, None, None, None, None),
    (7, 0, 7, 0, 7.0, 0.0, 7.0, 0.0, "x", "", False, True),
    (0, 0, 0, 0, 0.0, -0.0, 0.0, -0.0, "", "", False, False),
    (-7, 2, -7, 2, -7.5, 2.0, -7.5, 2.0, "b", "a", False, None),
    (I_MIN, -1, L_MIN, -1, -1.0, 0.0, -1.0, 0.0, "a", "b", None, True),
    (I_MAX, I_MAX, L_MAX, L_MAX, 3.4e38, 3.4e38, 1e308, 1e308, "z", "z", True, True),
    (I_MIN, I_MAX, L_MIN, L_MAX, float("inf"), 2.0, float("inf"), 2.0, "a", "a", True, True),
    (16777217, 1, 16777217, 16777217, 16777216.0, float("nan"), 16777217.0, float("nan"), "a", "b", True, True),
    (3, 5, 2 ** 53 + 1, 2 ** 60 + 3, float("nan"), float("nan"), float("nan"), 2.0, "a", "b", False, False),
    (-9, 4, -9, 4, -9.25, 4.0, -9.25, 4.0, "q", "r", True, False),
]


def _app(exprs: list[str]) -> str:
    select = ", ".join(f"{x} as x{n}" for n, x in enumerate(exprs))
    return f"{STREAM}\ndefine aggregation A from S select {select} aggregate by ts every sec;"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


def test_translated_expressions_give_the_engines_values(spark: Any) -> None:
    from pyspark.sql import types as T
    from srota.engine import SiddhiManager
    from srota.engine.event import Event
    from srota.service.spark.backfill import _python_functions, _spark_type
    from srota.service.spark.translate import plan_items

    text = _app(EXPRESSIONS)
    rt = SiddhiManager().create_siddhi_app_runtime(text)
    try:
        agg = rt.context.aggregations["A"]
        items = [i for i in plan_items(agg.spec, rt.context) if i.kind == "latest"]
        attrs = agg.spec.stream.attributes
    finally:
        rt.shutdown()
    untranslated = {i.label: i.reason for i in items if i.sql is None}
    assert not untranslated
    engine = _python_functions(text, "A", tuple(("latest", i.index) for i in items))
    rows = [(*(f32(v) if n in (4, 5) and v is not None else v for n, v in enumerate(r)), 0) for r in ROWS]
    schema = T.StructType([T.StructField(a.name, _spark_type(a.type), True) for a in attrs])
    df = spark.createDataFrame(rows, schema)
    got = df.selectExpr(*[f"{i.sql} AS x{i.index}" for i in items]).collect()
    wrong = []
    for row, out in zip(rows, got, strict=True):
        for item, fn in zip(items, engine, strict=True):
            want, have = fn(Event(0, row)), out[item.index]
            if isinstance(want, int) and not isinstance(want, bool) and isinstance(have, float):
                want = float(want)
            if not _same(want, have):
                wrong.append(f"{EXPRESSIONS[item.index]} over {row[:12]}: engine {want!r}, Spark {have!r}")
    assert not wrong, "\n".join(wrong)


def test_a_filter_with_a_null_not_equal_keeps_the_event(spark: Any) -> None:
    """``[venue != 3]`` keeps an event whose venue is null, as the live engine does."""
    from srota.engine import SiddhiManager
    from srota.service.spark.translate import plan_items

    rt = SiddhiManager().create_siddhi_app_runtime(
        f"{STREAM}\ndefine aggregation A from S[i != 3] select count() as n aggregate by ts every sec;")
    try:
        (item,) = [i for i in plan_items(rt.context.aggregations["A"].spec, rt.context) if i.kind == "filter"]
    finally:
        rt.shutdown()
    assert spark.sql(f"SELECT {item.sql.replace('`i`', 'CAST(NULL AS INT)')}").first()[0] is True
