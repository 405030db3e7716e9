/* LLUDP hot loops in plain C, used by _codec_c.pyx: zero-coding and 128-bit
   UUID integers. The semantics are those of _codec_py.py (tests hold them
   together). */
#ifndef GAMECODEC_LLUDP_H
#define GAMECODEC_LLUDP_H

#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef Py_T_OBJECT_EX
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

/* 8 bytes at p, in the machine's order. */
static inline uint64_t lludp_load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Spare bytes the callers keep after their buffers (not needed by the loops). */
#define LLUDP_SLACK 32

#include "_lludp_simd.h"

#if defined(__GNUC__) && defined(__SSE2__)
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
#if defined(_M_X64) && !defined(LLUDP_SSE2)
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
   cap). Returns 0 when done (*po is the output size), or -1 if the output
   would pass cap: *pi is then the input index where it would (the start of
   the literal byte or zero run that does not fit) and *po the output so far,
   so a caller with a bigger buffer can carry on from there. */
static int lludp_expand_from(const unsigned char *src, Py_ssize_t n, unsigned char *dst,
                             Py_ssize_t cap, Py_ssize_t *pi, Py_ssize_t *po)
{
    Py_ssize_t i, o;
    /* AVX-512 where the CPU has it (one 64-byte block and a count byte), else
       the portable bulk walk */
    if (!(n - *pi >= 65 && lludp_expand_bulk_simd(src, n, dst, cap, pi, po))) {
#ifdef LLUDP_HAVE_CTZ
        if (n - *pi >= 96) lludp_expand_bulk(src, n, dst, cap, pi, po);
#endif
    }
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
            if (count > cap - o) goto full;
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

/* Where the digits of an int can be read directly (CPython's own layout:
   ob_size and ob_digit before 3.12, lv_tag and long_value.ob_digit from 3.12;
   only the versions it was checked against). */
#if !defined(Py_LIMITED_API) && !defined(PYPY_VERSION) && !defined(Py_GIL_DISABLED) && \
    PY_VERSION_HEX >= 0x03090000 && PY_VERSION_HEX < 0x030E0000 && PyLong_SHIFT == 30
#define LLUDP_INT_DIGITS 1
#if PY_VERSION_HEX >= 0x030C0000
#define LLUDP_DIGITS(v) (((PyLongObject *)(v))->long_value.ob_digit)
/* the digit count, negated for a negative int (as ob_size was) */
static inline Py_ssize_t lludp_long_size(PyObject *v)
{
    uintptr_t tag = ((PyLongObject *)v)->long_value.lv_tag;
    Py_ssize_t n = (Py_ssize_t)(tag >> _PyLong_NON_SIZE_BITS);
    return (tag & _PyLong_SIGN_MASK) == 2 ? -n : n;
}
#else
#define LLUDP_DIGITS(v) (((PyLongObject *)(v))->ob_digit)
static inline Py_ssize_t lludp_long_size(PyObject *v) { return Py_SIZE(v); }
#endif
#endif

/* The int of 16 big-endian bytes. */
static PyObject *lludp_uint128(const unsigned char *p)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(p, 16, Py_ASNATIVEBYTES_BIG_ENDIAN);
#else
    return _PyLong_FromByteArray(p, 16, 0, 0);
#endif
}

/* 16 big-endian bytes of v when v is an exact int in [0, 2**128): 0. For
   anything else (another type, a negative or too big int) 1, with no
   exception: the caller's general path then decides, as the pure twin does
   (a UUID's `int` slot can be set to anything through object.__setattr__). */
#ifndef LLUDP_INT_DIGITS
static int lludp_uint128_bytes_api(PyObject *v, unsigned char *out)
{
#if PY_VERSION_HEX >= 0x030D0000
    Py_ssize_t r = PyLong_AsNativeBytes(v, out, 16,
                                        Py_ASNATIVEBYTES_BIG_ENDIAN |
                                            Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
                                            Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (r < 0) {
        PyErr_Clear(); /* negative: the general path raises the pure twin's error */
        return 1;
    }
    return r > 16 ? 1 : 0;
#else
    if (_PyLong_AsByteArray((PyLongObject *)v, out, 16, 0, 0) < 0) {
        PyErr_Clear(); /* negative or too big (OverflowError): the general path decides */
        return 1;
    }
    return 0;
#endif
}
#endif

static inline int lludp_uint128_bytes(PyObject *v, unsigned char *out)
{
    if (!PyLong_CheckExact(v)) return 1;
#ifdef LLUDP_INT_DIGITS
    {
        /* at most 5 digits of 30 bits: the two 64-bit halves straight from them */
        Py_ssize_t size = lludp_long_size(v), k;
        const digit *d = LLUDP_DIGITS(v);
        uint64_t x[5] = {0, 0, 0, 0, 0}, hi, lo;
        if (size < 0 || size > 5 || (size == 5 && (d[4] >> 8) != 0)) return 1;
        for (k = 0; k < size; k++) x[k] = d[k];
        lo = x[0] | (x[1] << 30) | (x[2] << 60);
        hi = (x[2] >> 4) | (x[3] << 26) | (x[4] << 56);
#ifdef LLUDP_WORDS
        hi = __builtin_bswap64(hi); /* big-endian halves: one store each */
        lo = __builtin_bswap64(lo);
        memcpy(out, &hi, 8);
        memcpy(out + 8, &lo, 8);
#else
        for (k = 0; k < 8; k++) {
            out[k] = (unsigned char)(hi >> (56 - 8 * k));
            out[8 + k] = (unsigned char)(lo >> (56 - 8 * k));
        }
#endif
        return 0;
    }
#else
    return lludp_uint128_bytes_api(v, out);
#endif
}

/* The value of an int (exact or a subclass) as an unsigned 64-bit integer:
   0, or -1 (with no exception left) if it is negative or too big. Ints of up
   to two digits are read straight from their digits where the layout is
   known (on 3.11 PyLong_AsUnsignedLongLong goes through _PyLong_AsByteArray). */
static inline int lludp_as_u64(PyObject *v, unsigned long long *out)
{
    unsigned long long u;
#ifdef LLUDP_INT_DIGITS
    Py_ssize_t size = lludp_long_size(v);
    const digit *d = LLUDP_DIGITS(v);
    if (size < 0) return -1;
    if (size <= 2) {
        if (size == 0) *out = 0;
        else if (size == 1) *out = d[0];
        else *out = ((unsigned long long)d[1] << PyLong_SHIFT) | d[0];
        return 0;
    }
#endif
    u = PyLong_AsUnsignedLongLong(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    *out = u;
    return 0;
}

/* The same (kept for its callers: encode_packet's header and ack values). */
static inline int lludp_as_u64_exact(PyObject *v, unsigned long long *out)
{
    return lludp_as_u64(v, out);
}

/* 1 and *out = the value if v is an exact int in [0, 2**32); 0 otherwise. */
static inline int lludp_small_uint(PyObject *v, unsigned long long *out)
{
    if (!PyLong_CheckExact(v)) return 0;
    return lludp_as_u64(v, out) == 0 && (*out >> 32) == 0;
}

/* The same for a signed 64-bit integer. */
static inline int lludp_as_i64(PyObject *v, long long *out)
{
    long long s;
#ifdef LLUDP_INT_DIGITS
    Py_ssize_t size = lludp_long_size(v);
    const digit *d = LLUDP_DIGITS(v);
    if (size >= -2 && size <= 2) {
        long long m;
        if (size == 0) m = 0;
        else if (size == 1 || size == -1) m = (long long)d[0];
        else m = ((long long)d[1] << PyLong_SHIFT) | (long long)d[0];
        *out = size < 0 ? -m : m;
        return 0;
    }
#endif
    s = PyLong_AsLongLong(v);
    if (s == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    *out = s;
    return 0;
}

/* A fresh instance of cls from its tp_alloc (slots NULL), as object.__new__ makes it. */
static PyObject *lludp_alloc(PyObject *cls)
{
    return ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
}

/* The address of an object's __slots__ member, from its member descriptor;
   NULL if descr is not a plain object member. */
static PyObject **lludp_slot(PyObject *obj, PyObject *descr)
{
    PyMemberDef *m;
    if (!PyObject_TypeCheck(descr, &PyMemberDescr_Type)) return NULL;
    m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != Py_T_OBJECT_EX) return NULL;
    return (PyObject **)((char *)obj + m->offset);
}

/* 1 on free-threaded builds: no module-level caches shared between threads there. */
#ifdef Py_GIL_DISABLED
#define LLUDP_FREE_THREADED 1
#else
#define LLUDP_FREE_THREADED 0
#endif

/* ------------------------------------------------------------------ fast objects

   A free list for the codec's tuple-subclass results (Block classes, Message,
   Header). CPython gives instances of a tuple subclass no free list: each one
   costs PyType_GenericAlloc plus subtype_dealloc, which dominated decoding.
   lludp_adopt(cls) gives an eligible class (a heap subclass of tuple with
   __slots__ = (), no finalizer, still CPython's subtype_dealloc) our
   lludp_tuple_dealloc, which parks dead instances here; lludp_new_tuple reuses
   them for any adopted class of the same length. Everything an instance sees
   is unchanged: type, refcounts, GC tracking, hash, repr. Only GIL builds of
   CPython 3.11-3.13 (the versions whose subtype_dealloc contract this code was
   checked against); elsewhere the classes are left alone and tp_alloc is used. */

#if !defined(Py_GIL_DISABLED) && !defined(Py_LIMITED_API) && !defined(PYPY_VERSION) && \
    PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000
#define LLUDP_FREELIST 1
#define LLUDP_FL_SIZES 64
#endif

#ifdef LLUDP_FREELIST
static PyObject *lludp_fl_head[LLUDP_FL_SIZES + 1];
static int lludp_fl_count[LLUDP_FL_SIZES + 1];
/* CPython's slots of a plain heap subclass of tuple with __slots__ = (), read
   off such a class at import (they are private to typeobject.c). */
static destructor lludp_subtype_dealloc = NULL;
static traverseproc lludp_subtype_traverse = NULL;

static inline int lludp_fl_limit(Py_ssize_t n) { return n <= 20 ? 1000 : 100; }

static void lludp_tuple_dealloc(PyObject *op);

/* 1 if op is an instance of an adopted class (the exact class). */
#define LLUDP_ADOPTED(tp) ((tp)->tp_dealloc == lludp_tuple_dealloc)

/* Nesting of lludp_tuple_dealloc calls: below LLUDP_NEST it skips CPython's
   trashcan (which costs a thread-state lookup per object); deeper chains of
   blocks inside blocks go through it, so deallocation never overflows the stack. */
#define LLUDP_NEST 32
static int lludp_nest = 0;

static inline void lludp_park(PyObject *op, PyTypeObject *tp)
{
    Py_ssize_t i, n = Py_SIZE(op);
    for (i = 0; i < n; i++) Py_CLEAR(((PyTupleObject *)op)->ob_item[i]);
    /* an object that was finalized once (a __del__ that resurrected it, since
       removed) keeps the GC FINALIZED bit, which no public API clears: a reused
       one would never get a __del__ set on its next class */
    if (n >= 1 && n <= LLUDP_FL_SIZES && lludp_fl_count[n] < lludp_fl_limit(n) &&
        tp->tp_finalize == NULL && !PyObject_GC_IsFinalized(op)) {
        ((PyTupleObject *)op)->ob_item[0] = lludp_fl_head[n];
        lludp_fl_head[n] = op;
        lludp_fl_count[n]++;
    }
    else {
        tp->tp_free(op);
    }
    Py_DECREF(tp);
}

static void lludp_tuple_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    if (!LLUDP_ADOPTED(tp)) {
        /* An instance of a Python subclass of an adopted class: its
           subtype_dealloc has done the subclass' part and calls us as the base
           dealloc. Because the base is a heap type it leaves the type's
           reference to us (typeobject.c, type_needs_decref). */
        PyTuple_Type.tp_dealloc(op);
        Py_DECREF(tp);
        return;
    }
    if (tp->tp_finalize != NULL && !PyObject_GC_IsFinalized(op)) {
        /* a __del__ added to the class later; tracked while it runs, as
           subtype_dealloc does (a trashcan re-entry comes here untracked) */
        if (!PyObject_GC_IsTracked(op)) PyObject_GC_Track(op);
        if (PyObject_CallFinalizerFromDealloc(op) < 0) return; /* resurrected */
    }
    PyObject_GC_UnTrack(op);
    if (lludp_nest < LLUDP_NEST) {
        lludp_nest++;
        lludp_park(op, tp);
        lludp_nest--;
        return;
    }
    Py_TRASHCAN_BEGIN(op, lludp_tuple_dealloc)
    lludp_park(op, tp);
    Py_TRASHCAN_END
}

/* Give cls our dealloc if it is a class we know how to recycle; 1 if it has it. */
static int lludp_adopt(PyTypeObject *tp)
{
    if (LLUDP_ADOPTED(tp)) return 1;
    if (lludp_subtype_dealloc == NULL || tp->tp_dealloc != lludp_subtype_dealloc) return 0;
    PyTypeObject *b;
    if (tp->tp_finalize != NULL || tp->tp_del != NULL || tp->tp_free != PyObject_GC_Del ||
        tp->tp_alloc != PyType_GenericAlloc || tp->tp_traverse != lludp_subtype_traverse ||
        tp->tp_itemsize != PyTuple_Type.tp_itemsize)
        return 0;
    /* tp and every class between it and tuple: heap classes that add nothing
       to a tuple (__slots__ = ()), deallocated by subtype_dealloc (or adopted) */
    for (b = tp; b != &PyTuple_Type; b = b->tp_base) {
        if (b == NULL || !(b->tp_flags & Py_TPFLAGS_HEAPTYPE) || !(b->tp_flags & Py_TPFLAGS_HAVE_GC) ||
            b->tp_basicsize != PyTuple_Type.tp_basicsize || b->tp_dictoffset != 0 ||
            b->tp_weaklistoffset != 0 ||
            (b->tp_dealloc != lludp_subtype_dealloc && !LLUDP_ADOPTED(b)))
            return 0;
    }
    tp->tp_dealloc = lludp_tuple_dealloc;
    return 1;
}

/* Learn CPython's subtype_dealloc from a plain heap class (once, at import). */
static void lludp_fast_init(PyObject *plain_heap_class)
{
    PyTypeObject *tp = (PyTypeObject *)plain_heap_class;
    if (tp->tp_base != &PyTuple_Type || tp->tp_dictoffset != 0 || tp->tp_weaklistoffset != 0 ||
        !(tp->tp_flags & Py_TPFLAGS_HEAPTYPE))
        return;
    lludp_subtype_traverse = tp->tp_traverse;
    lludp_subtype_dealloc = tp->tp_dealloc;
}

/* An instance of cls with n empty (NULL) slots, GC-tracked, as tp_alloc gives. */
static PyObject *lludp_new_tuple(PyObject *cls, Py_ssize_t n)
{
    PyTypeObject *tp = (PyTypeObject *)cls;
    PyObject *op;
    if (n >= 1 && n <= LLUDP_FL_SIZES && lludp_fl_head[n] != NULL && lludp_adopt(tp) &&
        tp->tp_finalize == NULL) {
        op = lludp_fl_head[n];
        lludp_fl_head[n] = ((PyTupleObject *)op)->ob_item[0];
        lludp_fl_count[n]--;
        ((PyTupleObject *)op)->ob_item[0] = NULL;
        Py_INCREF(tp);
        Py_SET_TYPE(op, tp);
        _Py_NewReference(op); /* refcount 1; debug totals; 3.13's PyRefTracer CREATE event */
        PyObject_GC_Track(op);
        return op;
    }
    if (!LLUDP_ADOPTED(tp)) lludp_adopt(tp);
    return tp->tp_alloc(tp, n);
}

/* How many parked instances there are (for tests). */
static Py_ssize_t lludp_fl_total(void)
{
    Py_ssize_t k, total = 0;
    for (k = 0; k <= LLUDP_FL_SIZES; k++) total += lludp_fl_count[k];
    return total;
}
#else
static void lludp_fast_init(PyObject *plain_heap_class) { (void)plain_heap_class; }
static inline int lludp_adopt(PyTypeObject *tp) { (void)tp; return 0; }
static PyObject *lludp_new_tuple(PyObject *cls, Py_ssize_t n)
{
    PyObject *op = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, n);
#if PY_VERSION_HEX >= 0x030E0000
    if (op != NULL) ((PyTupleObject *)op)->ob_hash = -1;
#endif
    return op;
}
static Py_ssize_t lludp_fl_total(void) { return -1; }
#endif

/* ------------------------------------------------------------------ UUID cache

   Decoded UUIDs are uuid.UUID objects (immutable). The same ids come back all
   the time (AgentID and SessionID in every AgentUpdate, an object's FullID and
   OwnerID in each of its updates, the nil id everywhere), so a small
   direct-mapped cache hands back the object already made for the same 16
   bytes. GIL builds only: without a GIL the table would be a data race. */

#define LLUDP_UUID_SLOTS 1024
typedef struct {
    uint64_t hi, lo;
    PyObject *obj;
} lludp_uuid_entry;
static lludp_uuid_entry lludp_uuids[LLUDP_UUID_SLOTS];
static int lludp_uuid_cache_on = 0;

static inline Py_ssize_t lludp_uuid_index(uint64_t hi, uint64_t lo)
{
    uint64_t h = (hi ^ (lo * 0x9E3779B97F4A7C15ULL)) * 0xC2B2AE3D27D4EB4FULL;
    return (Py_ssize_t)(h >> (64 - 10));
}

/* A borrowed reference to the cached UUID of p, or NULL (no exception) on a miss. */
static inline PyObject *lludp_uuid_get(const unsigned char *p)
{
#ifndef Py_GIL_DISABLED
    uint64_t hi, lo;
    lludp_uuid_entry *e;
    if (!lludp_uuid_cache_on) return NULL;
    hi = lludp_load64(p);
    lo = lludp_load64(p + 8);
    e = &lludp_uuids[lludp_uuid_index(hi, lo)];
    if (e->obj != NULL && e->hi == hi && e->lo == lo) return e->obj;
#else
    (void)p;
#endif
    return NULL;
}

static inline void lludp_uuid_put(const unsigned char *p, PyObject *obj)
{
#ifndef Py_GIL_DISABLED
    uint64_t hi, lo;
    lludp_uuid_entry *e;
    PyObject *old;
    if (!lludp_uuid_cache_on) return;
    hi = lludp_load64(p);
    lo = lludp_load64(p + 8);
    e = &lludp_uuids[lludp_uuid_index(hi, lo)];
    old = e->obj;
    Py_INCREF(obj);
    e->hi = hi;
    e->lo = lo;
    e->obj = obj;
    Py_XDECREF(old);
#else
    (void)p;
    (void)obj;
#endif
}

/* Turn the cache on or off (off empties it); returns the previous state. */
static int lludp_uuid_cache(int on)
{
    int was = lludp_uuid_cache_on, k;
#ifdef Py_GIL_DISABLED
    on = 0;
#endif
    lludp_uuid_cache_on = 0;
    for (k = 0; k < LLUDP_UUID_SLOTS; k++) Py_CLEAR(lludp_uuids[k].obj);
    lludp_uuid_cache_on = on;
    return was;
}


/* ------------------------------------------------------------------ decoded values

   The field walk of _codec_c.pyx's _walk for fixed-size fields, in C: one
   loop that builds each value and stores it straight into the block's slot
   (no temporary references). The values are exactly those of _value in the
   .pyx (which keeps handling Variable fields, fields cut short and, where the
   direct construction is off, UUIDs). */

typedef struct {
    PyObject *zero;  /* the shared 0.0 */
    PyObject *one;   /* the shared 1.0 */
    PyObject *zero3; /* the shared (0.0, 0.0, 0.0) */
    /* direct uuid.UUID construction (lludp_uuid_setup); off: uuid_cls NULL */
    PyObject *uuid_cls;
    PyObject *safe_unknown;
    Py_ssize_t uuid_int_off, uuid_safe_off;
} lludp_values_ctx;
static lludp_values_ctx lludp_vc;

/* The shared float and tuple objects (new references kept for the module's life). */
static void lludp_values_init(PyObject *zero, PyObject *one, PyObject *zero3)
{
    if (lludp_vc.zero != NULL) return; /* once (the module's import): kept for its life */
    Py_INCREF(zero);
    Py_INCREF(one);
    Py_INCREF(zero3);
    lludp_vc.zero = zero;
    lludp_vc.one = one;
    lludp_vc.zero3 = zero3;
}

/* The offset of a plain object __slots__ member, from its descriptor; -1 if it is not one. */
static Py_ssize_t lludp_slot_offset(PyObject *descr)
{
    PyMemberDef *m;
    if (!PyObject_TypeCheck(descr, &PyMemberDescr_Type)) return -1;
    m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != Py_T_OBJECT_EX) return -1;
    return m->offset;
}

/* Turn the direct UUID construction on (cls and its `int` and `is_safe`
   member descriptors, the SafeUUID.unknown value) or off (cls NULL).
   Returns 1 if it is on. */
static int lludp_uuid_setup(PyObject *cls, PyObject *int_descr, PyObject *safe_descr,
                            PyObject *safe_unknown)
{
    Py_ssize_t a, b;
    Py_CLEAR(lludp_vc.uuid_cls);
    Py_CLEAR(lludp_vc.safe_unknown);
    if (cls == NULL) return 0;
    a = lludp_slot_offset(int_descr);
    b = lludp_slot_offset(safe_descr);
    if (a < 0 || b < 0) return 0;
    Py_INCREF(cls);
    Py_INCREF(safe_unknown);
    lludp_vc.uuid_int_off = a;
    lludp_vc.uuid_safe_off = b;
    lludp_vc.safe_unknown = safe_unknown;
    lludp_vc.uuid_cls = cls;
    return 1;
}

/* A new uuid.UUID of the 16 big-endian bytes at p, made as object.__new__
   and the two slot stores of UUID.__init__ make it (direct construction on),
   through the cache of decoded UUIDs. */
static PyObject *lludp_make_uuid(const unsigned char *p)
{
    PyObject *obj, *value = lludp_uuid_get(p);
    if (value != NULL) {
        Py_INCREF(value);
        return value;
    }
    value = lludp_uint128(p);
    if (value == NULL) return NULL;
    obj = ((PyTypeObject *)lludp_vc.uuid_cls)->tp_alloc((PyTypeObject *)lludp_vc.uuid_cls, 0);
    if (obj == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    *(PyObject **)((char *)obj + lludp_vc.uuid_int_off) = value; /* steals */
    Py_INCREF(lludp_vc.safe_unknown);
    *(PyObject **)((char *)obj + lludp_vc.uuid_safe_off) = lludp_vc.safe_unknown;
    lludp_uuid_put(p, obj);
    return obj;
}

/* The reference count of a fresh object from PyObject_Malloc: 1. Before
   3.13, in release builds, that is all _Py_NewReference does (besides
   tracemalloc's re-dating of a block it traced: this one was traced just
   now, by PyObject_Malloc); 3.13 also reports the object to a PyRefTracer,
   and debug builds count it, so they call it. */
#if PY_VERSION_HEX < 0x030D0000 && !defined(Py_REF_DEBUG) && !defined(Py_TRACE_REFS)
#define LLUDP_NEW_REFERENCE(op) ((op)->ob_refcnt = 1)
#else
#define LLUDP_NEW_REFERENCE(op) _Py_NewReference(op)
#endif

/* An int of a non-negative value below 2**32. Where the int layout is known
   (LLUDP_INT_DIGITS), ints above 256 come from a ring of the ones made
   before: an int whose only reference left is the ring's cannot be seen by
   anything else, so it takes the new value in place (as a free list would
   hand its memory out again, without the free and the allocation). The
   others are built as CPython's PyLong_FromLongLong builds them (PyObject_Malloc,
   the type, a new reference, the digits), with room for two digits so that
   any value fits when the ring reuses them. Small ints come from CPython's
   cache as always. */
#ifdef LLUDP_INT_DIGITS
#define LLUDP_INT_RING 256 /* a power of 2 */
static PyObject *lludp_int_ring[LLUDP_INT_RING];
static unsigned int lludp_int_at = 0;
static int lludp_int_ring_on = 0;

static inline void lludp_int_set(PyLongObject *o, uint32_t v)
{
    uintptr_t nd = (v >> PyLong_SHIFT) ? 2 : 1;
    digit *d;
#if PY_VERSION_HEX >= 0x030C0000
    o->long_value.lv_tag = nd << _PyLong_NON_SIZE_BITS; /* positive */
    d = o->long_value.ob_digit;
#else
    Py_SET_SIZE(o, (Py_ssize_t)nd);
    d = o->ob_digit;
#endif
    d[0] = (digit)(v & PyLong_MASK);
    d[1] = (digit)(v >> PyLong_SHIFT); /* room for it: see lludp_int_new */
}

/* A new int of v (> 256), put in ring slot k in place of the one there. */
static PyObject *lludp_int_new(unsigned int k, uint32_t v)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *o = (PyObject *)PyObject_Malloc(offsetof(PyLongObject, long_value.ob_digit) +
                                              2 * sizeof(digit));
#else
    PyObject *o = (PyObject *)PyObject_Malloc(offsetof(PyLongObject, ob_digit) + 2 * sizeof(digit));
#endif
    PyObject *old;
    if (o == NULL) return PyErr_NoMemory();
    lludp_int_set((PyLongObject *)o, v);
    Py_SET_TYPE(o, &PyLong_Type); /* a static type: no reference to take */
    LLUDP_NEW_REFERENCE(o);
    if (lludp_int_ring_on) {
        old = lludp_int_ring[k];
        Py_INCREF(o);
        lludp_int_ring[k] = o;
        Py_XDECREF(old); /* still referenced elsewhere (or it would have been reused) */
    }
    return o;
}

static inline PyObject *lludp_uint_obj(uint32_t v)
{
    if (v > 256) {
        unsigned int k = lludp_int_at++ & (LLUDP_INT_RING - 1);
        PyObject *o = lludp_int_ring[k];
        if (o != NULL && Py_REFCNT(o) == 1) {
            lludp_int_set((PyLongObject *)o, v);
            Py_INCREF(o);
            return o;
        }
        return lludp_int_new(k, v);
    }
    return PyLong_FromLong((long)v);
}

/* Turn the ring on or off (off empties it); returns the previous state. */
static int lludp_int_ring_use(int on)
{
    int was = lludp_int_ring_on, k;
    lludp_int_ring_on = 0;
    for (k = 0; k < LLUDP_INT_RING; k++) Py_CLEAR(lludp_int_ring[k]);
    lludp_int_ring_on = on;
    return was;
}
#else
static inline PyObject *lludp_uint_obj(uint32_t v) { return PyLong_FromLongLong((long long)v); }
static int lludp_int_ring_use(int on)
{
    (void)on;
    return 0;
}
#endif

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

/* A float object; +0.0 and 1.0, the commonest values on the wire, are shared. */
static inline PyObject *lludp_float_obj(double d)
{
    if (d == 0.0) {
        if (!signbit(d)) {
            Py_INCREF(lludp_vc.zero);
            return lludp_vc.zero;
        }
    }
    else if (d == 1.0) {
        Py_INCREF(lludp_vc.one);
        return lludp_vc.one;
    }
    return PyFloat_FromDouble(d);
}

/* A tuple of count floats (F32, or F64 if wide) at q; all-zero 3-vectors share one tuple. */
static PyObject *lludp_floats_obj(const unsigned char *q, int count, int wide)
{
    PyObject *t, *v;
    int k;
    if (count == 3) {
        uint64_t a = lludp_load64(q), b;
        if (wide) b = lludp_load64(q + 8) | lludp_load64(q + 16);
        else b = (uint64_t)lludp_le32(q + 8);
        if ((a | b) == 0) {
            Py_INCREF(lludp_vc.zero3);
            return lludp_vc.zero3;
        }
    }
    t = PyTuple_New(count);
    if (t == NULL) return NULL;
    for (k = 0; k < count; k++) {
        v = lludp_float_obj(wide ? lludp_f64_value(q + 8 * k) : lludp_f32_value(lludp_le32(q + 4 * k)));
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, v);
    }
    return t;
}

/* LLQuaternion: x, y, z on the wire, w rebuilt as LL does. */
static PyObject *lludp_quat_obj(const unsigned char *q)
{
    double c[4], s;
    PyObject *t, *v;
    int k;
    c[0] = lludp_f32_value(lludp_le32(q));
    c[1] = lludp_f32_value(lludp_le32(q + 4));
    c[2] = lludp_f32_value(lludp_le32(q + 8));
    s = 1.0 - (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    c[3] = s > 0 ? sqrt(s) : 0.0;
    t = PyTuple_New(4);
    if (t == NULL) return NULL;
    for (k = 0; k < 4; k++) {
        v = lludp_float_obj(c[k]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, v);
    }
    return t;
}

/* The value of a fixed-size field of type t at q (size bytes, all present);
   NULL with an exception on failure. Not for UUIDs without the direct
   construction (the caller checks). */
static PyObject *lludp_value_obj(int t, const unsigned char *q, Py_ssize_t size)
{
    switch (t) {
    case 15:
        return lludp_make_uuid(q);
    case 3:
        return lludp_uint_obj(lludp_le32(q));
    case 1:
        return PyLong_FromLong(q[0]);
    case 9:
        return lludp_float_obj(lludp_f32_value(lludp_le32(q)));
    case 11:
        return lludp_floats_obj(q, 3, 0);
    case 14:
        return lludp_quat_obj(q);
    case 16:
        if (q[0] == 0) Py_RETURN_FALSE;
        if (q[0] == 1) Py_RETURN_TRUE;
        return PyLong_FromLong(q[0]);
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

/* Fill the slots f.. of block tuple blk (nfields fields, 3 layout bytes
   each: type, size low, size high) from r[*ppos:end], each value stored in
   its slot. Stops at the first field it leaves to the caller: one that does
   not fit before end (a Variable field: its length prefix or its data), a
   Variable field longer than 0xFFFF, or a UUID without the direct
   construction. Returns that field's index (nfields if none), *ppos past
   the fields done; -1 with an exception if a value cannot be made. */
static Py_ssize_t lludp_fields(PyObject *blk, const unsigned char *layout, Py_ssize_t f,
                               Py_ssize_t nfields, const unsigned char *r, Py_ssize_t end,
                               Py_ssize_t *ppos)
{
    Py_ssize_t pos = *ppos;
    for (; f < nfields; f++) {
        int t = layout[3 * f];
        Py_ssize_t size = layout[3 * f + 1] | ((Py_ssize_t)layout[3 * f + 2] << 8);
        PyObject *v;
        if (size > end - pos) break;
        if (t == 20) {
            uint64_t length = 0;
            Py_ssize_t k;
            for (k = size - 1; k >= 0; k--) length = (length << 8) | r[pos + k];
            if (length > 0xFFFF || (Py_ssize_t)length > end - pos - size) break;
            v = PyBytes_FromStringAndSize((const char *)r + pos + size, (Py_ssize_t)length);
            if (v == NULL) {
                *ppos = pos;
                return -1;
            }
            PyTuple_SET_ITEM(blk, f, v);
            pos += size + (Py_ssize_t)length;
            continue;
        }
        if (t == 15 && lludp_vc.uuid_cls == NULL) break;
        v = lludp_value_obj(t, r + pos, size);
        if (v == NULL) {
            *ppos = pos;
            return -1;
        }
        PyTuple_SET_ITEM(blk, f, v);
        pos += size;
    }
    *ppos = pos;
    return f;
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
        v = lludp_uint_obj(((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) | ((uint32_t)q[2] << 8) |
                           q[3]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, v);
    }
    return t;
}


/* ------------------------------------------------------------------ encoded values

   The fast paths of _codec_c.pyx's _field_out for fixed-size fields, in C,
   over a block's fields in one loop. Whatever they do not take (another
   type, a value out of range, IPADDR, Variable) is left to _field_out, which
   hands the unusual cases to the pure twin: same bytes, same errors. */

static inline void lludp_put_le(unsigned char *o, uint64_t v, Py_ssize_t size)
{
    Py_ssize_t k;
#ifdef LLUDP_WORDS
    /* the usual sizes as one store (little-endian host: the bytes in order) */
    if (size == 1) { o[0] = (unsigned char)v; return; }
    if (size == 4) { uint32_t w = (uint32_t)v; memcpy(o, &w, 4); return; }
    if (size == 2) { uint16_t w = (uint16_t)v; memcpy(o, &w, 2); return; }
    if (size == 8) { memcpy(o, &v, 8); return; }
#endif
    for (k = 0; k < size; k++) o[k] = (unsigned char)(v >> (8 * k));
}

static inline void lludp_put_le32(unsigned char *o, uint32_t v)
{
    o[0] = (unsigned char)v;
    o[1] = (unsigned char)(v >> 8);
    o[2] = (unsigned char)(v >> 16);
    o[3] = (unsigned char)(v >> 24);
}

static inline void lludp_put_f64(unsigned char *o, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    lludp_put_le32(o, (uint32_t)bits);
    lludp_put_le32(o + 4, (uint32_t)(bits >> 32));
}

/* The items of an exact tuple or list (NULL if value is neither), and their number. */
static inline PyObject **lludp_seq_items(PyObject *value, Py_ssize_t *n)
{
    if (PyTuple_CheckExact(value)) {
        *n = PyTuple_GET_SIZE(value);
        return ((PyTupleObject *)value)->ob_item;
    }
    if (PyList_CheckExact(value)) {
        *n = PyList_GET_SIZE(value);
        return ((PyListObject *)value)->ob_item;
    }
    return NULL;
}

/* A tuple/list of count exact floats (F32 within range, or F64 if wide); -1 otherwise. */
static Py_ssize_t lludp_floats_put(unsigned char *o, PyObject *value, int count, int wide)
{
    Py_ssize_t n, k;
    PyObject **items = lludp_seq_items(value, &n);
    if (items == NULL || n != count) return -1;
    for (k = 0; k < n; k++) {
        double d;
        if (!PyFloat_CheckExact(items[k])) return -1;
        d = PyFloat_AS_DOUBLE(items[k]);
        if (!wide) {
            float f = (float)d;
            if (isinf(f) && !isinf(d)) return -1;
        }
    }
    for (k = 0; k < n; k++) {
        double d = PyFloat_AS_DOUBLE(items[k]);
        if (wide) lludp_put_f64(o + 8 * k, d);
        else lludp_put_le32(o + 4 * k, lludp_f32_bits(d));
    }
    return wide ? 8 * n : 4 * n;
}

/* LL's packToVector3 for a tuple/list of 3 or 4 exact floats; -1 otherwise. */
static Py_ssize_t lludp_quat_put(unsigned char *o, PyObject *value)
{
    double q[4], mag, x = 0, y = 0, z = 0, w = 0;
    Py_ssize_t n, k;
    PyObject **items = lludp_seq_items(value, &n);
    if (items == NULL || (n != 3 && n != 4)) return -1;
    for (k = 0; k < n; k++) {
        if (!PyFloat_CheckExact(items[k])) return -1;
        q[k] = PyFloat_AS_DOUBLE(items[k]);
    }
    if (n == 4) {
        x = q[0];
        y = q[1];
        z = q[2];
        w = q[3];
        mag = 1.0 - (x * x + y * y + z * z);
        if (w == (mag > 0 ? sqrt(mag) : 0.0)) n = 3; /* the w decoding rebuilds: x, y, z as they came */
    }
    if (n == 4) {
        mag = sqrt(x * x + y * y + z * z + w * w);
        if (!isfinite(mag)) return -1;
        if (mag <= 1e-7) {
            q[0] = q[1] = q[2] = 0.0;
        }
        else {
            x = x / mag;
            y = y / mag;
            z = z / mag;
            w = w / mag;
            if (w < 0) {
                x = -x;
                y = -y;
                z = -z;
            }
            q[0] = x;
            q[1] = y;
            q[2] = z;
        }
    }
    for (k = 0; k < 3; k++) {
        float fl = (float)q[k];
        if (isinf(fl) && !isinf(q[k])) return -1;
    }
    for (k = 0; k < 3; k++) lludp_put_le32(o + 4 * k, lludp_f32_bits(q[k]));
    return 12;
}

/* The bytes of value as a field of type t (size bytes) written at o, which
   has room for max(32, size) bytes: the number written; -1 if the caller's
   general path must do it; -2 with an exception set. */
static Py_ssize_t lludp_field_put(unsigned char *o, int t, Py_ssize_t size, PyObject *value)
{
    unsigned long long u;
    long long s;
    double d;
    switch (t) {
    case 15:
        if (lludp_vc.uuid_cls != NULL && (PyObject *)Py_TYPE(value) == lludp_vc.uuid_cls) {
            PyObject *iv = *(PyObject **)((char *)value + lludp_vc.uuid_int_off);
            if (iv == NULL) return -1;
            return lludp_uint128_bytes(iv, o) == 0 ? 16 : -1;
        }
        return -1;
    case 1:
    case 2:
    case 3:
    case 4:
    case 18: /* unsigned ints, IPPORT */
        if (!PyLong_CheckExact(value) || lludp_as_u64(value, &u) != 0) return -1;
        if (size != 8 && (size > 8 || u >= (1ULL << (8 * size)))) return -1;
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
        if (!PyLong_CheckExact(value) || lludp_as_i64(value, &s) != 0) return -1;
        if (size != 8 && (size > 8 || s < -(1LL << (8 * size - 1)) || s >= (1LL << (8 * size - 1))))
            return -1;
        lludp_put_le(o, (uint64_t)s, size);
        return size;
    case 9:
        if (!PyFloat_CheckExact(value)) return -1;
        d = PyFloat_AS_DOUBLE(value);
        {
            float fl = (float)d;
            if (isinf(fl) && !isinf(d)) return -1;
        }
        lludp_put_le32(o, lludp_f32_bits(d));
        return 4;
    case 10:
        if (!PyFloat_CheckExact(value)) return -1;
        lludp_put_f64(o, PyFloat_AS_DOUBLE(value));
        return 8;
    case 14:
        return lludp_quat_put(o, value);
    case 11:
        return lludp_floats_put(o, value, 3, 0);
    case 12:
        return lludp_floats_put(o, value, 3, 1);
    case 13:
        return lludp_floats_put(o, value, 4, 0);
    case 16:
        if (value == Py_True) {
            o[0] = 1;
            return 1;
        }
        if (value == Py_False) {
            o[0] = 0;
            return 1;
        }
        return -1;
    case 19:
        if (!PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) != size) return -1;
        memcpy(o, PyBytes_AS_STRING(value), (size_t)size);
        return size;
    default: /* IPADDR, Variable */
        return -1;
    }
}

/* Write the fields f.. of block item (an exact-size tuple, nfields fields,
   3 layout bytes each) at buf[*pn:cap]. Stops at the first field it leaves
   to the caller: one lludp_field_put does not take, a Variable field that is
   not bytes (or too long, or without room), or one without max(32, size)
   bytes of room. Returns that field's index (nfields if none),
   *pn past the bytes written; -1 with an exception. */
static Py_ssize_t lludp_fields_put(PyObject *item, const unsigned char *layout, Py_ssize_t f,
                                   Py_ssize_t nfields, unsigned char *buf, Py_ssize_t cap,
                                   Py_ssize_t *pn)
{
    Py_ssize_t n = *pn;
    for (; f < nfields; f++) {
        int t = layout[3 * f];
        Py_ssize_t size = layout[3 * f + 1] | ((Py_ssize_t)layout[3 * f + 2] << 8), w;
        PyObject *value = PyTuple_GET_ITEM(item, f);
        if (t == 20) {
            /* Variable: exact bytes whose length fits the prefix (1, 2 or 4
               bytes; anything else is _field_out's, which raises the pure
               twin's error) */
            Py_ssize_t length;
            if (!PyBytes_CheckExact(value)) break;
            length = PyBytes_GET_SIZE(value);
            if (size > 4 || (unsigned long long)length >= (1ULL << (8 * size))) break;
            if (cap - n < size + length) break;
            lludp_put_le(buf + n, (uint64_t)length, size);
            memcpy(buf + n + size, PyBytes_AS_STRING(value), (size_t)length);
            n += size + length;
            continue;
        }
        if (cap - n < (size > 32 ? size : 32)) break;
        w = lludp_field_put(buf + n, t, size, value);
        if (w == -1) break;
        if (w == -2) {
            *pn = n;
            return -1;
        }
        n += w;
    }
    *pn = n;
    return f;
}

#endif
