/* The CPython helpers shared by the compiled twins: the one place that knows
   more than the public C API says. Each helper that relies on CPython's
   layout is fenced below (LAYOUT) with the versions it was checked against;
   elsewhere it falls back to the public API. The modules that use the fenced
   ones compare them with the public API at import (see lludp/_codec_c.pyx,
   _check_capi) and refuse to load if they disagree. None of them changes an
   object the caller did not just make. */
#ifndef GAMECODEC_CAPI_H
#define GAMECODEC_CAPI_H

#include <Python.h>

/* ---------------------------------------------------------------- tuples */

/* An instance of a tuple subclass with n empty slots, made the way CPython's
   tuple_subtype_new makes one (including the hash cache reset of 3.14+,
   gh-131525); the caller fills every slot with PyTuple_SET_ITEM before the
   object is used. LAYOUT: ob_hash exists from 3.14 on. */
static inline PyObject *gamecodec_alloc_subtuple(PyObject *cls, Py_ssize_t n)
{
    PyObject *obj = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, n);
#if PY_VERSION_HEX >= 0x030E0000
    if (obj != NULL) ((PyTupleObject *)obj)->ob_hash = -1;
#endif
    return obj;
}

/* cls(*items) for a tuple subclass such as a NamedTuple (items an exact
   tuple), without calling its __new__. */
static inline PyObject *gamecodec_subtuple_of(PyObject *cls, PyObject *items)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(items);
    PyObject *obj = gamecodec_alloc_subtuple(cls, n);
    if (obj == NULL) return NULL;
    for (i = 0; i < n; i++) PyTuple_SET_ITEM(obj, i, Py_NewRef(PyTuple_GET_ITEM(items, i)));
    return obj;
}

/* ---------------------------------------------------------------- ints

   Reads of an int's value as C integers. LAYOUT: where GAMECODEC_INT_DIGITS
   is defined (GIL builds of CPython 3.11-3.13 with 30-bit digits, the
   versions checked), ints of up to two digits, and 128-bit ones, are read
   straight from their digits: ob_size and ob_digit before 3.12, lv_tag and
   long_value.ob_digit from 3.12. Elsewhere the public API does it. */

#if !defined(Py_LIMITED_API) && !defined(PYPY_VERSION) && !defined(Py_GIL_DISABLED) && \
    PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000 && PyLong_SHIFT == 30
#define GAMECODEC_INT_DIGITS 1
#if PY_VERSION_HEX >= 0x030C0000
#define GAMECODEC_DIGITS(v) (((PyLongObject *)(v))->long_value.ob_digit)
/* the digit count, negated for a negative int (as ob_size was) */
static inline Py_ssize_t gamecodec_long_size(PyObject *v)
{
    uintptr_t tag = ((PyLongObject *)v)->long_value.lv_tag;
    Py_ssize_t n = (Py_ssize_t)(tag >> _PyLong_NON_SIZE_BITS);
    return (tag & _PyLong_SIGN_MASK) == 2 ? -n : n;
}
#else
#define GAMECODEC_DIGITS(v) (((PyLongObject *)(v))->ob_digit)
static inline Py_ssize_t gamecodec_long_size(PyObject *v) { return Py_SIZE(v); }
#endif
#endif

/* v (an int, exact or a subclass) as an unsigned 64-bit integer: 0, or -1
   with no exception left if it is negative or too big. */
static inline int gamecodec_as_u64(PyObject *v, unsigned long long *out)
{
    unsigned long long u;
#ifdef GAMECODEC_INT_DIGITS
    Py_ssize_t size = gamecodec_long_size(v);
    const digit *d = GAMECODEC_DIGITS(v);
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

/* The same for a signed 64-bit integer. */
static inline int gamecodec_as_i64(PyObject *v, long long *out)
{
    long long s;
#ifdef GAMECODEC_INT_DIGITS
    Py_ssize_t size = gamecodec_long_size(v);
    const digit *d = GAMECODEC_DIGITS(v);
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

/* The int of 16 big-endian bytes (before 3.13: CPython's exported
   _PyLong_FromByteArray, whose signature those versions share). */
static inline PyObject *gamecodec_uint128(const unsigned char *p)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(p, 16, Py_ASNATIVEBYTES_BIG_ENDIAN);
#else
    return _PyLong_FromByteArray(p, 16, 0, 0);
#endif
}

/* The 16 big-endian bytes of v when v is an exact int in [0, 2**128): 0.
   For anything else 1, with no exception: the caller's general path decides. */
static inline int gamecodec_uint128_bytes(PyObject *v, unsigned char *out)
{
    if (!PyLong_CheckExact(v)) return 1;
#ifdef GAMECODEC_INT_DIGITS
    {
        /* at most 5 digits of 30 bits: the two 64-bit halves straight from them */
        Py_ssize_t size = gamecodec_long_size(v), k;
        const digit *d = GAMECODEC_DIGITS(v);
        uint64_t x[5] = {0, 0, 0, 0, 0}, hi, lo;
        if (size < 0 || size > 5 || (size == 5 && (d[4] >> 8) != 0)) return 1;
        for (k = 0; k < size; k++) x[k] = d[k];
        lo = x[0] | (x[1] << 30) | (x[2] << 60);
        hi = (x[2] >> 4) | (x[3] << 26) | (x[4] << 56);
        for (k = 0; k < 8; k++) {
            out[k] = (unsigned char)(hi >> (56 - 8 * k));
            out[8 + k] = (unsigned char)(lo >> (56 - 8 * k));
        }
        return 0;
    }
#elif PY_VERSION_HEX >= 0x030D0000
    {
        Py_ssize_t r = PyLong_AsNativeBytes(v, out, 16,
                                            Py_ASNATIVEBYTES_BIG_ENDIAN |
                                                Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
                                                Py_ASNATIVEBYTES_REJECT_NEGATIVE);
        if (r < 0) {
            PyErr_Clear();
            return 1;
        }
        return r > 16 ? 1 : 0;
    }
#else
    if (_PyLong_AsByteArray((PyLongObject *)v, out, 16, 0, 0) < 0) {
        PyErr_Clear();
        return 1;
    }
    return 0;
#endif
}

/* The bytes of an exact bytes object (borrowed), or NULL for anything else. */
static inline const unsigned char *gamecodec_bytes_of(PyObject *o, Py_ssize_t *size)
{
    if (!PyBytes_CheckExact(o))
        return NULL;
    *size = PyBytes_GET_SIZE(o);
    return (const unsigned char *)PyBytes_AS_STRING(o);
}

#endif
