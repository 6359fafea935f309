"""The expression compiler: app-model expressions to Python source with Siddhi's typing.

Typing follows Siddhi: int < long < float < double promotion, integer division truncating
toward zero, 32-bit results for ``float``, ``null`` propagating through arithmetic, and
comparisons with ``null`` being false.  Every rule is decided here, once, at app creation;
the generated code does only what the types require.

Where variables live depends on the query (one stream, a join, a pattern), so the compiler
asks a :class:`Scope` for the code that reads an attribute.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from srota.engine.codegen import CodeGen
from srota.engine.types import (
    NUMERIC_RANK,
    compared_as_float,
    f32,
    held_value,
    java_fdiv,
    java_fmod,
    java_idiv,
    java_imod,
    java_ldiv,
    math_type,
    wrap_int,
    wrap_long,
)
from srota.grammar.errors import SiddhiAppCreationError, did_you_mean
from srota.grammar.model import (
    And,
    AttrType,
    Compare,
    CompareOperator,
    Constant,
    Expression,
    FunctionCall,
    In,
    IsNull,
    IsNullStream,
    MathOp,
    MathOperator,
    Not,
    Or,
    Pos,
    TimeConstant,
    Variable,
)


def _fdiv32(a: float, b: float) -> float | None:
    """``float`` division: null for a zero divisor, else the 32-bit quotient."""
    return None if b == 0 else f32(a / b)


def _fmod32(a: float, b: float) -> float | None:
    """``float`` remainder: null for a zero divisor, else the 32-bit remainder."""
    r = java_fmod(a, b)
    return r if r is None else f32(r)


# Helpers every generated namespace has.
BASE_NAMESPACE: dict[str, Any] = {
    "_f32": f32,
    "_idiv": java_idiv,
    "_ldiv": java_ldiv,
    "_imod": java_imod,
    "_fdiv": java_fdiv,
    "_fmod": java_fmod,
    "_fdiv32": _fdiv32,
    "_fmod32": _fmod32,
    "_w32": wrap_int,
    "_w64": wrap_long,
    "_inf": math.inf,
    "_nan": math.nan,
}


def error_at(message: str, node: Any) -> SiddhiAppCreationError:
    """A creation error positioned at ``node`` (any model node with ``pos``)."""
    pos: Pos | None = getattr(node, "pos", None)
    return SiddhiAppCreationError(message, pos.line if pos else None, pos.column if pos else None)


@dataclass(frozen=True)
class Compiled:
    """Generated source for one expression, with its Siddhi type.

    ``constant`` is True when the value is known at creation (then ``value`` holds it).
    """

    code: str
    type: AttrType
    constant: bool = False
    value: Any = None
    nullable: bool = True


class Scope(Protocol):
    """Where the attributes an expression reads come from."""

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        """Source code reading ``var`` and its type; raises SiddhiAppCreationError if unknown."""

    def resolve_stream(self, node: IsNullStream) -> str:
        """Source code giving the referenced event, or None when it is absent."""

    def timestamp(self, node: Expression | None) -> str:
        """Source code for the timestamp of the event (or of the referenced event)."""


@dataclass(frozen=True)
class ArgInfo:
    """What a function or aggregator is told about one argument at creation."""

    type: AttrType
    constant: bool
    value: Any
    node: Expression


# A function factory gets the arguments' info and returns (return type, callable).
FunctionFactory = Callable[[list[ArgInfo], Any], tuple[AttrType, Callable[..., Any]]]
# A hook that handles aggregator calls in selectors: returns generated code or None.
AggregatorHook = Callable[[FunctionCall, "ExpressionCompiler"], Compiled | None]
# A hook that compiles ``expr in Table``.
InHook = Callable[[In, "ExpressionCompiler"], Compiled]


def _literal(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "_nan"
        if math.isinf(value):
            return "_inf" if value > 0 else "(-_inf)"
    return repr(value)


class ExpressionCompiler:
    """Compiles expressions of one scope into source text over one :class:`CodeGen`."""

    def __init__(self, ctx: Any, scope: Scope, gen: CodeGen,
                 aggregator_hook: AggregatorHook | None = None,
                 in_hook: InHook | None = None, nulls_unchecked: bool = False) -> None:
        """``nulls_unchecked``: leave out the null tests of ``+ - *`` and of ``< <= > >=``
        (see :func:`operators_only`): the code then raises TypeError where a null meets one
        of them, instead of giving null or false, and is right wherever it does not raise.
        """
        self.ctx = ctx
        self.scope = scope
        self.gen = gen
        self.aggregator_hook = aggregator_hook
        self.in_hook = in_hook if in_hook is not None else getattr(ctx, "in_hook", None)
        self.nulls_unchecked = nulls_unchecked

    # ------------------------------------------------------------------ entry points
    def compile(self, expr: Expression) -> Compiled:
        """Source and type for ``expr``."""
        method = getattr(self, "_c_" + type(expr).__name__, None)
        if method is None:
            raise error_at(f"unsupported expression {type(expr).__name__}", expr)
        return method(expr)

    def compile_condition(self, expr: Expression, what: str = "condition") -> str:
        """Source of a boolean condition (a non-boolean expression is a creation error)."""
        c = self.compile(expr)
        if c.type is not AttrType.BOOL:
            raise error_at(f"{what} must be a bool expression, found {c.type.value}", expr)
        if c.constant:
            return "True" if c.value else "False"
        if c.nullable and not isinstance(expr, (Compare, And, Or, Not, IsNull, IsNullStream, In)):
            return f"({c.code} is True)"
        return c.code

    def arg_info(self, expr: Expression) -> tuple[ArgInfo, Compiled]:
        c = self.compile(expr)
        return ArgInfo(c.type, c.constant, c.value, expr), c

    # ------------------------------------------------------------------ leaves
    def _c_Constant(self, e: Constant) -> Compiled:
        value = held_value(e.value, e.type)
        return Compiled(_literal(value), e.type, True, value, value is None)

    def _c_TimeConstant(self, e: TimeConstant) -> Compiled:
        return Compiled(repr(e.millis), AttrType.LONG, True, e.millis, False)

    def _c_Variable(self, e: Variable) -> Compiled:
        code, type_ = self.scope.resolve(e)
        return Compiled(code, type_)

    # ------------------------------------------------------------------ arithmetic
    def _c_MathOp(self, e: MathOp) -> Compiled:
        """Siddhi's arithmetic: the wider operand type decides (int < long < float < double);
        ``int`` and ``long`` results wrap around as Java's do, ``float`` ones are 32-bit, and
        a division or remainder by zero is null (Siddhi's executors answer null, no error)."""
        left, right = self.compile(e.left), self.compile(e.right)
        for side, node in ((left, e.left), (right, e.right)):
            if side.type not in NUMERIC_RANK:
                raise error_at(f"'{e.op.value}' needs numeric operands, found {side.type.value}", node)
        rtype = math_type(left.type, right.type)
        if left.constant and right.constant:
            value = _fold(e.op, rtype, left.value, right.value)
            return Compiled(_literal(value), rtype, True, value, value is None)
        op = e.op
        integral = rtype in (AttrType.INT, AttrType.LONG)
        if (self.nulls_unchecked and rtype is not AttrType.FLOAT and not _null_constant(left, right)
                and op in (MathOperator.ADD, MathOperator.SUBTRACT, MathOperator.MULTIPLY)):
            # (None + 1 raises TypeError: the caller runs the checked code instead)
            core = f"{left.code} {op.value} {right.code}"
            return Compiled(self._wrap(core, rtype) if integral else f"({core})", rtype)
        a, b = self._operand(left), self._operand(right)
        if rtype is AttrType.FLOAT:
            # Java converts each operand to float first (an int or long constant too); a float
            # attribute holds a 32-bit value even when the sender gave a wider one.
            a = _float_operand(a, left)
            b = _float_operand(b, right)
        nullable = False
        if integral:
            if op is MathOperator.DIVIDE:
                core = f"{'_idiv' if rtype is AttrType.INT else '_ldiv'}({a.use}, {b.use})"
                nullable = True
            elif op is MathOperator.MOD:
                core = f"_imod({a.use}, {b.use})"
                nullable = True
            else:
                core = self._wrap(f"{a.use} {op.value} {b.use}", rtype)
        else:
            suffix = "32" if rtype is AttrType.FLOAT else ""
            if op is MathOperator.DIVIDE:
                core = f"_fdiv{suffix}({a.use}, {b.use})"
                nullable = True
            elif op is MathOperator.MOD:
                core = f"_fmod{suffix}({a.use}, {b.use})"
                nullable = True
            elif rtype is AttrType.FLOAT:
                core = f"_f32({a.use} {op.value} {b.use})"
            else:
                core = f"{a.use} {op.value} {b.use}"
        checks = [c for c in (a.check, b.check) if c]
        if not checks:
            return Compiled(f"({core})", rtype, nullable=nullable)
        return Compiled(f"(None if {_joined(checks, 'or')} else {core})", rtype)

    def _wrap(self, core: str, rtype: AttrType) -> str:
        """``core`` (an int or long sum, difference or product) wrapped around as Java's
        fixed-width arithmetic does; the range test keeps the common case to two compares."""
        t = self.gen.temp()
        if rtype is AttrType.INT:
            return f"({t} if -2147483648 <= ({t} := {core}) <= 2147483647 else _w32({t}))"
        return f"({t} if -9223372036854775808 <= ({t} := {core}) <= 9223372036854775807 else _w64({t}))"

    # ------------------------------------------------------------------ conditions
    def _c_Compare(self, e: Compare) -> Compiled:
        """Siddhi's comparisons: numbers with numbers (in Java's promoted type: an int or
        long against a float compares as floats, a long against a double as doubles), a
        string or a bool only with its own type and ``<``-like ones only on numbers; an
        ``object`` compares with nothing.  A null operand makes ``!=`` true and the others
        false (``NotEqualCompareConditionExpressionExecutor``)."""
        left, right = self.compile(e.left), self.compile(e.right)
        lt, rt = left.type, right.type
        numeric = lt in NUMERIC_RANK and rt in NUMERIC_RANK
        ne = e.op is CompareOperator.NE
        if not numeric:
            if AttrType.OBJECT in (lt, rt):
                raise error_at(f"'{e.op.value}' cannot compare {lt.value} with {rt.value}: "
                               "an object compares with nothing", e)
            if e.op in (CompareOperator.EQ, CompareOperator.NE):
                if lt != rt:
                    raise error_at(f"cannot compare {lt.value} with {rt.value}", e)
            else:
                raise error_at(f"'{e.op.value}' compares numbers only, found {lt.value} and {rt.value}", e)
        lconv = rconv = ""
        if numeric:
            equality = e.op in (CompareOperator.EQ, CompareOperator.NE)
            (left, lconv), (right, rconv) = _promoted(left, rt, equality), _promoted(right, lt, equality)
        if left.constant and right.constant:
            value = _compare(e.op, left.value, right.value)
            return Compiled(repr(value), AttrType.BOOL, True, value, False)
        if (self.nulls_unchecked and e.op is not CompareOperator.EQ and not ne
                and not _null_constant(left, right) and not (lconv or rconv)):
            # (None < 1 raises TypeError, as a str against a null does; == and != do not)
            return Compiled(f"({left.code} {e.op.value} {right.code})", AttrType.BOOL, nullable=False)
        a, b = self._operand(left), self._operand(right)
        if lconv:
            a = _Operand(f"{lconv}({a.use})", a.check)
        if rconv:
            b = _Operand(f"{rconv}({b.use})", b.check)
        core = f"{a.use} {e.op.value} {b.use}"
        if ne:
            checks = [c for c in (a.check, b.check) if c]
            if not checks:
                return Compiled(f"({core})", AttrType.BOOL, nullable=False)
            return Compiled(f"({_joined(checks, 'or')} or {core})", AttrType.BOOL, nullable=False)
        # Only the trailing test flips: an operand's own code may contain ' is None' too.
        checks = [_not_null(c) for c in (a.check, b.check) if c]
        if not checks:
            return Compiled(f"({core})", AttrType.BOOL, nullable=False)
        return Compiled(f"({_joined(checks, 'and')} and {core})", AttrType.BOOL, nullable=False)

    def _bool_operand(self, expr: Expression, what: str) -> str:
        c = self.compile(expr)
        if c.type is not AttrType.BOOL:
            raise error_at(f"'{what}' needs bool operands, found {c.type.value}", expr)
        if c.nullable:
            return f"({c.code} is True)"
        return c.code

    def _c_And(self, e: And) -> Compiled:
        return Compiled(f"({self._bool_operand(e.left, 'and')} and {self._bool_operand(e.right, 'and')})",
                        AttrType.BOOL, nullable=False)

    def _c_Or(self, e: Or) -> Compiled:
        return Compiled(f"({self._bool_operand(e.left, 'or')} or {self._bool_operand(e.right, 'or')})",
                        AttrType.BOOL, nullable=False)

    def _c_Not(self, e: Not) -> Compiled:
        return Compiled(f"(not {self._bool_operand(e.expression, 'not')})", AttrType.BOOL, nullable=False)

    def _c_IsNull(self, e: IsNull) -> Compiled:
        inner = e.expression
        if isinstance(inner, Variable) and inner.stream_id is None and self._is_stream_ref(inner):
            return self._c_IsNullStream(IsNullStream(inner.attribute, pos=inner.pos))
        c = self.compile(inner)
        return Compiled(f"({c.code} is None)", AttrType.BOOL, nullable=False)

    def _is_stream_ref(self, var: Variable) -> bool:
        probe = getattr(self.scope, "is_stream_reference", None)
        return bool(probe and probe(var.attribute))

    def _c_IsNullStream(self, e: IsNullStream) -> Compiled:
        return Compiled(f"({self.scope.resolve_stream(e)} is None)", AttrType.BOOL, nullable=False)

    def _c_In(self, e: In) -> Compiled:
        if self.in_hook is None:
            raise error_at(f"'in {e.source_id}' needs a table named {e.source_id}", e)
        return self.in_hook(e, self)

    # ------------------------------------------------------------------ functions
    def _c_FunctionCall(self, e: FunctionCall) -> Compiled:
        if self.aggregator_hook is not None:
            got = self.aggregator_hook(e, self)
            if got is not None:
                return got
        name = e.name
        if not e.namespace and name == "eventTimestamp":
            if len(e.args) > 1:
                raise error_at("eventTimestamp() takes at most one argument", e)
            return Compiled(self.scope.timestamp(e.args[0] if e.args else None), AttrType.LONG,
                            nullable=False)
        infos: list[ArgInfo] = []
        codes: list[str] = []
        for arg in self.star_args(e) if e.star else e.args:
            info, c = self.arg_info(arg)
            infos.append(info)
            codes.append(c.code)
        factory = self.ctx.find_function(e.namespace, name)
        if factory is None:
            if self.ctx.is_aggregator(e.namespace, name):
                raise error_at(f"aggregate function '{_qual(e)}' is not allowed here", e)
            from srota.engine.registry import Kind, registry

            known = [f.qualified_name for kind in (Kind.FUNCTION, Kind.AGGREGATOR) for f in registry.all(kind)
                     if f.namespace.lower() == (e.namespace or "").lower()]
            raise error_at(f"unknown function '{_qual(e)}'{did_you_mean(_qual(e), known)}", e)
        try:
            rtype, fn = factory(infos, self.ctx)
        except SiddhiAppCreationError as exc:
            if exc.line is None and e.pos is not None:
                raise SiddhiAppCreationError(exc.message, e.pos.line, e.pos.column) from None
            raise
        except (TypeError, ValueError) as exc:
            raise error_at(f"{_qual(e)}: {exc}", e) from None
        if isinstance(fn, str):  # an inline template such as "({0} or {1})"
            code = fn.format(*codes)
        else:
            code = f"{self.gen.ref(fn, 'fn')}({', '.join(codes)})"
        if rtype is AttrType.BOOL:
            # Siddhi wraps every bool function in a BoolConditionExpressionExecutor: null is false.
            return Compiled(f"({code} is True)", rtype, nullable=False)
        return Compiled(code, rtype)

    # ------------------------------------------------------------------ helpers
    def star_args(self, node: Any) -> tuple[Variable, ...]:
        """``f(*)``: every attribute of the input, in order (as Siddhi expands it)."""
        columns = getattr(self.scope, "columns", None)
        if columns is None:
            raise error_at("'*' arguments need a single input stream", node)
        return tuple(Variable(c.name, pos=getattr(node, "pos", None)) for c in columns())

    def _operand(self, c: Compiled) -> _Operand:
        if c.constant:
            if c.value is None:
                return _Operand("None", "True")
            return _Operand(c.code, "")
        if not c.nullable or _NUMBER.fullmatch(c.code):  # (a function's constant code: math:e())
            return _Operand(c.code, "")
        if _simple(c.code):
            return _Operand(c.code, f"{c.code} is None")
        t = self.gen.temp()
        # The first mention assigns the temporary; the operation uses it.
        return _Operand(t, f"({t} := {c.code}) is None")


@dataclass(frozen=True)
class _Operand:
    """An operand's code (``use``) and the test that it is null (``check``; '' when it cannot be).

    When ``use`` is a temporary, ``check`` assigns it, so the check must run first.
    """

    use: str
    check: str


def operators_only(expr: Expression) -> bool:
    """Whether ``expr`` is made of attributes, constants and operators only (no function
    call, no ``in`` a table): code for it has no side effects, so running it again, checked,
    after an unchecked run raised (``nulls_unchecked``) changes nothing."""
    if isinstance(expr, (Constant, TimeConstant, Variable, IsNullStream)):
        return True
    if isinstance(expr, (MathOp, Compare, And, Or)):
        return operators_only(expr.left) and operators_only(expr.right)
    if isinstance(expr, (Not, IsNull)):
        return operators_only(expr.expression)
    return False


def _float_operand(operand: _Operand, c: Compiled) -> _Operand:
    """An operand of ``float`` arithmetic, converted to 32 bits as Java's ``floatValue()``."""
    if c.constant:
        return operand if c.value is None else _Operand(_literal(f32(float(c.value))), "")
    return _Operand(f"_f32({operand.use})", operand.check)


def _promotion(c: Compiled, other: AttrType, equality: bool = False) -> str:
    """How Siddhi's compare executors promote a compared number against ``other``: to a float
    where :func:`~srota.engine.types.compared_as_float` says so (16777217 == 16777216f), a long
    against a double (or a float, in ``==`` and ``!=``) to a double; '' if as is."""
    if compared_as_float(c.type, other, equality):
        return "_f32"
    if c.type is AttrType.LONG and other in (AttrType.DOUBLE, AttrType.FLOAT):
        return "float"
    return ""


def _promoted(c: Compiled, other: AttrType, equality: bool = False) -> tuple[Compiled, str]:
    """``c`` promoted against ``other`` (see :func:`_promotion`): a constant is converted
    now; otherwise the conversion's name is returned, for the code to apply past the null test."""
    name = _promotion(c, other, equality)
    if not name or not c.constant:
        return c, name
    value = None if c.value is None else (f32(float(c.value)) if name == "_f32" else float(c.value))
    return Compiled(_literal(value), c.type, True, value, value is None), ""


def _joined(checks: list[str], op: str) -> str:
    """The operands' null tests joined with ``op``.  Where a later operand is computed (it may
    hold an aggregator), every operand is evaluated, as Siddhi's executors evaluate both sides
    before testing for null: ``max(p) - min(v)`` moves ``min``'s state even when ``max`` is
    null.  Plain attributes keep the short-circuit."""
    if len(checks) > 1 and any(":=" in c for c in checks[1:]):
        return (" | " if op == "or" else " & ").join(f"({c})" for c in checks)
    return f" {op} ".join(checks)


def _null_constant(*sides: Compiled) -> bool:
    return any(c.constant and c.value is None for c in sides)


def _not_null(check: str) -> str:
    """Negate an operand's ``... is None`` test (a null constant's test is ``True``)."""
    if check.endswith(" is None"):
        return check[:-len(" is None")] + " is not None"
    return f"(not {check})"


#: a number literal in generated code, never null
_NUMBER = re.compile(r"-?[0-9][0-9.e+-]*")


def _simple(code: str) -> bool:
    """Cheap, side-effect-free code that may be evaluated twice (``d[3]``, a name)."""
    return code.replace("_", "a").replace("[", "").replace("]", "").replace(".", "").isalnum()


def _qual(e: FunctionCall) -> str:
    return f"{e.namespace}:{e.name}" if e.namespace else e.name


def _fold(op: MathOperator, rtype: AttrType, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    integral = rtype in (AttrType.INT, AttrType.LONG)
    if rtype is AttrType.FLOAT:
        a, b = f32(float(a)), f32(float(b))  # Java converts each operand to float first
    if op is MathOperator.ADD:
        v = a + b
    elif op is MathOperator.SUBTRACT:
        v = a - b
    elif op is MathOperator.MULTIPLY:
        v = a * b
    elif op is MathOperator.DIVIDE:
        v = (java_idiv(a, b) if rtype is AttrType.INT else java_ldiv(a, b)) if integral else java_fdiv(a, b)
    else:
        v = java_imod(a, b) if integral else java_fmod(a, b)
    if v is None:
        return None  # a division or remainder by zero
    if rtype is AttrType.INT:
        v = wrap_int(v)
    elif rtype is AttrType.LONG:
        v = wrap_long(v)
    elif rtype is AttrType.FLOAT:
        v = f32(v)
    else:
        v = float(v)
    return v


def _compare(op: CompareOperator, a: Any, b: Any) -> bool:
    if a is None or b is None:
        return op is CompareOperator.NE
    return {
        CompareOperator.EQ: a == b, CompareOperator.NE: a != b, CompareOperator.GT: a > b,
        CompareOperator.GE: a >= b, CompareOperator.LT: a < b, CompareOperator.LE: a <= b,
    }[op]
