/*
 * kafkalog_cli.format._encode: the record encoder of kafkalog_cli/format/builder.py in C.
 *
 * Optional, as _speedups.c: builder.py uses this module when it was built (setup.py, when
 * a compiler and Python's headers are present) and KAFKALOG_PURE_PYTHON is not set, and
 * otherwise its own Python loops, which stay the reference.
 *
 *   encode_records(records, base_timestamp, start)
 *       records: a list or tuple of (timestamp, key, value, headers) lists or tuples
 *   encode_columns(timestamps, keys, values, headers, base_timestamp, start)
 *       timestamps: a list or tuple of ints, or one int for every record;
 *       keys / headers: a list or tuple, or None (every key null / no headers);
 *       values: a list or tuple
 *
 * Both return (records block, count, max timestamp, offset delta of the first record
 * holding it), as builder.encode_records does, or None for what this module does not
 * take: another type of sequence or field (a key, value or header value neither bytes,
 * bytearray nor None; a header key neither str, bytes nor bytearray; a headers object
 * not a list or tuple), an int outside int64, a timestamp delta that overflows int64, a
 * length or offset delta outside int32, a header key that is not UTF-8 encodable,
 * columns of unequal lengths. The caller then runs the Python loop, which gives the
 * result or raises its error: the values and errors are the Python loop's by
 * construction (tests/format/test_encode.py compares both byte for byte).
 *
 * Kafka's rules followed: DefaultRecord.writeTo: per record
 *   length: varint | attributes: int8 (0) | timestampDelta: varlong | offsetDelta: varint
 *   | keyLength: varint (-1: null) | key | valueLength: varint | value
 *   | headersCount: varint | headers: [headerKeyLength: varint | headerKey (UTF-8)
 *   | headerValueLength: varint (-1: null) | headerValue]
 * with ByteUtils' zigzag varints (writeVarint on int32, writeVarlong on int64).
 *
 * Memory: one pass sizes every record (the body lengths kept in one array of n int64s),
 * a second writes them into the one bytes object returned.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* one record's fields (borrowed references) */
typedef struct {
    int64_t ts;
    PyObject *key;      /* bytes or Py_None */
    PyObject *value;    /* bytes or Py_None */
    PyObject *headers;  /* list, tuple or Py_None */
} Rec;

static int
varint_size(uint64_t v)
{
    int n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint64_t
zigzag32(int64_t v)  /* v is within int32 */
{
    int32_t x = (int32_t)v;
    return (uint32_t)(((uint32_t)x << 1) ^ (uint32_t)(x >> 31));
}

static inline uint64_t
zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline char *
put_varint(char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (char)((v & 0x7F) | 0x80);
        v >>= 7;
    }
    *p++ = (char)v;
    return p;
}

/* the size of a length-prefixed field (varint length + bytes; null: one byte), or -1
 * for what this module does not take */
/* the bytes of a bytes or bytearray object (what PySpark gives for binary columns), or
 * NULL for anything else */
static inline const char *
bytes_of(PyObject *x, Py_ssize_t *len)
{
    if (PyBytes_CheckExact(x)) {
        *len = PyBytes_GET_SIZE(x);
        return PyBytes_AS_STRING(x);
    }
    if (PyByteArray_CheckExact(x)) {
        *len = PyByteArray_GET_SIZE(x);
        return PyByteArray_AS_STRING(x);
    }
    return NULL;
}

static int64_t
field_size(PyObject *x)
{
    if (x == Py_None)
        return 1;
    Py_ssize_t n = 0;
    if (bytes_of(x, &n) == NULL || n > INT32_MAX)
        return -1;
    return varint_size(zigzag32(n)) + n;
}

static char *
put_field(char *p, PyObject *x)
{
    if (x == Py_None) {
        *p++ = 1;  /* zigzag(-1) */
        return p;
    }
    Py_ssize_t n = 0;
    const char *b = bytes_of(x, &n);
    p = put_varint(p, zigzag32(n));
    memcpy(p, b, n);
    return p + n;
}

/* a header key's bytes: UTF-8 of a str, or a bytes' or bytearray's own; NULL (no error
 * set) for anything else or a str UTF-8 cannot encode */
static const char *
header_key(PyObject *k, Py_ssize_t *len)
{
    if (PyUnicode_CheckExact(k)) {
        const char *s = PyUnicode_AsUTF8AndSize(k, len);
        if (s == NULL)
            PyErr_Clear();  /* a lone surrogate: the Python loop raises its error */
        return s;
    }
    return bytes_of(k, len);
}

/* the size of a record's header section (count + headers), or -1 */
static int64_t
headers_size(PyObject *h)
{
    if (h == Py_None)
        return 1;
    if (!PyList_CheckExact(h) && !PyTuple_CheckExact(h))
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(h);
    if (n > INT32_MAX)
        return -1;
    PyObject **items = PySequence_Fast_ITEMS(h);
    int64_t size = varint_size(zigzag32(n));
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = items[i];
        if (!(PyTuple_CheckExact(pair) || PyList_CheckExact(pair)) ||
            PySequence_Fast_GET_SIZE(pair) != 2)
            return -1;
        Py_ssize_t klen;
        if (header_key(PySequence_Fast_GET_ITEM(pair, 0), &klen) == NULL || klen > INT32_MAX)
            return -1;
        int64_t v = field_size(PySequence_Fast_GET_ITEM(pair, 1));
        if (v < 0)
            return -1;
        size += varint_size(zigzag32(klen)) + klen + v;
    }
    return size;
}

static char *
put_headers(char *p, PyObject *h)
{
    if (h == Py_None) {
        *p++ = 0;
        return p;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(h);
    PyObject **items = PySequence_Fast_ITEMS(h);
    p = put_varint(p, zigzag32(n));
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = items[i];
        Py_ssize_t klen;
        const char *k = header_key(PySequence_Fast_GET_ITEM(pair, 0), &klen);
        p = put_varint(p, zigzag32(klen));
        memcpy(p, k, klen);
        p += klen;
        p = put_field(p, PySequence_Fast_GET_ITEM(pair, 1));
    }
    return p;
}

/* an int within int64, or 0 with *ok cleared (no error set) */
static int64_t
as_int64(PyObject *o, int *ok)
{
    if (!PyLong_CheckExact(o)) {
        *ok = 0;
        return 0;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        *ok = 0;
        return 0;
    }
    return (int64_t)v;
}

/* The encoder over a record source: get(src, i, &rec) fills a record (0: not taken). */
typedef int (*GetRec)(void *src, Py_ssize_t i, Rec *rec);

static PyObject *
encode(GetRec get, void *src, Py_ssize_t n, int64_t base_ts, int64_t start)
{
    if (start < 0 || start + (int64_t)n - 1 > INT32_MAX)
        Py_RETURN_NONE;
    int64_t *bodies = PyMem_Malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (bodies == NULL)
        return PyErr_NoMemory();
    int64_t total = 0, max_ts = -1, max_delta = -1;  /* NO_TIMESTAMP; none */
    Rec r;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t td, ks, vs, hs;
        if (!get(src, i, &r) || __builtin_sub_overflow(r.ts, base_ts, &td) ||
            (ks = field_size(r.key)) < 0 || (vs = field_size(r.value)) < 0 ||
            (hs = headers_size(r.headers)) < 0)
            goto not_taken;
        int64_t body = 1 + varint_size(zigzag64(td)) + varint_size(zigzag32(start + i)) +
                       ks + vs + hs;
        if (body > INT32_MAX)
            goto not_taken;
        bodies[i] = body;
        total += varint_size(zigzag32(body)) + body;
        if (r.ts > max_ts) {
            max_ts = r.ts;
            max_delta = start + i;
        }
    }
    PyObject *block = PyBytes_FromStringAndSize(NULL, total);
    if (block == NULL) {
        PyMem_Free(bodies);
        return NULL;
    }
    char *p = PyBytes_AS_STRING(block);
    for (Py_ssize_t i = 0; i < n; i++) {
        get(src, i, &r);
        p = put_varint(p, zigzag32(bodies[i]));
        *p++ = 0;  /* attributes */
        p = put_varint(p, zigzag64(r.ts - base_ts));
        p = put_varint(p, zigzag32(start + i));
        p = put_field(p, r.key);
        p = put_field(p, r.value);
        p = put_headers(p, r.headers);
    }
    PyMem_Free(bodies);
    return Py_BuildValue("(NnLL)", block, n, (long long)max_ts, (long long)max_delta);
not_taken:
    PyMem_Free(bodies);
    Py_RETURN_NONE;
}

/* -- encode_records: a sequence of (timestamp, key, value, headers) ----------------- */

static int
get_tuple(void *src, Py_ssize_t i, Rec *rec)
{
    PyObject *t = ((PyObject **)src)[i];
    if (!(PyTuple_CheckExact(t) || PyList_CheckExact(t)) || PySequence_Fast_GET_SIZE(t) != 4)
        return 0;
    PyObject **f = PySequence_Fast_ITEMS(t);
    int ok = 1;
    rec->ts = as_int64(f[0], &ok);
    rec->key = f[1];
    rec->value = f[2];
    rec->headers = f[3];
    return ok;
}

static PyObject *
en_encode_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "encode_records(records, base_timestamp, start)");
        return NULL;
    }
    int ok = 1;
    int64_t base = as_int64(args[1], &ok), start = as_int64(args[2], &ok);
    PyObject *recs = args[0];
    if (!ok || !(PyList_CheckExact(recs) || PyTuple_CheckExact(recs)))
        Py_RETURN_NONE;
    return encode(get_tuple, PySequence_Fast_ITEMS(recs), PySequence_Fast_GET_SIZE(recs),
                  base, start);
}

/* -- encode_columns ---------------------------------------------------------------- */

typedef struct {
    PyObject **ts, **keys, **values, **headers;  /* NULL: the constant / None */
    int64_t one_ts;
} Cols;

static int
get_cols(void *src, Py_ssize_t i, Rec *rec)
{
    Cols *c = src;
    int ok = 1;
    rec->ts = c->ts != NULL ? as_int64(c->ts[i], &ok) : c->one_ts;
    rec->key = c->keys != NULL ? c->keys[i] : Py_None;
    rec->value = c->values[i];
    rec->headers = c->headers != NULL ? c->headers[i] : Py_None;
    return ok;
}

/* the items of a list or tuple of n entries (or of None, when may_be_none: NULL with
 * *ok kept); *ok cleared for anything else */
static PyObject **
column(PyObject *o, Py_ssize_t n, int may_be_none, int *ok)
{
    if (o == Py_None && may_be_none)
        return NULL;
    if (!(PyList_CheckExact(o) || PyTuple_CheckExact(o)) || PySequence_Fast_GET_SIZE(o) != n) {
        *ok = 0;
        return NULL;
    }
    return PySequence_Fast_ITEMS(o);
}

static PyObject *
en_encode_columns(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "encode_columns(timestamps, keys, values, headers, "
                        "base_timestamp, start)");
        return NULL;
    }
    int ok = 1;
    int64_t base = as_int64(args[4], &ok), start = as_int64(args[5], &ok);
    PyObject *values = args[2];
    if (!ok || !(PyList_CheckExact(values) || PyTuple_CheckExact(values)))
        Py_RETURN_NONE;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(values);
    Cols c = {NULL, NULL, PySequence_Fast_ITEMS(values), NULL, 0};
    if (PyLong_CheckExact(args[0]))
        c.one_ts = as_int64(args[0], &ok);
    else
        c.ts = column(args[0], n, 0, &ok);
    c.keys = column(args[1], n, 1, &ok);
    c.headers = column(args[3], n, 1, &ok);
    if (!ok)
        Py_RETURN_NONE;
    return encode(get_cols, &c, n, base, start);
}

static PyMethodDef methods[] = {
    {"encode_records", (PyCFunction)(void (*)(void))en_encode_records, METH_FASTCALL,
     "builder.encode_records of a list or tuple of records in C, or None"},
    {"encode_columns", (PyCFunction)(void (*)(void))en_encode_columns, METH_FASTCALL,
     "builder.encode_columns in C (timestamps may be one int), or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_encode",
    "The record encoder of kafkalog_cli.format.builder in C (see the source's header).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__encode(void)
{
    return PyModule_Create(&module);
}
