/*
 * kafkalog_cli.render._speedups: dump-segment's record lines in C.
 *
 * Optional, as kafkalog_cli.format._speedups is: render/dump.py imports this module when it
 * was built (setup.py, when a compiler and Python's headers are present) and
 * KAFKALOG_PURE_PYTHON is not set; otherwise it runs its own Python loops, which stay the
 * reference. Each function takes the records of one block of a v2 batch (a list of
 * records.Record tuples: offset, timestamp, key, value, headers) and returns the UTF-8
 * bytes of what the Python function it replaces returns as text, joined with their
 * newlines (tests/render/test_render_speedups.py compares both on random records):
 *
 *   kafka_lines(records, timestamp_type, base_offset, base_sequence, skip_metadata,
 *               with_data, java_string) -> bytes | None
 *       render.dump.kafka_record_lines: DumpLogSegments' "| offset: ..." lines; keys and
 *       payloads that are well-formed UTF-8 are copied, others go through java_string
 *       (Kafka's StringDecoder: Java's new String(bytes, UTF_8))
 *   read_json_lines(records, encoding) -> bytes | None
 *       render.read.json_line for each of a list of ops.read.ConsumerRecord (a decoded
 *       record, or a key or value over 1 MiB, declines the block)
 *   json_lines(records, base_offset, base_sequence, with_data, encoding) -> bytes | None
 *       render.dump.json_record_lines: the JSON Lines "record" objects, strings escaped
 *       as json's encode_basestring (ensure_ascii=False) escapes them; encoding 0 utf8
 *       (well-formed UTF-8 as text, other bytes base64), 1 base64, 2 hex
 *
 * None: the block holds something these loops do not take (an int outside int64, a key
 * that is not bytes, a header that is not a (str, bytes | None) pair, a header key that is
 * not UTF-8-encodable); the caller then renders the block with the Python loop.
 *
 * A record's sequence is DefaultRecord.sequence: baseSequence < 0 ? -1 :
 * DefaultRecordBatch.incrementSequence(baseSequence, offset - baseOffset).
 *
 * Memory: the output of one block (its records are already in memory; escaping grows a
 * field at most 6x, hex 2x).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <limits.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../format/_record_walk.h"

#define INT32_MAX_ 2147483647LL
#define DELTA_MAX (1LL << 40)   /* offset deltas are int32: beyond this, the Python loop */

/* -- the output buffer: a bytes object grown in place ------------------------------------ */

typedef struct {
    PyObject *bytes;
    char *p;
    Py_ssize_t len, cap;
} outbuf;

static int ob_init(outbuf *o, Py_ssize_t cap)
{
    o->bytes = PyBytes_FromStringAndSize(NULL, cap);
    if (o->bytes == NULL)
        return -1;
    o->p = PyBytes_AS_STRING(o->bytes);
    o->len = 0;
    o->cap = cap;
    return 0;
}

static int ob_reserve(outbuf *o, Py_ssize_t n)
{
    if (n <= o->cap - o->len)
        return 0;
    if (n > PY_SSIZE_T_MAX / 2 - o->len) {
        PyErr_NoMemory();
        return -1;
    }
    /* 1.5x (small puts amortized), or exactly what a large field needs (a field is
     * reserved whole before it is written: a huge one is not doubled past its size) */
    Py_ssize_t cap = o->cap + o->cap / 2;
    if (cap < o->len + n)
        cap = o->len + n;
    if (_PyBytes_Resize(&o->bytes, cap) < 0)
        return -1;
    o->p = PyBytes_AS_STRING(o->bytes);
    o->cap = cap;
    return 0;
}

static inline int ob_put(outbuf *o, const char *s, Py_ssize_t n)
{
    if (ob_reserve(o, n) < 0)
        return -1;
    memcpy(o->p + o->len, s, (size_t)n);
    o->len += n;
    return 0;
}

#define PUTS(o, lit) ob_put((o), (lit), (Py_ssize_t)(sizeof(lit) - 1))

static inline int ob_int(outbuf *o, long long v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *s = e;
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    while (u >= 100) {   /* two digits a step */
        unsigned d = (unsigned)(u % 100);
        u /= 100;
        *--s = pairs[2 * d + 1];
        *--s = pairs[2 * d];
    }
    if (u >= 10) {
        *--s = pairs[2 * u + 1];
        *--s = pairs[2 * u];
    } else {
        *--s = (char)('0' + u);
    }
    if (v < 0)
        *--s = '-';
    return ob_put(o, s, e - s);
}

/* -- unchecked writers: into room reserved beforehand (a record's upper bound) ----------- */

#define W_LIT(d, lit) (memcpy((d), (lit), sizeof(lit) - 1), (d) + sizeof(lit) - 1)

/* v in decimal at d (at most 20 bytes); returns the end */
static inline char *w_int(char *d, long long v)
{
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    if (v < 0)
        *d++ = '-';
    static const unsigned long long p10[20] = {
        1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
        100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
        10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
        100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL};
    /* the digits: log10 from the bit length (x 1233 / 4096 ~ log10(2)), then one compare */
    int t = ((64 - __builtin_clzll(u | 1)) * 1233) >> 12;
    int n = t + 1 - ((u | 1) < p10[t]);   /* (u | 1: 0 has one digit) */
    char *e = d + n, *s = e;
    while (u >= 100) {
        unsigned q = (unsigned)(u % 100);
        u /= 100;
        *--s = pairs[2 * q + 1];
        *--s = pairs[2 * q];
    }
    if (u >= 10) {
        *--s = pairs[2 * u + 1];
        *--s = pairs[2 * u];
    } else {
        *--s = (char)('0' + u);
    }
    return e;
}

static PyObject *ob_finish(outbuf *o)
{
    if (_PyBytes_Resize(&o->bytes, o->len) < 0)
        return NULL;
    PyObject *r = o->bytes;
    o->bytes = NULL;
    return r;
}

/* -- UTF-8, JSON strings, base64, hex ---------------------------------------------------- */

/* Well-formed UTF-8 (Unicode Table 3-7), as Python's strict decoder takes it: no overlong
 * forms, no surrogates, nothing above U+10FFFF, no truncated sequence. */
static int utf8_ok(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
#ifdef __SSE2__
        while (i + 16 <= n &&
               !_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + i))))
            i += 16;
#endif
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80)
                return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n)
                return 0;
            unsigned c1 = s[i + 1];
            unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
            if (c1 < lo || c1 > hi || (s[i + 2] & 0xC0) != 0x80)
                return 0;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n)
                return 0;
            unsigned c1 = s[i + 1];
            unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
            if (c1 < lo || c1 > hi || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80)
                return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Extra bytes a JSON string spends on each byte: json.encoder.encode_basestring
 * (ensure_ascii=False) escapes '"', '\\' and the C0 controls (\b \f \n \r \t, others
 * \u00xx), all else as is. Filled by the module's init. */
static unsigned char json_extra[256];

static void json_extra_init(void)
{
    for (int c = 0; c < 0x20; c++)
        json_extra[c] = 5;
    json_extra['\b'] = json_extra['\f'] = json_extra['\n'] = json_extra['\r'] =
        json_extra['\t'] = 1;
    json_extra['"'] = json_extra['\\'] = 1;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether any of the 8 bytes of w needs escaping: below 0x20, '"' or '\\' (the exact
 * existence tests of "Bit Twiddling Hacks": haszero, hasless). */
static inline int word_needs_escape(uint64_t w)
{
    uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
    return (((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS ? 1 : 0;
}

#ifdef __SSE2__
/* The bytes of p[0:16] that JSON escapes (below 0x20, '"', '\\'), as a bit mask. */
static inline unsigned esc_mask16(const unsigned char *p)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i low = _mm_cmplt_epi8(_mm_xor_si128(v, _mm_set1_epi8((char)0x80)),
                                 _mm_set1_epi8((char)(0x20 ^ 0x80)));   /* unsigned < 0x20 */
    __m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i b = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(low, _mm_or_si128(q, b)));
}
#endif

/* One escaped byte of a JSON string at d; returns the end. */
static inline char *json_escape_byte(char *d, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    *d++ = '\\';
    switch (c) {
    case '"': *d++ = '"'; break;
    case '\\': *d++ = '\\'; break;
    case '\b': *d++ = 'b'; break;
    case '\f': *d++ = 'f'; break;
    case '\n': *d++ = 'n'; break;
    case '\r': *d++ = 'r'; break;
    case '\t': *d++ = 't'; break;
    default:
        *d++ = 'u';
        *d++ = '0';
        *d++ = '0';
        *d++ = hex[c >> 4];
        *d++ = hex[c & 15];
    }
    return d;
}

/* The body of a JSON string for UTF-8 bytes (see json_extra). */
static int json_escape(outbuf *o, const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t extra = 0;   /* the exact size first: a huge field is reserved once */
    Py_ssize_t i = 0;
#ifdef __SSE2__
    for (; i + 16 <= n; i += 16)
        for (unsigned m = esc_mask16(s + i); m; m &= m - 1)
            extra += json_extra[s[i + __builtin_ctz(m)]];
#else
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (word_needs_escape(w))
            for (int k = 0; k < 8; k++)
                extra += json_extra[s[i + k]];
    }
#endif
    for (; i < n; i++)
        extra += json_extra[s[i]];
    if (ob_reserve(o, n + extra) < 0)
        return -1;
    char *d = o->p + o->len;
    if (extra == 0) {
        memcpy(d, s, (size_t)n);
        o->len += n;
        return 0;
    }
    i = 0;
#ifdef __SSE2__
    for (; i + 16 <= n; i += 16) {
        unsigned m = esc_mask16(s + i);
        if (!m) {
            memcpy(d, s + i, 16);
            d += 16;
            continue;
        }
        Py_ssize_t k = 0;
        for (; m; m &= m - 1) {   /* the clean bytes before each escaped one, then it */
            Py_ssize_t b = __builtin_ctz(m);
            memcpy(d, s + i + k, (size_t)(b - k));
            d = json_escape_byte(d + (b - k), s[i + b]);
            k = b + 1;
        }
        memcpy(d, s + i + k, (size_t)(16 - k));
        d += 16 - k;
    }
#endif
    for (; i < n; i++) {
        unsigned char c = s[i];
        if (!(i & 7) && i + 8 <= n) {   /* 8 bytes needing no escape: copied at once */
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!word_needs_escape(w)) {
                memcpy(d, s + i, 8);
                d += 8;
                i += 7;
                continue;
            }
        }
        if (!json_extra[c])
            *d++ = (char)c;
        else
            d = json_escape_byte(d, c);
    }
    o->len = d - o->p;
    return 0;
}

static int base64_put(outbuf *o, const unsigned char *s, Py_ssize_t n)
{
    static const char a[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n > (PY_SSIZE_T_MAX / 4) * 3 - 3) {
        PyErr_NoMemory();
        return -1;
    }
    if (ob_reserve(o, (n + 2) / 3 * 4) < 0)
        return -1;
    char *d = o->p + o->len;
    Py_ssize_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        *d++ = a[v >> 18];
        *d++ = a[(v >> 12) & 63];
        *d++ = a[(v >> 6) & 63];
        *d++ = a[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        *d++ = a[v >> 18];
        *d++ = a[(v >> 12) & 63];
        *d++ = '=';
        *d++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        *d++ = a[v >> 18];
        *d++ = a[(v >> 12) & 63];
        *d++ = a[(v >> 6) & 63];
        *d++ = '=';
    }
    o->len = d - o->p;
    return 0;
}

static int hex_put(outbuf *o, const unsigned char *s, Py_ssize_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (n > PY_SSIZE_T_MAX / 2 || ob_reserve(o, 2 * n) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    char *d = o->p + o->len;
    for (Py_ssize_t i = 0; i < n; i++) {
        *d++ = hex[s[i] >> 4];
        *d++ = hex[s[i] & 15];
    }
    o->len = d - o->p;
    return 0;
}

/* -- one record's fields ------------------------------------------------------------------ */

#define FALLBACK 1   /* the block is for the Python loop */

/* A header of a record: its key's UTF-8 and its value (NULL, length -1: null). */
typedef struct {
    const char *k;
    const unsigned char *v;
    Py_ssize_t kn, vn;
} hdr;

/* A record's fields as bytes: from a Record tuple (get_rec: pointers into its objects,
 * which the caller keeps alive) or from a records block (_record_walk.h: into the block).
 * key/value NULL (length -1): null. */
typedef struct {
    long long offset, timestamp, sequence;
    const unsigned char *key, *value;
    Py_ssize_t key_len, value_len;
    Py_ssize_t nh;
    hdr *h;
} rec;

/* The headers of the records of a call: grown to the most any record holds. */
typedef struct {
    hdr *h;
    Py_ssize_t cap;
} hdrbuf;

static int hb_reserve(hdrbuf *b, Py_ssize_t n)
{
    if (n <= b->cap)
        return 0;
    hdr *h = PyMem_Realloc(b->h, (size_t)n * sizeof(hdr));
    if (h == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->h = h;
    b->cap = n;
    return 0;
}

static int as_int64(PyObject *v, long long *out)
{
    if (!PyLong_CheckExact(v))
        return FALLBACK;
    int overflow = 0;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow)
        return FALLBACK;
    if (*out == -1 && PyErr_Occurred())
        return -1;
    return 0;
}

/* A str's UTF-8; FALLBACK (error cleared) when it has none (lone surrogates): the Python
 * loop then does what Python does with it. */
static int str_utf8(PyObject *s, const char **p, Py_ssize_t *n)
{
    *p = PyUnicode_AsUTF8AndSize(s, n);
    if (*p == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
            return -1;
        PyErr_Clear();
        return FALLBACK;
    }
    return 0;
}

/* DefaultRecord.sequence: baseSequence < 0 ? -1 : incrementSequence(baseSequence,
 * offset - baseOffset); FALLBACK when the difference is out of the loops' range. */
static int sequence_of(long long offset, long long base_offset, long long base_seq,
                       long long *out)
{
    if (base_seq < 0) {
        *out = -1;
        return 0;
    }
    long long a = offset, b = base_offset;
    if ((a >= 0 && b < 0 && a > LLONG_MAX + b) || (a < 0 && b > 0 && a < LLONG_MIN + b))
        return FALLBACK;   /* a - b would overflow */
    long long inc = a - b;
    if (inc > DELTA_MAX || inc < -DELTA_MAX)
        return FALLBACK;
    *out = base_seq > INT32_MAX_ - inc ? inc - (INT32_MAX_ - base_seq) - 1 : base_seq + inc;
    return 0;
}

/* bytes or None as a rec field */
static void bytes_field(PyObject *b, const unsigned char **p, Py_ssize_t *n)
{
    if (b == Py_None) {
        *p = NULL;
        *n = -1;
    } else {
        *p = (const unsigned char *)PyBytes_AS_STRING(b);
        *n = PyBytes_GET_SIZE(b);
    }
}

/* The fields of records[i]; FALLBACK when they are not the shapes the loops take. */
static int get_rec(PyObject *r, long long base_offset, long long base_seq, hdrbuf *hb,
                   rec *out)
{
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 5)
        return FALLBACK;
    int e;
    if ((e = as_int64(PyTuple_GET_ITEM(r, 0), &out->offset)) != 0 ||
        (e = as_int64(PyTuple_GET_ITEM(r, 1), &out->timestamp)) != 0)
        return e;
    PyObject *key = PyTuple_GET_ITEM(r, 2), *value = PyTuple_GET_ITEM(r, 3),
             *headers = PyTuple_GET_ITEM(r, 4);
    if ((key != Py_None && !PyBytes_CheckExact(key)) ||
        (value != Py_None && !PyBytes_CheckExact(value)) || !PyTuple_Check(headers))
        return FALLBACK;
    bytes_field(key, &out->key, &out->key_len);
    bytes_field(value, &out->value, &out->value_len);
    Py_ssize_t nh = PyTuple_GET_SIZE(headers);
    if (hb_reserve(hb, nh) < 0)
        return -1;
    out->nh = nh;
    out->h = hb->h;
    for (Py_ssize_t j = 0; j < nh; j++) {
        PyObject *h = PyTuple_GET_ITEM(headers, j);
        if (!PyTuple_Check(h) || PyTuple_GET_SIZE(h) != 2 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(h, 0)))
            return FALLBACK;
        PyObject *hv = PyTuple_GET_ITEM(h, 1);
        if (hv != Py_None && !PyBytes_CheckExact(hv))
            return FALLBACK;
        if ((e = str_utf8(PyTuple_GET_ITEM(h, 0), &out->h[j].k, &out->h[j].kn)) != 0)
            return e;
        bytes_field(hv, &out->h[j].v, &out->h[j].vn);
    }
    return sequence_of(out->offset, base_offset, base_seq, &out->sequence);
}

/* A block's answer: its bytes (e == 0), None for the Python loop (FALLBACK), or NULL with
 * the error set (e < 0); the buffer is released in the last two cases. */
static PyObject *ob_result(outbuf *o, int e)
{
    if (e == 0)
        return ob_finish(o);
    Py_XDECREF(o->bytes);
    if (e < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* A batch's base offset or base sequence; FALLBACK outside int64 (base sequence: int32). */
static int batch_arg(PyObject *v, long long *out, long long max)
{
    if (!PyLong_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "an int is required");
        return -1;
    }
    int e = as_int64(v, out);
    if (e == 0 && (*out > max || *out < -max - 1))
        return FALLBACK;
    return e;
}

/* A batch's base offset (int64) and base sequence (int32): 0, FALLBACK or -1. */
static int batch_args(PyObject *base_obj, PyObject *seq_obj, long long *base_offset,
                      long long *base_seq)
{
    int e = batch_arg(base_obj, base_offset, LLONG_MAX);
    return e == 0 ? batch_arg(seq_obj, base_seq, INT32_MAX_) : e;
}

/* The worst case of a block's output, for one allocation in the common case. */
static Py_ssize_t estimate(PyObject *records, Py_ssize_t per_record, Py_ssize_t per_byte)
{
    Py_ssize_t n = PyList_GET_SIZE(records), total = 64;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = PyList_GET_ITEM(records, i);
        total += per_record;
        if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 5) {
            PyObject *k = PyTuple_GET_ITEM(r, 2), *v = PyTuple_GET_ITEM(r, 3);
            if (PyBytes_CheckExact(k))
                total += PyBytes_GET_SIZE(k) * per_byte;
            if (PyBytes_CheckExact(v))
                total += PyBytes_GET_SIZE(v) * per_byte;
        }
        if (total > (1 << 26))   /* beyond 64 MiB: grow as needed */
            return 1 << 26;
    }
    return total;
}

/* A str as UTF-8, encoded straight into the output (no UTF-8 copy cached on the str: a
 * huge field is held once); FALLBACK for a lone surrogate, which has no UTF-8. */
static int put_str_utf8(outbuf *o, PyObject *str)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(str);
    if (PyUnicode_IS_ASCII(str))
        return ob_put(o, (const char *)PyUnicode_DATA(str), n);
    int kind = PyUnicode_KIND(str);
    const void *data = PyUnicode_DATA(str);
    Py_ssize_t need = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 0xD800 && c <= 0xDFFF)
            return FALLBACK;
        need += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }
    if (ob_reserve(o, need) < 0)
        return -1;
    unsigned char *d = (unsigned char *)o->p + o->len;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x80) {
            *d++ = (unsigned char)c;
        } else if (c < 0x800) {
            *d++ = (unsigned char)(0xC0 | (c >> 6));
            *d++ = (unsigned char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            *d++ = (unsigned char)(0xE0 | (c >> 12));
            *d++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            *d++ = (unsigned char)(0x80 | (c & 0x3F));
        } else {
            *d++ = (unsigned char)(0xF0 | (c >> 18));
            *d++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            *d++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            *d++ = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    o->len = (char *)d - o->p;
    return 0;
}

/* -- kafka_lines --------------------------------------------------------------------------- */

static int kafka_field(outbuf *o, const unsigned char *s, Py_ssize_t n, PyObject *java_string)
{
    if (utf8_ok(s, n))
        return ob_put(o, (const char *)s, n);
    PyObject *data = PyBytes_FromStringAndSize((const char *)s, n);
    if (data == NULL)
        return -1;
    PyObject *text = PyObject_CallOneArg(java_string, data);
    Py_DECREF(data);
    if (text == NULL)
        return -1;
    if (!PyUnicode_Check(text)) {
        Py_DECREF(text);
        return FALLBACK;
    }
    int e = put_str_utf8(o, text);
    Py_DECREF(text);
    return e;
}

static int kafka_record(outbuf *o, const rec *r, const char *ts_type, Py_ssize_t ts_len,
                        int skip_metadata, int with_data, PyObject *java_string)
{
    const char *prefix = "| ";
    int e;
    if (!skip_metadata) {
        /* the metadata's bound: 5 ints of at most 20 bytes, the names, the header keys */
        Py_ssize_t need = 160 + ts_len;
        for (Py_ssize_t j = 0; j < r->nh; j++)
            need += r->h[j].kn + 1;
        if (ob_reserve(o, need) < 0)
            return -1;
        char *d = o->p + o->len;
        d = W_LIT(d, "| offset: ");
        d = w_int(d, r->offset);
        *d++ = ' ';
        memcpy(d, ts_type, (size_t)ts_len);
        d += ts_len;
        d = W_LIT(d, ": ");
        d = w_int(d, r->timestamp);
        d = W_LIT(d, " keySize: ");
        d = w_int(d, r->key_len);
        d = W_LIT(d, " valueSize: ");
        d = w_int(d, r->value_len);
        d = W_LIT(d, " sequence: ");
        d = w_int(d, r->sequence);
        d = W_LIT(d, " headerKeys: [");
        for (Py_ssize_t j = 0; j < r->nh; j++) {
            if (j)
                *d++ = ',';
            memcpy(d, r->h[j].k, (size_t)r->h[j].kn);
            d += r->h[j].kn;
        }
        *d++ = ']';
        o->len = d - o->p;
        prefix = " ";
    }
    if (with_data) {
        if (r->key != NULL) {
            if (ob_put(o, prefix, (Py_ssize_t)strlen(prefix)) < 0 || PUTS(o, "key: ") < 0)
                return -1;
            if ((e = kafka_field(o, r->key, r->key_len, java_string)) != 0)
                return e;
            prefix = " ";
        }
        if (r->value != NULL) {
            if (ob_put(o, prefix, (Py_ssize_t)strlen(prefix)) < 0 ||
                PUTS(o, "payload: ") < 0)
                return -1;
            if ((e = kafka_field(o, r->value, r->value_len, java_string)) != 0)
                return e;
        }
    }
    return PUTS(o, "\n");
}

static PyObject *sp_kafka_lines(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *records, *ts_type_obj, *base_obj, *seq_obj, *java_string;
    int skip_metadata, with_data;
    if (!PyArg_ParseTuple(args, "O!UOOppO:kafka_lines", &PyList_Type, &records, &ts_type_obj,
                          &base_obj, &seq_obj, &skip_metadata, &with_data, &java_string))
        return NULL;
    long long base_offset, base_seq;
    int e = batch_args(base_obj, seq_obj, &base_offset, &base_seq);
    if (e < 0)
        return NULL;
    if (e == FALLBACK)
        Py_RETURN_NONE;
    const char *ts_type;
    Py_ssize_t ts_len;
    e = str_utf8(ts_type_obj, &ts_type, &ts_len);
    if (e < 0)
        return NULL;
    if (e == FALLBACK)
        Py_RETURN_NONE;
    outbuf o;
    if (ob_init(&o, estimate(records, 160 + ts_len, 1)) < 0)
        return NULL;
    hdrbuf hb = {NULL, 0};
    Py_ssize_t n = PyList_GET_SIZE(records);
    for (Py_ssize_t i = 0; i < n && e == 0; i++) {
        rec r;
        /* the list may change under a java_string call: index it afresh each time */
        if (i >= PyList_GET_SIZE(records))
            break;
        PyObject *item = PyList_GET_ITEM(records, i);
        Py_INCREF(item);
        e = get_rec(item, base_offset, base_seq, &hb, &r);
        if (e == 0)
            e = kafka_record(&o, &r, ts_type, ts_len, skip_metadata, with_data, java_string);
        Py_DECREF(item);
    }
    PyMem_Free(hb.h);
    return ob_result(&o, e);
}

/* -- json_lines ---------------------------------------------------------------------------- */

enum { ENC_UTF8 = 0, ENC_BASE64 = 1, ENC_HEX = 2 };

/* A key, value or header value (NULL: null) as JSON; *label the ...Encoding value to
 * write beside it (NULL: none), as render.dump._json_bytes gives them. */
static int json_raw(outbuf *o, const unsigned char *s, Py_ssize_t n, int encoding,
                    const char **label)
{
    *label = NULL;
    if (s == NULL)
        return PUTS(o, "null");
    if (encoding == ENC_UTF8 && utf8_ok(s, n))
        return (PUTS(o, "\"") < 0 || json_escape(o, s, n) < 0 || PUTS(o, "\"") < 0) ? -1 : 0;
    if (PUTS(o, "\"") < 0)
        return -1;
    if (encoding == ENC_HEX) {
        *label = "hex";
        if (hex_put(o, s, n) < 0)
            return -1;
    } else {
        *label = "base64";
        if (base64_put(o, s, n) < 0)
            return -1;
    }
    return PUTS(o, "\"");
}

/* json_raw of bytes or None */
static int json_bytes(outbuf *o, PyObject *data, int encoding, const char **label)
{
    const unsigned char *s;
    Py_ssize_t n;
    bytes_field(data, &s, &n);
    return json_raw(o, s, n, encoding, label);
}

/* UTF-8 text as a JSON string */
static int json_utf8(outbuf *o, const char *s, Py_ssize_t n)
{
    return (PUTS(o, "\"") < 0 || json_escape(o, (const unsigned char *)s, n) < 0 ||
            PUTS(o, "\"") < 0) ? -1 : 0;
}

static int json_str(outbuf *o, PyObject *str)
{
    const char *s;
    Py_ssize_t n;
    int e = str_utf8(str, &s, &n);
    return e != 0 ? e : json_utf8(o, s, n);
}

static int json_label(outbuf *o, const char *name, const char *label)
{
    if (label == NULL)
        return 0;
    return (ob_put(o, name, (Py_ssize_t)strlen(name)) < 0 ||
            ob_put(o, label, (Py_ssize_t)strlen(label)) < 0 || PUTS(o, "\"") < 0) ? -1 : 0;
}

static int json_record(outbuf *o, const rec *r, int with_data, int encoding)
{
    if (ob_reserve(o, 200) < 0)   /* the names and 4 ints of at most 20 bytes */
        return -1;
    char *d = o->p + o->len;
    d = W_LIT(d, "{\"type\":\"record\",\"offset\":");
    d = w_int(d, r->offset);
    d = W_LIT(d, ",\"timestamp\":");
    d = w_int(d, r->timestamp);
    d = W_LIT(d, ",\"keySize\":");
    d = w_int(d, r->key_len);
    d = W_LIT(d, ",\"valueSize\":");
    d = w_int(d, r->value_len);
    d = W_LIT(d, ",\"sequence\":");
    d = w_int(d, r->sequence);
    d = W_LIT(d, ",\"headerKeys\":[");
    o->len = d - o->p;
    for (Py_ssize_t j = 0; j < r->nh; j++)
        if ((j && PUTS(o, ",") < 0) || json_utf8(o, r->h[j].k, r->h[j].kn) < 0)
            return -1;
    if (PUTS(o, "]") < 0)
        return -1;
    if (!with_data)
        return PUTS(o, "}\n");
    const char *klabel, *vlabel, *hlabel;
    if (PUTS(o, ",\"key\":") < 0 || json_raw(o, r->key, r->key_len, encoding, &klabel) < 0 ||
        PUTS(o, ",\"value\":") < 0 ||
        json_raw(o, r->value, r->value_len, encoding, &vlabel) < 0 ||
        PUTS(o, ",\"headers\":[") < 0)
        return -1;
    for (Py_ssize_t j = 0; j < r->nh; j++) {
        if ((j && PUTS(o, ",") < 0) || PUTS(o, "{\"key\":") < 0 ||
            json_utf8(o, r->h[j].k, r->h[j].kn) < 0 || PUTS(o, ",\"value\":") < 0 ||
            json_raw(o, r->h[j].v, r->h[j].vn, encoding, &hlabel) < 0 ||
            json_label(o, ",\"valueEncoding\":\"", hlabel) < 0 || PUTS(o, "}") < 0)
            return -1;
    }
    if (PUTS(o, "]") < 0 || json_label(o, ",\"keyEncoding\":\"", klabel) < 0 ||
        json_label(o, ",\"valueEncoding\":\"", vlabel) < 0)
        return -1;
    return PUTS(o, "}\n");
}

static PyObject *sp_json_lines(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *records, *base_obj, *seq_obj;
    int with_data, encoding;
    if (!PyArg_ParseTuple(args, "O!OOpi:json_lines", &PyList_Type, &records, &base_obj,
                          &seq_obj, &with_data, &encoding))
        return NULL;
    if (encoding < ENC_UTF8 || encoding > ENC_HEX) {
        PyErr_Format(PyExc_ValueError, "unknown data encoding %d", encoding);
        return NULL;
    }
    long long base_offset, base_seq;
    int e = batch_args(base_obj, seq_obj, &base_offset, &base_seq);
    if (e < 0)
        return NULL;
    if (e == FALLBACK)
        Py_RETURN_NONE;
    outbuf o;
    if (ob_init(&o, estimate(records, 200, encoding == ENC_UTF8 ? 1 : 2)) < 0)
        return NULL;
    hdrbuf hb = {NULL, 0};
    Py_ssize_t n = PyList_GET_SIZE(records);
    for (Py_ssize_t i = 0; i < n && e == 0; i++) {
        rec r;
        PyObject *item = PyList_GET_ITEM(records, i);
        e = get_rec(item, base_offset, base_seq, &hb, &r);
        if (e == 0)
            e = json_record(&o, &r, with_data, encoding);
    }
    PyMem_Free(hb.h);
    return ob_result(&o, e);
}

/* -- kafka_block, json_block: a records block rendered without a Record per record ---------- */

typedef struct {
    outbuf *o;
    hdrbuf hb;
    long long base_offset, base_ts, lat_ts, base_seq;
    int lat, kafka, skip_metadata, with_data, encoding;
    const char *ts_type;
    Py_ssize_t ts_len;
    PyObject *java_string;
} block_ctx;

/* One record of the walk: its rec (header keys must be well-formed UTF-8, else the
 * block is for the Python loop, which decodes them as Utils.utf8 does), then its line. */
static int block_visit(void *ctx, const rw_record *w)
{
    block_ctx *c = ctx;
    rec r;
    if (__builtin_add_overflow(c->base_offset, (long long)w->offset_delta, &r.offset))
        return FALLBACK;
    /* a record's timestamp is a Java long: baseTimestamp + timestampDelta wraps */
    r.timestamp = c->lat ? c->lat_ts
                         : (long long)((uint64_t)c->base_ts + (uint64_t)w->timestamp_delta);
    int e = sequence_of(r.offset, c->base_offset, c->base_seq, &r.sequence);
    if (e != 0)
        return e;
    r.key = w->key;
    r.key_len = (Py_ssize_t)w->key_len;
    r.value = w->value;
    r.value_len = (Py_ssize_t)w->value_len;
    if (w->header_count > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(hdr) ||
        hb_reserve(&c->hb, (Py_ssize_t)w->header_count) < 0) {
        PyErr_Clear();
        return FALLBACK;
    }
    r.nh = (Py_ssize_t)w->header_count;
    r.h = c->hb.h;
    size_t pos = 0, end = SIZE_MAX;   /* the walk checked the headers' bounds */
    for (Py_ssize_t j = 0; j < r.nh; j++) {
        const uint8_t *hk, *hv;
        int64_t hkn, hvn;
        if (rw_header(w->headers, end, &pos, &hk, &hkn, &hv, &hvn) < 0 ||
            !utf8_ok(hk, (Py_ssize_t)hkn))
            return FALLBACK;
        r.h[j].k = (const char *)hk;
        r.h[j].kn = (Py_ssize_t)hkn;
        r.h[j].v = hv;
        r.h[j].vn = (Py_ssize_t)hvn;
    }
    if (c->kafka)
        return kafka_record(c->o, &r, c->ts_type, c->ts_len, c->skip_metadata, c->with_data,
                            c->java_string);
    return json_record(c->o, &r, c->with_data, c->encoding);
}

/* The walk of a block's lines into c->o: 0, FALLBACK (the block does not parse, or holds
 * a shape for the Python loop) or -1 with an error. */
static int block_walk(block_ctx *c, const void *buf, Py_ssize_t len, long long count)
{
    if (c->base_seq > INT32_MAX_ || c->base_seq < -INT32_MAX_ - 1)
        return FALLBACK;
    int e = rw_walk(buf, (size_t)len, count, block_visit, c);
    if (e == -1 && !PyErr_Occurred())
        e = FALLBACK;   /* does not parse: the Python loop raises Kafka's error */
    return e == 0 ? 0 : e > 0 ? FALLBACK : -1;
}

/* The walk of a block into lines: bytes, None (FALLBACK: the block does not parse, or
 * holds a shape for the Python loop), or NULL with an error. */
static PyObject *block_lines(block_ctx *c, Py_buffer *buf, long long count,
                             PyObject *lat_obj)
{
    outbuf o;
    PyObject *r = NULL;
    c->lat = lat_obj != Py_None;   /* LogAppendTime: every record's timestamp */
    c->lat_ts = c->lat ? PyLong_AsLongLong(lat_obj) : 0;
    if (c->lat && c->lat_ts == -1 && PyErr_Occurred())
        return NULL;
    if (c->base_seq > INT32_MAX_ || c->base_seq < -INT32_MAX_ - 1)
        Py_RETURN_NONE;
    /* room for the records the block can hold, not for the count it claims (hostile:
     * 2^31 - 1 asked for 257 GB, past 2^56 the product went negative): a record takes
     * at least 7 bytes (its length and six one-byte fields), a negative count none (the
     * walk declines it, the Python loop raises Kafka's error) */
    long long fits = count < 0 ? 0 : count > buf->len / 7 ? buf->len / 7 : count;
    if (ob_init(&o, buf->len + fits * (c->kafka ? 120 + c->ts_len : 160) + 64) < 0)
        return NULL;
    c->o = &o;
    c->hb.h = NULL;
    c->hb.cap = 0;
    r = ob_result(&o, block_walk(c, buf->buf, buf->len, count));
    PyMem_Free(c->hb.h);
    return r;
}

static PyObject *sp_kafka_block(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer buf;
    block_ctx c;
    long long count;
    PyObject *lat_obj, *ts_type_obj;
    if (!PyArg_ParseTuple(args, "y*LLLOULppO:kafka_block", &buf, &count, &c.base_offset,
                          &c.base_ts, &lat_obj, &ts_type_obj, &c.base_seq, &c.skip_metadata,
                          &c.with_data, &c.java_string))
        return NULL;
    PyObject *r = NULL;
    c.kafka = 1;
    c.encoding = ENC_UTF8;
    int e = str_utf8(ts_type_obj, &c.ts_type, &c.ts_len);
    if (e == 0)
        r = block_lines(&c, &buf, count, lat_obj);
    else if (e == FALLBACK)
        r = Py_NewRef(Py_None);
    PyBuffer_Release(&buf);
    return r;
}

static PyObject *sp_json_block(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer buf;
    block_ctx c;
    long long count;
    PyObject *lat_obj;
    if (!PyArg_ParseTuple(args, "y*LLLOLpi:json_block", &buf, &count, &c.base_offset,
                          &c.base_ts, &lat_obj, &c.base_seq, &c.with_data, &c.encoding))
        return NULL;
    PyObject *r = NULL;
    c.kafka = 0;
    c.skip_metadata = 0;
    c.ts_type = NULL;
    c.ts_len = 0;
    c.java_string = NULL;
    if (c.encoding < ENC_UTF8 || c.encoding > ENC_HEX)
        PyErr_Format(PyExc_ValueError, "unknown data encoding %d", c.encoding);
    else
        r = block_lines(&c, &buf, count, lat_obj);
    PyBuffer_Release(&buf);
    return r;
}

/* -- kafka_run, json_run: a run of ordinary v2 batches, each batch's line and its records'
 * lines, in one buffer ------------------------------------------------------------------ */

/* The fields of a RecordBatch tuple (format/record_batch.py: view, position, baseOffset,
 * length, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, baseTimestamp,
 * maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount). */
enum { B_POSITION = 1, B_BASE_OFFSET, B_LENGTH, B_PLE, B_MAGIC, B_CRC, B_ATTRIBUTES,
       B_LAST_DELTA, B_BASE_TS, B_MAX_TS, B_PID, B_EPOCH, B_BASE_SEQ, B_COUNT, B_FIELDS };

typedef struct {
    long long f[B_FIELDS];
    int valid;
    Py_buffer block;
} run_item;

static const char *const codec_names[5] = {"none", "gzip", "snappy", "lz4", "zstd"};

/* An item of a run, ``(batch, is_valid, block)``: 0, FALLBACK (a shape for the Python
 * path: not a v2 batch of a known codec, a field outside int64) or -1. The block's
 * buffer is held on 0 only. */
static int run_item_get(PyObject *item, run_item *it)
{
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3)
        return FALLBACK;
    PyObject *b = PyTuple_GET_ITEM(item, 0);
    if (!PyTuple_Check(b) || PyTuple_GET_SIZE(b) != B_FIELDS)
        return FALLBACK;
    for (int i = B_POSITION; i < B_FIELDS; i++) {
        PyObject *v = PyTuple_GET_ITEM(b, i);
        if (!PyLong_Check(v) || as_int64(v, &it->f[i]) != 0) {
            PyErr_Clear();
            return FALLBACK;
        }
    }
    if (it->f[B_MAGIC] != 2 || (it->f[B_ATTRIBUTES] & 7) > 4 || (it->f[B_ATTRIBUTES] & 0x20)
        || it->f[B_BASE_SEQ] > INT32_MAX_ || it->f[B_BASE_SEQ] < -INT32_MAX_ - 1
        || it->f[B_LAST_DELTA] > INT32_MAX_ || it->f[B_LAST_DELTA] < -INT32_MAX_ - 1
        || it->f[B_BASE_OFFSET] > LLONG_MAX - INT32_MAX_ - 1
        || it->f[B_BASE_OFFSET] < LLONG_MIN + INT32_MAX_ + 1
        || it->f[B_LENGTH] > LLONG_MAX - 12)
        return FALLBACK;
    it->valid = PyObject_IsTrue(PyTuple_GET_ITEM(item, 1));
    if (it->valid < 0)
        return -1;
    return PyObject_GetBuffer(PyTuple_GET_ITEM(item, 2), &it->block, PyBUF_SIMPLE) < 0
        ? -1 : 0;
}

/* DefaultRecordBatch.lastSequence: NO_SEQUENCE stays, else incrementSequence. */
static long long run_last_sequence(const run_item *it)
{
    long long s = it->f[B_BASE_SEQ], d = it->f[B_LAST_DELTA];
    if (s == -1)
        return -1;
    if (s > INT32_MAX_ - d)
        return d - (INT32_MAX_ - s) - 1;
    return s + d;
}

static const char *b_text(long long v) { return v ? "true" : "false"; }

/* a short C string at d (into room reserved beforehand); returns the end */
static inline char *w_str(char *d, const char *s)
{
    size_t n = strlen(s);
    memcpy(d, s, n);
    return d + n;
}

/* DumpLogSegments.printBatchLevel's line of a v2 batch (render.dump.kafka_batch_line). */
static int kafka_batch_head(outbuf *o, const run_item *it)
{
    const long long *f = it->f;
    long long attrs = f[B_ATTRIBUTES];
    if (ob_reserve(o, 640) < 0)
        return -1;
    char *d = o->p + o->len;
    d = W_LIT(d, "baseOffset: ");
    d = w_int(d, f[B_BASE_OFFSET]);
    d = W_LIT(d, " lastOffset: ");
    d = w_int(d, f[B_BASE_OFFSET] + f[B_LAST_DELTA]);
    d = W_LIT(d, " count: ");
    d = w_int(d, f[B_COUNT]);
    d = W_LIT(d, " baseSequence: ");
    d = w_int(d, f[B_BASE_SEQ]);
    d = W_LIT(d, " lastSequence: ");
    d = w_int(d, run_last_sequence(it));
    d = W_LIT(d, " producerId: ");
    d = w_int(d, f[B_PID]);
    d = W_LIT(d, " producerEpoch: ");
    d = w_int(d, f[B_EPOCH]);
    d = W_LIT(d, " partitionLeaderEpoch: ");
    d = w_int(d, f[B_PLE]);
    d = W_LIT(d, " isTransactional: ");
    d = w_str(d, b_text(attrs & 0x10));
    d = W_LIT(d, " isControl: false deleteHorizonMs: ");
    if (attrs & 0x40) {
        d = W_LIT(d, "OptionalLong[");
        d = w_int(d, f[B_BASE_TS]);
        *d++ = ']';
    } else {
        d = W_LIT(d, "OptionalLong.empty");
    }
    d = W_LIT(d, " position: ");
    d = w_int(d, f[B_POSITION]);
    if (attrs & 0x08)
        d = W_LIT(d, " LogAppendTime: ");
    else
        d = W_LIT(d, " CreateTime: ");
    d = w_int(d, f[B_MAX_TS]);
    d = W_LIT(d, " size: ");
    d = w_int(d, f[B_LENGTH] + 12);
    d = W_LIT(d, " magic: 2 compresscodec: ");
    d = w_str(d, codec_names[attrs & 7]);
    d = W_LIT(d, " crc: ");
    d = w_int(d, f[B_CRC]);
    d = W_LIT(d, " isvalid: ");
    d = w_str(d, b_text(it->valid));
    *d++ = '\n';
    o->len = d - o->p;
    return 0;
}

/* The batch event's JSON object (render.dump.write_json of ops.dump_records.batch_event),
 * after ``prefix`` (``{"type":"batch","file":<the file>,"position":``). */
static int json_batch_head(outbuf *o, const run_item *it, const char *prefix,
                           Py_ssize_t prefix_len)
{
    const long long *f = it->f;
    long long attrs = f[B_ATTRIBUTES];
    if (ob_put(o, prefix, prefix_len) < 0 || ob_reserve(o, 640) < 0)
        return -1;
    char *d = o->p + o->len;
    d = w_int(d, f[B_POSITION]);
    d = W_LIT(d, ",\"baseOffset\":");
    d = w_int(d, f[B_BASE_OFFSET]);
    d = W_LIT(d, ",\"lastOffset\":");
    d = w_int(d, f[B_BASE_OFFSET] + f[B_LAST_DELTA]);
    d = W_LIT(d, ",\"count\":");
    d = w_int(d, f[B_COUNT]);
    d = W_LIT(d, ",\"magic\":2,\"crc\":");
    d = w_int(d, f[B_CRC]);
    d = W_LIT(d, ",\"isValid\":");
    d = w_str(d, b_text(it->valid));
    d = W_LIT(d, ",\"size\":");
    d = w_int(d, f[B_LENGTH] + 12);
    d = W_LIT(d, ",\"compresscodec\":\"");
    d = w_str(d, codec_names[attrs & 7]);
    if (attrs & 0x08)
        d = W_LIT(d, "\",\"timestampType\":\"LogAppendTime\",\"baseTimestamp\":");
    else
        d = W_LIT(d, "\",\"timestampType\":\"CreateTime\",\"baseTimestamp\":");
    d = w_int(d, f[B_BASE_TS]);
    d = W_LIT(d, ",\"maxTimestamp\":");
    d = w_int(d, f[B_MAX_TS]);
    d = W_LIT(d, ",\"producerId\":");
    d = w_int(d, f[B_PID]);
    d = W_LIT(d, ",\"producerEpoch\":");
    d = w_int(d, f[B_EPOCH]);
    d = W_LIT(d, ",\"baseSequence\":");
    d = w_int(d, f[B_BASE_SEQ]);
    d = W_LIT(d, ",\"lastSequence\":");
    d = w_int(d, run_last_sequence(it));
    d = W_LIT(d, ",\"partitionLeaderEpoch\":");
    d = w_int(d, f[B_PLE]);
    d = W_LIT(d, ",\"isTransactional\":");
    d = w_str(d, b_text(attrs & 0x10));
    d = W_LIT(d, ",\"isControl\":false,\"deleteHorizonMs\":");
    if (attrs & 0x40)
        d = w_int(d, f[B_BASE_TS]);
    else
        d = W_LIT(d, "null");
    d = W_LIT(d, "}\n");
    o->len = d - o->p;
    return 0;
}

/* A run's lines: bytes, None (an item the Python path must render: the whole run goes
 * there) or NULL with an error. */
static PyObject *run_lines(PyObject *runs, block_ctx *c, const char *prefix,
                           Py_ssize_t prefix_len)
{
    if (!PyList_Check(runs)) {
        PyErr_SetString(PyExc_TypeError, "a list of (batch, is_valid, block) is required");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(runs), total = 64;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(runs, i);
        if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 3) {
            PyObject *blk = PyTuple_GET_ITEM(item, 2);
            if (PyBytes_CheckExact(blk))
                total += PyBytes_GET_SIZE(blk) * (c->encoding == ENC_UTF8 ? 1 : 2) + 400;
        }
        if (total > (1 << 26))
            break;
    }
    outbuf o;
    if (ob_init(&o, total) < 0)
        return NULL;
    c->o = &o;
    c->hb.h = NULL;
    c->hb.cap = 0;
    int e = 0;
    for (Py_ssize_t i = 0; i < n && e == 0; i++) {
        run_item it;
        e = run_item_get(PyList_GET_ITEM(runs, i), &it);
        if (e != 0)
            break;
        c->base_offset = it.f[B_BASE_OFFSET];
        c->base_ts = it.f[B_BASE_TS];
        c->base_seq = it.f[B_BASE_SEQ];
        c->lat = (it.f[B_ATTRIBUTES] & 0x08) != 0;
        c->lat_ts = it.f[B_MAX_TS];
        if (c->kafka) {
            c->ts_type = c->lat ? "LogAppendTime" : "CreateTime";
            c->ts_len = (Py_ssize_t)strlen(c->ts_type);
            e = kafka_batch_head(&o, &it);
        } else {
            e = json_batch_head(&o, &it, prefix, prefix_len);
        }
        if (e == 0)
            e = block_walk(c, it.block.buf, it.block.len, it.f[B_COUNT]);
        PyBuffer_Release(&it.block);
    }
    PyMem_Free(c->hb.h);
    return ob_result(&o, e);
}

static PyObject *sp_kafka_run(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *runs;
    block_ctx c;
    if (!PyArg_ParseTuple(args, "OppO:kafka_run", &runs, &c.skip_metadata, &c.with_data,
                          &c.java_string))
        return NULL;
    c.kafka = 1;
    c.encoding = ENC_UTF8;
    return run_lines(runs, &c, NULL, 0);
}

static PyObject *sp_json_run(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *runs;
    const char *prefix;
    Py_ssize_t prefix_len;
    block_ctx c;
    if (!PyArg_ParseTuple(args, "Oy#pi:json_run", &runs, &prefix, &prefix_len, &c.with_data,
                          &c.encoding))
        return NULL;
    if (c.encoding < ENC_UTF8 || c.encoding > ENC_HEX) {
        PyErr_Format(PyExc_ValueError, "unknown data encoding %d", c.encoding);
        return NULL;
    }
    c.kafka = 0;
    c.skip_metadata = 0;
    c.ts_type = NULL;
    c.ts_len = 0;
    c.java_string = NULL;
    return run_lines(runs, &c, prefix, prefix_len);
}

/* -- read_json_lines ------------------------------------------------------------------------ */

#define READ_FIELD_MAX (1 << 20)

static PyObject *attr_names[10];
enum { A_TOPIC, A_PARTITION, A_OFFSET, A_TIMESTAMP, A_TS_TYPE, A_EPOCH, A_KEY, A_VALUE,
       A_HEADERS, A_DECODED };

static int attr_names_init(void)
{
    static const char *names[10] = {"topic", "partition", "offset", "timestamp",
                                    "timestamp_type", "leader_epoch", "key", "value",
                                    "headers", "decoded"};
    for (int i = 0; i < 10; i++)
        if ((attr_names[i] = PyUnicode_InternFromString(names[i])) == NULL)
            return -1;
    return 0;
}

/* A str field as a JSON string; FALLBACK when it is not a str. */
static int json_str_field(outbuf *o, PyObject *v)
{
    if (!PyUnicode_CheckExact(v))
        return FALLBACK;
    return json_str(o, v);
}

static int json_int_field(outbuf *o, PyObject *v, int nullable)
{
    if (nullable && v == Py_None)
        return PUTS(o, "null");
    long long x;
    int e = as_int64(v, &x);
    return e != 0 ? e : ob_int(o, x);
}

static int read_json_record(outbuf *o, PyObject *rec, int encoding)
{
    PyObject *f[10] = {NULL};
    int e = 0;
    for (int i = 0; i < 10 && e == 0; i++)
        if ((f[i] = PyObject_GetAttr(rec, attr_names[i])) == NULL)
            e = -1;
    if (e == 0 && f[A_DECODED] != Py_None)
        e = FALLBACK;   /* a decoded record: to_dict's objects */
    PyObject *key = f[A_KEY], *value = f[A_VALUE], *headers = f[A_HEADERS];
    if (e == 0 && ((key != Py_None && !PyBytes_CheckExact(key)) ||
                   (value != Py_None && !PyBytes_CheckExact(value)) ||
                   !PyTuple_Check(headers)))
        e = FALLBACK;
    /* a huge key or value: the Python loop, which renders a record at a time (this loop
     * holds the block's records until its lines are done) */
    if (e == 0 && ((key != Py_None && PyBytes_GET_SIZE(key) > READ_FIELD_MAX) ||
                   (value != Py_None && PyBytes_GET_SIZE(value) > READ_FIELD_MAX)))
        e = FALLBACK;
    Py_ssize_t nh = e == 0 ? PyTuple_GET_SIZE(headers) : 0;
    for (Py_ssize_t j = 0; j < nh && e == 0; j++) {
        PyObject *h = PyTuple_GET_ITEM(headers, j);
        if (!PyTuple_Check(h) || PyTuple_GET_SIZE(h) != 2 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(h, 0)) ||
            (PyTuple_GET_ITEM(h, 1) != Py_None && !PyBytes_CheckExact(PyTuple_GET_ITEM(h, 1))))
            e = FALLBACK;
    }
    const char *klabel = NULL, *vlabel = NULL, *hlabel = NULL;
    /* the record's place: name, field, 's' string, 'i' int, 'n' int or null */
    static const struct { const char *name; int field; char kind; } place[] = {
        {"{\"topic\":", A_TOPIC, 's'}, {",\"partition\":", A_PARTITION, 'i'},
        {",\"offset\":", A_OFFSET, 'i'}, {",\"timestamp\":", A_TIMESTAMP, 'i'},
        {",\"timestampType\":", A_TS_TYPE, 's'}, {",\"leaderEpoch\":", A_EPOCH, 'n'},
    };
    for (size_t i = 0; e == 0 && i < sizeof place / sizeof place[0]; i++) {
        e = ob_put(o, place[i].name, (Py_ssize_t)strlen(place[i].name));
        if (e == 0)
            e = place[i].kind == 's' ? json_str_field(o, f[place[i].field])
                                     : json_int_field(o, f[place[i].field], place[i].kind == 'n');
    }
    if (e == 0)
        e = PUTS(o, ",\"key\":");
    if (e == 0)
        e = json_bytes(o, key, encoding, &klabel);
    if (e == 0)
        e = json_label(o, ",\"keyEncoding\":\"", klabel);
    if (e == 0)
        e = PUTS(o, ",\"value\":");
    if (e == 0)
        e = json_bytes(o, value, encoding, &vlabel);
    if (e == 0)
        e = json_label(o, ",\"valueEncoding\":\"", vlabel);
    if (e == 0)
        e = PUTS(o, ",\"headers\":[");
    for (Py_ssize_t j = 0; j < nh && e == 0; j++) {
        PyObject *h = PyTuple_GET_ITEM(headers, j);
        if ((j && PUTS(o, ",") < 0) || PUTS(o, "{\"key\":") < 0)
            e = -1;
        if (e == 0)
            e = json_str(o, PyTuple_GET_ITEM(h, 0));
        if (e == 0)
            e = PUTS(o, ",\"value\":");
        if (e == 0)
            e = json_bytes(o, PyTuple_GET_ITEM(h, 1), encoding, &hlabel);
        if (e == 0)
            e = json_label(o, ",\"valueEncoding\":\"", hlabel);
        if (e == 0)
            e = PUTS(o, "}");
    }
    if (e == 0)
        e = PUTS(o, "]}\n");
    for (int i = 0; i < 10; i++)
        Py_XDECREF(f[i]);
    return e;
}

static PyObject *sp_read_json_lines(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *records;
    int encoding;
    if (!PyArg_ParseTuple(args, "O!i:read_json_lines", &PyList_Type, &records, &encoding))
        return NULL;
    if (encoding < ENC_UTF8 || encoding > ENC_HEX) {
        PyErr_Format(PyExc_ValueError, "unknown data encoding %d", encoding);
        return NULL;
    }
    outbuf o;
    if (ob_init(&o, 256 * PyList_GET_SIZE(records) + 64) < 0)
        return NULL;
    int e = 0;
    /* attribute lookups may run Python code: index the list afresh each time */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records) && e == 0; i++) {
        PyObject *item = PyList_GET_ITEM(records, i);
        Py_INCREF(item);
        e = read_json_record(&o, item, encoding);
        Py_DECREF(item);
    }
    return ob_result(&o, e);
}

static PyMethodDef methods[] = {
    {"read_json_lines", sp_read_json_lines, METH_VARARGS,
     "read_json_lines(records, encoding) -> bytes | None: render.read.json_line for each "
     "ConsumerRecord, with newlines, in C (encoding 0 utf8, 1 base64, 2 hex)"},
    {"kafka_lines", sp_kafka_lines, METH_VARARGS,
     "kafka_lines(records, timestamp_type, base_offset, base_sequence, skip_metadata, "
     "with_data, java_string) -> bytes | None: render.dump.kafka_record_lines in C"},
    {"kafka_block", sp_kafka_block, METH_VARARGS,
     "kafka_block(block, count, base_offset, base_timestamp, log_append_time, "
     "timestamp_type, base_sequence, skip_metadata, with_data, java_string) -> bytes | "
     "None: kafka_lines of an uncompressed records block, without a Record per record"},
    {"json_block", sp_json_block, METH_VARARGS,
     "json_block(block, count, base_offset, base_timestamp, log_append_time, "
     "base_sequence, with_data, encoding) -> bytes | None: json_lines of a records block"},
    {"kafka_run", sp_kafka_run, METH_VARARGS,
     "kafka_run(runs, skip_metadata, with_data, java_string) -> bytes | None: for each "
     "(batch, is_valid, block) of an ordinary v2 batch, its batch line and kafka_block"},
    {"json_run", sp_json_run, METH_VARARGS,
     "json_run(runs, batch_prefix, with_data, encoding) -> bytes | None: for each (batch, "
     "is_valid, block), its batch object after batch_prefix and json_block"},
    {"json_lines", sp_json_lines, METH_VARARGS,
     "json_lines(records, base_offset, base_sequence, with_data, encoding) -> bytes | None: "
     "render.dump.json_record_lines in C (encoding 0 utf8, 1 base64, 2 hex)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "dump-segment's record lines in C (see the source's header).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    json_extra_init();
    if (attr_names_init() < 0)
        return NULL;
    return PyModule_Create(&module);
}
