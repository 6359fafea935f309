/* srota.engine._speedups: the compiled half of the columnar path (engine/columnar.py).
 *
 * Two loops over a chunk of events that Python would run one bytecode at a time:
 *
 *   gather(chunk, reads) -> bool
 *       For each read (index, kind, out), writes attribute `index` of every event's data into
 *       the writable buffer `out` (kind 'd': float64 from exact floats; 'q': int64 and 'i':
 *       int32 from exact ints in range; 'b': uint8 from True/False; 'e', with a fourth item,
 *       a string: uint8, whether an exact string equals it; the other kinds take a fourth
 *       item of None too), in one pass over the events.  False, with the buffers partly written, as soon as one value is anything
 *       else (a null, another type, out of range): the caller then runs the chunk through
 *       the generated Python loop, which knows what to do with it.
 *
 *   emit(chunk, mask, columns, type) -> list
 *       One output event (a RawEvent: timestamp of the input event, the given type) per
 *       event whose byte in `mask` is non-zero (every event where `mask` is None).  Its
 *       data is a tuple with one value per column: ('a', i) the input's attribute i as it
 *       is, ('c', value) a constant, ('d'|'f'|'q'|'i'|'b', buffer) the event's element of a
 *       computed float64/float32/int64/int32/bool array.
 *
 *   plain(events) -> bool
 *       Whether every event is an Event of type 0 (CURRENT) whose data is a tuple: what a
 *       stream's input handler checks before it takes a sender's events as they are.
 *
 * configure(event_class, raw_event_class) tells the module the two classes: events are
 * read and made through the slots of Event (`timestamp`, `data`, `type`), found through
 * their member descriptors, as CPython's own slot access does.  Pure Python keeps working
 * without this module (engine/columnar.py then plans nothing).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

static PyTypeObject *event_type = NULL;
static PyTypeObject *raw_event_type = NULL;
static Py_ssize_t off_timestamp = -1, off_data = -1, off_type = -1;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static Py_ssize_t
slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL)
        return -1;
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        Py_DECREF(descr);
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, name);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    Py_ssize_t offset = member->type == T_OBJECT_EX ? member->offset : -1;
    Py_DECREF(descr);
    if (offset < 0)
        PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
    return offset;
}

static PyObject *
configure(PyObject *self, PyObject *args)
{
    PyObject *ev, *raw;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &ev, &PyType_Type, &raw))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)raw, (PyTypeObject *)ev)) {
        PyErr_SetString(PyExc_TypeError, "the raw event class must subclass the event class");
        return NULL;
    }
    Py_ssize_t ts = slot_offset((PyTypeObject *)ev, "timestamp");
    Py_ssize_t data = ts < 0 ? -1 : slot_offset((PyTypeObject *)ev, "data");
    Py_ssize_t type = data < 0 ? -1 : slot_offset((PyTypeObject *)ev, "type");
    if (type < 0)
        return NULL;
    Py_INCREF(ev);
    Py_INCREF(raw);
    Py_XSETREF(event_type, (PyTypeObject *)ev);
    Py_XSETREF(raw_event_type, (PyTypeObject *)raw);
    off_timestamp = ts;
    off_data = data;
    off_type = type;
    Py_RETURN_NONE;
}

/* The data tuple of event `e`, borrowed; NULL (no exception) where there is none to read. */
static inline PyObject *
data_of(PyObject *e)
{
    if (!PyObject_TypeCheck(e, event_type))
        return NULL;
    PyObject *data = SLOT(e, off_data);
    return (data != NULL && PyTuple_CheckExact(data)) ? data : NULL;
}

static int
check_configured(void)
{
    if (event_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "srota.engine._speedups.configure() was not called");
        return -1;
    }
    return 0;
}

typedef struct {
    Py_ssize_t index;
    int kind;
    Py_buffer view;
    PyObject *text;     /* 'e': the string compared with (borrowed) */
} column_read;

/* Writes value `v` as element `i` of `r`'s buffer: 1; 0 where it is not of `r`'s kind; -1 with an
 * exception set (a comparison raised). */
static inline int
store(column_read *r, Py_ssize_t i, PyObject *v)
{
    switch (r->kind) {
    case 'd':
        if (!PyFloat_CheckExact(v))
            return 0;
        ((double *)r->view.buf)[i] = PyFloat_AS_DOUBLE(v);
        return 1;
    case 'q':
    case 'i': {
        if (!PyLong_CheckExact(v))
            return 0;
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow)
            return 0;
        if (r->kind == 'q') {
            ((int64_t *)r->view.buf)[i] = (int64_t)x;
            return 1;
        }
        if (x < INT32_MIN || x > INT32_MAX)
            return 0;
        ((int32_t *)r->view.buf)[i] = (int32_t)x;
        return 1;
    }
    case 'e': {
        if (!PyUnicode_CheckExact(v))
            return 0;
        int eq = PyObject_RichCompareBool(v, r->text, Py_EQ);
        if (eq < 0)
            return -1;
        ((uint8_t *)r->view.buf)[i] = (uint8_t)eq;
        return 1;
    }
    default: /* 'b' */
        if (v == Py_True)
            ((uint8_t *)r->view.buf)[i] = 1;
        else if (v == Py_False)
            ((uint8_t *)r->view.buf)[i] = 0;
        else
            return 0;
        return 1;
    }
}

static PyObject *
gather(PyObject *self, PyObject *args)
{
    PyObject *chunk, *reads_obj;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &chunk, &PyTuple_Type, &reads_obj))
        return NULL;
    if (check_configured() < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(chunk);
    Py_ssize_t k = PyTuple_GET_SIZE(reads_obj);
    column_read *reads = PyMem_Calloc(k ? k : 1, sizeof(column_read));
    if (reads == NULL)
        return PyErr_NoMemory();
    Py_ssize_t got = 0, widest = -1;
    int ok = 1;
    for (; got < k; got++) {
        column_read *r = &reads[got];
        PyObject *spec = PyTuple_GET_ITEM(reads_obj, got);
        PyObject *buffer;
        r->text = NULL;
        if (!PyArg_ParseTuple(spec, "nCO|O;a read is (index, kind, buffer[, text])", &r->index, &r->kind,
                              &buffer, &r->text))
            goto fail;
        if (r->text == Py_None)
            r->text = NULL;  /* (the reads of other kinds may say None) */
        Py_ssize_t itemsize;
        switch (r->kind) {
        case 'd': case 'q': itemsize = 8; break;
        case 'i': itemsize = 4; break;
        case 'b': itemsize = 1; break;
        case 'e':
            if (r->text == NULL || !PyUnicode_Check(r->text)) {
                PyErr_SetString(PyExc_TypeError, "an 'e' read needs the string to compare with");
                goto fail;
            }
            itemsize = 1;
            break;
        default:
            PyErr_Format(PyExc_ValueError, "unknown kind '%c'", r->kind);
            goto fail;
        }
        if (r->index < 0) {
            PyErr_SetString(PyExc_ValueError, "a negative attribute index");
            goto fail;
        }
        if (PyObject_GetBuffer(buffer, &r->view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
            goto fail;
        if (r->view.len < n * itemsize) {
            got++;
            PyErr_SetString(PyExc_ValueError, "a buffer is smaller than the chunk");
            goto fail;
        }
        if (r->index > widest)
            widest = r->index;
    }
    for (Py_ssize_t i = 0; i < n && ok; i++) {
        PyObject *data = data_of(PyList_GET_ITEM(chunk, i));
        if (data == NULL || widest >= PyTuple_GET_SIZE(data)) {
            ok = 0;
            break;
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            int stored = store(&reads[j], i, PyTuple_GET_ITEM(data, reads[j].index));
            if (stored <= 0) {  /* (-1: a comparison raised) */
                ok = 0;
                break;
            }
        }
    }
    for (Py_ssize_t j = 0; j < got; j++)
        PyBuffer_Release(&reads[j].view);
    PyMem_Free(reads);
    if (PyErr_Occurred())
        return NULL;
    return PyBool_FromLong(ok);
fail:
    for (Py_ssize_t j = 0; j < got; j++)
        PyBuffer_Release(&reads[j].view);
    PyMem_Free(reads);
    return NULL;
}

typedef struct {
    int kind;
    Py_ssize_t index;   /* 'a' */
    PyObject *value;    /* 'c' (borrowed) */
    Py_buffer view;     /* computed columns */
    int has_view;
} column;

static void
release_columns(column *cols, Py_ssize_t k)
{
    for (Py_ssize_t j = 0; j < k; j++)
        if (cols[j].has_view)
            PyBuffer_Release(&cols[j].view);
    PyMem_Free(cols);
}

static PyObject *
value_at(column *c, PyObject *data, Py_ssize_t i)
{
    switch (c->kind) {
    case 'a': {
        PyObject *v = PyTuple_GET_ITEM(data, c->index);
        Py_INCREF(v);
        return v;
    }
    case 'c':
        Py_INCREF(c->value);
        return c->value;
    case 'd':
        return PyFloat_FromDouble(((double *)c->view.buf)[i]);
    case 'f':
        return PyFloat_FromDouble((double)((float *)c->view.buf)[i]);
    case 'q':
        return PyLong_FromLongLong(((int64_t *)c->view.buf)[i]);
    case 'i':
        return PyLong_FromLong(((int32_t *)c->view.buf)[i]);
    default: /* 'b' */
        return PyBool_FromLong(((uint8_t *)c->view.buf)[i]);
    }
}

static PyObject *
emit(PyObject *self, PyObject *args)
{
    PyObject *chunk, *mask_obj, *columns, *etype;
    if (!PyArg_ParseTuple(args, "O!OO!O", &PyList_Type, &chunk, &mask_obj, &PyTuple_Type, &columns, &etype))
        return NULL;
    if (check_configured() < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(chunk);
    Py_ssize_t k = PyTuple_GET_SIZE(columns);
    column *cols = PyMem_Calloc(k ? k : 1, sizeof(column));
    if (cols == NULL)
        return PyErr_NoMemory();
    Py_buffer mask;
    int has_mask = 0;
    PyObject *out = NULL;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *spec = PyTuple_GET_ITEM(columns, j);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(spec, 0))
                || PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(spec, 0)) != 1) {
            PyErr_SetString(PyExc_TypeError, "a column is (kind, payload)");
            goto fail;
        }
        column *c = &cols[j];
        c->kind = (int)PyUnicode_READ_CHAR(PyTuple_GET_ITEM(spec, 0), 0);
        PyObject *payload = PyTuple_GET_ITEM(spec, 1);
        Py_ssize_t itemsize = 0;
        switch (c->kind) {
        case 'a':
            c->index = PyLong_AsSsize_t(payload);
            if (c->index < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "a negative attribute index");
                goto fail;
            }
            continue;
        case 'c':
            c->value = payload;
            continue;
        case 'd': case 'q': itemsize = 8; break;
        case 'f': case 'i': itemsize = 4; break;
        case 'b': itemsize = 1; break;
        default:
            PyErr_Format(PyExc_ValueError, "unknown kind '%c'", c->kind);
            goto fail;
        }
        if (PyObject_GetBuffer(payload, &c->view, PyBUF_C_CONTIGUOUS) < 0)
            goto fail;
        c->has_view = 1;
        if (c->view.len < n * itemsize) {
            PyErr_SetString(PyExc_ValueError, "a column is shorter than the chunk");
            goto fail;
        }
    }
    if (mask_obj != Py_None) {
        if (PyObject_GetBuffer(mask_obj, &mask, PyBUF_C_CONTIGUOUS) < 0)
            goto fail;
        has_mask = 1;
        if (mask.len < n) {
            PyErr_SetString(PyExc_ValueError, "the mask is shorter than the chunk");
            goto fail;
        }
    }
    out = PyList_New(0);
    if (out == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (has_mask && !((uint8_t *)mask.buf)[i])
            continue;
        PyObject *e = PyList_GET_ITEM(chunk, i);
        PyObject *data = data_of(e);
        PyObject *ts = PyObject_TypeCheck(e, event_type) ? SLOT(e, off_timestamp) : NULL;
        if (data == NULL || ts == NULL) {
            PyErr_SetString(PyExc_TypeError, "an event without timestamp or data tuple");
            goto fail;
        }
        PyObject *row = PyTuple_New(k);
        if (row == NULL)
            goto fail;
        for (Py_ssize_t j = 0; j < k; j++) {
            if (cols[j].kind == 'a' && cols[j].index >= PyTuple_GET_SIZE(data)) {
                Py_DECREF(row);
                PyErr_SetString(PyExc_IndexError, "an attribute index beyond the event's data");
                goto fail;
            }
            PyObject *v = value_at(&cols[j], data, i);
            if (v == NULL) {
                Py_DECREF(row);
                goto fail;
            }
            PyTuple_SET_ITEM(row, j, v);
        }
        PyObject *o = raw_event_type->tp_alloc(raw_event_type, 0);
        if (o == NULL) {
            Py_DECREF(row);
            goto fail;
        }
        Py_INCREF(ts);
        Py_INCREF(etype);
        SLOT(o, off_timestamp) = ts;
        SLOT(o, off_data) = row;
        SLOT(o, off_type) = etype;
        int rc = PyList_Append(out, o);
        Py_DECREF(o);
        if (rc < 0)
            goto fail;
    }
    if (has_mask)
        PyBuffer_Release(&mask);
    release_columns(cols, k);
    return out;
fail:
    Py_XDECREF(out);
    if (has_mask)
        PyBuffer_Release(&mask);
    release_columns(cols, k);
    return NULL;
}

static PyObject *
plain(PyObject *self, PyObject *events)
{
    if (!PyList_Check(events)) {
        PyErr_SetString(PyExc_TypeError, "plain() takes a list of events");
        return NULL;
    }
    if (check_configured() < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(events); i++) {
        PyObject *e = PyList_GET_ITEM(events, i);
        if (!PyObject_TypeCheck(e, event_type))
            Py_RETURN_FALSE;
        PyObject *type = SLOT(e, off_type), *data = SLOT(e, off_data);
        if (data == NULL || !PyTuple_CheckExact(data) || type == NULL)
            Py_RETURN_FALSE;
        int set = PyObject_IsTrue(type);
        if (set != 0) {
            if (set < 0)
                return NULL;
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(event_class, raw_event_class): the classes of events read and made."},
    {"gather", gather, METH_VARARGS, "gather(chunk, reads) -> bool: attributes of every event into buffers."},
    {"emit", emit, METH_VARARGS, "emit(chunk, mask, columns, type) -> list: the output events of the chunk."},
    {"plain", plain, METH_O, "plain(events) -> bool: every one an Event of type 0 (CURRENT) whose data is a tuple."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "The compiled loops of the columnar path (see engine/columnar.py).", -1, methods,
};

/* What engine/columnar.py expects of this module: a module built from an older source (left
 * in place where a rebuild failed) is not used. */
#define SPEEDUPS_API 5

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "API", SPEEDUPS_API) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
