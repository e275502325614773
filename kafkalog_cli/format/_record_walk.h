/*
 * A records block of a v2 batch walked without a Python object per record: DefaultRecord's
 * fields (DefaultRecord.readFrom) as pointers into the block, for the compiled loops that
 * read a block whole and need no Record tuples (format/_speedups.c's block_is_dense,
 * render/_speedups.c's kafka_block and json_block).
 *
 * The walk accepts exactly the blocks record.decode_records accepts (every length,
 * count and end checked as decode_loop checks them) but says only that a block does not
 * parse, never why: its callers then take the reference path (record.decode_records),
 * which raises Kafka's error. No Python API is called here; nothing is allocated.
 */
#ifndef KAFKALOG_RECORD_WALK_H
#define KAFKALOG_RECORD_WALK_H

#include <stdint.h>
#include <stddef.h>

typedef struct {
    int64_t offset_delta, timestamp_delta;
    const uint8_t *key, *value;     /* NULL: a null key or value */
    int64_t key_len, value_len;     /* -1 when NULL */
    const uint8_t *headers;         /* the first header (after the count varint) */
    int64_t header_count;
} rw_record;

/* A zigzag varint of at most max_bytes bytes (5: varint, 10: varlong) at *pos of
 * d[0:end]; -1 when it runs past the end or is too long. */
static inline int rw_varint(const uint8_t *d, size_t end, size_t *pos, int max_bytes,
                            int64_t *out)
{
    size_t p = *pos;
    uint64_t value = 0;
    for (int i = 0, shift = 0; i < max_bytes; i++, shift += 7) {
        if (p >= end)
            return -1;
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
    }
    return -1;
}

/* One header at *pos of d[0:end] (the end of its record): key (UTF-8 bytes, length >= 0)
 * and value (NULL, length -1: null); -1 when it does not parse. */
static inline int rw_header(const uint8_t *d, size_t end, size_t *pos, const uint8_t **key,
                            int64_t *key_len, const uint8_t **value, int64_t *value_len)
{
    int64_t n;
    if (rw_varint(d, end, pos, 5, &n) < 0 || n < 0 || (uint64_t)n > end - *pos)
        return -1;
    *key = d + *pos;
    *key_len = n;
    *pos += (size_t)n;
    if (rw_varint(d, end, pos, 5, &n) < 0 || (n >= 0 && (uint64_t)n > end - *pos))
        return -1;
    *value = n < 0 ? NULL : d + *pos;
    *value_len = n < 0 ? -1 : n;
    if (n > 0)
        *pos += (size_t)n;
    return 0;
}

/*
 * Walks the ``count`` records of d[0:end] (a whole, decompressed records block), calling
 * fn(ctx, &record) for each; the block must hold exactly them. Returns 0; -1 when the
 * block does not parse as decode_loop parses it; fn's non-zero return otherwise (the walk
 * stops there).
 */
static inline int rw_walk(const uint8_t *d, size_t end, int64_t count,
                          int (*fn)(void *ctx, const rw_record *r), void *ctx)
{
    size_t pos = 0;
    int64_t length, n;
    rw_record r;
    if (count < 0)
        return -1;
    for (int64_t i = 0; i < count; i++) {
        if (rw_varint(d, end, &pos, 5, &length) < 0 || length < 0 ||
            (uint64_t)length > end - pos)
            return -1;
        size_t rec_end = pos + (size_t)length;
        pos += 1;   /* attributes (int8, unused) */
        if (pos > rec_end || rw_varint(d, rec_end, &pos, 10, &r.timestamp_delta) < 0 ||
            rw_varint(d, rec_end, &pos, 5, &r.offset_delta) < 0)
            return -1;
        if (rw_varint(d, rec_end, &pos, 5, &n) < 0 || (n >= 0 && (uint64_t)n > rec_end - pos))
            return -1;
        r.key = n < 0 ? NULL : d + pos;
        r.key_len = n < 0 ? -1 : n;
        if (n > 0)
            pos += (size_t)n;
        if (rw_varint(d, rec_end, &pos, 5, &n) < 0 || (n >= 0 && (uint64_t)n > rec_end - pos))
            return -1;
        r.value = n < 0 ? NULL : d + pos;
        r.value_len = n < 0 ? -1 : n;
        if (n > 0)
            pos += (size_t)n;
        if (rw_varint(d, rec_end, &pos, 5, &r.header_count) < 0 || r.header_count < 0)
            return -1;
        r.headers = d + pos;
        for (int64_t j = 0; j < r.header_count; j++) {
            const uint8_t *hk, *hv;
            int64_t hkn, hvn;
            if (rw_header(d, rec_end, &pos, &hk, &hkn, &hv, &hvn) < 0)
                return -1;
        }
        if (pos != rec_end)
            return -1;
        int e = fn(ctx, &r);
        if (e != 0)
            return e;
    }
    return pos == end ? 0 : -1;
}

#endif
