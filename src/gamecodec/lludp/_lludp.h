/* LLUDP hot loops in plain C, used by _codec_c.pyx: zero-coding and 128-bit
   UUID integers. The semantics are those of _codec_py.py (tests hold them
   together). */
#ifndef GAMECODEC_LLUDP_H
#define GAMECODEC_LLUDP_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#ifndef Py_T_OBJECT_EX
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

/* Spare bytes the callers keep after their buffers (not needed by the loops). */
#define LLUDP_SLACK 32

#if defined(__GNUC__) && defined(__SSE2__)
#include <emmintrin.h>
#define LLUDP_SSE2 1
#endif

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LLUDP_WORDS 1
#define LLUDP_ONES 0x0101010101010101ULL
#define LLUDP_HIGHS 0x8080808080808080ULL
#endif

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

/* Expand LL zero-coding of src[0:n] into dst (cap bytes; every store stays below cap).
   Returns the output size, or -1 if the output would pass cap; *err is then
   the input index where it would. */
static Py_ssize_t lludp_expand(const unsigned char *src, Py_ssize_t n,
                               unsigned char *dst, Py_ssize_t cap, Py_ssize_t *err)
{
    Py_ssize_t i = 0, o = 0;
    while (i < n) {
        lludp_copy_literals(src, n, dst, cap, &i, &o);
        if (i >= n) break;
        if (src[i]) {
            if (o >= cap) {
                *err = i;
                return -1;
            }
            dst[o++] = src[i++];
            continue;
        }
        {
            Py_ssize_t j = i + 1, count;
            while (j < n && src[j] == 0) j++;
            count = 256 * (j - i - 1);
            if (j < n) count += src[j++];
            else count += 1;
            if (count > cap - o) {
                *err = i;
                return -1;
            }
            if (count <= 16 && o + 16 <= cap) memset(dst + o, 0, 16);
            else memset(dst + o, 0, (size_t)count);
            o += count;
            i = j;
        }
    }
    return o;
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

/* The exact size lludp_expand gives for src[0:n], or -1 past cap (*err as there). */
static Py_ssize_t lludp_expanded_size(const unsigned char *src, Py_ssize_t n, Py_ssize_t cap,
                                      Py_ssize_t *err)
{
    Py_ssize_t i = 0, o = 0;
    while (i < n) {
        const unsigned char *z = memchr(src + i, 0, (size_t)(n - i));
        Py_ssize_t lit = (z ? (Py_ssize_t)(z - src) : n) - i, j, count;
        if (lit > cap - o) {
            *err = i + (cap - o);
            return -1;
        }
        o += lit;
        i += lit;
        if (i >= n) break;
        j = i + 1;
        while (j < n && src[j] == 0) j++;
        count = 256 * (j - i - 1);
        if (j < n) count += src[j++];
        else count += 1;
        if (count > cap - o) {
            *err = i;
            return -1;
        }
        o += count;
        i = j;
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

/* The int of 16 big-endian bytes. */
static PyObject *lludp_uint128(const unsigned char *p)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(p, 16, Py_ASNATIVEBYTES_BIG_ENDIAN);
#else
    return _PyLong_FromByteArray(p, 16, 0, 0);
#endif
}

/* 16 big-endian bytes of a non-negative int below 2**128; -1 with an
   exception set otherwise. */
static int lludp_uint128_bytes(PyObject *v, unsigned char *out)
{
#if PY_VERSION_HEX >= 0x030D0000
    Py_ssize_t r;
    if (!PyLong_Check(v) || Py_SIZE(v) < 0) {
        PyErr_SetString(PyExc_OverflowError, "not a 128-bit unsigned int");
        return -1;
    }
    r = PyLong_AsNativeBytes(v, out, 16,
                             Py_ASNATIVEBYTES_BIG_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
                                 Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (r < 0) return -1;
    if (r > 16) {
        PyErr_SetString(PyExc_OverflowError, "int too big for 128 bits");
        return -1;
    }
    return 0;
#else
    return _PyLong_AsByteArray((PyLongObject *)v, out, 16, 0, 0);
#endif
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

#endif
