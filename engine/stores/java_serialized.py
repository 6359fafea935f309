"""Java-serialized ``java.util.HashSet`` values: the ``AGG_SET_x`` of ``distinctCount`` as Siddhi writes it.

siddhi-core keeps a ``distinctCount`` base value as a ``HashSet`` of the attribute's values, and
siddhi-store-rdbms binds that ``OBJECT`` column with ``setObject``; MySQL's and MariaDB's JDBC
drivers store it in the ``BLOB`` as Java serialization (``ObjectOutputStream``), which this module
reads and writes for sets of ``String``, ``Integer``, ``Long``, ``Float``, ``Double`` and
``Boolean``, so that Srota reads the sets a Siddhi node wrote and a Siddhi node reads Srota's
(Java object serialization specification, chapter 6). The writer lays the set out as
``HashSet.writeObject`` does for a set filled by ``add``: capacity, load factor 0.75, size, then
the elements in the order the set iterates them.
"""
from __future__ import annotations

import struct
from typing import Any

from srota.engine.types import f32, java_float_hash, java_hash, java_key, key_value

MAGIC = b"\xac\xed\x00\x05"
_NULL, _REFERENCE, _CLASSDESC, _OBJECT, _STRING = 0x70, 0x71, 0x72, 0x73, 0x74
_BLOCKDATA, _ENDBLOCKDATA, _LONGSTRING = 0x77, 0x78, 0x7C
_BASE_HANDLE = 0x7E0000
_HASHSET = ("java.util.HashSet", -5024744406713321676)
_NUMBER = ("java.lang.Number", -8742448824652078965)
#: Java type name -> (class, serialVersionUID, field type code, struct format)
_BOXES = {
    "int": ("java.lang.Integer", 1360826667806852920, "I", ">i"),
    "long": ("java.lang.Long", 4290774380558885855, "J", ">q"),
    "float": ("java.lang.Float", -2671257302660747028, "F", ">f"),
    "double": ("java.lang.Double", -9172774392245257468, "D", ">d"),
    "bool": ("java.lang.Boolean", -3665804199014368530, "Z", ">?"),
}
_BY_CLASS = {cls: (fmt, name) for name, (cls, _, _, fmt) in _BOXES.items()}


class JavaSerializedError(ValueError):
    """A value that is not a Java-serialized HashSet of the supported element types."""


def is_java_serialized(value: bytes) -> bool:
    """Whether ``value`` starts with the Java serialization stream header."""
    return value[:4] == MAGIC


# ---------------------------------------------------------------------------- modified UTF-8
def _mutf8_encode(text: str) -> bytes:
    units = text.encode("utf-16-be", "surrogatepass")
    out = bytearray()
    for i in range(0, len(units), 2):
        c = units[i] << 8 | units[i + 1]
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes((0xC0 | c >> 6, 0x80 | c & 0x3F))
        else:
            out += bytes((0xE0 | c >> 12, 0x80 | c >> 6 & 0x3F, 0x80 | c & 0x3F))
    return bytes(out)


def _mutf8_decode(data: bytes) -> str:
    units = bytearray()
    i = 0
    while i < len(data):
        b = data[i]
        if b < 0x80:
            c, i = b, i + 1
        elif b >> 5 == 0x6:
            c, i = (b & 0x1F) << 6 | data[i + 1] & 0x3F, i + 2
        else:
            c, i = (b & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | data[i + 2] & 0x3F, i + 3
        units += bytes((c >> 8, c & 0xFF))
    return units.decode("utf-16-be", "surrogatepass")


# ---------------------------------------------------------------------------- reading
class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 4
        self.handles: list[Any] = []

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise JavaSerializedError("truncated Java serialization stream")
        b = self.data[self.at:self.at + n]
        self.at += n
        return b

    def u1(self) -> int:
        return self.take(1)[0]

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def utf(self, long: bool = False) -> str:
        return _mutf8_decode(self.take(self.unpack(">q" if long else ">H")))

    def content(self) -> Any:
        tc = self.u1()
        if tc == _NULL:
            return None
        if tc == _REFERENCE:
            return self.reference()
        if tc in (_STRING, _LONGSTRING):
            s = self.utf(tc == _LONGSTRING)
            self.handles.append(s)
            return s
        if tc == _OBJECT:
            return self.object()
        raise JavaSerializedError(f"unsupported Java serialization record 0x{tc:02x}")

    def reference(self) -> Any:
        n = self.unpack(">I") - _BASE_HANDLE
        if not 0 <= n < len(self.handles):
            raise JavaSerializedError("bad handle in Java serialization stream")
        return self.handles[n]

    def class_desc(self) -> tuple[str, list[tuple[str, str]], Any] | None:
        tc = self.u1()
        if tc == _NULL:
            return None
        if tc == _REFERENCE:
            desc = self.reference()
            if not isinstance(desc, tuple):
                raise JavaSerializedError("a class description's handle names something else")
            return desc
        if tc != _CLASSDESC:
            raise JavaSerializedError(f"expected a class description, found 0x{tc:02x}")
        name = self.utf()
        self.take(8)  # serialVersionUID
        n = len(self.handles)
        self.handles.append(None)
        self.take(1)  # flags
        fields = []
        for _ in range(self.unpack(">H")):
            code, fname = chr(self.u1()), self.utf()
            if code in "L[":
                self.content()  # the field's class name
            fields.append((code, fname))
        if self.u1() != _ENDBLOCKDATA:
            raise JavaSerializedError(f"class annotations of {name} are not supported")
        desc = (name, fields, self.class_desc())
        self.handles[n] = desc
        return desc

    def object(self) -> Any:
        desc = self.class_desc()
        if desc is None:
            raise JavaSerializedError("an object without a class")
        n = len(self.handles)
        self.handles.append(None)
        name = desc[0]
        if name == _HASHSET[0]:
            if self.u1() != _BLOCKDATA or self.u1() != 12:
                raise JavaSerializedError("a HashSet without its capacity, load factor and size")
            self.take(8)
            size = self.unpack(">i")
            values: set[Any] = set()
            self.handles[n] = values
            for _ in range(size):
                values.add(java_key(self.content()))
            if self.u1() != _ENDBLOCKDATA:
                raise JavaSerializedError("a HashSet with more than its elements")
            return values
        box = _BY_CLASS.get(name)
        if box is None:
            raise JavaSerializedError(f"a {name} in a set (supported: String, Integer, Long, Float, Double, "
                                      "Boolean)")
        value = self.unpack(box[0])
        value = f32(value) if box[1] == "float" else value
        self.handles[n] = value
        return value


def loads_hash_set(data: bytes) -> set[Any]:
    """The elements of a Java-serialized ``HashSet`` (``Float`` read as the float32 value; a
    double or float as its :func:`~engine.types.java_key`, as the engine's sets hold them)."""
    if not is_java_serialized(data):
        raise JavaSerializedError("not a Java serialization stream")
    reader = _Reader(data)
    value = reader.content()
    if not isinstance(value, set):
        raise JavaSerializedError(f"a Java-serialized {type(value).__name__}, not a HashSet")
    return value


# ---------------------------------------------------------------------------- writing
def _element_hash(value: Any, java_type: str) -> int:
    """``hashCode()`` of the boxed value (what orders a HashSet's iteration)."""
    if java_type == "float":
        return java_float_hash(value)
    if java_type == "double":
        return java_hash(float(value))
    if java_type == "long":
        v = int(value) & 0xFFFFFFFFFFFFFFFF
        return (v ^ (v >> 32)) & 0xFFFFFFFF
    return java_hash(value)


def dumps_hash_set(values: set[Any], java_type: str) -> bytes:
    """``values`` as Java serializes a ``HashSet`` of ``java_type`` (``string``, ``int``,
    ``long``, ``float``, ``double`` or ``bool``; None elements are written as null)."""
    cap = 16
    while len(values) > cap * 0.75:
        cap *= 2
    # a set of doubles holds them as java_key()s: -0.0 and NaN are its markers
    elements = [key_value(v) for v in values] if java_type in ("float", "double") else values

    def slot(v: Any) -> tuple[int, int]:
        if v is None:
            return (0, 0)
        h = _element_hash(v, java_type)
        return ((h ^ (h >> 16)) & (cap - 1), h)

    out = bytearray(MAGIC)
    handles = 0

    def utf(text: str) -> None:
        data = _mutf8_encode(text)
        out.extend(struct.pack(">H", len(data)) + data)

    def new_desc(name: str, suid: int, flags: int, fields: list[tuple[str, str]]) -> int:
        nonlocal handles
        out.append(_CLASSDESC)
        utf(name)
        out.extend(struct.pack(">qB", suid, flags))
        handle = handles
        handles += 1
        out.extend(struct.pack(">H", len(fields)))
        for code, fname in fields:
            out.append(ord(code))
            utf(fname)
        out.append(_ENDBLOCKDATA)
        return handle

    out.append(_OBJECT)
    new_desc(*_HASHSET, 0x03, [])
    out.append(_NULL)  # HashSet's superclass AbstractSet is not serializable
    handles += 1  # the set itself
    out.extend(struct.pack(">BBifi", _BLOCKDATA, 12, cap, 0.75, len(values)))
    box_handle: int | None = None
    number_handle: int | None = None
    for v in sorted(elements, key=slot):
        if v is None:
            out.append(_NULL)
        elif java_type == "string":
            out.append(_STRING)
            handles += 1
            utf(str(v))
        else:
            cls, suid, code, fmt = _BOXES[java_type]
            out.append(_OBJECT)
            if box_handle is not None:
                out.extend(struct.pack(">BI", _REFERENCE, _BASE_HANDLE + box_handle))
            else:
                box_handle = new_desc(cls, suid, 0x02, [(code, "value")])
                if java_type == "bool":
                    out.append(_NULL)
                elif number_handle is not None:
                    out.extend(struct.pack(">BI", _REFERENCE, _BASE_HANDLE + number_handle))
                else:
                    number_handle = new_desc(*_NUMBER, 0x02, [])
                    out.append(_NULL)
            handles += 1
            out.extend(struct.pack(fmt, bool(v) if java_type == "bool" else v))
    out.append(_ENDBLOCKDATA)
    return bytes(out)
