/* srota.engine._speedups: the compiled half of the columnar path (engine/columnar.py).
 *
 * Loops over a chunk of events that Python would run one bytecode at a time:
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
 *       computed float64/float32/int64/int32/bool array.  A row of atomic values and its
 *       event are untracked by the cyclic collector (untrack_plain), as event() does.
 *
 *   plain(events) -> bool
 *       Whether every event is an Event of type 0 (CURRENT) whose data is a tuple: what a
 *       stream's input handler checks before it takes a sender's events as they are.
 *
 *   group_plan(keys, specs, fresh) -> capsule
 *   group_add(chunk, start, plan, states, live, pending) -> int
 *       The grouped aggregation of a batching selector (engine/selector.py, _deferred_path)
 *       for the current events of `chunk` from `start` on: what its generated loop does per
 *       event, with each group's updates summed in C and written to its aggregator states
 *       once.  It stops at the first event it does not take (a reset, an expired event, a
 *       value of another type, states not of the expected classes) and answers that
 *       event's index (len(chunk) when it took them all), having written every update of
 *       the events before it: the generated loop goes on from there.  `plan` is what
 *       group_plan made of the query once (its attributes, state classes, new states).
 *       See group_add below.
 *
 *   batch_scan(chunk, start, ts_index, end, last) -> (index, last)
 *       How far from `start` the events of `chunk` join an event-time batch that ends at
 *       `end` (engine/windows/external.py): the index of the first that is not a current
 *       event whose attribute `ts_index` is an int below `end`, and the largest of `last` and
 *       their timestamps.  The window appends the events before it as they are.
 *
 *   slide_plan(key_index, nstates, updates, columns, deque_type) -> capsule
 *   slide(chunk, start, records, merged, pending, plan) -> int
 *       The fused loop of a partition query over a length window (engine/partition.py,
 *       _fused_loop) for the runs of a chunk whose key's instance it can run: per event the
 *       key's window buffer and its count/sum/avg states stepped as the generated loop steps
 *       them, per run the output row appended to `pending`.  It stops at the first event it
 *       does not take and answers its index; the generated loop goes on from there.  See
 *       slide below.
 *
 *   slide_one(event, record, plan) -> event | None
 *       The same for a chunk of one event: the step, and the output event it makes; None
 *       where it does not take the event.
 *
 *   event(timestamp, data, type) -> RawEvent
 *       An event made through the slots, which the cyclic collector stops tracking where it
 *       holds only plain values (what InputHandler.send sends).
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
/* Whether a RawEvent is its three slots alone (see new_event). */
static int raw_event_bare = 0;
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
    PyTypeObject *r = (PyTypeObject *)raw;
    /* three slots and nothing else (no __dict__, no __weakref__), made by the generic alloc */
    raw_event_bare = r->tp_basicsize == (Py_ssize_t)(sizeof(PyObject) + 3 * sizeof(PyObject *))
                     && r->tp_itemsize == 0 && r->tp_dictoffset == 0 && r->tp_weaklistoffset == 0
                     && !(r->tp_flags & Py_TPFLAGS_MANAGED_DICT) && r->tp_alloc == PyType_GenericAlloc
                     && PyType_IS_GC(r);
    Py_RETURN_NONE;
}

/* A hint to fetch the memory at `p` into the cache (nothing where the compiler has no such
 * builtin). */
#if defined(__GNUC__) || defined(__clang__)
#define prefetch(p) __builtin_prefetch((const void *)(p))
#else
#define prefetch(p) ((void)(p))
#endif

/* The data tuple of event `e`, borrowed; NULL (no exception) where there is none to read. */
static inline PyObject *
data_of(PyObject *e)
{
    if (!PyObject_TypeCheck(e, event_type))
        return NULL;
    PyObject *data = SLOT(e, off_data);
    return (data != NULL && PyTuple_CheckExact(data)) ? data : NULL;
}

/* Whether `v` is a value that holds no reference to another object (str, int, float, bool,
 * bytes, None): a tuple of such values cannot be part of a reference cycle. */
static inline int
atomic_value(PyObject *v)
{
    return v == Py_None || PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v)
           || PyBool_Check(v) || PyBytes_CheckExact(v);
}

/* Whether `data` is a tuple of atomic values (see atomic_value): nothing it holds can lead
 * back to it. */
static inline int
atomic_tuple(PyObject *data)
{
    if (!PyTuple_CheckExact(data))
        return 0;
    for (Py_ssize_t i = PyTuple_GET_SIZE(data); --i >= 0;)
        if (!atomic_value(PyTuple_GET_ITEM(data, i)))
            return 0;
    return 1;
}

/* Untracks event `o` from the cyclic collector where nothing it holds can lead back to it (an
 * int timestamp and type, a data tuple of atomic values), and its data tuple with it, as
 * CPython stops tracking such a tuple: an event a window or a callback keeps then costs the
 * collector's passes nothing (its refcount frees it as before).  Where only the timestamp or
 * type is another object, the tuple alone. */
static void
untrack_plain(PyObject *o)
{
    PyObject *data = SLOT(o, off_data);
    if (!atomic_tuple(data))
        return;
    PyObject_GC_UnTrack(data);
    if (PyLong_CheckExact(SLOT(o, off_timestamp)) && PyLong_CheckExact(SLOT(o, off_type)))
        PyObject_GC_UnTrack(o);
}

/* A RawEvent of `ts`, `data` and `type`, taking over the three references (released on
 * failure); NULL with an exception set.  Where nothing it holds can lead back to it (see
 * untrack_plain) it is never tracked by the cyclic collector: made as PyObject_GC_New makes an
 * object (not linked), where the class is its three slots alone, instead of linked by the
 * generic alloc and unlinked at once. */
static PyObject *
new_event(PyObject *ts, PyObject *data, PyObject *type)
{
    PyObject *o;
    if (raw_event_bare) {
        o = _PyObject_GC_New(raw_event_type);
    }
    else {
        o = raw_event_type->tp_alloc(raw_event_type, 0);
    }
    if (o == NULL) {
        Py_DECREF(ts);
        Py_DECREF(data);
        Py_DECREF(type);
        return NULL;
    }
    SLOT(o, off_timestamp) = ts;
    SLOT(o, off_data) = data;
    SLOT(o, off_type) = type;
    if (!raw_event_bare) {
        untrack_plain(o);
        return o;
    }
    int plain = atomic_tuple(data);
    if (plain)
        PyObject_GC_UnTrack(data);
    if (!plain || !PyLong_CheckExact(ts) || !PyLong_CheckExact(type))
        PyObject_GC_Track(o);
    return o;
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

/* The plan held by `capsule` (made by group_plan or slide_plan, named `name`), once configure()
 * was called; NULL with an exception set otherwise. */
static void *
plan_of(PyObject *capsule, const char *name)
{
    return check_configured() < 0 ? NULL : PyCapsule_GetPointer(capsule, name);
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
        /* (collections over W1's kept output rows cost it a tenth of its time: new_event
           leaves them out of the collector's sight) */
        PyObject *o = new_event(Py_NewRef(ts), row, Py_NewRef(etype));
        if (o == NULL)
            goto fail;
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

/* ------------------------------------------------------------------ group_add
 *
 * group_plan's arguments.  keys: the attribute indices of the group key (one: the key is that value; more: their
 * tuple, as the generated code's `(d[i], d[j],)`).  specs: per aggregator slot, in slot
 * order, (kind, attribute index or -1, state class):
 *   'c'  count(): the state's `count` grows by the group's events;
 *   'f'  a float `total` and a `count` of non-null values (sum of a double or float, avg):
 *        `total += value` in event order, as Python's float addition does it (an int value
 *        through PyLong_AsDouble, as float + int does), so the very same double;
 *   'l'  an integer `total` and a `count` (sum of an int or long): exact integer sums, as
 *        Python's ints (the long sum wraps where it is read, in Python).
 * A null value leaves 'f' and 'l' states alone (as the inline updates do).  fresh: per slot
 * the ((slot name, value), ...) of a new state (see new_states).
 *
 * group_add's: states: the selector's dict, key -> list of states; live: the dict
 * key -> events in the window (None: not tracked); pending: key -> the group's last event.
 * Per group the writes go in order of first appearance, as the per-event loop's inserts.
 */

#define MAX_PROTO_SLOTS 8

typedef struct {
    int kind;
    Py_ssize_t index;
    PyObject *cls;      /* borrowed from specs */
    /* where the state's slots are in an instance of cls (read and written directly: the
     * class is checked exactly, and its slots are plain object slots) */
    Py_ssize_t off_total, off_count;
    Py_ssize_t nproto;  /* a new state's slots (from the prototype): where, and the value (borrowed) */
    Py_ssize_t proto_off[MAX_PROTO_SLOTS];
    PyObject *proto_value[MAX_PROTO_SLOTS];
} agg_spec;

typedef struct {
    double f;           /* 'f': the running total */
    int64_t q;          /* 'l': the sum since the last overflow */
    PyObject *big;      /* 'l': the sums before it (owned), or NULL */
    Py_ssize_t added;   /* values that were not null */
} agg_acc;

typedef struct {
    PyObject *key;      /* owned */
    PyObject *states;   /* owned */
    PyObject *last;     /* borrowed: the chunk holds it */
    Py_ssize_t n;
} agg_group;

static PyObject *empty_tuple = NULL;

/* The slot at `off` of `obj` += delta (Python ints): 0, or -1 with an exception set. */
static int
add_to_slot(PyObject *obj, Py_ssize_t off, PyObject *delta)
{
    PyObject *old = SLOT(obj, off);
    if (old == NULL) {
        PyErr_SetString(PyExc_AttributeError, "an aggregator state's slot is not set");
        return -1;
    }
    PyObject *sum = PyNumber_Add(old, delta);
    if (sum == NULL)
        return -1;
    Py_SETREF(SLOT(obj, off), sum);
    return 0;
}

static int
add_count(PyObject *obj, Py_ssize_t off, Py_ssize_t n)
{
    PyObject *old = SLOT(obj, off);
    if (old != NULL && PyLong_CheckExact(old)) {  /* (the usual case, without a delta object) */
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(old, &overflow);
        long long sum;
        if (!overflow && !__builtin_add_overflow(x, (long long)n, &sum)) {
            PyObject *now = PyLong_FromLongLong(sum);
            if (now == NULL)
                return -1;
            Py_SETREF(SLOT(obj, off), now);
            return 0;
        }
    }
    PyObject *delta = PyLong_FromSsize_t(n);
    if (delta == NULL)
        return -1;
    int rc = add_to_slot(obj, off, delta);
    Py_DECREF(delta);
    return rc;
}

/* The integer sum held in `acc` as a new Python int. */
static PyObject *
acc_int(agg_acc *acc)
{
    PyObject *q = PyLong_FromLongLong(acc->q);
    if (q == NULL || acc->big == NULL)
        return q;
    PyObject *sum = PyNumber_Add(acc->big, q);
    Py_DECREF(q);
    return sum;
}

/* Writes the groups' updates to their states, `live` and `pending`: 0, or -1 with an
 * exception set. */
static int
commit_groups(agg_group *groups, agg_acc *accs, Py_ssize_t ngroups, agg_spec *specs, Py_ssize_t k,
              PyObject *live, PyObject *pending)
{
    for (Py_ssize_t g = 0; g < ngroups; g++) {
        agg_group *grp = &groups[g];
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *st = PyList_GET_ITEM(grp->states, j);
            agg_acc *acc = &accs[g * k + j];
            switch (specs[j].kind) {
            case 'c':
                if (add_count(st, specs[j].off_count, grp->n) < 0)
                    return -1;
                break;
            case 'f': {
                if (!acc->added)
                    break;
                PyObject *total = PyFloat_FromDouble(acc->f);
                if (total == NULL)
                    return -1;
                Py_XSETREF(SLOT(st, specs[j].off_total), total);
                if (add_count(st, specs[j].off_count, acc->added) < 0)
                    return -1;
                break;
            }
            default: { /* 'l' */
                if (!acc->added)
                    break;
                PyObject *delta = acc_int(acc);
                if (delta == NULL)
                    return -1;
                int rc = add_to_slot(st, specs[j].off_total, delta);
                Py_DECREF(delta);
                if (rc < 0 || add_count(st, specs[j].off_count, acc->added) < 0)
                    return -1;
                break;
            }
            }
        }
        if (live != NULL) {
            PyObject *old = PyDict_GetItemWithError(live, grp->key);
            if (old == NULL && PyErr_Occurred())
                return -1;
            PyObject *delta = PyLong_FromSsize_t(grp->n);
            if (delta == NULL)
                return -1;
            PyObject *now = old == NULL ? (Py_INCREF(delta), delta) : PyNumber_Add(old, delta);
            Py_DECREF(delta);
            if (now == NULL)
                return -1;
            int rc = PyDict_SetItem(live, grp->key, now);
            Py_DECREF(now);
            if (rc < 0)
                return -1;
        }
        if (PyDict_SetItem(pending, grp->key, grp->last) < 0)
            return -1;
    }
    return 0;
}

/* Whether `A` is a group's states as the specs expect: a list of one state per slot, each of
 * its slot's class, its slots set, 'f' totals floats and 'l' totals ints. */
static int
states_fit(PyObject *A, agg_spec *specs, Py_ssize_t k)
{
    if (!PyList_CheckExact(A) || PyList_GET_SIZE(A) != k)
        return 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *st = PyList_GET_ITEM(A, j);
        if ((PyObject *)Py_TYPE(st) != specs[j].cls || SLOT(st, specs[j].off_count) == NULL)
            return 0;
        if (specs[j].kind == 'c')
            continue;
        PyObject *total = SLOT(st, specs[j].off_total);
        if (total == NULL || !(specs[j].kind == 'f' ? PyFloat_CheckExact(total) : PyLong_CheckExact(total)))
            return 0;
    }
    return 1;
}

/* A new group's states from the specs' prototypes: each state an instance of its slot's class
 * made without its __init__, its slots set to the prototype's values (what the __init__ sets:
 * see selector._group_add_plan).  NULL with an exception set. */
static PyObject *
new_states(agg_spec *specs, Py_ssize_t k)
{
    PyObject *A = PyList_New(k);
    if (A == NULL)
        return NULL;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyTypeObject *cls = (PyTypeObject *)specs[j].cls;
        PyObject *st = cls->tp_new(cls, empty_tuple, NULL);
        if (st == NULL) {
            Py_DECREF(A);
            return NULL;
        }
        PyList_SET_ITEM(A, j, st);
        for (Py_ssize_t m = 0; m < specs[j].nproto; m++) {
            PyObject *value = specs[j].proto_value[m];
            Py_INCREF(value);
            Py_XSETREF(SLOT(st, specs[j].proto_off[m]), value);
        }
        if (PyObject_GC_IsTracked(st))
            PyObject_GC_UnTrack(st);
    }
    PyObject_GC_UnTrack(A);
    return A;
}

/* The offset of slot `name` (a str) in instances of `cls`, -1 with an exception set. */
static Py_ssize_t
slot_offset_of(PyObject *cls, PyObject *name)
{
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (text == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a slot name is a str");
        return -1;
    }
    return slot_offset((PyTypeObject *)cls, text);
}

/* What group_plan resolves once for a query: the key's and aggregators' attributes, the
 * state classes' slot offsets and the new states' slots.  Held in a capsule, with the specs and
 * prototypes it borrows from. */
typedef struct {
    Py_ssize_t nkeys, key_index[16], widest, k;
    agg_spec spec[64];
    PyObject *held;     /* (specs, fresh), owned: spec[].cls and proto_value borrow from it */
} group_plan_t;

static const char *GROUP_PLAN = "srota.engine._speedups.group_plan";

static void
group_plan_free(PyObject *capsule)
{
    group_plan_t *plan = PyCapsule_GetPointer(capsule, GROUP_PLAN);
    if (plan == NULL)
        return;
    Py_XDECREF(plan->held);
    PyMem_Free(plan);
}

static PyObject *
group_plan(PyObject *self, PyObject *args)
{
    PyObject *keys_obj, *specs_obj, *fresh;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyTuple_Type, &keys_obj, &PyTuple_Type, &specs_obj, &PyTuple_Type, &fresh))
        return NULL;
    if (empty_tuple == NULL && (empty_tuple = PyTuple_New(0)) == NULL)
        return NULL;
    Py_ssize_t nkeys = PyTuple_GET_SIZE(keys_obj), k = PyTuple_GET_SIZE(specs_obj);
    if (nkeys < 1 || nkeys > 16 || k < 1 || k > 64 || PyTuple_GET_SIZE(fresh) != k) {
        PyErr_SetString(PyExc_ValueError, "group_plan: 1 to 16 keys, 1 to 64 aggregators, one prototype each");
        return NULL;
    }
    group_plan_t *plan = PyMem_Calloc(1, sizeof(group_plan_t));
    if (plan == NULL)
        return PyErr_NoMemory();
    plan->nkeys = nkeys;
    plan->k = k;
    plan->widest = -1;
    for (Py_ssize_t j = 0; j < nkeys; j++) {
        plan->key_index[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(keys_obj, j));
        if (plan->key_index[j] < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a negative attribute index");
            goto fail;
        }
        if (plan->key_index[j] > plan->widest)
            plan->widest = plan->key_index[j];
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        agg_spec *spec = &plan->spec[j];
        PyObject *s = PyTuple_GET_ITEM(specs_obj, j);
        int kind;
        if (!PyArg_ParseTuple(s, "CnO;an aggregator is (kind, index, state class)", &kind, &spec->index, &spec->cls))
            goto fail;
        if (kind != 'c' && kind != 'f' && kind != 'l') {
            PyErr_Format(PyExc_ValueError, "unknown aggregator kind '%c'", kind);
            goto fail;
        }
        if (kind != 'c' && spec->index < 0) {
            PyErr_SetString(PyExc_ValueError, "a sum needs an attribute index");
            goto fail;
        }
        spec->kind = kind;
        if (spec->index > plan->widest)
            plan->widest = spec->index;
        if (!PyType_Check(spec->cls) || ((PyTypeObject *)spec->cls)->tp_new == NULL) {
            PyErr_SetString(PyExc_TypeError, "an aggregator's state class is a class");
            goto fail;
        }
        spec->off_count = slot_offset((PyTypeObject *)spec->cls, "count");
        if (spec->off_count < 0)
            goto fail;
        spec->off_total = kind == 'c' ? -1 : slot_offset((PyTypeObject *)spec->cls, "total");
        if (kind != 'c' && spec->off_total < 0)
            goto fail;
        PyObject *proto = PyTuple_GET_ITEM(fresh, j);
        if (!PyTuple_Check(proto) || PyTuple_GET_SIZE(proto) > MAX_PROTO_SLOTS) {
            PyErr_SetString(PyExc_TypeError, "a prototype is a tuple of (name, value) pairs");
            goto fail;
        }
        spec->nproto = PyTuple_GET_SIZE(proto);
        for (Py_ssize_t m = 0; m < spec->nproto; m++) {
            PyObject *pair = PyTuple_GET_ITEM(proto, m);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                PyErr_SetString(PyExc_TypeError, "a prototype is a tuple of (name, value) pairs");
                goto fail;
            }
            spec->proto_off[m] = slot_offset_of(spec->cls, PyTuple_GET_ITEM(pair, 0));
            if (spec->proto_off[m] < 0)
                goto fail;
            spec->proto_value[m] = PyTuple_GET_ITEM(pair, 1);
        }
    }
    plan->held = PyTuple_Pack(2, specs_obj, fresh);
    if (plan->held == NULL)
        goto fail;
    PyObject *capsule = PyCapsule_New(plan, GROUP_PLAN, group_plan_free);
    if (capsule == NULL)
        goto fail;
    return capsule;
fail:
    Py_XDECREF(plan->held);
    PyMem_Free(plan);
    return NULL;
}

static PyObject *
group_add(PyObject *self, PyObject *args)
{
    PyObject *chunk, *capsule, *states, *live, *pending;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!nOO!OO!", &PyList_Type, &chunk, &start, &capsule, &PyDict_Type, &states,
                          &live, &PyDict_Type, &pending))
        return NULL;
    group_plan_t *plan = plan_of(capsule, GROUP_PLAN);
    if (plan == NULL)
        return NULL;
    if (live == Py_None)
        live = NULL;
    else if (!PyDict_Check(live)) {
        PyErr_SetString(PyExc_TypeError, "live is a dict or None");
        return NULL;
    }
    if (start < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative start");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(chunk);
    if (start >= n)
        return PyLong_FromSsize_t(start);
    Py_ssize_t nkeys = plan->nkeys, k = plan->k, widest = plan->widest;
    Py_ssize_t *key_index = plan->key_index;
    agg_spec *spec = plan->spec;
    PyObject *index = PyDict_New();
    if (index == NULL)
        return NULL;
    Py_ssize_t cap = 16, ngroups = 0;
    agg_group *groups = PyMem_Malloc(cap * sizeof(agg_group));
    agg_acc *accs = PyMem_Malloc(cap * k * sizeof(agg_acc));
    double fval[64];
    int64_t qval[64];
    int isnull[64];
    Py_ssize_t i = start;
    int failed = 0;
    if (groups == NULL || accs == NULL) {
        PyErr_NoMemory();
        failed = 1;
        goto done;
    }
    for (; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(chunk, i);
        if (!PyObject_TypeCheck(e, event_type))
            break;
        PyObject *type = SLOT(e, off_type);
        if (type == NULL || !PyLong_CheckExact(type))
            break;
        long t = PyLong_AsLong(type);
        if (t != 0) {
            if (t == 2 || t > 3)
                continue;  /* (the loop skips what is neither current, expired nor a reset) */
            if (t == -1 && PyErr_Occurred())
                PyErr_Clear();
            break;
        }
        PyObject *data = SLOT(e, off_data);
        if (data == NULL || !PyTuple_CheckExact(data) || widest >= PyTuple_GET_SIZE(data))
            break;
        /* the values first: an event the loop must see changes nothing here */
        int ok = 1;
        for (Py_ssize_t j = 0; j < k && ok; j++) {
            if (spec[j].kind == 'c')
                continue;
            PyObject *v = PyTuple_GET_ITEM(data, spec[j].index);
            isnull[j] = v == Py_None;
            if (isnull[j])
                continue;
            if (spec[j].kind == 'f') {
                if (PyFloat_CheckExact(v))
                    fval[j] = PyFloat_AS_DOUBLE(v);
                else if (PyLong_CheckExact(v)) {
                    fval[j] = PyLong_AsDouble(v);
                    if (fval[j] == -1.0 && PyErr_Occurred()) {
                        PyErr_Clear();
                        ok = 0;
                    }
                }
                else
                    ok = 0;
            }
            else {
                int overflow = 0;
                if (!PyLong_CheckExact(v))
                    ok = 0;
                else {
                    qval[j] = (int64_t)PyLong_AsLongLongAndOverflow(v, &overflow);
                    if (overflow)
                        ok = 0;
                }
            }
        }
        if (!ok)
            break;
        PyObject *key;
        if (nkeys == 1) {
            key = PyTuple_GET_ITEM(data, key_index[0]);
            Py_INCREF(key);
        }
        else {
            key = PyTuple_New(nkeys);
            if (key == NULL) {
                failed = 1;
                break;
            }
            for (Py_ssize_t j = 0; j < nkeys; j++) {
                PyObject *v = PyTuple_GET_ITEM(data, key_index[j]);
                Py_INCREF(v);
                PyTuple_SET_ITEM(key, j, v);
            }
        }
        Py_ssize_t g;
        PyObject *found = PyDict_GetItemWithError(index, key);
        if (found != NULL)
            g = PyLong_AsSsize_t(found);
        else {
            if (PyErr_Occurred()) {  /* (an unhashable key: the loop raises it) */
                PyErr_Clear();
                Py_DECREF(key);
                break;
            }
            PyObject *A = PyDict_GetItemWithError(states, key);
            int made = 0;
            if (A != NULL)
                Py_INCREF(A);
            else if (PyErr_Occurred()) {
                PyErr_Clear();
                Py_DECREF(key);
                break;
            }
            else {
                A = new_states(spec, k);
                if (A == NULL) {  /* (the loop calls the factories, and raises) */
                    PyErr_Clear();
                    Py_DECREF(key);
                    break;
                }
                made = 1;
            }
            int fits = states_fit(A, spec, k);
            if (fits <= 0) {
                PyErr_Clear();
                Py_DECREF(A);
                Py_DECREF(key);
                break;
            }
            if (made && PyDict_SetItem(states, key, A) < 0) {
                Py_DECREF(A);
                Py_DECREF(key);
                failed = 1;
                break;
            }
            if (ngroups == cap) {
                Py_ssize_t more = cap * 2;
                agg_group *g2 = PyMem_Realloc(groups, more * sizeof(agg_group));
                if (g2 != NULL)
                    groups = g2;
                agg_acc *a2 = g2 == NULL ? NULL : PyMem_Realloc(accs, more * k * sizeof(agg_acc));
                if (a2 != NULL)
                    accs = a2;
                if (g2 == NULL || a2 == NULL) {
                    PyErr_NoMemory();
                    Py_DECREF(A);
                    Py_DECREF(key);
                    failed = 1;
                    break;
                }
                cap = more;
            }
            g = ngroups;
            PyObject *slot = PyLong_FromSsize_t(g);
            if (slot == NULL || PyDict_SetItem(index, key, slot) < 0) {
                Py_XDECREF(slot);
                Py_DECREF(A);
                Py_DECREF(key);
                failed = 1;
                break;
            }
            Py_DECREF(slot);
            groups[g].key = key;  /* (the reference taken above) */
            key = NULL;
            groups[g].states = A;
            groups[g].n = 0;
            groups[g].last = NULL;
            for (Py_ssize_t j = 0; j < k; j++) {
                agg_acc *acc = &accs[g * k + j];
                acc->q = 0;
                acc->big = NULL;
                acc->added = 0;
                /* a float sum goes on from the state's total (states_fit saw a float) */
                acc->f = spec[j].kind == 'f' ? PyFloat_AS_DOUBLE(SLOT(PyList_GET_ITEM(A, j), spec[j].off_total)) : 0.0;
            }
            ngroups++;
        }
        Py_XDECREF(key);
        agg_group *grp = &groups[g];
        grp->n++;
        grp->last = e;
        agg_acc *acc = &accs[g * k];
        for (Py_ssize_t j = 0; j < k; j++) {
            if (spec[j].kind == 'c' || isnull[j])
                continue;
            acc[j].added++;
            if (spec[j].kind == 'f')
                acc[j].f += fval[j];
            else {
                int64_t sum;
                if (__builtin_add_overflow(acc[j].q, qval[j], &sum)) {
                    /* fold the sum so far into a Python int and start again from this value */
                    PyObject *part = acc_int(&acc[j]);
                    if (part == NULL) {
                        failed = 1;
                        break;
                    }
                    Py_XSETREF(acc[j].big, part);
                    sum = qval[j];
                }
                acc[j].q = sum;
            }
        }
        if (failed)
            break;
    }
done:
    if (!failed && ngroups && commit_groups(groups, accs, ngroups, spec, k, live, pending) < 0)
        failed = 1;
    for (Py_ssize_t g = 0; g < ngroups; g++) {
        Py_DECREF(groups[g].key);
        Py_DECREF(groups[g].states);
        for (Py_ssize_t j = 0; j < k; j++)
            Py_XDECREF(accs[g * k + j].big);
    }
    PyMem_Free(groups);
    PyMem_Free(accs);
    Py_DECREF(index);
    if (failed)
        return NULL;
    return PyLong_FromSsize_t(i);
}

/* ------------------------------------------------------------------ batch_scan */

static PyObject *
batch_scan(PyObject *self, PyObject *args)
{
    PyObject *chunk, *end_obj, *last_obj;
    Py_ssize_t start, ts_index;
    if (!PyArg_ParseTuple(args, "O!nnOO", &PyList_Type, &chunk, &start, &ts_index, &end_obj, &last_obj))
        return NULL;
    if (check_configured() < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(chunk), i = start < 0 ? 0 : start;
    int o1 = 0, o2 = 0;
    long long end = PyLong_Check(end_obj) ? PyLong_AsLongLongAndOverflow(end_obj, &o1) : (o1 = 1, 0);
    long long last = PyLong_Check(last_obj) ? PyLong_AsLongLongAndOverflow(last_obj, &o2) : (o2 = 1, 0);
    if (PyErr_Occurred())
        return NULL;
    if (o1 || o2 || ts_index < 0)  /* (beyond a long: the window's loop compares them) */
        return Py_BuildValue("nO", start, last_obj);
    long long first = last;
    for (; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(chunk, i);
        if (!PyObject_TypeCheck(e, event_type))
            break;
        PyObject *type = SLOT(e, off_type), *data = SLOT(e, off_data);
        if (type == NULL || !PyLong_CheckExact(type) || PyLong_AsLong(type) != 0)
            break;
        if (data == NULL || !PyTuple_CheckExact(data) || ts_index >= PyTuple_GET_SIZE(data))
            break;
        PyObject *v = PyTuple_GET_ITEM(data, ts_index);
        if (!PyLong_CheckExact(v))
            break;
        int overflow = 0;
        long long ts = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || ts >= end)
            break;
        if (last < ts)
            last = ts;
    }
    if (PyErr_Occurred())
        return NULL;
    if (last == first)
        return Py_BuildValue("nO", i, last_obj);
    return Py_BuildValue("nL", i, last);
}

/* ------------------------------------------------------------------ slide */

/* What slide_plan resolves once for a fused partition query (engine/partition.py): the key's
 * attribute, per update of the selector the state it updates and how, per output column what
 * it reads.  Held in a capsule, with the objects it borrows from. */
#define SLIDE_MAX 32

typedef struct {
    Py_ssize_t slot;        /* the state's index in A */
    int kind;               /* 'f': total (a float) and count of non-null values; 'c': count */
    Py_ssize_t index;       /* the attribute read ('f') */
    PyObject *cls;          /* the state's class (borrowed from held) */
    Py_ssize_t off_total, off_count;
    Py_ssize_t fslot;       /* 'f': its value's place in a window memo's row */
} slide_update;

typedef struct {
    int kind;               /* 'a': an attribute of the run's last event; 'v': a state's value */
    Py_ssize_t index;       /* the attribute, or the state's slot */
    int value;              /* 'v': 'a' avg (total / count, null at count 0), 's' sum (total,
                               null at count 0), 'w' sum as its update returned it (total, null
                               at count 0 where the event's attribute `attr` is null too), 'c'
                               count */
    Py_ssize_t attr;
    Py_ssize_t off_total, off_count;
} slide_column;

typedef struct {
    Py_ssize_t key_index, widest, nupdates, ncolumns, nstates, nf;
    slide_update update[SLIDE_MAX];
    slide_column column[SLIDE_MAX];
    PyObject *deque_type, *popleft, *append;   /* owned */
    PyObject *held;                            /* the updates' tuple, owned */
} slide_plan_t;

static const char *SLIDE_PLAN = "srota.engine._speedups.slide_plan";
static PyObject *s_buffer, *s_states, *s_callbacks, *s_slide_memo;

/* The data tuple of event `e` if it is an Event whose data holds every attribute up to `widest` (borrowed), else NULL. */
static inline PyObject *
slide_data(PyObject *e, Py_ssize_t widest)
{
    PyObject *data = data_of(e);
    return (data != NULL && PyTuple_GET_SIZE(data) > widest) ? data : NULL;
}


/* A window's memo: the values the plan's 'f' updates read of each event in the window's
 * buffer, in a ring beside it, so that the step reads the leaving event's values from here
 * instead of through the event, its data tuple and the float objects (three loads of memory
 * written a window ago, most of the step's time).  Kept on the window (its `_slide_memo`),
 * in step with the buffer by slide; it holds each event it has values of, so an entry whose
 * event is the buffer's leftmost one is that event's (Python code that changed the buffer
 * meanwhile, or a restore that replaced it, shows as another length, buffer or leftmost
 * event, and the memo is made again from the buffer).  An event whose values are not all
 * floats has no values here (`known` 0): the step then reads them through the event. */
typedef struct {
    PyObject_HEAD
    PyObject *buffer;       /* the deque it mirrors, or NULL */
    Py_ssize_t capacity, m, head, count;
    PyObject **events;      /* capacity entries, the ring's events owned */
    char *known;
    double *values;         /* capacity * m */
} SlideMemo;

static void
memo_empty(SlideMemo *memo)
{
    for (Py_ssize_t k = 0; k < memo->count; k++)
        Py_CLEAR(memo->events[(memo->head + k) % memo->capacity]);
    memo->head = 0;
    memo->count = 0;
}

static int
memo_traverse(SlideMemo *memo, visitproc visit, void *arg)
{
    Py_VISIT(memo->buffer);
    for (Py_ssize_t k = 0; k < memo->count; k++)
        Py_VISIT(memo->events[(memo->head + k) % memo->capacity]);
    return 0;
}

static int
memo_clear(SlideMemo *memo)
{
    memo_empty(memo);
    Py_CLEAR(memo->buffer);
    return 0;
}

static void
memo_dealloc(SlideMemo *memo)
{
    PyObject_GC_UnTrack(memo);
    memo_clear(memo);
    PyMem_Free(memo->events);
    PyMem_Free(memo->known);
    PyMem_Free(memo->values);
    Py_TYPE(memo)->tp_free((PyObject *)memo);
}

static PyTypeObject SlideMemoType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "srota.engine._speedups.SlideMemo",
    .tp_basicsize = sizeof(SlideMemo),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The values a compiled slide reads of a length window's events (see slide).",
    .tp_traverse = (traverseproc)memo_traverse,
    .tp_clear = (inquiry)memo_clear,
    .tp_dealloc = (destructor)memo_dealloc,
};

/* Appends event `e` (data `d`) at the ring's end (the ring has room). */
static void
memo_push(SlideMemo *memo, slide_update *updates, Py_ssize_t nupdates, PyObject *e, PyObject *d)
{
    Py_ssize_t at = (memo->head + memo->count) % memo->capacity;
    memo->events[at] = Py_NewRef(e);
    char known = 1;
    for (Py_ssize_t j = 0; j < nupdates; j++) {
        slide_update *u = &updates[j];
        if (u->kind != 'f')
            continue;
        PyObject *v = d == NULL ? NULL : PyTuple_GET_ITEM(d, u->index);
        if (v == NULL || !PyFloat_CheckExact(v)) {
            known = 0;
            break;
        }
        memo->values[at * memo->m + u->fslot] = PyFloat_AS_DOUBLE(v);
    }
    memo->known[at] = known;
    memo->count++;
}

static void
memo_pop(SlideMemo *memo)
{
    Py_CLEAR(memo->events[memo->head]);
    memo->head = (memo->head + 1) % memo->capacity;
    memo->count--;
}

/* Makes the memo again from `buf`: 0, or -1 with an exception set (a memo that cannot mirror
 * it, a buffer longer than the window, is left empty and without a buffer). */
static int
memo_rebuild(SlideMemo *memo, slide_plan_t *plan, PyObject *buf)
{
    memo_empty(memo);
    Py_CLEAR(memo->buffer);
    Py_ssize_t size = PyObject_Length(buf);
    if (size < 0)
        return -1;
    if (size > memo->capacity)
        return 0;
    PyObject *it = PyObject_GetIter(buf);
    if (it == NULL)
        return -1;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL && memo->count < memo->capacity) {
        memo_push(memo, plan->update, plan->nupdates, item, slide_data(item, plan->widest));
        Py_DECREF(item);
    }
    Py_XDECREF(item);
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        memo_empty(memo);
        return -1;
    }
    if (memo->count != size) {  /* (changed while read: not mirrored) */
        memo_empty(memo);
        return 0;
    }
    memo->buffer = Py_NewRef(buf);
    return 0;
}

/* The memo of `window` for `buf` (a new reference), made or made again where it does not
 * mirror the buffer; NULL with an exception set. */
static SlideMemo *
memo_of(PyObject *window, slide_plan_t *plan, Py_ssize_t length, PyObject *buf)
{
    PyObject *got = PyObject_GetAttr(window, s_slide_memo);
    if (got == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();
    }
    SlideMemo *memo = (SlideMemo *)got;
    if (memo == NULL || !Py_IS_TYPE(got, &SlideMemoType) || memo->capacity != length || memo->m != plan->nf) {
        Py_XDECREF(got);
        memo = PyObject_GC_New(SlideMemo, &SlideMemoType);
        if (memo == NULL)
            return NULL;
        memo->buffer = NULL;
        memo->capacity = length;
        memo->m = plan->nf;
        memo->head = memo->count = 0;
        memo->events = PyMem_Calloc(length, sizeof(PyObject *));
        memo->known = PyMem_Calloc(length, 1);
        memo->values = PyMem_Calloc(length * (plan->nf ? plan->nf : 1), sizeof(double));
        PyObject_GC_Track(memo);
        if (memo->events == NULL || memo->known == NULL || memo->values == NULL) {
            Py_DECREF(memo);
            PyErr_NoMemory();
            return NULL;
        }
        if (PyObject_SetAttr(window, s_slide_memo, (PyObject *)memo) < 0) {
            Py_DECREF(memo);
            return NULL;
        }
    }
    if (memo->buffer != buf || memo->count != PyObject_Length(buf)) {
        if (PyErr_Occurred() || memo_rebuild(memo, plan, buf) < 0) {
            Py_DECREF(memo);
            return NULL;
        }
    }
    return memo;
}

static void
slide_plan_free(PyObject *capsule)
{
    slide_plan_t *plan = PyCapsule_GetPointer(capsule, SLIDE_PLAN);
    if (plan == NULL)
        return;
    Py_XDECREF(plan->deque_type);
    Py_XDECREF(plan->popleft);
    Py_XDECREF(plan->append);
    Py_XDECREF(plan->held);
    PyMem_Free(plan);
}

/* slide_plan(key_index, nstates, updates, columns, deque_type): updates a tuple of
 * (slot, kind, attribute index, state class), columns a tuple of ('a', attribute index) or
 * ('v', slot, value kind, state class[, attribute index ('w')]). */
static PyObject *
slide_plan(PyObject *self, PyObject *args)
{
    Py_ssize_t key_index, nstates;
    PyObject *updates, *columns, *deque_type;
    if (!PyArg_ParseTuple(args, "nnO!O!O!", &key_index, &nstates, &PyTuple_Type, &updates, &PyTuple_Type, &columns,
                          &PyType_Type, &deque_type))
        return NULL;
    Py_ssize_t nu = PyTuple_GET_SIZE(updates), nc = PyTuple_GET_SIZE(columns);
    if (key_index < 0 || nstates < 1 || nstates > SLIDE_MAX || nu < 1 || nu > SLIDE_MAX || nc > SLIDE_MAX) {
        PyErr_SetString(PyExc_ValueError, "slide_plan: a key attribute, 1 to 32 states and updates, up to 32 columns");
        return NULL;
    }
    slide_plan_t *plan = PyMem_Calloc(1, sizeof(slide_plan_t));
    if (plan == NULL)
        return PyErr_NoMemory();
    plan->key_index = key_index;
    plan->widest = key_index;
    plan->nupdates = nu;
    plan->ncolumns = nc;
    plan->nstates = nstates;
    for (Py_ssize_t j = 0; j < nu; j++) {
        slide_update *u = &plan->update[j];
        int kind;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(updates, j), "nCnO;an update is (slot, kind, index, state class)",
                              &u->slot, &kind, &u->index, &u->cls))
            goto fail;
        if ((kind != 'f' && kind != 'c') || u->slot < 0 || u->slot >= nstates || (kind == 'f' && u->index < 0)
                || !PyType_Check(u->cls)) {
            PyErr_SetString(PyExc_ValueError, "slide_plan: an update's kind is 'f' or 'c', of a state slot and a class");
            goto fail;
        }
        u->kind = kind;
        u->fslot = kind == 'f' ? plan->nf++ : -1;
        if (u->index > plan->widest)
            plan->widest = u->index;
        u->off_count = slot_offset((PyTypeObject *)u->cls, "count");
        u->off_total = kind == 'f' ? slot_offset((PyTypeObject *)u->cls, "total") : -1;
        if (u->off_count < 0 || (kind == 'f' && u->off_total < 0))
            goto fail;
    }
    for (Py_ssize_t j = 0; j < nc; j++) {
        slide_column *c = &plan->column[j];
        PyObject *col = PyTuple_GET_ITEM(columns, j);
        int kind, value = 0;
        PyObject *cls = NULL;
        c->attr = -1;
        if (!PyTuple_Check(col) || !PyArg_ParseTuple(col, "Cn|COn;a column is ('a', index) or ('v', slot, kind, class)",
                                                     &kind, &c->index, &value, &cls, &c->attr))
            goto fail;
        c->kind = kind;
        c->value = value;
        if (kind == 'a') {
            if (c->index < 0) {
                PyErr_SetString(PyExc_ValueError, "slide_plan: a negative attribute index");
                goto fail;
            }
            if (c->index > plan->widest)
                plan->widest = c->index;
            continue;
        }
        if (kind != 'v' || c->index < 0 || c->index >= nstates || cls == NULL || !PyType_Check(cls)
                || (value != 'a' && value != 's' && value != 'w' && value != 'c') || ((value == 'w') != (c->attr >= 0))) {
            PyErr_SetString(PyExc_ValueError,
                            "slide_plan: a value column is ('v', slot, 'a'|'s'|'c', class) or ('v', slot, 'w', class, index)");
            goto fail;
        }
        if (c->attr > plan->widest)
            plan->widest = c->attr;
        c->off_count = slot_offset((PyTypeObject *)cls, "count");
        c->off_total = value == 'c' ? -1 : slot_offset((PyTypeObject *)cls, "total");
        if (c->off_count < 0 || (value != 'c' && c->off_total < 0))
            goto fail;
    }
    plan->deque_type = Py_NewRef(deque_type);
    plan->popleft = PyObject_GetAttrString(deque_type, "popleft");
    plan->append = PyObject_GetAttrString(deque_type, "append");
    plan->held = PyTuple_Pack(2, updates, columns);
    if (plan->popleft == NULL || plan->append == NULL || plan->held == NULL)
        goto fail;
    PyObject *capsule = PyCapsule_New(plan, SLIDE_PLAN, slide_plan_free);
    if (capsule == NULL)
        goto fail;
    return capsule;
fail:
    Py_XDECREF(plan->deque_type);
    Py_XDECREF(plan->popleft);
    Py_XDECREF(plan->append);
    Py_XDECREF(plan->held);
    PyMem_Free(plan);
    return NULL;
}

/* Whether the states `A` are as the plan's updates and columns expect. */
static int
slide_states_fit(slide_plan_t *plan, PyObject *A)
{
    if (!PyList_CheckExact(A) || PyList_GET_SIZE(A) != plan->nstates)
        return 0;
    for (Py_ssize_t j = 0; j < plan->nupdates; j++) {
        slide_update *u = &plan->update[j];
        PyObject *st = PyList_GET_ITEM(A, u->slot);
        if ((PyObject *)Py_TYPE(st) != u->cls)
            return 0;
        PyObject *count = SLOT(st, u->off_count);
        if (count == NULL || !PyLong_CheckExact(count))
            return 0;
        if (u->kind == 'f') {
            PyObject *total = SLOT(st, u->off_total);
            if (total == NULL || !PyFloat_CheckExact(total))
                return 0;
        }
    }
    return 1;
}

/* count += delta on a state's exact int slot: 0, or -1 with an exception set. */
static inline int
bump_count(PyObject *st, Py_ssize_t off, long delta)
{
    PyObject *old = SLOT(st, off);
    long x = PyLong_AsLong(old);
    PyObject *now;
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyObject *d = PyLong_FromLong(delta);
        now = d == NULL ? NULL : PyNumber_Add(old, d);
        Py_XDECREF(d);
    }
    else {
        now = PyLong_FromLongLong((long long)x + delta);
    }
    if (now == NULL)
        return -1;
    Py_SETREF(SLOT(st, off), now);
    return 0;
}

/* The output row of a run: its last event's attributes and the states' values. */
static PyObject *
slide_row(slide_plan_t *plan, PyObject *data, PyObject *A)
{
    PyObject *row = PyTuple_New(plan->ncolumns);
    if (row == NULL)
        return NULL;
    for (Py_ssize_t j = 0; j < plan->ncolumns; j++) {
        slide_column *c = &plan->column[j];
        PyObject *v;
        if (c->kind == 'a') {
            v = Py_NewRef(PyTuple_GET_ITEM(data, c->index));
        }
        else {
            PyObject *st = PyList_GET_ITEM(A, c->index);
            PyObject *count = SLOT(st, c->off_count);
            if (count == NULL) {
                Py_DECREF(row);
                PyErr_SetString(PyExc_AttributeError, "count");
                return NULL;
            }
            int nonzero = PyObject_IsTrue(count);
            if (nonzero < 0) {
                Py_DECREF(row);
                return NULL;
            }
            if (c->value == 'c')
                v = Py_NewRef(count);
            else if (!nonzero && !(c->value == 'w' && PyTuple_GET_ITEM(data, c->attr) != Py_None))
                v = Py_NewRef(Py_None);
            else if (c->value == 's' || c->value == 'w')
                v = Py_NewRef(SLOT(st, c->off_total));
            else  /* total / count, as Python divides a float by an int */
                v = PyNumber_TrueDivide(SLOT(st, c->off_total), count);
            if (v == NULL) {
                Py_DECREF(row);
                return NULL;
            }
        }
        PyTuple_SET_ITEM(row, j, v);
    }
    return row;
}

/* What a run of a key's events steps: the record's window buffer, aggregator states and the
 * window's memo (new references), and the window's length. */
typedef struct {
    PyObject *buf, *A;
    SlideMemo *memo;
    Py_ssize_t length;
} slide_run_t;

static void
run_release(slide_run_t *run)
{
    Py_CLEAR(run->buf);
    Py_CLEAR(run->A);
    Py_CLEAR(run->memo);
}

/* Reads a fused record `rec` ((mode, instance, junction, window, selector, output, target,
 * length, merge junction)) for a run: 1 with `run` set, 0 where the record is not one the
 * compiled step runs (another mode, a buffer that is not a deque, states missing or not as
 * planned), -1 with an exception set. */
static int
run_prepare(slide_plan_t *plan, PyObject *rec, slide_run_t *run)
{
    run->buf = run->A = NULL;
    run->memo = NULL;
    if (!PyTuple_CheckExact(rec) || PyTuple_GET_SIZE(rec) != 9)
        return 0;
    PyObject *mode = PyTuple_GET_ITEM(rec, 0), *n = PyTuple_GET_ITEM(rec, 7);
    if (!PyLong_CheckExact(mode) || PyLong_AsLong(mode) != 1 || !PyLong_CheckExact(n))
        return 0;
    run->length = PyLong_AsSsize_t(n);
    if (run->length <= 0) {
        PyErr_Clear();
        return 0;
    }
    /* the window's buffer and the selector's states: read per run (a restore replaces both) */
    run->buf = PyObject_GetAttr(PyTuple_GET_ITEM(rec, 3), s_buffer);
    if (run->buf == NULL)
        return -1;
    if ((PyObject *)Py_TYPE(run->buf) != plan->deque_type) {
        run_release(run);
        return 0;
    }
    PyObject *states = PyObject_GetAttr(PyTuple_GET_ITEM(rec, 4), s_states);
    if (states == NULL) {
        run_release(run);
        return -1;
    }
    PyObject *A = PyDict_CheckExact(states) ? PyDict_GetItemWithError(states, Py_None) : NULL;
    if (A == NULL || !slide_states_fit(plan, A)) {
        Py_DECREF(states);
        run_release(run);
        return PyErr_Occurred() ? -1 : 0;
    }
    run->A = Py_NewRef(A);
    Py_DECREF(states);
    run->memo = memo_of(PyTuple_GET_ITEM(rec, 3), plan, run->length, run->buf);
    if (run->memo == NULL) {
        run_release(run);
        return -1;
    }
    return 1;
}

/* Whether the key of data tuple `d` equals `key` (as the loop's `_qkey == _qcur`): 1, 0, or -1
 * with an exception set. */
static int
same_key(PyObject *d, Py_ssize_t key_index, PyObject *key)
{
    PyObject *k2 = PyTuple_GET_ITEM(d, key_index);
    if (k2 == key)
        return 1;
    PyObject *eq = PyObject_RichCompare(k2, key, Py_EQ);
    int same = eq == NULL ? -1 : PyObject_IsTrue(eq);
    Py_XDECREF(eq);
    return same;
}

/* Steps the events [pos, n) of a run of `key` (the first one's data `first`) through the
 * window and the states, as the generated step does, up to the first event of another key or
 * one it does not take: the index of that event (n when it took all), `*last` the last event it
 * took (NULL when none); -1 with an exception set.  The events are the list `chunk`'s, or the
 * one event `single` where `chunk` is NULL. */
static Py_ssize_t
run_steps(slide_plan_t *plan, slide_run_t *run, PyObject *key, PyObject *chunk, PyObject *single,
          Py_ssize_t pos, Py_ssize_t n, PyObject *first, PyObject **last)
{
    PyObject *buf = run->buf, *A = run->A;
    SlideMemo *memo = run->memo;
    Py_ssize_t length = run->length;
    *last = NULL;
    Py_ssize_t i = pos;
    for (; i < n; i++) {
        /* (read from the list each time: a key's __eq__ is Python code) */
        if (chunk != NULL && i >= PyList_GET_SIZE(chunk))
            break;
        PyObject *e = chunk != NULL ? PyList_GET_ITEM(chunk, i) : single;
        PyObject *d = i == pos ? first : slide_data(e, plan->widest);
        if (d == NULL)
            break;
        if (i > pos) {
            int same = same_key(d, plan->key_index, key);
            if (same < 0)
                return -1;
            if (!same)
                break;
        }
        Py_ssize_t size = PyObject_Length(buf);
        if (size < 0)
            return -1;
        int full = size >= length;
        PyObject *old = NULL;  /* the data of the event leaving the window, where it is read */
        const double *old_values = NULL;  /* or its values, from the memo */
        double old_copy[SLIDE_MAX];
        if (full && memo->buffer == buf && memo->count == size && size > 2) {
            /* This window's next steps come a whole window of the stream later, when what
               they touch of their leaving events (each event's memory, its data tuple and its
               timestamp, whose reference counts letting go of it changes) has left the cache:
               it is fetched now, the event two steps on, the tuple and timestamp of the next
               one (whose event the last step fetched). */
            prefetch(memo->events[(memo->head + 2) % memo->capacity]);
            Py_ssize_t at = (memo->head + 1) % memo->capacity;
            if (memo->known[at]) {  /* (known: an event with a data tuple, see memo_push) */
                prefetch(SLOT(memo->events[at], off_data));
                prefetch(SLOT(memo->events[at], off_timestamp));
            }
        }
        if (full) {
            PyObject *leaving = PySequence_GetItem(buf, 0);
            if (leaving == NULL)
                return -1;
            if (memo->buffer == buf && memo->count == size && memo->events[memo->head] != leaving
                    && memo_rebuild(memo, plan, buf) < 0) {
                Py_DECREF(leaving);
                return -1;
            }
            if (memo->buffer == buf && memo->count == size && memo->events[memo->head] == leaving
                    && memo->known[memo->head]) {
                /* (copied: the ring's slot takes the new event's values below) */
                memcpy(old_copy, &memo->values[memo->head * memo->m], memo->m * sizeof(double));
                old_values = old_copy;
            }
            else {
                old = slide_data(leaving, plan->widest);
            }
            Py_DECREF(leaving);  /* (the buffer still holds it) */
            if (old == NULL && old_values == NULL)
                break;
        }
        /* every value this step reads, checked before anything changes */
        int fits = 1;
        for (Py_ssize_t j = 0; j < plan->nupdates && fits; j++) {
            slide_update *u = &plan->update[j];
            if (u->kind == 'f')
                fits = PyFloat_CheckExact(PyTuple_GET_ITEM(d, u->index))
                       && (old == NULL || PyFloat_CheckExact(PyTuple_GET_ITEM(old, u->index)));
        }
        if (!fits)
            break;
        Py_XINCREF(old);  /* kept while the event leaves the buffer */
        if (full) {
            PyObject *gone = PyObject_CallOneArg(plan->popleft, buf);
            if (gone == NULL) {
                Py_XDECREF(old);
                return -1;
            }
            Py_DECREF(gone);
        }
        PyObject *argv[2] = {buf, e};
        PyObject *res = PyObject_Vectorcall(plan->append, argv, 2, NULL);
        if (res == NULL) {
            Py_XDECREF(old);
            return -1;
        }
        Py_DECREF(res);
        if (memo->buffer == buf && memo->count == size) {  /* the memo takes the same step */
            if (full)
                memo_pop(memo);
            memo_push(memo, plan->update, plan->nupdates, e, d);
        }
        for (Py_ssize_t j = 0; j < plan->nupdates; j++) {
            slide_update *u = &plan->update[j];
            PyObject *st = PyList_GET_ITEM(A, u->slot);
            if (u->kind == 'c') {
                if (!full && bump_count(st, u->off_count, 1) < 0) {
                    Py_XDECREF(old);
                    return -1;
                }
                continue;
            }
            double total = PyFloat_AS_DOUBLE(SLOT(st, u->off_total));
            double v = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(d, u->index));
            double o = !full ? 0.0 : old_values != NULL ? old_values[u->fslot]
                                                         : PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(old, u->index));
            /* `_s.total = _s.total - _o + _v`, or `_s.total += _v` and a count more */
            total = full ? (total - o) + v : total + v;
            PyObject *now = PyFloat_FromDouble(total);
            if (now == NULL || (!full && bump_count(st, u->off_count, 1) < 0)) {
                Py_XDECREF(now);
                Py_XDECREF(old);
                return -1;
            }
            Py_SETREF(SLOT(st, u->off_total), now);
        }
        Py_XDECREF(old);
        *last = e;
    }
    return i;
}

/* The output event of a run whose last event is `last`: its timestamp, type 0 (CURRENT), the
 * row of its data and the states. */
static PyObject *
run_output(slide_plan_t *plan, slide_run_t *run, PyObject *last)
{
    PyObject *row = slide_row(plan, SLOT(last, off_data), run->A);
    if (row == NULL)
        return NULL;
    return new_event(Py_NewRef(SLOT(last, off_timestamp)), row, PyLong_FromLong(0));
}

/* slide(chunk, start, records, merged, pending, plan) -> int

   The fused router's loop (engine/partition.py, _fused_loop) over the runs of `chunk` from
   `start`, for runs whose record is fused (mode 1), whose query has no callback and whose
   output goes merged (`merged`, the target junction, is the record's): per event the key's
   length window (its buffer, a deque) and the aggregator states as the generated step does it
   (the same float operations in the same order), at a run's end its output row appended to
   `pending`.  It stops at the first event it does not take (a key without a record, a record
   it does not run, a null or a value of another type, states not as planned) and answers its
   index, having written every event before it; an event it stops at inside a run is taken
   by the Python loop as the start of a run (the output row is then made there, from the
   same states).  len(chunk) when it took every event. */
static PyObject *
slide(PyObject *self, PyObject *args)
{
    PyObject *chunk, *records, *merged, *pending, *capsule;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!nO!OO!O", &PyList_Type, &chunk, &start, &PyDict_Type, &records, &merged,
                          &PyList_Type, &pending, &capsule))
        return NULL;
    slide_plan_t *plan = plan_of(capsule, SLIDE_PLAN);
    if (plan == NULL)
        return NULL;
    Py_ssize_t pos = start < 0 ? 0 : start;
    while (pos < PyList_GET_SIZE(chunk)) {
        Py_ssize_t n = PyList_GET_SIZE(chunk);
        PyObject *data = slide_data(PyList_GET_ITEM(chunk, pos), plan->widest);
        if (data == NULL)
            break;
        PyObject *key = PyTuple_GET_ITEM(data, plan->key_index);
        PyObject *rec = PyDict_GetItemWithError(records, key);
        if (rec == NULL) {
            if (PyErr_Occurred())
                return NULL;
            break;
        }
        if (!PyTuple_CheckExact(rec) || PyTuple_GET_SIZE(rec) != 9 || PyTuple_GET_ITEM(rec, 8) != merged)
            break;
        /* the query's callbacks: read per run (one may be added between chunks) */
        PyObject *callbacks = PyObject_GetAttr(PyTuple_GET_ITEM(rec, 5), s_callbacks);
        if (callbacks == NULL)
            return NULL;
        int listened = !PyList_CheckExact(callbacks) || PyList_GET_SIZE(callbacks) != 0;
        Py_DECREF(callbacks);
        if (listened)
            break;
        slide_run_t run;
        int ready = run_prepare(plan, rec, &run);
        if (ready <= 0) {
            if (ready < 0)
                return NULL;
            break;
        }
        PyObject *last;
        Py_ssize_t i = run_steps(plan, &run, key, chunk, NULL, pos, n, data, &last);
        if (i < 0) {
            run_release(&run);
            return NULL;
        }
        if (last == NULL) {  /* stopped at the run's first event */
            run_release(&run);
            break;
        }
        if (i < PyList_GET_SIZE(chunk)) {
            /* Stopped inside the run (the event at i has the run's key), the Python loop goes
               on with it from i and makes the run's row; stopped where the run ends (another
               key, or one the loop cannot read either), the row is made here. */
            PyObject *d = data_of(PyList_GET_ITEM(chunk, i));
            int same = (d != NULL && PyTuple_GET_SIZE(d) > plan->key_index) ? same_key(d, plan->key_index, key) : 0;
            if (same != 0) {
                run_release(&run);
                if (same < 0)
                    return NULL;
                pos = i;
                break;
            }
        }
        PyObject *o = run_output(plan, &run, last);
        run_release(&run);
        if (o == NULL)
            return NULL;
        int rc = PyList_Append(pending, o);
        Py_DECREF(o);
        if (rc < 0)
            return NULL;
        pos = i;
    }
    return PyLong_FromSsize_t(pos);
}

/* slide_one(event, record, plan) -> event | None

   The fused router's step for a chunk of one event (what one-by-one senders send) whose key's
   record is `record`: the step of slide, and the output event it makes (handed on by the
   router, to the query's callbacks or target); None, having changed nothing, where it does
   not take the event. */
static PyObject *
slide_one(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    /* (fast call: a one-by-one sender pays this call per event) */
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "slide_one(event, record, plan)");
        return NULL;
    }
    PyObject *e = args[0], *rec = args[1], *capsule = args[2];
    slide_plan_t *plan = plan_of(capsule, SLIDE_PLAN);
    if (plan == NULL)
        return NULL;
    PyObject *data = slide_data(e, plan->widest);
    if (data == NULL)
        Py_RETURN_NONE;
    slide_run_t run;
    int ready = run_prepare(plan, rec, &run);
    if (ready <= 0) {
        if (ready < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    PyObject *last;
    Py_ssize_t i = run_steps(plan, &run, PyTuple_GET_ITEM(data, plan->key_index), NULL, e, 0, 1, data, &last);
    PyObject *o = i < 0 ? NULL : last == NULL ? Py_NewRef(Py_None) : run_output(plan, &run, last);
    run_release(&run);
    return o;
}

/* ------------------------------------------------------------------ event */

/* event(timestamp, data, type) -> RawEvent

   A RawEvent with the three slots set.  Where nothing it holds can lead back to it (an int
   timestamp and type, a data tuple of atomic values) the cyclic garbage collector stops
   tracking it, as CPython stops tracking such a tuple: an event a window keeps then costs the
   collector's older generations nothing (its refcount frees it as before). */
static PyObject *
event(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "event(timestamp, data, type)");
        return NULL;
    }
    if (check_configured() < 0)
        return NULL;
    return new_event(Py_NewRef(args[0]), Py_NewRef(args[1]), Py_NewRef(args[2]));
}

/* untracked(data) -> data

   `data` itself; where it is a tuple of atomic values, no longer tracked by the cyclic
   collector (as CPython stops tracking such a tuple at the first collection it survives).
   For the rows a generated selector makes: a caller that keeps them in a tuple of its own (a
   sink's `(timestamp, data)`) then sees that tuple untracked at its first collection too,
   where otherwise the order of the two in the collector's list decides, and a tuple left
   tracked goes on to the older generations, whose growth sets off full collections. */
static PyObject *
untracked(PyObject *self, PyObject *data)
{
    if (PyTuple_CheckExact(data) && PyObject_GC_IsTracked(data) && atomic_tuple(data))
        PyObject_GC_UnTrack(data);
    return Py_NewRef(data);
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(event_class, raw_event_class): the classes of events read and made."},
    {"gather", gather, METH_VARARGS, "gather(chunk, reads) -> bool: attributes of every event into buffers."},
    {"emit", emit, METH_VARARGS, "emit(chunk, mask, columns, type) -> list: the output events of the chunk."},
    {"group_plan", group_plan, METH_VARARGS,
     "group_plan(keys, specs, fresh) -> capsule: what group_add needs of a query, resolved once."},
    {"group_add", group_add, METH_VARARGS,
     "group_add(chunk, start, plan, states, live, pending) -> int: a grouped aggregation's updates."},
    {"batch_scan", batch_scan, METH_VARARGS,
     "batch_scan(chunk, start, ts_index, end, last) -> (index, last): the events joining an event-time batch."},
    {"slide_plan", slide_plan, METH_VARARGS,
     "slide_plan(key_index, nstates, updates, columns, deque_type) -> capsule: what slide needs of a fused query."},
    {"slide", slide, METH_VARARGS,
     "slide(chunk, start, records, merged, pending, plan) -> int: a fused partition query's sliding runs."},
    {"slide_one", (PyCFunction)(void (*)(void))slide_one, METH_FASTCALL,
     "slide_one(event, record, plan) -> event | None: a fused partition query's step for one event."},
    {"untracked", untracked, METH_O, "untracked(data) -> data, no longer tracked by the collector where it is a tuple of atomic values."},
    {"event", (PyCFunction)(void (*)(void))event, METH_FASTCALL,
     "event(timestamp, data, type) -> RawEvent, untracked by the collector where it holds only atomic values."},
    {"plain", plain, METH_O, "plain(events) -> bool: every one an Event of type 0 (CURRENT) whose data is a tuple."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "The compiled loops of the columnar path (see engine/columnar.py).", -1, methods,
};

/* What engine/columnar.py expects of this module: a module built from an older source (left
 * in place where a rebuild failed) is not used. */
#define SPEEDUPS_API 10

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&SlideMemoType) < 0)
        return NULL;
    if ((s_buffer = PyUnicode_InternFromString("buffer")) == NULL
            || (s_slide_memo = PyUnicode_InternFromString("_slide_memo")) == NULL
            || (s_states = PyUnicode_InternFromString("states")) == NULL
            || (s_callbacks = PyUnicode_InternFromString("callbacks")) == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "API", SPEEDUPS_API) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
