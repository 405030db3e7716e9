/* LLUDP hot loops in plain C, used by _codec_c.pyx: zero-coding, the field
   walk that builds a block's values and the field writer. The semantics are
   those of _codec_py.py (the parity tests hold them together). */
#ifndef GAMECODEC_LLUDP_H
#define GAMECODEC_LLUDP_H

#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../_capi.h"

/* 8 bytes at p, in the machine's order. */
static inline uint64_t lludp_load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Spare bytes the callers keep after their buffers (not needed by the loops). */
#define LLUDP_SLACK 32

/* -DLLUDP_NO_SIMD: the portable paths alone (tools/expand_fuzz.c checks both) */
#if defined(__GNUC__) && defined(__SSE2__) && !defined(LLUDP_NO_SIMD)
#include <emmintrin.h>
#define LLUDP_SSE2 1
#endif

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LLUDP_WORDS 1
#define LLUDP_ONES 0x0101010101010101ULL
#define LLUDP_HIGHS 0x8080808080808080ULL
#endif

/* F32 <-> double with NaNs converted by their bits, as the pure twin does: the
   payload moves by 29 bits and the quiet bit stays as it was (a hardware
   conversion would set it, so a signalling NaN would not come back as sent).
   Everything else converts as the hardware does. */
static inline double lludp_f32_value(uint32_t bits)
{
    float f;
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFFu)) {
        uint64_t d = ((uint64_t)(bits >> 31) << 63) | 0x7FF0000000000000ULL |
                     ((uint64_t)(bits & 0x7FFFFFu) << 29);
        double r;
        memcpy(&r, &d, 8);
        return r;
    }
    memcpy(&f, &bits, 4);
    return (double)f;
}

static inline uint32_t lludp_f32_bits(double d)
{
    uint64_t b;
    uint32_t r;
    float f;
    memcpy(&b, &d, 8);
    if ((b & 0x7FF0000000000000ULL) == 0x7FF0000000000000ULL && (b & 0xFFFFFFFFFFFFFULL)) {
        uint64_t payload = (b & 0xFFFFFFFFFFFFFULL) >> 29;
        if (payload) return (uint32_t)((b >> 63) << 31) | 0x7F800000u | (uint32_t)payload;
    }
    f = (float)d;
    memcpy(&r, &f, 4);
    return r;
}

/* Copy whole blocks of literal (non-zero) bytes from src[*pi] to dst[*po],
   while a block fits below n and cap; stops at the first zero byte of a block
   (*pi then points at it). Whatever is left is for the caller's byte loop. */
static inline void lludp_copy_literals(const unsigned char *src, Py_ssize_t n,
                                       unsigned char *dst, Py_ssize_t cap,
                                       Py_ssize_t *pi, Py_ssize_t *po)
{
    Py_ssize_t i = *pi, o = *po;
#ifdef LLUDP_SSE2
    while (i + 16 <= n && o + 16 <= cap) {
        __m128i v = _mm_loadu_si128((const __m128i *)(src + i));
        int m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()));
        _mm_storeu_si128((__m128i *)(dst + o), v);
        if (m) {
            int k = __builtin_ctz((unsigned)m);
            i += k;
            o += k;
            goto done;
        }
        i += 16;
        o += 16;
    }
#endif
#ifdef LLUDP_WORDS
    while (i + 8 <= n && o + 8 <= cap) {
        uint64_t v, z;
        memcpy(&v, src + i, 8);
        memcpy(dst + o, &v, 8);
        z = (v - LLUDP_ONES) & ~v & LLUDP_HIGHS;
        if (z) {
            int k = __builtin_ctzll(z) >> 3; /* the first zero byte */
            i += k;
            o += k;
            goto done;
        }
        i += 8;
        o += 8;
    }
#endif
#if defined(LLUDP_SSE2) || defined(LLUDP_WORDS)
done:
#endif
    *pi = i;
    *po = o;
}

/* ctz of a non-zero 64-bit word, where the compiler has one. */
#if defined(__GNUC__)
#define LLUDP_CTZ64(m) __builtin_ctzll(m)
#define LLUDP_HAVE_CTZ 1
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
#include <intrin.h>
static __inline int lludp_ctz64(unsigned __int64 m)
{
    unsigned long k;
    _BitScanForward64(&k, m);
    return (int)k;
}
#define LLUDP_CTZ64(m) lludp_ctz64(m)
#define LLUDP_HAVE_CTZ 1
#if defined(_M_X64) && !defined(LLUDP_SSE2) && !defined(LLUDP_NO_SIMD)
#include <emmintrin.h>
#define LLUDP_SSE2 1
#endif
#endif

#ifdef LLUDP_HAVE_CTZ
/* Bit k set where p[k] == 0, for k < 64. */
static inline uint64_t lludp_zero_mask64(const unsigned char *p)
{
#ifdef LLUDP_SSE2
    const __m128i z = _mm_setzero_si128();
    uint64_t a = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), z));
    uint64_t b = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), z));
    uint64_t c = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), z));
    uint64_t d = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), z));
    return a | (b << 16) | (c << 32) | (d << 48);
#else
    /* SWAR: 0x80 in exactly the zero bytes of each 8-byte word, gathered */
    uint64_t m = 0;
    int k, j;
    for (k = 0; k < 8; k++) {
        uint64_t v = 0, t;
        for (j = 0; j < 8; j++) v |= (uint64_t)p[8 * k + j] << (8 * j);
        t = (v & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL;
        t = ~(t | v | 0x7F7F7F7F7F7F7F7FULL); /* 0x80 where the byte is 0 */
        m |= ((t >> 7) * 0x0102040810204080ULL >> 56) << (8 * k);
    }
    return m;
#endif
}

/* Copy 16 bytes (the caller keeps both ranges inside their buffers). */
static inline void lludp_copy16(unsigned char *dst, const unsigned char *src)
{
#ifdef LLUDP_SSE2
    _mm_storeu_si128((__m128i *)dst, _mm_loadu_si128((const __m128i *)src));
#else
    memcpy(dst, src, 16);
#endif
}

/* The bulk of an expansion, from (*pi, *po) on: walks the zero bytes of each
   64-byte block through its bit mask (no branch per byte, one rarely
   mispredicted branch per zero pair). Each `00 c` pair with c != 0 writes its
   literal run before it and its c zeros with 32-byte stores. It stops, leaving
   (*pi, *po) at the start of a literal run, near the end of the input, at a
   `00 00` wrap, or where the output might come near cap; the exact loop of
   lludp_expand_from does the rest. */
static void lludp_expand_bulk(const unsigned char *src, Py_ssize_t n, unsigned char *dst,
                              Py_ssize_t cap, Py_ssize_t *pi, Py_ssize_t *po)
{
    Py_ssize_t i = *pi, o = *po, b = i;
#ifdef LLUDP_SSE2
    const __m128i zero = _mm_setzero_si128();
#else
    static const unsigned char zero16[16] = {0};
#endif
    /* every zero p of a block has p + 33 <= n: its count byte and the 32
       bytes read from the start of its literal run are inside the input */
    while (b + 96 <= n) {
        uint64_t m = lludp_zero_mask64(src + b);
        if (b < i) m &= ~(uint64_t)0 << (i - b); /* (only ever the count byte at b) */
        while (m) {
            Py_ssize_t p = b + LLUDP_CTZ64(m), lit = p - i;
            Py_ssize_t c = src[p + 1];
            m &= m - 1;
            if (c == 0 || o + lit + c + 32 > cap) goto out;
            lludp_copy16(dst + o, src + i);
            lludp_copy16(dst + o + 16, src + i + 16);
            if (lit > 32) memcpy(dst + o + 32, src + i + 32, (size_t)(lit - 32));
            o += lit;
#ifdef LLUDP_SSE2
            _mm_storeu_si128((__m128i *)(dst + o), zero);
            _mm_storeu_si128((__m128i *)(dst + o + 16), zero);
#else
            memcpy(dst + o, zero16, 16);
            memcpy(dst + o + 16, zero16, 16);
#endif
            if (c > 32) memset(dst + o + 32, 0, (size_t)(c - 32));
            o += c;
            i = p + 2;
        }
        b += 64;
    }
out:
    *pi = i;
    *po = o;
}
#endif

/* Expand LL zero-coding of src[*pi:n] into dst[*po:] (every store stays below
   cap; a zero run must end before cap, as in the viewer). Returns 0 when done (*po is the output size), or -1 if the output
   would pass cap: *pi is then the input index where it would (the start of
   the literal byte or zero run that does not fit) and *po the output so far,
   so a caller with a bigger buffer can carry on from there. */
static int lludp_expand_from(const unsigned char *src, Py_ssize_t n, unsigned char *dst,
                             Py_ssize_t cap, Py_ssize_t *pi, Py_ssize_t *po)
{
    Py_ssize_t i, o;
#ifdef LLUDP_HAVE_CTZ
    if (n - *pi >= 96) lludp_expand_bulk(src, n, dst, cap, pi, po);
#endif
    i = *pi;
    o = *po;
    while (i < n) {
        lludp_copy_literals(src, n, dst, cap, &i, &o);
        if (i >= n) break;
        if (src[i]) {
            if (o >= cap) goto full;
            dst[o++] = src[i++];
            continue;
        }
        {
            Py_ssize_t j = i + 1, count;
            while (j < n && src[j] == 0) j++;
            count = 256 * (j - i - 1);
            if (j < n) count += src[j++];
            else count += 1;
            /* the viewer's check fires one byte early: a run ends before cap,
               save a lone 00 ending the input (j - i == 1: no count byte
               after it), checked like a literal byte */
            if (count > cap - o - (j - i > 1)) goto full;
#ifdef LLUDP_SSE2
            if (count <= 32 && o + 32 <= cap) {
                _mm_storeu_si128((__m128i *)(dst + o), _mm_setzero_si128());
                _mm_storeu_si128((__m128i *)(dst + o + 16), _mm_setzero_si128());
            } else
#endif
            memset(dst + o, 0, (size_t)count);
            o += count;
            i = j;
        }
    }
    *pi = i;
    *po = o;
    return 0;
full:
    *pi = i;
    *po = o;
    return -1;
}

/* Expand LL zero-coding of src[0:n] into dst (cap bytes; every store stays below cap).
   Returns the output size, or -1 if the output would pass cap; *err is then
   the input index where it would. */
static Py_ssize_t lludp_expand(const unsigned char *src, Py_ssize_t n,
                               unsigned char *dst, Py_ssize_t cap, Py_ssize_t *err)
{
    Py_ssize_t i = 0, o = 0;
    if (lludp_expand_from(src, n, dst, cap, &i, &o) < 0) {
        *err = i;
        return -1;
    }
    return o;
}

/* The expansion of src[0:n] as a new bytes object, grown as it fills (first
   guess 1.5 n + 64, never past cap) and cut to size at the end: no sizing
   pass. Returns None (a new reference, no exception) if the output would pass
   cap, with *err the input index where it would; NULL with an exception if
   memory runs out. */
static PyObject *lludp_expand_bytes(const unsigned char *src, Py_ssize_t n, Py_ssize_t cap,
                                    Py_ssize_t *err)
{
    Py_ssize_t i = 0, o = 0, size = n + n / 2 + 64;
    PyObject *res;
    if (size > cap || size < n) size = cap;
    res = PyBytes_FromStringAndSize(NULL, size);
    if (res == NULL) return NULL;
    while (lludp_expand_from(src, n, (unsigned char *)PyBytes_AS_STRING(res), size, &i, &o) < 0) {
        if (size >= cap) {
            Py_DECREF(res);
            *err = i;
            Py_RETURN_NONE;
        }
        size = (size > cap / 2) ? cap : 2 * size;
        if (_PyBytes_Resize(&res, size) < 0) return NULL;
    }
    if (o != size && _PyBytes_Resize(&res, o) < 0) return NULL;
    return res;
}

/* LL zero-coding of src[0:n] into dst, which holds cap bytes, at least the
   output size (lludp_compressed_size; 2 * n always suffices): each run of
   zeros becomes 00 n, runs cut at 255. Returns the output size. */
static Py_ssize_t lludp_compress(const unsigned char *src, Py_ssize_t n, unsigned char *dst,
                                 Py_ssize_t cap)
{
    Py_ssize_t i = 0, o = 0;
    while (i < n) {
        lludp_copy_literals(src, n, dst, cap, &i, &o);
        if (i >= n) break;
        if (src[i]) {
            dst[o++] = src[i++];
            continue;
        }
        {
            Py_ssize_t j = i + 1, run;
            while (j + 8 <= n && lludp_load64(src + j) == 0) j += 8; /* long runs a word at a time */
#ifdef LLUDP_WORDS
            if (j + 8 <= n) /* the run ends in this word: its first nonzero byte */
                j += __builtin_ctzll(lludp_load64(src + j)) >> 3;
            else
#endif
                while (j < n && src[j] == 0) j++;
            run = j - i;
            while (run > 255) {
                dst[o++] = 0;
                dst[o++] = 255;
                run -= 255;
            }
            dst[o++] = 0;
            dst[o++] = (unsigned char)run;
            i = j;
        }
    }
    return o;
}

/* The exact size lludp_compress gives for src[0:n]. */
static Py_ssize_t lludp_compressed_size(const unsigned char *src, Py_ssize_t n)
{
    Py_ssize_t i = 0, o = 0;
    while (i < n) {
        const unsigned char *z = memchr(src + i, 0, (size_t)(n - i));
        Py_ssize_t j;
        if (!z) return o + (n - i);
        o += (Py_ssize_t)(z - src) - i;
        i = (Py_ssize_t)(z - src);
        j = i;
        while (j < n && src[j] == 0) j++;
        o += 2 * ((j - i + 254) / 255);
        i = j;
    }
    return o;
}
/* ------------------------------------------------------------------ decoded values

   Every value the walk makes is atomic (int, float, bool, str, bytes) or an
   immutable object holding only such values (a tuple of floats, a uuid.UUID
   holding an int): those are untracked by the cyclic GC as they are made
   (CPython untracks such tuples itself, at its next collection), and so is
   each block filled with them and each block name's tuple of blocks. No
   reference cycle can pass through them. The blocks dict, made empty and
   given only untracked values, is never tracked (CPython's dict tracks
   itself when a tracked value is put in, so what a user adds is seen), and
   the collector has nothing to traverse in a capture of decoded messages but
   the Message tuples, which stay tracked as they hold the mutable dict. */

typedef struct {
    PyObject *zero;  /* the shared 0.0 */
    PyObject *one;   /* the shared 1.0 */
    PyObject *zero3; /* the shared (0.0, 0.0, 0.0) */
    PyTypeObject *uuid_cls;
    PyObject *uuid_int;  /* the member descriptors of uuid.UUID's slots */
    PyObject *uuid_safe;
    PyObject *safe_unknown; /* uuid.SafeUUID.unknown */
} lludp_ctx_t;
static lludp_ctx_t lludp_ctx;

/* The shared values and uuid.UUID's pieces, kept for the module's life (once, at import). */
static void lludp_init(PyObject *zero, PyObject *one, PyObject *zero3, PyObject *uuid_cls,
                       PyObject *uuid_int, PyObject *uuid_safe, PyObject *safe_unknown)
{
    if (lludp_ctx.zero != NULL) return;
    Py_INCREF(zero);
    Py_INCREF(one);
    Py_INCREF(zero3);
    Py_INCREF(uuid_cls);
    Py_INCREF(uuid_int);
    Py_INCREF(uuid_safe);
    Py_INCREF(safe_unknown);
    lludp_ctx.zero = zero;
    lludp_ctx.one = one;
    lludp_ctx.zero3 = zero3;
    lludp_ctx.uuid_cls = (PyTypeObject *)uuid_cls;
    lludp_ctx.uuid_int = uuid_int;
    lludp_ctx.uuid_safe = uuid_safe;
    lludp_ctx.safe_unknown = safe_unknown;
}

/* Leave a new object that cannot be part of a reference cycle to refcounting alone. */
static inline void lludp_untrack(PyObject *op)
{
    if (PyObject_IS_GC(op)) PyObject_GC_UnTrack(op);
}

/* Untrack an exact tuple none of whose items is tracked (what CPython's
   collector does to such a tuple at its next pass, done at once). */
static inline void lludp_untrack_tuple(PyObject *t)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(t);
    PyObject *v;
    if (!PyObject_GC_IsTracked(t)) return;
    for (i = 0; i < n; i++) {
        v = PyTuple_GET_ITEM(t, i);
        if (PyObject_IS_GC(v) && PyObject_GC_IsTracked(v)) return;
    }
    PyObject_GC_UnTrack(t);
}

static inline uint32_t lludp_le32(const unsigned char *q)
{
    return (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) | ((uint32_t)q[3] << 24);
}

static inline uint64_t lludp_le64(const unsigned char *q)
{
    return (uint64_t)lludp_le32(q) | ((uint64_t)lludp_le32(q + 4) << 32);
}

static inline double lludp_f64_value(const unsigned char *q)
{
    uint64_t bits = lludp_le64(q);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* A uuid.UUID of the 16 big-endian bytes at p, made as uuid.UUID(bytes=...)
   makes it: object.__new__, then its `int` and `is_safe` slots set. */
static PyObject *lludp_uuid_obj(const unsigned char *p)
{
    PyTypeObject *cls = lludp_ctx.uuid_cls;
    PyObject *value = gamecodec_uint128(p), *obj;
    if (value == NULL) return NULL;
    obj = cls->tp_alloc(cls, 0);
    if (obj == NULL || Py_TYPE(lludp_ctx.uuid_int)->tp_descr_set(lludp_ctx.uuid_int, obj, value) < 0 ||
        Py_TYPE(lludp_ctx.uuid_safe)->tp_descr_set(lludp_ctx.uuid_safe, obj,
                                                   lludp_ctx.safe_unknown) < 0) {
        Py_DECREF(value);
        Py_XDECREF(obj);
        return NULL;
    }
    Py_DECREF(value);
    lludp_untrack(obj);
    return obj;
}

/* A float object; +0.0 and 1.0, the commonest values on the wire, are shared. */
static inline PyObject *lludp_float_obj(double d)
{
    if (d == 0.0) {
        if (!signbit(d)) return Py_NewRef(lludp_ctx.zero);
    }
    else if (d == 1.0) {
        return Py_NewRef(lludp_ctx.one);
    }
    return PyFloat_FromDouble(d);
}

/* A tuple of the count doubles of c. */
static PyObject *lludp_float_tuple(const double *c, int count)
{
    PyObject *t = PyTuple_New(count), *v;
    int k;
    if (t == NULL) return NULL;
    for (k = 0; k < count; k++) {
        v = lludp_float_obj(c[k]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, v);
    }
    lludp_untrack(t);
    return t;
}

/* A tuple of count floats (F32, or F64 if wide) at q; all-zero 3-vectors share one tuple. */
static PyObject *lludp_floats_obj(const unsigned char *q, int count, int wide)
{
    double c[4];
    int k;
    if (count == 3) {
        uint64_t a = lludp_load64(q), b;
        if (wide) b = lludp_load64(q + 8) | lludp_load64(q + 16);
        else b = (uint64_t)lludp_le32(q + 8);
        if ((a | b) == 0) return Py_NewRef(lludp_ctx.zero3);
    }
    for (k = 0; k < count; k++)
        c[k] = wide ? lludp_f64_value(q + 8 * k) : lludp_f32_value(lludp_le32(q + 4 * k));
    return lludp_float_tuple(c, count);
}

/* LLQuaternion: x, y, z on the wire, w rebuilt as LL does. */
static PyObject *lludp_quat_obj(const unsigned char *q)
{
    double c[4], s;
    c[0] = lludp_f32_value(lludp_le32(q));
    c[1] = lludp_f32_value(lludp_le32(q + 4));
    c[2] = lludp_f32_value(lludp_le32(q + 8));
    s = 1.0 - (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    c[3] = s > 0 ? sqrt(s) : 0.0;
    return lludp_float_tuple(c, 4);
}

/* The value of a fixed-size field of type t at q (size bytes, all present);
   NULL with an exception on failure. */
static PyObject *lludp_value_obj(int t, const unsigned char *q, Py_ssize_t size)
{
    switch (t) {
    case 15:
        return lludp_uuid_obj(q);
    case 3:
        return PyLong_FromUnsignedLong(lludp_le32(q));
    case 1:
        return PyLong_FromLong(q[0]);
    case 9:
        return lludp_float_obj(lludp_f32_value(lludp_le32(q)));
    case 11:
        return lludp_floats_obj(q, 3, 0);
    case 14:
        return lludp_quat_obj(q);
    case 16: /* any non-zero byte is true, as in the viewer */
        if (q[0] == 0) Py_RETURN_FALSE;
        Py_RETURN_TRUE;
    case 7:
        return PyLong_FromLong((long)(int32_t)lludp_le32(q));
    case 2:
        return PyLong_FromLong(q[0] | (q[1] << 8));
    case 4:
        return PyLong_FromUnsignedLongLong(lludp_le64(q));
    case 5:
        return PyLong_FromLong((int8_t)q[0]);
    case 6:
        return PyLong_FromLong((int16_t)(q[0] | (q[1] << 8)));
    case 8:
        return PyLong_FromLongLong((long long)(int64_t)lludp_le64(q));
    case 10:
        return lludp_float_obj(lludp_f64_value(q));
    case 12:
        return lludp_floats_obj(q, 3, 1);
    case 13:
        return lludp_floats_obj(q, 4, 0);
    case 17:
        return PyUnicode_FromFormat("%d.%d.%d.%d", (int)q[0], (int)q[1], (int)q[2], (int)q[3]);
    case 18:
        return PyLong_FromLong((q[0] << 8) | q[1]);
    default: /* Fixed */
        return PyBytes_FromStringAndSize((const char *)q, size);
    }
}

/* A bytes object of size bytes: the have bytes at q, then zeros. */
static PyObject *lludp_padded_bytes(const unsigned char *q, Py_ssize_t have, Py_ssize_t size)
{
    PyObject *v = PyBytes_FromStringAndSize(NULL, size);
    if (v == NULL) return NULL;
    memcpy(PyBytes_AS_STRING(v), q, (size_t)have);
    memset(PyBytes_AS_STRING(v) + have, 0, (size_t)(size - have));
    return v;
}

#define LLUDP_SHORT (-2)    /* strict: a field runs past the end */
#define LLUDP_TOO_LONG (-3) /* a Variable field's length is above 0xFFFF */

/* The field walk: fill the nfields slots of the new block tuple blk (3
   layout bytes a field: type, size low, size high; for Variable the size is
   that of its little-endian length prefix) from r[*ppos:end], as
   _codec_py._walk does. A fixed-size field cut short by the end is all zeros
   (the viewer does not use the bytes present) and sets *truncated, unless
   strict; *odd_bool is set when a BOOL byte is neither 0 nor 1. Returns 0 (*ppos past the block); -1 with an
   exception; LLUDP_SHORT (*pf the field, *ppos where the missing bytes
   start) or LLUDP_TOO_LONG (*pf, *ppos at the prefix, *plength): the caller
   raises the pure twin's DecodeError. */
static int lludp_block_fill(PyObject *blk, const unsigned char *layout, Py_ssize_t nfields,
                            const unsigned char *r, Py_ssize_t end, Py_ssize_t *ppos, int strict,
                            int *truncated, int *odd_bool, Py_ssize_t *pf, uint64_t *plength)
{
    Py_ssize_t pos = *ppos, f;
    int rc = 0;
    for (f = 0; f < nfields; f++) {
        int t = layout[3 * f];
        Py_ssize_t size = layout[3 * f + 1] | ((Py_ssize_t)layout[3 * f + 2] << 8);
        PyObject *v;
        if (t == 20) {
            uint64_t length = 0;
            Py_ssize_t k;
            if (size > end - pos) {
                if (strict) {
                    rc = LLUDP_SHORT;
                    break;
                }
                *truncated = 1;
                pos = end;
                v = PyBytes_FromStringAndSize(NULL, 0);
            }
            else {
                for (k = size - 1; k >= 0; k--) length = (length << 8) | r[pos + k];
                if (length > 0xFFFF) {
                    *plength = length;
                    rc = LLUDP_TOO_LONG;
                    break;
                }
                pos += size;
                if ((Py_ssize_t)length > end - pos) {
                    if (strict) {
                        rc = LLUDP_SHORT;
                        break;
                    }
                    *truncated = 1;
                    v = lludp_padded_bytes(r + pos, end - pos, (Py_ssize_t)length);
                    pos = end;
                }
                else {
                    v = PyBytes_FromStringAndSize((const char *)r + pos, (Py_ssize_t)length);
                    pos += (Py_ssize_t)length;
                }
            }
        }
        else if (size > end - pos) {
            if (strict) {
                rc = LLUDP_SHORT;
                break;
            }
            *truncated = 1;
            if (t == 19) {
                v = lludp_padded_bytes(r + pos, 0, size);
            }
            else {
                static const unsigned char zeros[32] = {0}; /* the others take at most 24 bytes */
                v = lludp_value_obj(t, zeros, size);
            }
            pos = end;
        }
        else {
            if (t == 16 && r[pos] > 1) *odd_bool = 1;
            v = lludp_value_obj(t, r + pos, size);
            pos += size;
        }
        if (v == NULL) {
            rc = -1;
            break;
        }
        PyTuple_SET_ITEM(blk, f, v);
    }
    if (rc == 0 && Py_TYPE(blk)->tp_dictoffset == 0) lludp_untrack(blk); /* see above */
    *ppos = pos;
    *pf = f;
    return rc;
}

/* The appended acks of p[0:n] (count ids, big-endian, backwards from the
   count byte at n - 1) as a tuple of ints; the caller checked the sizes. */
static PyObject *lludp_acks_tuple(const unsigned char *p, Py_ssize_t n, Py_ssize_t count)
{
    PyObject *t = PyTuple_New(count), *v;
    const unsigned char *q = p + n - 5;
    Py_ssize_t k;
    if (t == NULL) return NULL;
    for (k = 0; k < count; k++, q -= 4) {
        v = PyLong_FromUnsignedLong(((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) |
                                    ((uint32_t)q[2] << 8) | q[3]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, v);
    }
    lludp_untrack(t);
    return t;
}

/* ------------------------------------------------------------------ encoded values

   The field writer: a block's fields in one loop, for the values it knows
   (exact ints, floats, bytes, bools, tuples or lists of exact floats,
   uuid.UUIDs holding an exact int). Whatever it leaves (another type, a
   value out of range, IPADDR) the caller hands to the pure twin's
   _field_bytes: the same bytes, the same errors. */

static inline void lludp_put_le(unsigned char *o, uint64_t v, Py_ssize_t size)
{
    Py_ssize_t k;
    for (k = 0; k < size; k++) o[k] = (unsigned char)(v >> (8 * k));
}

/* The items of an exact tuple or list (NULL if value is neither), and their number. */
static inline PyObject **lludp_seq_items(PyObject *value, Py_ssize_t *n)
{
    if (PyTuple_CheckExact(value)) {
        *n = PyTuple_GET_SIZE(value);
        return &PyTuple_GET_ITEM(value, 0);
    }
    if (PyList_CheckExact(value)) {
        *n = PyList_GET_SIZE(value);
        return &PyList_GET_ITEM(value, 0);
    }
    return NULL;
}

/* d as an F32 (1), or 0 where it does not fit one (the pure twin's error). */
static inline int lludp_f32_fits(double d)
{
    float f = (float)d;
    return !(isinf(f) && !isinf(d));
}

/* count doubles as F32 (or F64 if wide) at o: the bytes written, -1 if one does not fit. */
static Py_ssize_t lludp_doubles_put(unsigned char *o, const double *c, int count, int wide)
{
    int k;
    if (!wide)
        for (k = 0; k < count; k++)
            if (!lludp_f32_fits(c[k])) return -1;
    for (k = 0; k < count; k++) {
        if (wide) {
            uint64_t bits;
            memcpy(&bits, &c[k], 8);
            lludp_put_le(o + 8 * k, bits, 8);
        }
        else {
            lludp_put_le(o + 4 * k, lludp_f32_bits(c[k]), 4);
        }
    }
    return wide ? 8 * count : 4 * count;
}

/* The doubles of an exact tuple or list of lo..hi exact floats into c: their number, or -1. */
static Py_ssize_t lludp_floats_of(PyObject *value, double *c, Py_ssize_t lo, Py_ssize_t hi)
{
    Py_ssize_t n, k;
    PyObject **items = lludp_seq_items(value, &n);
    if (items == NULL || n < lo || n > hi) return -1;
    for (k = 0; k < n; k++) {
        if (!PyFloat_CheckExact(items[k])) return -1;
        c[k] = PyFloat_AS_DOUBLE(items[k]);
    }
    return n;
}

/* LL's packToVector3 for 3 or 4 floats: x, y, z of the normalised
   quaternion, negated when w < 0; a w that decoding would rebuild from x, y,
   z sends them as they came. 0, or -1 for the pure twin's path. */
static int lludp_quat_xyz(double *q, Py_ssize_t n)
{
    double x = q[0], y = q[1], z = q[2], w, mag;
    if (n == 3) return 0;
    w = q[3];
    mag = 1.0 - (x * x + y * y + z * z);
    if (w == (mag > 0 ? sqrt(mag) : 0.0)) return 0;
    mag = sqrt(x * x + y * y + z * z + w * w);
    if (!isfinite(mag)) return -1;
    if (mag <= 1e-7) {
        q[0] = q[1] = q[2] = 0.0;
        return 0;
    }
    x /= mag;
    y /= mag;
    z /= mag;
    if (w / mag < 0) {
        x = -x;
        y = -y;
        z = -z;
    }
    q[0] = x;
    q[1] = y;
    q[2] = z;
    return 0;
}

/* The bytes of value as a field of type t (size bytes) written at o, which
   has room for max(32, size) bytes: the number written, or -1 (no exception)
   for the pure twin's path. */
static Py_ssize_t lludp_field_put(unsigned char *o, int t, Py_ssize_t size, PyObject *value)
{
    unsigned long long u;
    long long s;
    double c[4];
    Py_ssize_t n;
    switch (t) {
    case 15:
        if (Py_TYPE(value) == lludp_ctx.uuid_cls) {
            PyObject *iv = Py_TYPE(lludp_ctx.uuid_int)
                               ->tp_descr_get(lludp_ctx.uuid_int, value,
                                              (PyObject *)lludp_ctx.uuid_cls);
            int bad;
            if (iv == NULL) {
                PyErr_Clear();
                return -1;
            }
            bad = gamecodec_uint128_bytes(iv, o);
            Py_DECREF(iv);
            return bad ? -1 : 16;
        }
        return -1;
    case 1:
    case 2:
    case 3:
    case 4:
    case 18: /* unsigned ints, IPPORT */
        if (!PyLong_CheckExact(value) || gamecodec_as_u64(value, &u) != 0) return -1;
        if (size < 8 && u >= (1ULL << (8 * size))) return -1;
        if (t == 18) {
            o[0] = (unsigned char)(u >> 8);
            o[1] = (unsigned char)u;
            return 2;
        }
        lludp_put_le(o, u, size);
        return size;
    case 5:
    case 6:
    case 7:
    case 8: /* signed ints */
        if (!PyLong_CheckExact(value) || gamecodec_as_i64(value, &s) != 0) return -1;
        if (size < 8 && (s < -(1LL << (8 * size - 1)) || s >= (1LL << (8 * size - 1)))) return -1;
        lludp_put_le(o, (uint64_t)s, size);
        return size;
    case 9:
    case 10:
        if (!PyFloat_CheckExact(value)) return -1;
        c[0] = PyFloat_AS_DOUBLE(value);
        return lludp_doubles_put(o, c, 1, t == 10);
    case 11:
    case 12:
    case 13:
        n = t == 13 ? 4 : 3;
        if (lludp_floats_of(value, c, n, n) < 0) return -1;
        return lludp_doubles_put(o, c, (int)n, t == 12);
    case 14:
        n = lludp_floats_of(value, c, 3, 4);
        if (n < 0 || lludp_quat_xyz(c, n) < 0) return -1;
        return lludp_doubles_put(o, c, 3, 0);
    case 16:
        if (value != Py_True && value != Py_False) return -1;
        o[0] = value == Py_True;
        return 1;
    case 19:
        if (!PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) != size) return -1;
        memcpy(o, PyBytes_AS_STRING(value), (size_t)size);
        return size;
    default: /* IPADDR */
        return -1;
    }
}

/* Write the fields f.. of block item (a tuple of nfields values) at
   buf[*pn:cap]. Returns the index of the first field it leaves to the
   caller (nfields if none), *pn past the bytes written; *need is then the
   room that field wants if room is all it lacked (the caller grows the
   buffer and calls again), else 0 (the caller writes that field itself). */
static Py_ssize_t lludp_fields_put(PyObject *item, const unsigned char *layout, Py_ssize_t f,
                                   Py_ssize_t nfields, unsigned char *buf, Py_ssize_t cap,
                                   Py_ssize_t *pn, Py_ssize_t *need)
{
    Py_ssize_t n = *pn;
    *need = 0;
    for (; f < nfields; f++) {
        int t = layout[3 * f];
        Py_ssize_t size = layout[3 * f + 1] | ((Py_ssize_t)layout[3 * f + 2] << 8), w;
        PyObject *value = PyTuple_GET_ITEM(item, f);
        if (t == 20) { /* Variable: exact bytes whose length fits the prefix */
            Py_ssize_t length;
            if (!PyBytes_CheckExact(value)) break;
            length = PyBytes_GET_SIZE(value);
            if (size > 4 || (unsigned long long)length >= (1ULL << (8 * size))) break;
            if (cap - n < size + length) {
                *need = size + length;
                break;
            }
            lludp_put_le(buf + n, (uint64_t)length, size);
            memcpy(buf + n + size, PyBytes_AS_STRING(value), (size_t)length);
            n += size + length;
            continue;
        }
        if (cap - n < (size > 32 ? size : 32)) {
            *need = size > 32 ? size : 32;
            break;
        }
        w = lludp_field_put(buf + n, t, size, value);
        if (w < 0) break;
        n += w;
    }
    *pn = n;
    return f;
}

#endif
