/*
 * kafkalog_cli.format._speedups: the hot loops of kafkalog_cli/format's read path (record.py,
 * record_batch.py, records.py) in C.
 *
 * Optional: compiled.py imports this module when it was built (setup.py, when a compiler
 * and Python's headers are present) and KAFKALOG_PURE_PYTHON is not set; otherwise the
 * modules run their own Python loops, which stay the reference. Every function here takes the
 * arguments of the Python function it replaces and gives the same values and the same
 * exceptions (class and message; tests/format/test_speedups.py compares both on random
 * bytes, mutated batches, the fixtures and the real corpus):
 *
 *   decode_block(data, count, base_offset, base_timestamp, at)
 *       -> list of Record                       record._decode_block
 *   decode_block_into(data, count, base_offset, base_timestamp, at,
 *                     off_append, ts_append, key_append, value_append, hdr_append)
 *                                               record._decode_block_into
 *   batch_records(batch) -> list of Record, or None when the batch is not for the fast
 *       path (compressed, negative count, a block over DECODE_CHUNK_BYTES, a base offset
 *       that may overflow)                      RecordBatch.records()'s fast path
 *   records_method(RecordBatch) -> RecordBatch.records as a method: batch_records, else
 *       the Python method                       RecordBatch.records
 *   batch_is_valid(batch) -> bool               RecordBatch.is_valid
 *   is_valid_property(RecordBatch) -> the same as a getset descriptor of the class
 *   BatchIterator(file_records, view, start, end)
 *                                               FileRecords.batches()
 *   scan_lengths(data, count, positions), decode_group(buf, positions, bases, counts)
 *                                               vectorized.py's group decode
 *   decode_rows(blocks, counts, base_offsets, base_timestamps, append_times, out)
 *                                               vectorized.decode_rows
 *   scan_v2(view, pos, end, invalid) -> (pos, batches, records, last_pos)
 *                                               scan_batches()' v2 loop
 *   crc_source() -> str                         which crc32c package function batches use
 *   block_is_dense(data, count) -> bool         whether an uncompressed records block
 *       decodes (record.decode_records takes it) and its offset deltas are 0..count-1
 *       (_record_walk.h; dump-segment's blocks rendered without a Record per record)
 *
 * Kafka's rules followed: DefaultRecord.readFrom (zigzag varints of ByteUtils, the exact
 * body length, null key/value at length -1, header keys as Utils.utf8) and
 * DefaultRecordBatch (the 61-byte header, CRC-32C from attributes to the end).
 *
 * Bounds: every byte read is checked against the end of its buffer; slices are clamped
 * as Python's are; memory is the records of one block (each record consumes at least one
 * byte of the block, each header two), as in the Python loop.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include <dlfcn.h>

#include "_record_walk.h"

/* DefaultRecordBatch layout (schema/record_batch.py declares it; record_batch.py asserts the
 * values it passes to setup() match these). */
#define LOG_OVERHEAD 12
#define RECORD_BATCH_OVERHEAD 61
#define MIN_BATCH_LENGTH 49           /* RECORD_BATCH_OVERHEAD - LOG_OVERHEAD */
#define ATTRIBUTES_OFFSET 21
#define RECORDS_OFFSET 61
#define MAGIC_V2 2
#define OFFSETS_UNCHECKED_MAX (INT64_MAX - INT32_MAX)

/* set once by setup() */
static PyObject *InvalidRecordError = NULL;
static PyObject *RecordType = NULL;       /* records.Record */
static PyObject *RecordBatchType = NULL;  /* records.RecordBatch */
static PyObject *java_utf8 = NULL;        /* schema.utf8.java_utf8 */
static PyObject *py_decode_block = NULL;  /* the Python loops, for arguments out of int64 */
static PyObject *py_decode_block_into = NULL;
static PyObject *py_is_valid = NULL;      /* RecordBatch.is_valid in Python, for odd tuples */
static PyObject *py_records = NULL;       /* RecordBatch.records in Python, off the fast path */
static PyObject *crc32c_loader = NULL;    /* record_batch._load_crc32c: the crc32c package's function */
static PyObject *crc32c_lib = NULL;
static PyObject *empty_tuple = NULL;      /* (): the headers of a record without any */
static Py_ssize_t decode_chunk_bytes = 1024 * 1024;
static PyCFunction list_append_meth = NULL;  /* list.append's C function */

/* -- free lists of Record and RecordBatch tuples --------------------------------------------
 *
 * Record (5 items) and RecordBatch (15) are tuple subclasses defined in Python, so
 * CPython allocates each with PyType_GenericAlloc (malloc, memset, GC link) and frees it
 * through subtype_dealloc: the largest cost of decoding small records (perf). setup()
 * gives both types a dealloc that keeps up to FL_MAX freed objects of exactly that type
 * and size, and the loops here take them back (tuple's own free list, for these types).
 * Anything else (another size, once the list is full) goes to the type's own dealloc.
 * Not used on free-threaded builds.
 */
#define FL_MAX 4096

typedef struct {
    PyTypeObject *type;
    Py_ssize_t size;
    PyObject *head;
    int n;
} freelist;

static freelist fl_record, fl_batch;

static void fl_dealloc(freelist *fl, PyObject *op)
{
    if (Py_TYPE(op) != fl->type || Py_SIZE(op) != fl->size || fl->n >= FL_MAX) {
        /* what subtype_dealloc does for these types (no __dict__, no weakrefs, no
         * finalizer): tuple's dealloc (whose trashcan stays off: the object's
         * tp_dealloc is not tuple's), then the instance's reference to its type. A
         * Python subclass's subtype_dealloc calls this as its base's dealloc and
         * leaves that reference to it too. */
        PyTypeObject *type = Py_TYPE(op);
        PyTuple_Type.tp_dealloc(op);
        Py_DECREF(type);
        return;
    }
    PyObject_GC_UnTrack(op);
    PyObject **items = ((PyTupleObject *)op)->ob_item;
    for (Py_ssize_t i = 0; i < fl->size; i++)
        Py_CLEAR(items[i]);
    items[0] = fl->head;
    fl->head = op;
    fl->n++;
    Py_DECREF(fl->type);  /* an instance of a heap type holds a reference to it */
}

static void record_dealloc(PyObject *op) { fl_dealloc(&fl_record, op); }

/* -- iterating a Record or RecordBatch ----------------------------------------------------
 *
 * ``for offset, timestamp, key, value, headers in records``: CPython unpacks an exact
 * tuple in place, but a tuple subclass through iter(), whose tuple iterator is a new GC
 * object each time (a malloc and a free per record, a third of the unpacking's cost,
 * measured). setup() gives Record and RecordBatch this iterator instead: the same items
 * in the same order, one of them shared by successive unpackings (ti_iter) and the others
 * kept on a free list of up to TI_MAX.
 */
#define TI_MAX 64

typedef struct {
    PyObject_HEAD
    Py_ssize_t index;
    PyObject *seq;  /* the tuple, NULL once exhausted; the next free one on the free list */
} TupIter;

static TupIter *ti_free = NULL;
static int ti_nfree = 0;
static PyTypeObject TupIterType;

static PyObject *ti_new(PyObject *seq)
{
    TupIter *it = ti_free;
    if (it != NULL) {
        ti_free = (TupIter *)it->seq;
        ti_nfree--;
        _Py_NewReference((PyObject *)it);
    } else {
        it = PyObject_GC_New(TupIter, &TupIterType);
        if (it == NULL)
            return NULL;
    }
    it->index = 0;
    Py_INCREF(seq);
    it->seq = seq;
    PyObject_GC_Track(it);
    return (PyObject *)it;
}

static void ti_dealloc(TupIter *it)
{
    PyObject_GC_UnTrack(it);
    Py_CLEAR(it->seq);
#ifndef Py_GIL_DISABLED
    if (ti_nfree < TI_MAX) {
        it->seq = (PyObject *)ti_free;
        ti_free = it;
        ti_nfree++;
        return;
    }
#endif
    PyObject_GC_Del(it);
}

static int ti_traverse(TupIter *it, visitproc visit, void *arg)
{
    Py_VISIT(it->seq);
    return 0;
}

static PyObject *ti_next(TupIter *it)
{
    PyObject *seq = it->seq;
    if (seq == NULL)
        return NULL;
    if (it->index < PyTuple_GET_SIZE(seq)) {
        PyObject *item = PyTuple_GET_ITEM(seq, it->index);
        it->index++;
        Py_INCREF(item);
        return item;
    }
    it->seq = NULL;
    Py_DECREF(seq);
    return NULL;
}

static PyObject *ti_length_hint(TupIter *it, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t n = it->seq == NULL ? 0 : PyTuple_GET_SIZE(it->seq) - it->index;
    return PyLong_FromSsize_t(n < 0 ? 0 : n);
}

static PyMethodDef ti_methods[] = {
    {"__length_hint__", (PyCFunction)ti_length_hint, METH_NOARGS, "items left"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TupIterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkalog_cli.format._speedups.record_iterator",
    .tp_basicsize = sizeof(TupIter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "iter(record): its items",
    .tp_dealloc = (destructor)ti_dealloc,
    .tp_traverse = (traverseproc)ti_traverse,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)ti_next,
    .tp_methods = ti_methods,
};

/*
 * The iterator unpacking takes: ``a, b, c, d, e = record`` holds its iterator only while
 * it unpacks, so one iterator, owned here, serves every unpacking in turn. It is handed
 * out again only while no one else holds it (its reference count is this module's
 * alone): no free-list pop and push, GC tracking or dealloc call per record. An iterator
 * someone keeps stays theirs, untouched; iter() then takes one from the free list.
 */
static TupIter *ti_shared = NULL;

static PyObject *ti_iter(PyObject *seq)
{
    if (!PyTuple_Check(seq)) {
        PyErr_BadInternalCall();
        return NULL;
    }
#ifndef Py_GIL_DISABLED
    TupIter *it = ti_shared;
    if (it != NULL && Py_REFCNT(it) == 1) {
        /* the previous unpacking exhausted it (seq NULL), unless it was dropped early */
        PyObject *old = it->seq;
        Py_INCREF(seq);
        it->seq = seq;
        it->index = 0;
        Py_INCREF(it);
        Py_XDECREF(old);  /* may run code: ``it`` is already held (count 2), not reused */
        return (PyObject *)it;
    }
    if (it == NULL) {
        ti_shared = (TupIter *)ti_new(seq);
        if (ti_shared == NULL)
            return NULL;
        Py_INCREF(ti_shared);
        return (PyObject *)ti_shared;
    }
#endif
    return ti_new(seq);
}
static void batch_dealloc(PyObject *op) { fl_dealloc(&fl_batch, op); }

/* a new object of the free list's type and size, its items NULL; fill them, then
 * fl_done() */
static inline PyObject *fl_alloc(freelist *fl)
{
    PyObject *op = fl->head;
    if (op == NULL)
        return fl->type->tp_alloc(fl->type, fl->size);
    PyObject **items = ((PyTupleObject *)op)->ob_item;
    fl->head = items[0];
    items[0] = NULL;
    fl->n--;
    Py_INCREF(fl->type);
    _Py_NewReference(op);
    return op;
}

static inline void fl_done(PyObject *op)
{
    if (!PyObject_GC_IsTracked(op))
        PyObject_GC_Track(op);
}

static void fl_install(freelist *fl, PyObject *type, Py_ssize_t size)
{
#ifndef Py_GIL_DISABLED
    PyTypeObject *t = (PyTypeObject *)type;
    if (fl->type == t)
        return;
    if (t->tp_dealloc == record_dealloc || t->tp_dealloc == batch_dealloc)
        return;
    fl->type = t;
    fl->size = size;
    t->tp_dealloc = fl == &fl_record ? record_dealloc : batch_dealloc;
    if (t->tp_iter == PyTuple_Type.tp_iter)  /* not overridden in Python */
        t->tp_iter = ti_iter;
#else
    (void)fl;
    (void)type;
    (void)size;
#endif
}

/* a new Record, its items NULL, left out of the GC (see emit()): one from the free list
 * is untracked (fl_dealloc), a new one is untracked here (tp_alloc tracks it) */
static inline PyObject *new_record(void)
{
    if (fl_record.head != NULL)
        return fl_alloc(&fl_record);
    PyObject *op = ((PyTypeObject *)RecordType)->tp_alloc((PyTypeObject *)RecordType, 5);
    if (op != NULL)
        PyObject_GC_UnTrack(op);
    return op;
}

static inline PyObject *new_batch(void)
{
    if (fl_batch.type != NULL)
        return fl_alloc(&fl_batch);
    return ((PyTypeObject *)RecordBatchType)->tp_alloc((PyTypeObject *)RecordBatchType, 15);
}

/* -- CRC-32C ------------------------------------------------------------------------- */

/*
 * CRC-32C is the crc32c package's: kafkalog computes none itself. Its extension module
 * (loaded by kafkalog_cli.crc) exports its C function _crc32c_hw_adler (Mark Adler's
 * three-stream code on the crc32 instruction), which the module's init prepares when
 * the CPU has the instruction (``hardware_based``). The core finds it once, with dlsym in
 * the library already loaded, and calls it per batch with no Python call. Where it is not
 * there (another build of the package, its software mode) the package's Python function
 * is called per batch: the same value, slower.
 */
typedef uint32_t (*crc_fn_t)(uint32_t crc, const unsigned char *data, unsigned long length);
static crc_fn_t crc_fn = NULL;
static int crc_resolved = 0;

static int crc_resolve(void)
{
    crc_resolved = 1;
    if (crc32c_lib == NULL) {
        crc32c_lib = PyObject_CallNoArgs(crc32c_loader);
        if (crc32c_lib == NULL)
            return -1;
    }
    if (!PyCFunction_Check(crc32c_lib))
        return 0;
    PyObject *mod = PyCFunction_GET_SELF(crc32c_lib);
    if (mod == NULL || !PyModule_Check(mod))
        return 0;
    PyObject *hw = PyObject_GetAttrString(mod, "hardware_based");
    int is_hw = hw == NULL ? -1 : PyObject_IsTrue(hw);
    Py_XDECREF(hw);
    PyObject *file = is_hw == 1 ? PyModule_GetFilenameObject(mod) : NULL;
    const char *path = file == NULL ? NULL : PyUnicode_AsUTF8(file);
    void *lib = path == NULL ? NULL : dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    Py_XDECREF(file);
    PyErr_Clear();
    if (lib != NULL) {
        void *sym = dlsym(lib, "_crc32c_hw_adler");
        if (sym != NULL)
            memcpy(&crc_fn, &sym, sizeof crc_fn);
    }
    return 0;
}

/* CRC-32C of a whole batch (attributes to the end); -1 with an error set when the
 * crc32c package fails to load or to compute. */
static int64_t batch_crc(const uint8_t *p, Py_ssize_t n)
{
    if (!crc_resolved && crc_resolve() < 0)
        return -1;
    if (crc_fn != NULL)
        return (int64_t)(~crc_fn(0xFFFFFFFFu, p, (unsigned long)n) & 0xFFFFFFFFu);
    if (crc32c_lib == NULL)
        return -1;
    PyObject *mv = PyMemoryView_FromMemory((char *)p, n, PyBUF_READ);
    if (mv == NULL)
        return -1;
    PyObject *r = PyObject_CallOneArg(crc32c_lib, mv);
    Py_DECREF(mv);
    if (r == NULL)
        return -1;
    unsigned long v = PyLong_AsUnsignedLong(r);
    Py_DECREF(r);
    if (v == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    return (int64_t)v;
}

/* -- errors ---------------------------------------------------------------------------- */

static void err_eof(void)
{
    PyErr_SetString(InvalidRecordError, "Incorrect declared batch size, premature EOF reached");
}

/* -- varints (format/varint.py read_varint, and the template's inline reads) ------------ */

/*
 * A zigzag varint (max_bytes 5) or varlong (10) at *pos of d[0:end]. ``inline_bytes`` is
 * how many of its first bytes the Python code reads by indexing (data[pos]: IndexError,
 * "premature EOF") before handing over to read_varint (which says the varint "runs past
 * the end"): 2 in the record loop, 1 in the headers.
 */
static inline int read_varint(const uint8_t *d, Py_ssize_t end, Py_ssize_t *pos,
                              int max_bytes, int inline_bytes, int64_t *out)
{
    Py_ssize_t p = *pos;
    if (p < end && d[p] < 0x80) {  /* one byte: the common case */
        uint32_t v = d[p];
        *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        *pos = p + 1;
        return 0;
    }
    if (p + 1 < end && d[p + 1] < 0x80) {  /* two bytes: a record's length, a value's */
        uint32_t v = (uint32_t)(d[p] & 0x7F) | (uint32_t)d[p + 1] << 7;
        *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        *pos = p + 2;
        return 0;
    }
    uint64_t value = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (p >= end) {
            if (i < inline_bytes)
                err_eof();
            else
                PyErr_SetString(InvalidRecordError, "varint runs past the end of the record data");
            return -1;
        }
        uint8_t b = d[p++];
        value |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            if (max_bytes == 5) {
                uint32_t v = (uint32_t)value;
                *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            } else {
                *out = (int64_t)((value >> 1) ^ (0 - (value & 1)));
            }
            *pos = p;
            return 0;
        }
        shift += 7;
    }
    if (max_bytes == 5)
        PyErr_SetString(InvalidRecordError,
                        "Varint is too long, the most significant bit in the 5th byte is set");
    else
        PyErr_SetString(InvalidRecordError,
                        "Varlong is too long, the most significant bit in the 10th byte is set");
    return -1;
}

/* data[start:start+n] as bytes, clamped to d[0:end] as a Python slice is */
static inline PyObject *slice_bytes(const uint8_t *d, Py_ssize_t end, Py_ssize_t start, int64_t n)
{
    Py_ssize_t a = start < end ? start : end;
    Py_ssize_t b = (int64_t)start + n < (int64_t)end ? (Py_ssize_t)(start + n) : end;
    if (b < a)
        b = a;
    return PyBytes_FromStringAndSize((const char *)d + a, b - a);
}

/* record._decode_headers: the headers at *pos (the count varint) as a tuple */
static PyObject *decode_headers(const uint8_t *d, Py_ssize_t end, Py_ssize_t *pos)
{
    int64_t count, n;
    if (read_varint(d, end, pos, 5, 1, &count) < 0)
        return NULL;
    if (count < 0) {
        PyErr_Format(InvalidRecordError, "Found invalid number of record headers %lld",
                     (long long)count);
        return NULL;
    }
    PyObject *list = PyList_New(0);
    if (list == NULL)
        return NULL;
    for (int64_t i = 0; i < count; i++) {
        if (read_varint(d, end, pos, 5, 1, &n) < 0)
            goto fail;
        if (n < 0) {
            PyErr_Format(InvalidRecordError, "Invalid negative header key size %lld",
                         (long long)n);
            goto fail;
        }
        Py_ssize_t a = *pos < end ? *pos : end;
        Py_ssize_t b = *pos + n < end ? (Py_ssize_t)(*pos + n) : end;
        if (b < a)
            b = a;
        PyObject *hkey = PyUnicode_DecodeUTF8((const char *)d + a, b - a, NULL);
        if (hkey == NULL) {
            /* not well-formed: Java's replacement rules (Utils.utf8) */
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                goto fail;
            PyErr_Clear();
            PyObject *raw = PyBytes_FromStringAndSize((const char *)d + a, b - a);
            if (raw == NULL)
                goto fail;
            hkey = PyObject_CallOneArg(java_utf8, raw);
            Py_DECREF(raw);
            if (hkey == NULL)
                goto fail;
        }
        *pos += n;
        if (read_varint(d, end, pos, 5, 1, &n) < 0) {
            Py_DECREF(hkey);
            goto fail;
        }
        PyObject *hval;
        if (n < 0) {
            hval = Py_None;
            Py_INCREF(hval);
        } else {
            hval = slice_bytes(d, end, *pos, n);
            if (hval == NULL) {
                Py_DECREF(hkey);
                goto fail;
            }
            *pos += n;
        }
        PyObject *pair = PyTuple_New(2);
        if (pair == NULL) {
            Py_DECREF(hkey);
            Py_DECREF(hval);
            goto fail;
        }
        PyTuple_SET_ITEM(pair, 0, hkey);
        PyTuple_SET_ITEM(pair, 1, hval);
        int rc = PyList_Append(list, pair);
        Py_DECREF(pair);
        if (rc < 0)
            goto fail;
    }
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
fail:
    Py_DECREF(list);
    return NULL;
}

/* base + delta as a Python int, past int64 when the sum is (as Python adds) */
static inline PyObject *add_int(int64_t base, int64_t delta)
{
    int64_t r;
    if (!__builtin_add_overflow(base, delta, &r))
        return PyLong_FromLongLong(r);
    PyObject *a = PyLong_FromLongLong(base), *b = PyLong_FromLongLong(delta), *s = NULL;
    if (a != NULL && b != NULL)
        s = PyNumber_Add(a, b);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return s;
}

/* one of the column appends: list.append directly, anything else called */
static inline int call_append(PyObject *fn, PyObject *item)
{
    if (list_append_meth != NULL && PyCFunction_Check(fn) &&
        PyCFunction_GET_FUNCTION(fn) == list_append_meth) {
        PyObject *self = PyCFunction_GET_SELF(fn);
        if (self != NULL && PyList_CheckExact(self))
            return PyList_Append(self, item);
    }
    PyObject *r = PyObject_CallOneArg(fn, item);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* the consumers of the loop */
typedef struct {
    PyObject *out;           /* list of Record (tuple consumer), or NULL */
    Py_ssize_t filled;       /* records set in ``out`` when it was preallocated, else -1 */
    PyObject *appends[5];    /* off, ts, key, value, hdr (column consumer); hdr may be None */
    int lat;                 /* LogAppendTime: every timestamp is lat_ts */
    int64_t lat_ts;
    /* ints handed out again rather than created per record (ints are immutable; records
     * of a batch often share a timestamp, and a one-record batch's offset and timestamp
     * are the batch's): the last timestamp and its value, the base offset (delta 0).
     * Owned references or NULL; consumer_clear() drops them. */
    PyObject *ts_obj;
    int64_t ts_val;
    PyObject *off0;
} consumer;

/* the consumer's reuse of ``ts`` (the int timestamp ``ts_value``) and ``base_offset``
 * (an int): only exact ints, whose value is what they print */
static void consumer_seed(consumer *c, PyObject *ts, int64_t ts_value, PyObject *base_offset)
{
    if (ts != NULL && PyLong_CheckExact(ts)) {
        Py_INCREF(ts);
        c->ts_obj = ts;
        c->ts_val = ts_value;
    }
    if (base_offset != NULL && PyLong_CheckExact(base_offset)) {
        Py_INCREF(base_offset);
        c->off0 = base_offset;
    }
}

static void consumer_clear(consumer *c)
{
    Py_CLEAR(c->ts_obj);
    Py_CLEAR(c->off0);
}

static int emit(consumer *c, int64_t base_offset, int64_t base_ts, int64_t offset_delta,
                int64_t ts_delta, PyObject *key, PyObject *value, PyObject *headers)
{
    /* steals key, value, headers */
    PyObject *off, *ts;
    if (offset_delta == 0 && c->off0 != NULL) {
        off = c->off0;
        Py_INCREF(off);
    } else {
        off = add_int(base_offset, offset_delta);
    }
    /* a record's timestamp is a Java long: baseTimestamp + timestampDelta wraps */
    int64_t ts_value = c->lat ? c->lat_ts : (int64_t)((uint64_t)base_ts + (uint64_t)ts_delta);
    if (c->ts_obj != NULL && c->ts_val == ts_value) {
        ts = c->ts_obj;
        Py_INCREF(ts);
    } else {
        ts = PyLong_FromLongLong(ts_value);
        if (ts != NULL) {
            Py_INCREF(ts);
            Py_XSETREF(c->ts_obj, ts);
            c->ts_val = ts_value;
        }
    }
    if (off == NULL || ts == NULL)
        goto fail;
    if (c->out != NULL) {
        PyObject *rec = new_record();
        if (rec == NULL)
            goto fail;
        PyTuple_SET_ITEM(rec, 0, off);
        PyTuple_SET_ITEM(rec, 1, ts);
        PyTuple_SET_ITEM(rec, 2, key);
        PyTuple_SET_ITEM(rec, 3, value);
        PyTuple_SET_ITEM(rec, 4, headers);
        /* left out of the GC (new_record), as CPython's collector itself untracks a
         * tuple of atomic items: ints, bytes or None, and headers, a tuple of (str, bytes
         * or None) pairs, can hold no cycle (saves the tracking and the collector's
         * visits) */
        if (c->filled >= 0 && c->filled < PyList_GET_SIZE(c->out)) {
            PyList_SET_ITEM(c->out, c->filled, rec);  /* steals rec */
            c->filled++;
            return 0;
        }
        int rc = PyList_Append(c->out, rec);
        Py_DECREF(rec);
        return rc;
    }
    int rc = -1;
    if (call_append(c->appends[0], off) < 0 || call_append(c->appends[1], ts) < 0 ||
        call_append(c->appends[2], key) < 0 || call_append(c->appends[3], value) < 0)
        goto done;
    if (c->appends[4] != Py_None && call_append(c->appends[4], headers) < 0)
        goto done;
    rc = 0;
done:
    Py_DECREF(off);
    Py_DECREF(ts);
    Py_DECREF(key);
    Py_DECREF(value);
    Py_DECREF(headers);
    return rc;
fail:
    Py_XDECREF(off);
    Py_XDECREF(ts);
    Py_DECREF(key);
    Py_DECREF(value);
    Py_DECREF(headers);
    return -1;
}

/*
 * record._DECODE_LOOP: DefaultRecord.readFrom over a block of ``count`` records, every
 * step and every error as the Python template's.
 */
static int decode_loop(const uint8_t *d, Py_ssize_t end, Py_ssize_t count, int64_t base_offset,
                       int64_t base_ts, long long at, consumer *c)
{
    Py_ssize_t pos = 0;
    int64_t length, ts_delta, offset_delta, n;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (read_varint(d, end, &pos, 5, 2, &length) < 0)
            return -1;
        int64_t rec_end = (int64_t)pos + length;
        if (length < 0 || rec_end > end) {
            PyErr_Format(InvalidRecordError,
                         "Invalid record size %lld at byte %lld of the records block "
                         "(%lld bytes)", (long long)length, at + (long long)pos,
                         at + (long long)end);
            return -1;
        }
        /* attributes (int8, unused: never read), then timestampDelta (varlong) */
        pos += 1;
        if (read_varint(d, end, &pos, 10, 2, &ts_delta) < 0)
            return -1;
        if (read_varint(d, end, &pos, 5, 2, &offset_delta) < 0)
            return -1;
        /* key */
        if (read_varint(d, end, &pos, 5, 2, &n) < 0)
            return -1;
        PyObject *key, *value, *headers;
        if (n < 0) {
            key = Py_None;
            Py_INCREF(key);
        } else {
            key = slice_bytes(d, end, pos, n);
            if (key == NULL)
                return -1;
            pos += n;
        }
        /* value */
        if (read_varint(d, end, &pos, 5, 2, &n) < 0) {
            Py_DECREF(key);
            return -1;
        }
        if (n < 0) {
            value = Py_None;
            Py_INCREF(value);
        } else {
            value = slice_bytes(d, end, pos, n);
            if (value == NULL) {
                Py_DECREF(key);
                return -1;
            }
            pos += n;
        }
        /* headers: a count of 0 is the single byte 0 */
        if (pos >= end) {
            Py_DECREF(key);
            Py_DECREF(value);
            err_eof();
            return -1;
        }
        if (d[pos] == 0) {
            pos += 1;
            headers = Py_NewRef(empty_tuple);
        } else {
            headers = decode_headers(d, end, &pos);
        }
        if (headers == NULL) {
            Py_DECREF(key);
            Py_DECREF(value);
            return -1;
        }
        if (pos != rec_end) {
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            PyErr_Format(InvalidRecordError,
                         "Invalid record size: expected to read %lld bytes in record payload, "
                         "but instead read %lld", (long long)length,
                         (long long)(length + pos - rec_end));
            return -1;
        }
        if (emit(c, base_offset, base_ts, offset_delta, ts_delta, key, value, headers) < 0)
            return -1;
    }
    if (pos != end) {
        PyErr_SetString(InvalidRecordError,
                        "Incorrect declared batch size, records still remaining in file");
        return -1;
    }
    return 0;
}

/*
 * The tuple consumer's list: preallocated for ``count`` records when the block can hold
 * them (a record takes at least 7 bytes: its length and six one-byte fields), so memory
 * stays within the block's size; else grown record by record (the loop then fails).
 * A failed decode drops the list (its unset items are NULL, which list_dealloc skips).
 */
static int consumer_list(consumer *c, Py_ssize_t count, Py_ssize_t block_len)
{
    if (count > 0 && count <= block_len / 7) {
        c->out = PyList_New(count);
        c->filled = 0;
    } else {
        c->out = PyList_New(0);
        c->filled = -1;
    }
    return c->out == NULL ? -1 : 0;
}

/* an int argument as int64; 0 with *ok = 0 when it is an int out of range */
static int as_int64(PyObject *o, int64_t *out, int *ok)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    *ok = !overflow;
    *out = v;
    return 0;
}

/*
 * The arguments shared by decode_block and decode_block_into: (data, count, base_offset,
 * base_timestamp, at, ...). 1 when the C loop takes them; 0 when the Python twin must
 * (data not bytes, an int out of int64: it then gives the same values or errors); -1 for
 * a wrong number of arguments.
 */
static int block_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want,
                      const char *name, int64_t *base_offset, int64_t *base_ts,
                      Py_ssize_t *count, long long *at)
{
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s takes %zd arguments", name, want);
        return -1;
    }
    int ok1, ok2;
    if (!PyBytes_Check(args[0]) || !PyLong_Check(args[1]) || !PyLong_Check(args[4]) ||
        as_int64(args[2], base_offset, &ok1) < 0 || as_int64(args[3], base_ts, &ok2) < 0) {
        PyErr_Clear();
        return 0;
    }
    *count = PyLong_AsSsize_t(args[1]);
    *at = PyLong_AsLongLong(args[4]);
    if (!ok1 || !ok2 || ((*count == -1 || *at == -1) && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

static PyObject *sp_decode_block(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    int64_t base_offset, base_ts;
    Py_ssize_t count;
    long long at;
    int rc = block_args(args, nargs, 5, "decode_block", &base_offset, &base_ts, &count, &at);
    if (rc <= 0)
        return rc < 0 ? NULL : PyObject_Vectorcall(py_decode_block, args, nargs, NULL);
    consumer c = {0};
    if (consumer_list(&c, count, PyBytes_GET_SIZE(args[0])) < 0)
        return NULL;
    consumer_seed(&c, args[3], base_ts, args[2]);
    if (decode_loop((const uint8_t *)PyBytes_AS_STRING(args[0]), PyBytes_GET_SIZE(args[0]),
                    count, base_offset, base_ts, at, &c) < 0) {
        consumer_clear(&c);
        Py_DECREF(c.out);
        return NULL;
    }
    consumer_clear(&c);
    return c.out;
}

static PyObject *sp_decode_block_into(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    int64_t base_offset, base_ts;
    Py_ssize_t count;
    long long at;
    int rc = block_args(args, nargs, 10, "decode_block_into", &base_offset, &base_ts, &count,
                        &at);
    if (rc <= 0)
        return rc < 0 ? NULL : PyObject_Vectorcall(py_decode_block_into, args, nargs, NULL);
    consumer c = {0};
    for (int i = 0; i < 5; i++)
        c.appends[i] = args[5 + i];
    consumer_seed(&c, args[3], base_ts, args[2]);
    rc = decode_loop((const uint8_t *)PyBytes_AS_STRING(args[0]), PyBytes_GET_SIZE(args[0]),
                     count, base_offset, base_ts, at, &c);
    consumer_clear(&c);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* -- batches ------------------------------------------------------------------------- */

static inline int64_t be64(const uint8_t *p)
{
    return (int64_t)((uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
                     (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
                     (uint64_t)p[6] << 8 | (uint64_t)p[7]);
}

static inline uint32_t be32u(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline int32_t be32(const uint8_t *p) { return (int32_t)be32u(p); }
static inline int16_t be16(const uint8_t *p) { return (int16_t)((uint16_t)p[0] << 8 | p[1]); }

/*
 * An exact int of at most two digits read in place (CPython 3.11's layout: 30-bit
 * digits, the sign in ob_size; 3.12+: the compact form), as PyLong_AsLongLongAndOverflow
 * would give it without its call and checks: the batch header's fields are such ints
 * (positions, offsets, timestamps below 2^60). 0 when read, -1 for anything else.
 */
static inline int int64_inline(PyObject *o, int64_t *out)
{
    if (!PyLong_CheckExact(o))
        return -1;
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && PYLONG_BITS_IN_DIGIT == 30
    const digit *d = ((PyLongObject *)o)->ob_digit;
    switch (Py_SIZE(o)) {
    case 0: *out = 0; return 0;
    case 1: *out = (int64_t)d[0]; return 0;
    case -1: *out = -(int64_t)d[0]; return 0;
    case 2: *out = (int64_t)d[0] | (int64_t)d[1] << 30; return 0;
    case -2: *out = -((int64_t)d[0] | (int64_t)d[1] << 30); return 0;
    default: return -1;
    }
#elif PY_VERSION_HEX >= 0x030C0000 && !defined(Py_LIMITED_API)
    if (!PyUnstable_Long_IsCompact((PyLongObject *)o))
        return -1;
    *out = (int64_t)PyUnstable_Long_CompactValue((PyLongObject *)o);
    return 0;
#else
    (void)out;
    return -1;
#endif
}

/*
 * The bytes of a batch's buffer (``view``, item 0 of a batch tuple), held for the time
 * of one call: a C-contiguous memoryview (what FileRecords holds) is exported in place
 * as memory_getbuf exports it for PyBUF_SIMPLE (its ``exports`` count raised, so it
 * cannot be released meanwhile; its buffer is its base's), without the generic
 * PyObject_GetBuffer / PyBuffer_Release calls, three per batch otherwise; any other
 * object through PyObject_GetBuffer. -1 with an error set when ``o`` is no buffer.
 */
typedef struct {
    const uint8_t *buf;
    Py_ssize_t len;
    PyObject *mv;   /* the memoryview exported in place, else NULL (``pb`` holds it) */
    Py_buffer pb;
} rbuf;

static inline int rbuf_get(PyObject *o, rbuf *r)
{
#if !defined(Py_LIMITED_API) && !defined(Py_GIL_DISABLED)
    if (PyMemoryView_Check(o)) {
        PyMemoryViewObject *mv = (PyMemoryViewObject *)o;
        if (!(mv->flags & _Py_MEMORYVIEW_RELEASED) &&
            !(mv->mbuf->flags & _Py_MANAGED_BUFFER_RELEASED) &&
            (mv->flags & (_Py_MEMORYVIEW_SCALAR | _Py_MEMORYVIEW_C))) {
            Py_INCREF(o);
            mv->exports++;
            r->mv = o;
            r->buf = (const uint8_t *)mv->view.buf;
            r->len = mv->view.len;
            return 0;
        }
    }
#endif
    if (PyObject_GetBuffer(o, &r->pb, PyBUF_SIMPLE) < 0)
        return -1;
    r->mv = NULL;
    r->buf = (const uint8_t *)r->pb.buf;
    r->len = r->pb.len;
    return 0;
}

static inline void rbuf_release(rbuf *r)
{
#if !defined(Py_LIMITED_API) && !defined(Py_GIL_DISABLED)
    if (r->mv != NULL) {
        ((PyMemoryViewObject *)r->mv)->exports--;
        Py_DECREF(r->mv);
        return;
    }
#endif
    PyBuffer_Release(&r->pb);
}

/* the item ``i`` of a batch tuple as int64; -1 unless it is an int64 (no error set) */
static int item_int64_slow(PyObject *o, int64_t *out);

static inline int item_int64(PyObject *batch, Py_ssize_t i, int64_t *out)
{
    PyObject *o = PyTuple_GET_ITEM(batch, i);
    if (int64_inline(o, out) == 0)
        return 0;
    return item_int64_slow(o, out);
}

static int item_int64_slow(PyObject *o, int64_t *out)
{
    if (!PyLong_Check(o))
        return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    *out = v;
    return 0;
}

/* view[start:stop] bounds as Python clamps them, for a buffer of ``len`` bytes */
static void clamp(Py_ssize_t len, int64_t start, int64_t stop, Py_ssize_t *a, Py_ssize_t *b)
{
    Py_ssize_t s = start > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : (start < -PY_SSIZE_T_MAX ? -PY_SSIZE_T_MAX : (Py_ssize_t)start);
    Py_ssize_t e = stop > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : (stop < -PY_SSIZE_T_MAX ? -PY_SSIZE_T_MAX : (Py_ssize_t)stop);
    PySlice_AdjustIndices(len, &s, &e, 1);
    *a = s;
    *b = e < s ? s : e;
}

/* RecordBatch.is_valid: crc32c(view[p + 21:p + length + 12]) == crc (a batch tuple that
 * does not hold int64 positions, or whose view is not a buffer, goes to the Python property) */
static PyObject *sp_batch_is_valid(PyObject *self, PyObject *batch)
{
    (void)self;
    int64_t p, length;
    rbuf buf;
    if (!PyTuple_Check(batch) || PyTuple_GET_SIZE(batch) != 15 || item_int64(batch, 1, &p) < 0 ||
        item_int64(batch, 3, &length) < 0 || p > ((int64_t)1 << 60) || p < -((int64_t)1 << 60) ||
        length > INT32_MAX || length < INT32_MIN)
        return PyObject_CallOneArg(py_is_valid, batch);
    if (rbuf_get(PyTuple_GET_ITEM(batch, 0), &buf) < 0) {
        PyErr_Clear();
        return PyObject_CallOneArg(py_is_valid, batch);
    }
    Py_ssize_t a, b;
    clamp(buf.len, p + ATTRIBUTES_OFFSET, p + length + LOG_OVERHEAD, &a, &b);
    int64_t c = batch_crc(buf.buf + a, b - a);
    rbuf_release(&buf);
    if (c < 0)
        return NULL;
    PyObject *crc = PyTuple_GET_ITEM(batch, 6);
    int64_t stored;
    if (int64_inline(crc, &stored) == 0)
        return PyBool_FromLong(stored == c);
    if (PyLong_CheckExact(crc)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(crc, &overflow);
        if (!overflow && !(v == -1 && PyErr_Occurred()))
            return PyBool_FromLong(v == (long long)c);
        PyErr_Clear();
    }
    PyObject *computed = PyLong_FromUnsignedLong(c);
    if (computed == NULL)
        return NULL;
    PyObject *r = PyObject_RichCompare(computed, crc, Py_EQ);
    Py_DECREF(computed);
    return r;
}

/*
 * RecordBatch.records()' fast path: an uncompressed batch with a count >= 0, a block of
 * at most DECODE_CHUNK_BYTES and a base offset whose record offsets cannot pass int64;
 * None for any other (the Python method then takes its own paths).
 */
static PyObject *sp_batch_records(PyObject *self, PyObject *batch)
{
    (void)self;
    int64_t p, base_offset, length, attributes, base_ts, max_ts, count;
    if (!PyTuple_Check(batch) || PyTuple_GET_SIZE(batch) != 15 || item_int64(batch, 1, &p) < 0 ||
        item_int64(batch, 2, &base_offset) < 0 || item_int64(batch, 3, &length) < 0 ||
        item_int64(batch, 7, &attributes) < 0 || item_int64(batch, 9, &base_ts) < 0 ||
        item_int64(batch, 10, &max_ts) < 0 || item_int64(batch, 14, &count) < 0)
        Py_RETURN_NONE;
    if ((attributes & 7) || count < 0 || length - MIN_BATCH_LENGTH > decode_chunk_bytes ||
        base_offset > OFFSETS_UNCHECKED_MAX || p > ((int64_t)1 << 60) || p < -((int64_t)1 << 60) ||
        length > INT32_MAX || length < INT32_MIN ||
        count > PY_SSIZE_T_MAX)
        Py_RETURN_NONE;
    rbuf buf;
    if (rbuf_get(PyTuple_GET_ITEM(batch, 0), &buf) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Py_ssize_t a, b;
    clamp(buf.len, p + RECORDS_OFFSET, p + length + LOG_OVERHEAD, &a, &b);
    consumer c = {0};
    c.lat = (attributes & 8) != 0;  /* TIMESTAMP_TYPE_MASK: LogAppendTime */
    c.lat_ts = max_ts;
    if (consumer_list(&c, (Py_ssize_t)count, b - a) < 0) {
        rbuf_release(&buf);
        return NULL;
    }
    consumer_seed(&c, PyTuple_GET_ITEM(batch, c.lat ? 10 : 9), c.lat ? max_ts : base_ts,
                  PyTuple_GET_ITEM(batch, 2));
    int rc = decode_loop(buf.buf + a, b - a, (Py_ssize_t)count, base_offset, base_ts, 0, &c);
    rbuf_release(&buf);
    consumer_clear(&c);
    if (rc < 0) {
        Py_DECREF(c.out);
        return NULL;
    }
    return c.out;
}

/*
 * RecordBatch.records(self, max_bytes=DEFAULT_MAX_DECOMPRESSED_BYTES) as a method of the
 * class (records_method() makes the descriptor): the fast path above, else the Python
 * method. A method descriptor rather than a function bound by instancemethod: CPython
 * then calls it without creating a bound method per call.
 */
static PyObject *sp_records(PyObject *batch, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    if (nargs == 0 && kwnames == NULL) {
        PyObject *r = sp_batch_records(NULL, batch);
        if (r != Py_None)
            return r;
        Py_DECREF(r);
    }
    /* the Python method, with ``batch`` first */
    Py_ssize_t total = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject *small[8], **stack = small;
    if (total + 1 > 8) {
        stack = PyMem_Malloc((size_t)(total + 1) * sizeof(PyObject *));
        if (stack == NULL)
            return PyErr_NoMemory();
    }
    stack[0] = batch;
    for (Py_ssize_t i = 0; i < total; i++)
        stack[i + 1] = args[i];
    PyObject *r = PyObject_Vectorcall(py_records, stack, nargs + 1, kwnames);
    if (stack != small)
        PyMem_Free(stack);
    return r;
}

/*
 * RecordBatch.is_valid as a getset descriptor of the class (is_valid_property() makes
 * it): attribute access calls sp_batch_is_valid directly, without a property object's
 * call of a function per batch.
 */
static PyObject *is_valid_get(PyObject *batch, void *Py_UNUSED(closure))
{
    return sp_batch_is_valid(NULL, batch);
}

static PyGetSetDef is_valid_def = {
    "is_valid", is_valid_get, NULL,
    "DefaultRecordBatch.isValid: size >= 61 and the CRC-32C matches (compiled)", NULL};

/* is_valid_property(cls): RecordBatch.is_valid as a getset descriptor of ``cls`` */
static PyObject *sp_is_valid_property(PyObject *self, PyObject *cls)
{
    (void)self;
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "is_valid_property takes a class");
        return NULL;
    }
    return PyDescr_NewGetSet((PyTypeObject *)cls, &is_valid_def);
}

static PyMethodDef records_def = {
    "records", (PyCFunction)(void (*)(void))sp_records, METH_FASTCALL | METH_KEYWORDS,
    "records(max_bytes=...): RecordBatch.records (compiled fast path)"};

/* records_method(cls): RecordBatch.records as a method descriptor of ``cls`` */
static PyObject *sp_records_method(PyObject *self, PyObject *cls)
{
    (void)self;
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "records_method takes a class");
        return NULL;
    }
    return PyDescr_NewMethod((PyTypeObject *)cls, &records_def);
}

/* the 13 header fields of the v2 batch at h, after (view, pos), into a RecordBatch */
static PyObject *make_batch(PyObject *view, Py_ssize_t pos, const uint8_t *h)
{
    PyObject *t = new_batch();
    if (t == NULL)
        return NULL;
    PyObject *items[15];
    Py_INCREF(view);
    items[0] = view;
    items[1] = PyLong_FromSsize_t(pos);
    items[2] = PyLong_FromLongLong(be64(h));            /* baseOffset */
    items[3] = PyLong_FromLong(be32(h + 8));            /* length */
    items[4] = PyLong_FromLong(be32(h + 12));           /* partitionLeaderEpoch */
    items[5] = PyLong_FromLong((int8_t)h[16]);          /* magic */
    items[6] = PyLong_FromUnsignedLong(be32u(h + 17));  /* crc */
    items[7] = PyLong_FromLong(be16(h + 21));           /* attributes */
    items[8] = PyLong_FromLong(be32(h + 23));           /* lastOffsetDelta */
    items[9] = PyLong_FromLongLong(be64(h + 27));       /* baseTimestamp */
    if (be64(h + 35) == be64(h + 27) && items[9] != NULL) {  /* one int for both */
        Py_INCREF(items[9]);
        items[10] = items[9];
    } else {
        items[10] = PyLong_FromLongLong(be64(h + 35));  /* maxTimestamp */
    }
    items[11] = PyLong_FromLongLong(be64(h + 43));      /* producerId */
    items[12] = PyLong_FromLong(be16(h + 51));          /* producerEpoch */
    items[13] = PyLong_FromLong(be32(h + 53));          /* baseSequence */
    items[14] = PyLong_FromLong(be32(h + 57));          /* recordsCount */
    int bad = 0;
    for (int i = 0; i < 15; i++) {
        if (items[i] == NULL)
            bad = 1;
        PyTuple_SET_ITEM(t, i, items[i]);  /* NULL items are skipped by the deallocs */
    }
    fl_done(t);
    if (bad) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

/* whether the header at h, of the batch at pos, is one FileRecords' fast path takes */
static inline int v2_whole(const uint8_t *h, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t *next)
{
    int32_t length = be32(h + 8);
    if ((int8_t)h[16] < MAGIC_V2 || length < MIN_BATCH_LENGTH || be64(h) > OFFSETS_UNCHECKED_MAX)
        return 0;
    Py_ssize_t nxt = pos + LOG_OVERHEAD + length;
    if (nxt > end)
        return 0;
    *next = nxt;
    return 1;
}

/*
 * FileRecords.batches() as an iterator type: the fast path above one batch per step, and
 * FileRecords._step(pos) (Python) for whatever it does not take (legacy entries, a bad or
 * partial batch at the end). Ends as the generator ended: ``valid_end`` is set when it is
 * exhausted, fails, is closed or dropped (then to the position of the batch last handed
 * out, as the generator's ``finally`` saw it), ``stop_error`` by _step.
 */
typedef struct {
    PyObject_HEAD
    PyObject *records;   /* the FileRecords */
    PyObject *view;
    Py_ssize_t pos, end, next;
    int pending;         /* a batch was handed out; ``next`` is the position after it */
    int done;
} BatchIter;

static PyObject *str_valid_end, *str_step;

static int bi_finish(BatchIter *it, Py_ssize_t pos)
{
    it->done = 1;
    PyObject *v = PyLong_FromSsize_t(pos);
    if (v == NULL)
        return -1;
    int rc = PyObject_SetAttr(it->records, str_valid_end, v);
    Py_DECREF(v);
    return rc;
}

static PyObject *bi_next(BatchIter *it)
{
    if (it->done)
        return NULL;
    if (it->pending) {
        it->pos = it->next;
        it->pending = 0;
    }
    Py_ssize_t pos = it->pos, end = it->end, nxt;
    if (pos >= end - 17) {  /* HEADER_SIZE_UP_TO_MAGIC: not even a magic byte left */
        bi_finish(it, pos);
        return NULL;
    }
    if (pos >= 0 && pos <= end - RECORD_BATCH_OVERHEAD) {
        rbuf buf;
        if (rbuf_get(it->view, &buf) < 0) {
            bi_finish(it, pos);
            return NULL;
        }
        PyObject *b = NULL;
        if (end <= buf.len && v2_whole(buf.buf + pos, pos, end, &nxt))
            b = make_batch(it->view, pos, buf.buf + pos);
        rbuf_release(&buf);
        if (b != NULL) {
            it->next = nxt;
            it->pending = 1;
            return b;
        }
        if (PyErr_Occurred()) {
            bi_finish(it, pos);
            return NULL;
        }
    }
    PyObject *arg = PyLong_FromSsize_t(pos);
    PyObject *r = arg == NULL ? NULL : PyObject_CallMethodOneArg(it->records, str_step, arg);
    Py_XDECREF(arg);
    if (r == NULL || r == Py_None || !PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
        if (r != NULL && r != Py_None)
            PyErr_SetString(PyExc_TypeError, "FileRecords._step must return (batch, next) or None");
        Py_XDECREF(r);
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        bi_finish(it, pos);
        PyErr_Restore(et, ev, tb);
        return NULL;
    }
    nxt = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
    if (nxt == -1 && PyErr_Occurred()) {
        Py_DECREF(r);
        bi_finish(it, pos);
        return NULL;
    }
    PyObject *b = PyTuple_GET_ITEM(r, 0);
    Py_INCREF(b);
    Py_DECREF(r);
    it->next = nxt;
    it->pending = 1;
    return b;
}

/* close(): as a generator's, valid_end where the generator's finally would have put it */
static PyObject *bi_close(BatchIter *it, PyObject *Py_UNUSED(ignored))
{
    if (!it->done && bi_finish(it, it->pos) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static void bi_dealloc(BatchIter *it)
{
    PyObject_GC_UnTrack(it);
    if (!it->done && it->records != NULL) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        if (bi_finish(it, it->pos) < 0)
            PyErr_WriteUnraisable((PyObject *)it);
        PyErr_Restore(et, ev, tb);
    }
    Py_CLEAR(it->records);
    Py_CLEAR(it->view);
    PyObject_GC_Del(it);
}

static int bi_traverse(BatchIter *it, visitproc visit, void *arg)
{
    Py_VISIT(it->records);
    Py_VISIT(it->view);
    return 0;
}

static PyObject *bi_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *records;
    Py_ssize_t start, end;
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "BatchIterator takes no keyword arguments");
        return NULL;
    }
    PyObject *view;
    if (!PyArg_ParseTuple(args, "OOnn", &records, &view, &start, &end))
        return NULL;
    BatchIter *it = PyObject_GC_New(BatchIter, type);
    if (it == NULL)
        return NULL;
    Py_INCREF(records);
    it->records = records;
    Py_INCREF(view);
    it->view = view;
    it->pos = start;
    it->end = end;
    it->next = start;
    it->pending = 0;
    it->done = 0;
    PyObject_GC_Track(it);
    return (PyObject *)it;
}

static PyMethodDef bi_methods[] = {
    {"close", (PyCFunction)bi_close, METH_NOARGS, "end the iteration (valid_end is set)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BatchIterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkalog_cli.format._speedups.BatchIterator",
    .tp_basicsize = sizeof(BatchIter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "BatchIterator(file_records, view, start, end): FileRecords.batches()",
    .tp_dealloc = (destructor)bi_dealloc,
    .tp_traverse = (traverseproc)bi_traverse,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)bi_next,
    .tp_methods = bi_methods,
    .tp_new = bi_new,
};

/*
 * scan_batches()' v2 loop: from ``pos``, every batch FileRecords' fast path takes, its CRC
 * checked (the positions of those that fail appended to ``invalid``). -> (position after
 * them, batches, sum of recordsCount, position of the last one or -1).
 */
static PyObject *sp_scan_v2(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *view, *invalid;
    Py_ssize_t pos, end;
    if (!PyArg_ParseTuple(args, "OnnO!", &view, &pos, &end, &PyList_Type, &invalid))
        return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(view, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > buf.len)
        end = buf.len;
    const uint8_t *d = (const uint8_t *)buf.buf;
    Py_ssize_t nxt, nb = 0, last = -1;
    long long nrec = 0;
    while (pos >= 0 && pos <= end - RECORD_BATCH_OVERHEAD && v2_whole(d + pos, pos, end, &nxt)) {
        const uint8_t *h = d + pos;
        int64_t c = batch_crc(h + ATTRIBUTES_OFFSET, nxt - pos - ATTRIBUTES_OFFSET);
        if (c < 0) {
            PyBuffer_Release(&buf);
            return NULL;
        }
        if ((uint32_t)c != be32u(h + 17)) {
            PyObject *p = PyLong_FromSsize_t(pos);
            if (p == NULL || PyList_Append(invalid, p) < 0) {
                Py_XDECREF(p);
                PyBuffer_Release(&buf);
                return NULL;
            }
            Py_DECREF(p);
        }
        nrec += be32(h + 57);
        last = pos;
        pos = nxt;
        nb++;
    }
    PyBuffer_Release(&buf);
    return Py_BuildValue("(nnLn)", pos, nb, nrec, last);
}

/* -- vectorized.py's group decode (the Spark rows layer and audit) ------------------------- */

/*
 * The positions of vectorized.py's group: a list of ints (the Python twins' form), or a
 * bytearray of native int64s (new_positions() with the core: no int object per record).
 */
static inline int positions_ok(PyObject *positions)
{
    if (PyList_Check(positions) || PyByteArray_Check(positions))
        return 1;
    PyErr_SetString(PyExc_TypeError, "positions must be a list or a bytearray");
    return 0;
}

static inline Py_ssize_t positions_len(PyObject *positions)
{
    return PyList_Check(positions) ? PyList_GET_SIZE(positions)
                                   : PyByteArray_GET_SIZE(positions) / 8;
}

/* positions[i] (i < positions_len), -1 with an error set when it is not an int */
static inline int positions_get(PyObject *positions, Py_ssize_t i, Py_ssize_t *out)
{
    if (PyList_Check(positions)) {
        Py_ssize_t v = PyLong_AsSsize_t(PyList_GET_ITEM(positions, i));
        if (v == -1 && PyErr_Occurred())
            return -1;
        *out = v;
        return 0;
    }
    int64_t v;
    memcpy(&v, PyByteArray_AS_STRING(positions) + 8 * i, 8);
    *out = (Py_ssize_t)v;
    return 0;
}

/*
 * vectorized.scan_lengths(data, count, positions) -> bool: append the position of each of
 * the ``count`` records of ``data`` while each length is a one- or two-byte varint >= 0
 * (read as the Python reads it: two bytes looked up at once, so both must exist) and the
 * records end exactly at the end of ``data``; False, and nothing appended, otherwise.
 */
static PyObject *sp_scan_lengths(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer buf;
    Py_ssize_t count;
    PyObject *positions;
    if (!PyArg_ParseTuple(args, "y*nO", &buf, &count, &positions))
        return NULL;
    if (!positions_ok(positions)) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    const uint8_t *d = (const uint8_t *)buf.buf;
    Py_ssize_t n = buf.len, pos = 0, k = 0;
    int ok = count > 0;  /* each step moves on by a byte or more: at most n steps */
    while (ok && k < count) {
        if (pos + 1 >= n) {
            ok = 0;
            break;
        }
        uint32_t b0 = d[pos], b1 = d[pos + 1], raw;
        Py_ssize_t w;
        if (b0 < 0x80) {
            raw = b0;
            w = 1;
        } else if (b1 < 0x80) {
            raw = (b0 & 0x7F) | (b1 << 7);
            w = 2;
        } else {
            ok = 0;
            break;
        }
        int64_t len = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
        if (len < 0) {
            ok = 0;
            break;
        }
        k++;
        pos += w + len;
    }
    if (ok && pos == n) {
        /* the positions again, now appended (nothing is appended on failure); count <= n
         * here, so the bytearray grows by at most 8 bytes per byte of data */
        int is_list = PyList_Check(positions);
        Py_ssize_t old = is_list ? 0 : PyByteArray_GET_SIZE(positions);
        if (!is_list && PyByteArray_Resize(positions, old + 8 * count) < 0) {
            PyBuffer_Release(&buf);
            return NULL;
        }
        Py_ssize_t q = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            if (is_list) {
                PyObject *v = PyLong_FromSsize_t(q);
                if (v == NULL || PyList_Append(positions, v) < 0) {
                    Py_XDECREF(v);
                    PyBuffer_Release(&buf);
                    return NULL;
                }
                Py_DECREF(v);
            } else {
                int64_t v = q;
                memcpy(PyByteArray_AS_STRING(positions) + old + 8 * i, &v, 8);
            }
            uint32_t b0 = d[q], raw = b0 < 0x80 ? b0 : ((b0 & 0x7F) | ((uint32_t)d[q + 1] << 7));
            q += (b0 < 0x80 ? 1 : 2) + (Py_ssize_t)(raw >> 1);
        }
        PyBuffer_Release(&buf);
        Py_RETURN_TRUE;
    }
    PyBuffer_Release(&buf);
    Py_RETURN_FALSE;
}

/* a one- or two-byte zigzag varint at *p, inside the record ending at e (vectorized.py's
 * varint()): 0 when it is not one */
static inline int short_varint(const uint8_t *a, Py_ssize_t e, Py_ssize_t *p, int64_t *out)
{
    Py_ssize_t q = *p;
    if (q >= e)
        return 0;
    uint32_t b0 = a[q], raw;
    if (b0 < 0x80) {
        raw = b0;
        *p = q + 1;
    } else {
        if (q + 1 >= e || a[q + 1] >= 0x80)
            return 0;
        raw = (b0 & 0x7F) | ((uint32_t)a[q + 1] << 7);
        *p = q + 2;
    }
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    return 1;
}

/* a byte buffer of a fixed capacity that becomes a bytes object (the group's sizes are
 * known before the decode: n records, their keys and values within the blocks' bytes) */
typedef struct {
    PyObject *b;
    char *p;
    Py_ssize_t len, cap;
} outbuf;

static int ob_init(outbuf *o, Py_ssize_t cap)
{
    o->b = PyBytes_FromStringAndSize(NULL, cap);
    if (o->b == NULL)
        return -1;
    o->p = PyBytes_AS_STRING(o->b);
    o->len = 0;
    o->cap = cap;
    return 0;
}

/* n bytes from src; the capacity was counted before (a record that would pass it is not
 * of the group's shape: its caller checks) */
static inline void ob_put(outbuf *o, const void *src, Py_ssize_t n)
{
    memcpy(o->p + o->len, src, (size_t)n);
    o->len += n;
}

static PyObject *ob_finish(outbuf *o)
{
    if (_PyBytes_Resize(&o->b, o->len) < 0)
        return NULL;
    PyObject *r = o->b;
    o->b = NULL;
    return r;
}

/* the Arrow columns of a group being decoded */
typedef struct {
    outbuf ts, od, koff, voff, kdata, vdata, kval, vval;
    Py_ssize_t n, r, knulls, vnulls;
} group_out;

/* room for ``n`` records whose keys and values come from ``total`` bytes of blocks */
static int go_init(group_out *g, Py_ssize_t n, Py_ssize_t total)
{
    memset(g, 0, sizeof(*g));
    g->n = n;
    Py_ssize_t bits = (n + 7) / 8;
    if (ob_init(&g->ts, 8 * n) < 0 || ob_init(&g->od, 8 * n) < 0 ||
        ob_init(&g->koff, 4 * (n + 1)) < 0 || ob_init(&g->voff, 4 * (n + 1)) < 0 ||
        ob_init(&g->kdata, total) < 0 || ob_init(&g->vdata, total) < 0 ||
        ob_init(&g->kval, bits) < 0 || ob_init(&g->vval, bits) < 0)
        return -1;
    memset(g->kval.p, 0, (size_t)bits);
    memset(g->vval.p, 0, (size_t)bits);
    g->kval.len = g->vval.len = bits;
    int32_t zero = 0;
    ob_put(&g->koff, &zero, 4);
    ob_put(&g->voff, &zero, 4);
    return 0;
}

static void go_free(group_out *g)
{
    outbuf *obs[8] = {&g->ts, &g->od, &g->koff, &g->voff, &g->kdata, &g->vdata, &g->kval,
                      &g->vval};
    for (int i = 0; i < 8; i++)
        Py_CLEAR(obs[i]->b);
}

/*
 * One record ``a[p:e]`` (``p`` after its length and attributes) of the common shape (one-
 * or two-byte varints for the deltas and lengths, no headers, consumed exactly): its key
 * and value (data, offsets, validity) appended to ``g``, its timestampDelta and
 * offsetDelta to ``*tsd`` and ``*odl`` for the caller's columns; 1, or 0 when it is not of
 * the shape. A key and a value lie inside their record, inside the blocks, so the data
 * buffers (the blocks' size, below INT32_MAX) hold them.
 */
static inline int go_record(group_out *g, const uint8_t *a, Py_ssize_t p, Py_ssize_t e,
                            int64_t *tsd, int64_t *odl)
{
    int64_t klen, vlen;
    if (!short_varint(a, e, &p, tsd) || !short_varint(a, e, &p, odl) ||
        !short_varint(a, e, &p, &klen))
        return 0;
    Py_ssize_t kpos = p;
    p += klen > 0 ? klen : 0;
    if (!short_varint(a, e, &p, &vlen))
        return 0;
    Py_ssize_t vpos = p;
    p += vlen > 0 ? vlen : 0;
    if (p + 1 != e || a[p] != 0)
        return 0;
    Py_ssize_t r = g->r++;
    if (klen >= 0) {
        g->kval.p[r >> 3] |= (char)(1u << (r & 7));
        ob_put(&g->kdata, a + kpos, klen);
    } else {
        g->knulls++;
    }
    if (vlen >= 0) {
        g->vval.p[r >> 3] |= (char)(1u << (r & 7));
        ob_put(&g->vdata, a + vpos, vlen);
    } else {
        g->vnulls++;
    }
    int32_t ko = (int32_t)g->kdata.len, vo = (int32_t)g->vdata.len;
    ob_put(&g->koff, &ko, 4);
    ob_put(&g->voff, &vo, 4);
    return 1;
}

/*
 * The ``k`` records of ``a[0:len]``` starting at starts[0..k-1], each ending where the next
 * starts (starts[k]: the end of the last), when each has the common shape (one- or
 * two-byte varints for the deltas and lengths, no headers, consumed exactly): 1,
 * appended; 0 when one is not (the group is then None).
 */
static int go_records(group_out *g, const uint8_t *a, Py_ssize_t len, const Py_ssize_t *starts,
                      Py_ssize_t k)
{
    if (k > g->n - g->r)
        return 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        Py_ssize_t v = starts[i], e = starts[i + 1];
        if (v < 0 || v >= len || e > len || e < v)
            return 0;
        Py_ssize_t p = v + 1 + (a[v] >= 0x80) + 1;  /* after the length and attributes */
        int64_t tsd, odl;
        if (!go_record(g, a, p, e, &tsd, &odl))
            return 0;
        ob_put(&g->ts, &tsd, 8);
        ob_put(&g->od, &odl, 8);
    }
    return 1;
}

/* (timestampDeltas, offsetDeltas, keyOffsets, valueOffsets, keyData, valueData,
 * keyValidity, valueValidity, keyNulls, valueNulls) */
static PyObject *go_finish(group_out *g)
{
    PyObject *parts[8];
    outbuf *obs[8] = {&g->ts, &g->od, &g->koff, &g->voff, &g->kdata, &g->vdata, &g->kval,
                      &g->vval};
    for (int i = 0; i < 8; i++) {
        parts[i] = ob_finish(obs[i]);
        if (parts[i] == NULL) {
            for (int k = 0; k < i; k++)
                Py_DECREF(parts[k]);
            return NULL;
        }
    }
    return Py_BuildValue("(NNNNNNNNnn)", parts[0], parts[1], parts[2], parts[3], parts[4],
                         parts[5], parts[6], parts[7], g->knulls, g->vnulls);
}

/*
 * The starts of the records of block j of a group (counts[j] records from positions[r])
 * into starts[0..cnt], starts[cnt] being where its last record ends: in one joined buffer
 * (``bases`` given: block j at bases[j], the last record ending where the group's next
 * record starts, or at ``len``), or in the block itself (``bases`` NULL: at its end,
 * ``len``, unless bytes lie between it and the next record in the joined buffer: the
 * later blocks' ``lens`` while they hold no record, then that record's position; the
 * block is then not taken). 1, 0 when not taken, -1 with an error set.
 */
static int block_starts(PyObject *positions, PyObject *bases, PyObject *counts,
                        const Py_ssize_t *lens, Py_ssize_t nb, Py_ssize_t j, Py_ssize_t r,
                        Py_ssize_t cnt, Py_ssize_t n, Py_ssize_t len, Py_ssize_t *starts)
{
    Py_ssize_t base = 0;
    if (bases != NULL) {
        base = PyLong_AsSsize_t(PyList_GET_ITEM(bases, j));
        if (base == -1 && PyErr_Occurred())
            return -1;
    }
    for (Py_ssize_t i = 0; i < cnt; i++) {
        if (positions_get(positions, r + i, &starts[i]) < 0)
            return -1;
        starts[i] += base;
    }
    if (bases != NULL) {
        /* the next record of the group, in the next block that holds one */
        starts[cnt] = len;
        if (r + cnt < n) {
            for (Py_ssize_t q = j + 1; q < PyList_GET_SIZE(bases) && q < PyList_GET_SIZE(counts);
                 q++) {
                Py_ssize_t c2 = PyLong_AsSsize_t(PyList_GET_ITEM(counts, q));
                if (c2 == -1 && PyErr_Occurred())
                    return -1;
                if (c2 <= 0)
                    continue;
                Py_ssize_t b2 = PyLong_AsSsize_t(PyList_GET_ITEM(bases, q)), p2;
                if ((b2 == -1 && PyErr_Occurred()) || positions_get(positions, r + cnt, &p2) < 0)
                    return -1;
                starts[cnt] = b2 + p2;
                break;
            }
        }
        return 1;
    }
    starts[cnt] = len;
    Py_ssize_t gap = 0;
    if (r + cnt < n && positions_get(positions, r + cnt, &gap) < 0)
        return -1;
    for (Py_ssize_t q = j + 1; q < nb; q++) {
        Py_ssize_t c2 = PyLong_AsSsize_t(PyList_GET_ITEM(counts, q));
        if (c2 == -1 && PyErr_Occurred())
            return -1;
        if (c2 > 0)
            break;
        gap += lens[q];
    }
    return gap == 0;
}

/*
 * The group decode of both entry points: the blocks ``bufs`` (one joined buffer with
 * ``bases``, or each block with ``bases`` NULL), counts[j] records each at ``positions``.
 * -> the Arrow buffers (see go_finish), or None when a record is not of the common shape.
 */
static PyObject *group_decode(Py_buffer *bufs, Py_ssize_t nb, PyObject *positions,
                              PyObject *bases, PyObject *counts)
{
    Py_ssize_t n = positions_len(positions), total = 0, r = 0, blocks = nb;
    Py_ssize_t *lens = PyMem_Malloc((size_t)(nb + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *starts = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    group_out g;
    memset(&g, 0, sizeof(g));
    int st = 1;  /* 1: decoded, 0: None, -1: an error */
    if (lens == NULL || starts == NULL) {
        PyErr_NoMemory();
        st = -1;
        goto out;
    }
    for (Py_ssize_t j = 0; j < nb; j++)
        total += lens[j] = bufs[j].len;
    if (bases != NULL)  /* the joined buffer's blocks are the entries of bases and counts */
        blocks = PyList_GET_SIZE(bases) < PyList_GET_SIZE(counts) ? PyList_GET_SIZE(bases)
                                                                  : PyList_GET_SIZE(counts);
    /* as decode_group of the joined blocks: empty, or past int32 offsets, is not taken */
    if (total == 0 || n == 0 || total >= INT32_MAX || PyList_GET_SIZE(counts) < blocks) {
        st = 0;
        goto out;
    }
    if (go_init(&g, n, total) < 0) {
        st = -1;
        goto out;
    }
    for (Py_ssize_t j = 0; j < blocks && st == 1; j++) {
        Py_ssize_t cnt = PyLong_AsSsize_t(PyList_GET_ITEM(counts, j));
        if (cnt == -1 && PyErr_Occurred()) {
            st = -1;
            break;
        }
        if (cnt <= 0)
            continue;
        if (cnt > n - r) {
            st = 0;
            break;
        }
        const Py_buffer *blk = &bufs[bases != NULL ? 0 : j];
        st = block_starts(positions, bases, counts, lens, nb, j, r, cnt, n, blk->len, starts);
        if (st == 1)
            st = go_records(&g, (const uint8_t *)blk->buf, blk->len, starts, cnt);
        r += cnt;
    }
    if (st == 1 && r != n)
        st = 0;
out:;
    PyObject *result = st < 0 ? NULL : st == 0 ? Py_NewRef(Py_None) : go_finish(&g);
    go_free(&g);
    PyMem_Free(lens);
    PyMem_Free(starts);
    return result;
}

/*
 * vectorized.decode_group(buf, positions, bases, counts) in C, as Arrow buffers: the
 * records of the blocks joined in ``buf`` (block j at bases[j], counts[j] records at
 * ``positions``) when every one has the common shape, else None. -> (timestampDeltas,
 * offsetDeltas: int64 native-order bytes; keyOffsets, valueOffsets: int32 Arrow offsets
 * (n + 1); keyData, valueData; keyValidity, valueValidity: Arrow bitmaps, bit set = not
 * null; keyNulls, valueNulls: counts).
 */
static PyObject *sp_decode_group(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer buf;
    PyObject *positions, *bases, *counts;
    if (!PyArg_ParseTuple(args, "y*OO!O!", &buf, &positions, &PyList_Type, &bases,
                          &PyList_Type, &counts))
        return NULL;
    PyObject *result = positions_ok(positions)
                           ? group_decode(&buf, 1, positions, bases, counts) : NULL;
    PyBuffer_Release(&buf);
    return result;
}

/*
 * vectorized.decode_blocks(blocks, positions, counts): decode_group of the blocks (a list
 * of bytes-like objects, block j holding counts[j] records at ``positions``, relative to
 * it) read where they are, not joined: the same result when each block's records end at
 * its end in the joined buffer, else None.
 */
static PyObject *sp_decode_blocks(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *blocks, *positions, *counts, *result = NULL;
    if (!PyArg_ParseTuple(args, "O!OO!", &PyList_Type, &blocks, &positions, &PyList_Type,
                          &counts) || !positions_ok(positions))
        return NULL;
    Py_ssize_t nb = PyList_GET_SIZE(blocks), got = 0;
    if (PyList_GET_SIZE(counts) != nb) {
        PyErr_SetString(PyExc_ValueError, "blocks and counts differ in length");
        return NULL;
    }
    Py_buffer *bufs = PyMem_Calloc((size_t)(nb ? nb : 1), sizeof(Py_buffer));
    if (bufs == NULL)
        return PyErr_NoMemory();
    for (; got < nb; got++)
        if (PyObject_GetBuffer(PyList_GET_ITEM(blocks, got), &bufs[got], PyBUF_SIMPLE) < 0)
            break;
    if (got == nb)
        result = group_decode(bufs, nb, positions, NULL, counts);
    for (Py_ssize_t j = 0; j < got; j++)
        PyBuffer_Release(&bufs[j]);
    PyMem_Free(bufs);
    return result;
}

/*
 * One records block of decode_rows: its ``cnt`` records (the lengths chain as
 * sp_scan_lengths walks it: one- or two-byte length varints >= 0, ending exactly at the
 * block's end), each of the common shape as go_records takes it, appended to ``g`` with
 * absolute offsets (base + offsetDelta) and timestamps in microseconds (base +
 * timestampDelta, or ``append_time`` for a LogAppendTime batch: ``lat``; ms * 1000
 * wrapping in int64, as numpy's product). 1 appended, 0 not of the shape.
 */
static int rows_block(group_out *g, const uint8_t *a, Py_ssize_t len, Py_ssize_t cnt,
                      int64_t base_off, int64_t base_ts, int lat, int64_t append_time)
{
    if (cnt <= 0 || cnt > g->n - g->r)
        return 0;
    Py_ssize_t v = 0;
    for (Py_ssize_t i = 0; i < cnt; i++) {
        Py_ssize_t p = v;
        int64_t rlen, tsd, odl;
        if (!short_varint(a, len, &p, &rlen) || rlen < 0 || rlen > len - p)
            return 0;
        Py_ssize_t e = p + (Py_ssize_t)rlen;
        if (!go_record(g, a, p + 1, e, &tsd, &odl))  /* after the attributes */
            return 0;
        /* base offsets and timestamps are below 2**62 (the caller's bounds), deltas
         * below 2**13: no overflow; the product wraps as numpy's does */
        int64_t off = base_off + odl;
        uint64_t ms = (uint64_t)(lat ? append_time : base_ts + tsd);
        int64_t us = (int64_t)(ms * 1000u);
        ob_put(&g->ts, &us, 8);
        ob_put(&g->od, &off, 8);
        v = e;
    }
    return v == len;
}

/* an int64 of a list item (an int), -1 with an error set */
static int list_int64(PyObject *list, Py_ssize_t j, int64_t *out)
{
    long long x = PyLong_AsLongLong(PyList_GET_ITEM(list, j));
    if (x == -1 && PyErr_Occurred())
        return -1;
    *out = (int64_t)x;
    return 0;
}

/*
 * vectorized.decode_rows(blocks, counts, base_offsets, base_timestamps, append_times, out)
 * in C: the records of every block (a list of bytes-like objects; block j holds counts[j]
 * records of a batch whose baseOffset and baseTimestamp are base_offsets[j] and
 * base_timestamps[j], both within +-2**62, and append_times[j] its maxTimestamp when it is
 * LogAppendTime, else None), when each has the common shape, decoded into the Arrow
 * buffers ``out`` (a list of 8 writable buffers: offsets and timestamps in us, int64, 8 n
 * bytes each; key and value offsets, int32, 4 (n + 1); key and value data, the blocks'
 * total size each; key and value validity, (n + 7) / 8; n the sum of counts), filled in
 * place (the caller's memory pool, so no fresh pages per group). -> (keyBytes,
 * valueBytes, keyNulls, valueNulls), or None when a record is not of the shape (the
 * lengths chain of sp_scan_lengths, the fields of go_records).
 */
static PyObject *sp_decode_rows(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *blocks, *counts, *boffs, *bts, *lats, *outs, *result = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!", &PyList_Type, &blocks, &PyList_Type, &counts,
                          &PyList_Type, &boffs, &PyList_Type, &bts, &PyList_Type, &lats,
                          &PyList_Type, &outs))
        return NULL;
    Py_ssize_t nb = PyList_GET_SIZE(blocks);
    if (PyList_GET_SIZE(counts) != nb || PyList_GET_SIZE(boffs) != nb ||
        PyList_GET_SIZE(bts) != nb || PyList_GET_SIZE(lats) != nb ||
        PyList_GET_SIZE(outs) != 8) {
        PyErr_SetString(PyExc_ValueError, "decode_rows: lists of different lengths");
        return NULL;
    }
    Py_buffer ob[8];
    Py_ssize_t nob = 0, n = 0, total = 0, got = 0;
    Py_buffer *bufs = PyMem_Calloc((size_t)(nb ? nb : 1), sizeof(Py_buffer));
    if (bufs == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t j = 0; j < nb; j++) {
        Py_ssize_t c = PyLong_AsSsize_t(PyList_GET_ITEM(counts, j));
        if (c == -1 && PyErr_Occurred())
            goto out;
        if (c <= 0 || c > PY_SSIZE_T_MAX / 16 - n) {
            result = Py_NewRef(Py_None);
            goto out;
        }
        n += c;
    }
    for (; got < nb; got++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(blocks, got), &bufs[got], PyBUF_SIMPLE) < 0)
            goto out;
        total += bufs[got].len;
    }
    /* keys and values are cut out of the blocks: int32 Arrow offsets need them below 2 GiB */
    if (n == 0 || total >= INT32_MAX) {
        result = Py_NewRef(Py_None);
        goto out;
    }
    Py_ssize_t bits = (n + 7) / 8;
    Py_ssize_t need[8] = {8 * n, 8 * n, 4 * (n + 1), 4 * (n + 1), total, total, bits, bits};
    for (; nob < 8; nob++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(outs, nob), &ob[nob], PyBUF_WRITABLE) < 0)
            goto out;
        if (ob[nob].len < need[nob]) {
            nob++;
            PyErr_SetString(PyExc_ValueError, "decode_rows: an output buffer is too small");
            goto out;
        }
    }
    group_out g;
    memset(&g, 0, sizeof(g));
    g.n = n;
    outbuf *obs[8] = {&g.od, &g.ts, &g.koff, &g.voff, &g.kdata, &g.vdata, &g.kval, &g.vval};
    for (int i = 0; i < 8; i++) {
        obs[i]->p = ob[i].buf;
        obs[i]->cap = ob[i].len;
    }
    memset(g.kval.p, 0, (size_t)bits);
    memset(g.vval.p, 0, (size_t)bits);
    int32_t zero = 0;
    ob_put(&g.koff, &zero, 4);
    ob_put(&g.voff, &zero, 4);
    int ok = 1;
    for (Py_ssize_t j = 0; j < nb && ok; j++) {
        int64_t boff, bt, at = 0;
        PyObject *lat = PyList_GET_ITEM(lats, j);
        if (list_int64(boffs, j, &boff) < 0 || list_int64(bts, j, &bt) < 0 ||
            (lat != Py_None && list_int64(lats, j, &at) < 0))
            goto out;
        if (boff <= -((int64_t)1 << 62) || boff >= ((int64_t)1 << 62) ||
            bt <= -((int64_t)1 << 62) || bt >= ((int64_t)1 << 62) ||
            at <= -((int64_t)1 << 62) || at >= ((int64_t)1 << 62)) {
            ok = 0;
            break;
        }
        Py_ssize_t c = PyLong_AsSsize_t(PyList_GET_ITEM(counts, j));
        ok = rows_block(&g, (const uint8_t *)bufs[j].buf, bufs[j].len, c, boff, bt,
                        lat != Py_None, at);
    }
    if (ok && g.r == n)
        result = Py_BuildValue("(nnnn)", g.kdata.len, g.vdata.len, g.knulls, g.vnulls);
    else
        result = Py_NewRef(Py_None);
out:
    for (Py_ssize_t i = 0; i < nob; i++)
        PyBuffer_Release(&ob[i]);
    for (Py_ssize_t j = 0; j < got; j++)
        PyBuffer_Release(&bufs[j]);
    PyMem_Free(bufs);
    return result;
}

static PyObject *sp_crc_source(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    (void)self;
    if (!crc_resolved && crc_resolve() < 0)
        return NULL;
    return PyUnicode_FromString(crc_fn != NULL ? "crc32c package, C function"
                                               : "crc32c package, Python function");
}

static PyObject *sp_setup(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *err, *rec, *rb, *utf8, *pyblock, *pyinto, *pyvalid, *pyrecords, *crcload;
    Py_ssize_t chunk;
    if (!PyArg_ParseTuple(args, "OO!O!OnOOOOO", &err, &PyType_Type, &rec, &PyType_Type, &rb,
                          &utf8, &chunk, &pyblock, &pyinto, &pyvalid, &pyrecords, &crcload))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)rec, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)rb, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "Record and RecordBatch must be tuple types");
        return NULL;
    }
    PyObject **slots[] = {&InvalidRecordError, &RecordType, &RecordBatchType, &java_utf8,
                          &py_decode_block, &py_decode_block_into, &py_is_valid,
                          &py_records, &crc32c_loader};
    PyObject *values[] = {err, rec, rb, utf8, pyblock, pyinto, pyvalid, pyrecords, crcload};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        Py_INCREF(values[i]);
        Py_XSETREF(*slots[i], values[i]);
    }
    decode_chunk_bytes = chunk;
    fl_install(&fl_record, rec, 5);
    fl_install(&fl_batch, rb, 15);
    Py_RETURN_NONE;
}

/* block_is_dense: the walk of _record_walk.h, each offset delta checked to be its index */
static int dense_visit(void *ctx, const rw_record *r)
{
    int64_t *i = ctx;
    return r->offset_delta == (*i)++ ? 0 : 1;
}

static PyObject *sp_block_is_dense(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer buf;
    long long count;
    if (!PyArg_ParseTuple(args, "y*L:block_is_dense", &buf, &count))
        return NULL;
    int64_t i = 0;
    int e = rw_walk(buf.buf, (size_t)buf.len, count, dense_visit, &i);
    PyBuffer_Release(&buf);
    return PyBool_FromLong(e == 0);
}

/* summarize_block: storage/validator's summary of a run of whole records (the fold of
 * record_batch.record_runs_summary over one piece), without a Python object per record */
typedef struct {
    int64_t base_ts, first, index, lo, hi, hi_at;
    int keys, in_order;
} summary_ctx;

static int summary_visit(void *ctx, const rw_record *r)
{
    summary_ctx *s = ctx;
    /* baseTimestamp + timestampDelta in a Java long (wraps) */
    int64_t ts = (int64_t)((uint64_t)s->base_ts + (uint64_t)r->timestamp_delta);
    if (s->index == 0 || ts < s->lo)
        s->lo = ts;
    if (s->index == 0 || ts > s->hi) {
        s->hi = ts;
        s->hi_at = s->index;
    }
    if (r->key == NULL)
        s->keys = 0;
    if (r->offset_delta != s->first + s->index)
        s->in_order = 0;
    s->index++;
    return 0;
}

static PyObject *sp_summarize_block(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer buf;
    long long count, base_ts, first;  /* first: the run's first record's index */
    if (!PyArg_ParseTuple(args, "y*LLL:summarize_block", &buf, &count, &base_ts, &first))
        return NULL;
    summary_ctx s = {base_ts, first, 0, 0, 0, 0, 1, 1};
    int e = rw_walk(buf.buf, (size_t)buf.len, count, summary_visit, &s);
    PyBuffer_Release(&buf);
    if (e != 0 || count == 0)
        Py_RETURN_NONE;  /* the Python fold raises the decoder's error */
    return Py_BuildValue("LLLOO", (long long)s.lo, (long long)s.hi, (long long)s.hi_at,
                         s.keys ? Py_True : Py_False, s.in_order ? Py_True : Py_False);
}

/*
 * storage/recovery_scan.scan_log's fast path (LogSegment.recover's loop over v2 batches):
 * from ``pos``, every batch whose whole header is in the buffer, of magic 2, a size of at
 * least the v2 overhead, inside the buffer, offsets with prev < baseOffset <= lastOffset <=
 * max_rel and a matching CRC-32C is taken with the scan's bookkeeping (the epochs above
 * ``epoch_hi``, the positions of producer batches, the largest timestamp, an offset- and a
 * time-index entry when more than ``interval`` bytes were scanned); it stops at the first
 * batch that is not such a batch (or whose index entry's position does not fit an int32),
 * which the Python loop then checks under the broker's rules. The same values as the
 * Python loop's fast path, with no Python object a batch.
 * args: (view, pos, prev, max_rel, epoch_hi, max_ts, off_of_max, last_time, next_entry,
 *        interval, base_offset, oidx, tidx, epochs, producers)
 * -> (pos, prev, epoch_hi, max_ts, off_of_max, last_time, next_entry, batches taken)
 */
static int ba_extend(PyObject *ba, const uint8_t *data, Py_ssize_t n)
{
    Py_ssize_t at = PyByteArray_GET_SIZE(ba);
    if (PyByteArray_Resize(ba, at + n) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(ba) + at, data, (size_t)n);
    return 0;
}

static inline void put32(uint8_t *d, uint32_t v)
{
    d[0] = (uint8_t)(v >> 24); d[1] = (uint8_t)(v >> 16); d[2] = (uint8_t)(v >> 8);
    d[3] = (uint8_t)v;
}

static PyObject *sp_recovery_scan(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *view, *oidx, *tidx, *epochs, *producers;
    Py_ssize_t pos, next_entry, interval;
    long long prev, max_rel, max_ts, off_of_max, last_time, base;
    int epoch_hi;
    if (!PyArg_ParseTuple(args, "OnLLiLLLnnLO!O!O!O!", &view, &pos, &prev, &max_rel,
                          &epoch_hi, &max_ts, &off_of_max, &last_time, &next_entry, &interval,
                          &base, &PyByteArray_Type, &oidx, &PyByteArray_Type, &tidx,
                          &PyList_Type, &epochs, &PyList_Type, &producers))
        return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(view, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    const uint8_t *d = (const uint8_t *)buf.buf;
    const Py_ssize_t end = buf.len, fast_end = end - 61;  /* RECORD_BATCH_OVERHEAD */
    Py_ssize_t taken = 0;
    while (pos >= 0 && pos <= fast_end) {
        const uint8_t *h = d + pos;
        int64_t offset = be64(h);
        int32_t size = be32(h + 8);
        int32_t epoch = be32(h + 12);
        int32_t delta = be32(h + 23);
        if (h[16] != 2 || size < 49 || (Py_ssize_t)size > end - pos - 12)
            break;
        Py_ssize_t nxt = pos + 12 + size;
        /* prev < offset <= last <= max_rel, last = offset + delta (no overflow) */
        if (!(prev < offset) || delta < 0 || offset > max_rel - delta)
            break;
        int64_t last = offset + delta;
        int64_t computed = batch_crc(h + 21, nxt - pos - 21);
        if (computed < 0)
            goto fail;
        if ((uint32_t)computed != be32u(h + 17))
            break;
        int index_due = pos > next_entry;
        if (index_due && pos > INT32_MAX)  /* struct.pack('>ii') refuses it: left to Python */
            break;
        int64_t bmax = be64(h + 35), pid = be64(h + 43);
        if (epoch > epoch_hi) {
            PyObject *t = Py_BuildValue("(iL)", epoch, (long long)offset);
            if (t == NULL || PyList_Append(epochs, t) < 0) {
                Py_XDECREF(t);
                goto fail;
            }
            Py_DECREF(t);
            epoch_hi = epoch;
        }
        if (pid >= 0) {
            PyObject *at = PyLong_FromSsize_t(pos);
            if (at == NULL || PyList_Append(producers, at) < 0) {
                Py_XDECREF(at);
                goto fail;
            }
            Py_DECREF(at);
        }
        if (bmax > max_ts) {
            max_ts = bmax;
            off_of_max = last;
        }
        if (index_due) {
            uint8_t e[12];
            put32(e, (uint32_t)(int32_t)(last - base));
            put32(e + 4, (uint32_t)pos);
            if (ba_extend(oidx, e, 8) < 0)
                goto fail;
            if (max_ts > last_time) {
                put32(e, (uint32_t)((uint64_t)max_ts >> 32));
                put32(e + 4, (uint32_t)max_ts);
                put32(e + 8, (uint32_t)(int32_t)(off_of_max - base));
                if (ba_extend(tidx, e, 12) < 0)
                    goto fail;
                last_time = max_ts;
            }
            next_entry = pos + interval;
        }
        prev = last;
        pos = nxt;
        taken++;
    }
    PyBuffer_Release(&buf);
    return Py_BuildValue("(nLiLLLnn)", pos, prev, epoch_hi, max_ts, off_of_max, last_time,
                         next_entry, taken);
fail:
    PyBuffer_Release(&buf);
    return NULL;
}

static PyMethodDef methods[] = {
    {"setup", sp_setup, METH_VARARGS,
     "setup(InvalidRecordError, Record, RecordBatch, java_utf8, decode_chunk_bytes, "
     "py_decode_block, py_decode_block_into, py_is_valid, py_records, load_crc32c): the "
     "Python objects the loops use (py_*: the Python twins, for what the C does not take)"},
    {"decode_block", (PyCFunction)(void (*)(void))sp_decode_block, METH_FASTCALL,
     "record._decode_block in C"},
    {"decode_block_into", (PyCFunction)(void (*)(void))sp_decode_block_into, METH_FASTCALL,
     "record._decode_block_into in C"},
    {"batch_records", sp_batch_records, METH_O, "RecordBatch.records()' fast path, or None"},
    {"batch_is_valid", sp_batch_is_valid, METH_O, "RecordBatch.is_valid"},
    {"is_valid_property", sp_is_valid_property, METH_O,
     "is_valid_property(RecordBatch): RecordBatch.is_valid as a getset descriptor"},
    {"records_method", sp_records_method, METH_O,
     "records_method(RecordBatch): RecordBatch.records as a method descriptor"},
    {"scan_v2", sp_scan_v2, METH_VARARGS, "scan_batches()' v2 loop"},
    {"scan_lengths", sp_scan_lengths, METH_VARARGS, "vectorized.scan_lengths"},
    {"recovery_scan", sp_recovery_scan, METH_VARARGS, "recovery_scan.scan_log's fast path"},
    {"decode_group", sp_decode_group, METH_VARARGS,
     "vectorized.decode_group's records as Arrow buffers, or None"},
    {"block_is_dense", sp_block_is_dense, METH_VARARGS,
     "block_is_dense(data, count) -> bool: the block decodes and its offset deltas are "
     "0..count-1"},
    {"summarize_block", sp_summarize_block, METH_VARARGS,
     "summarize_block(data, count, base_timestamp, first) -> (minTimestamp, maxTimestamp, "
     "index of the first maxTimestamp, every key present, offset deltas first.. in order) "
     "or None (the block does not decode: the Python fold raises why)"},
    {"crc_source", sp_crc_source, METH_NOARGS,
     "how batch CRCs are computed: the crc32c package's C function or its Python one"},
    {"decode_blocks", sp_decode_blocks, METH_VARARGS,
     "vectorized.decode_blocks: decode_group of a list of blocks, not joined"},
    {"decode_rows", sp_decode_rows, METH_VARARGS,
     "vectorized.decode_rows: the blocks' records, absolute, into Arrow buffers, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "The hot loops of kafkalog_cli.format's read path in C (see the source's header).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    /* list.append's C function, so the column consumer appends to lists directly */
    PyObject *l = PyList_New(0);
    if (l != NULL) {
        PyObject *app = PyObject_GetAttrString(l, "append");
        if (app != NULL && PyCFunction_Check(app))
            list_append_meth = PyCFunction_GET_FUNCTION(app);
        Py_XDECREF(app);
        Py_DECREF(l);
    }
    PyErr_Clear();
    empty_tuple = PyTuple_New(0);
    str_valid_end = PyUnicode_InternFromString("valid_end");
    str_step = PyUnicode_InternFromString("_step");
    if (empty_tuple == NULL || str_valid_end == NULL || str_step == NULL ||
        PyType_Ready(&BatchIterType) < 0 || PyType_Ready(&TupIterType) < 0 ||
        PyModule_AddObjectRef(m, "BatchIterator", (PyObject *)&BatchIterType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    /* the layout compiled in, for record_batch.py to check against the schema's */
    if (PyModule_AddIntConstant(m, "LOG_OVERHEAD", LOG_OVERHEAD) < 0 ||
        PyModule_AddIntConstant(m, "RECORD_BATCH_OVERHEAD", RECORD_BATCH_OVERHEAD) < 0 ||
        PyModule_AddIntConstant(m, "MIN_BATCH_LENGTH", MIN_BATCH_LENGTH) < 0 ||
        PyModule_AddIntConstant(m, "ATTRIBUTES_OFFSET", ATTRIBUTES_OFFSET) < 0 ||
        PyModule_AddIntConstant(m, "RECORDS_OFFSET", RECORDS_OFFSET) < 0 ||
        PyModule_AddIntConstant(m, "MAGIC_V2", MAGIC_V2) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
