/* The C scanners of the compiled BZRC parser (_codec_c.pyx): short-string
   cache, number parsing, tokenizer, the mytank one-pass reader and the
   occgrid row converter. Public C API only. */
#ifndef GAMECODEC_BZRC_SCAN_H
#define GAMECODEC_BZRC_SCAN_H

#include <Python.h>
#include <float.h>
#include <math.h>
#include <string.h>

#define BZ_CACHE 128
#define BZ_CACHE_LEN 16
typedef struct { Py_ssize_t n; char s[BZ_CACHE_LEN]; PyObject *obj; } bz_str_entry;

/* A latin-1 str for s[0:n], from a small direct-mapped cache of short
   strings (callsigns, colours, statuses repeat in every reply). */
static PyObject *bz_str(bz_str_entry *cache, const char *s, Py_ssize_t n) {
    if (n <= BZ_CACHE_LEN) {
        unsigned int h = (unsigned int)n;
        Py_ssize_t i;
        bz_str_entry *e;
        PyObject *obj;
        for (i = 0; i < n; i++) h = h * 31u + (unsigned char)s[i];
        e = &cache[(h ^ (h >> 7)) & (BZ_CACHE - 1)];
        if (e->obj != NULL && e->n == n && memcmp(e->s, s, (size_t)n) == 0) {
            Py_INCREF(e->obj);
            return e->obj;
        }
        obj = PyUnicode_DecodeLatin1(s, n, NULL);
        if (obj == NULL) return NULL;
        Py_XDECREF(e->obj);
        Py_INCREF(obj);
        e->obj = obj;
        e->n = n;
        memcpy(e->s, s, (size_t)n);
        return obj;
    }
    return PyUnicode_DecodeLatin1(s, n, NULL);
}

static void bz_cache_clear(bz_str_entry *cache) {
    int i;
    for (i = 0; i < BZ_CACHE; i++) { Py_CLEAR(cache[i].obj); cache[i].n = 0; }
}

static const double bz_pow10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int bz_isdigit(char c) { return c >= '0' && c <= '9'; }

/* 1 if s[0:n] is [+-]?[0-9]{1,18} (value in *out), else 0. */
static int bz_parse_int(const char *s, Py_ssize_t n, long long *out) {
    Py_ssize_t i = 0, digits;
    int neg = 0;
    unsigned long long v = 0;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; i = 1; }
    digits = n - i;
    if (digits < 1 || digits > 18) return 0;
    for (; i < n; i++) {
        if (!bz_isdigit(s[i])) return 0;
        v = v * 10u + (unsigned long long)(s[i] - '0');
    }
    *out = neg ? -(long long)v : (long long)v;
    return 1;
}

/* 1 if s[0:n] is [+-]?[0-9]+ of any length. */
static int bz_is_int_token(const char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) i = 1;
    if (i >= n) return 0;
    for (; i < n; i++) if (!bz_isdigit(s[i])) return 0;
    return 1;
}

/* float(s[0:n]) as Python computes it (no underscores): 1 on success.
   Plain decimals with a mantissa below 2**53 and at most 22 fraction
   digits are exact quotients of two exact doubles (correctly rounded);
   everything else goes through PyOS_string_to_double, float()'s core. */
static int bz_parse_float(const char *s, Py_ssize_t n, double *out) {
    Py_ssize_t i = 0, j;
    int neg = 0, dot = 0, frac = 0, digits = 0;
    unsigned long long m = 0;
    char stack[128];
    char *buf, *end = NULL;
    double v;
#if FLT_EVAL_METHOD == 0
    if (n > 0 && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; i = 1; }
    for (j = i; j < n; j++) {
        char c = s[j];
        if (bz_isdigit(c)) {
            if (++digits > 19) break;
            m = m * 10u + (unsigned long long)(c - '0');
            frac += dot;
        } else if (c == '.' && !dot) {
            dot = 1;
        } else {
            break;
        }
    }
    if (j == n && digits > 0 && digits <= 19 && m <= (1ULL << 53) && frac <= 22) {
        v = (double)m;
        if (frac) v /= bz_pow10[frac];
        *out = neg ? -v : v;
        return 1;
    }
#endif
    if (n <= 0 || memchr(s, '_', (size_t)n) != NULL) return 0;
    if (n < (Py_ssize_t)sizeof(stack)) {
        buf = stack;
    } else {
        buf = (char *)PyMem_Malloc((size_t)n + 1);
        if (buf == NULL) return 0;
    }
    memcpy(buf, s, (size_t)n);
    buf[n] = '\0';
    v = PyOS_string_to_double(buf, &end, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        end = NULL;
    }
    if (buf != stack) PyMem_Free(buf);
    if (end != buf + n) return 0;
    *out = v;
    return 1;
}

/* Shared immutable number objects: the ints world coordinates use and
   the two float zeros (stationary tanks report -0.0/0.0 velocities).
   bz_init_numbers fills the table once, while the module loads; afterwards
   it is only read (and the objects only increfed), so threads share it
   safely without the GIL. */
#define BZ_INT_CACHE 1024
static PyObject *bz_ints[2 * BZ_INT_CACHE + 1];
static PyObject *bz_zero_pos = NULL, *bz_zero_neg = NULL;

static int bz_init_numbers(void) {
    int i;
    for (i = 0; i <= 2 * BZ_INT_CACHE; i++) {
        bz_ints[i] = PyLong_FromLong((long)i - BZ_INT_CACHE);
        if (bz_ints[i] == NULL) return -1;
    }
    bz_zero_pos = PyFloat_FromDouble(0.0);
    bz_zero_neg = PyFloat_FromDouble(-0.0);
    return (bz_zero_pos == NULL || bz_zero_neg == NULL) ? -1 : 0;
}

static PyObject *bz_int_object(long long v) {
    if (v >= -BZ_INT_CACHE && v <= BZ_INT_CACHE) {
        PyObject *o = bz_ints[v + BZ_INT_CACHE];
        Py_INCREF(o);
        return o;
    }
    return PyLong_FromLongLong(v);
}

static PyObject *bz_float_object(double v) {
    if (v == 0.0) {
        PyObject *o = signbit(v) ? bz_zero_neg : bz_zero_pos;
        Py_INCREF(o);
        return o;
    }
    return PyFloat_FromDouble(v);
}

/* The number token s[0:n] as an int or float object; NULL (no exception
   set) when it is neither. */
static PyObject *bz_number(const char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    int neg = 0;
    unsigned long long v = 0;
    double dv;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; i = 1; }
    if (i < n && n - i <= 18) {
        for (; i < n; i++) {
            unsigned int d = (unsigned int)(unsigned char)s[i] - '0';
            if (d > 9) break;
            v = v * 10u + d;
        }
        if (i == n) return bz_int_object(neg ? -(long long)v : (long long)v);
    }
    if (bz_is_int_token(s, n)) return NULL;  /* more than 18 digits */
    if (!bz_parse_float(s, n, &dv)) return NULL;
    return bz_float_object(dv);
}

static void from_ptr_decref(PyObject *o) { Py_DECREF(o); }
#define bz_steal(o) (o)

static const unsigned char bz_ws[256] = {
    [' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1};

static inline int bz_space(char c) { return bz_ws[(unsigned char)c]; }

/* Token spans of b[i:le] (runs of non-whitespace): returns the count. */
static Py_ssize_t bz_tokenize(const char *b, Py_ssize_t i, Py_ssize_t le,
                              Py_ssize_t *ts, Py_ssize_t *te) {
    Py_ssize_t nt = 0;
    for (;;) {
        while (i < le && bz_ws[(unsigned char)b[i]]) i++;
        if (i >= le) break;
        ts[nt] = i;
        while (i < le && !bz_ws[(unsigned char)b[i]]) i++;
        te[nt++] = i;
    }
    return nt;
}

/* One number field scanned and converted in a single pass: b[*pos:le]
   starts at the token. Returns a new reference, or NULL (nothing set)
   when the token is not a number. *pos ends after the token. */
static PyObject *bz_scan_number(const char *b, Py_ssize_t *pos, Py_ssize_t le) {
    Py_ssize_t i = *pos, s = i;
    int neg = 0, dot = 0, digits = 0, frac = 0;
    unsigned long long m = 0;
    if (i < le && (b[i] == '+' || b[i] == '-')) { neg = b[i] == '-'; i++; }
    for (; i < le; i++) {
        unsigned int d = (unsigned int)(unsigned char)b[i] - '0';
        if (d <= 9) {
            m = m * 10u + d;
            digits++;
            frac += dot;
        } else if (b[i] == '.' && !dot) {
            dot = 1;
        } else {
            break;
        }
    }
    if (i < le && !bz_ws[(unsigned char)b[i]]) {
        while (i < le && !bz_ws[(unsigned char)b[i]]) i++;
        *pos = i;
        return bz_number(b + s, i - s);
    }
    *pos = i;
    if (!dot && digits >= 1 && digits <= 18)
        return bz_int_object(neg ? -(long long)m : (long long)m);
#if FLT_EVAL_METHOD == 0
    if (dot && digits >= 1 && digits <= 19 && m <= (1ULL << 53) && frac <= 22) {
        double v = (double)m;
        if (frac) v /= bz_pow10[frac];
        return bz_float_object(neg ? -v : v);
    }
#endif
    return bz_number(b + s, i - s);
}

/* A whole well-formed mytank line in one pass: b[i:le] follows the word.
   Fills out[0..11] with new references and returns 1, or returns 0
   holding nothing (the general path then parses it and raises). */
static int bz_mytank_fast(const char *b, Py_ssize_t i, Py_ssize_t le,
                          bz_str_entry *cache, PyObject **out) {
    static const char kinds[13] = "ISSINSNNNNNN";
    int k;
    for (k = 0; k < 12; k++) {
        Py_ssize_t s;
        long long v;
        while (i < le && bz_ws[(unsigned char)b[i]]) i++;
        if (i >= le) goto fail;
        s = i;
        if (kinds[k] == 'N') {
            out[k] = bz_scan_number(b, &i, le);
        } else {
            while (i < le && !bz_ws[(unsigned char)b[i]]) i++;
            if (kinds[k] == 'S') {
                out[k] = bz_str(cache, b + s, i - s);
                if (out[k] == NULL) PyErr_Clear();
            } else {
                out[k] = bz_parse_int(b + s, i - s, &v) ? bz_int_object(v) : NULL;
            }
        }
        if (out[k] == NULL) goto fail;
    }
    while (i < le && bz_ws[(unsigned char)b[i]]) i++;
    if (i == le) return 1;
fail:
    while (--k >= 0) Py_DECREF(out[k]);
    return 0;
}

static void bz_fill_steal(PyObject *t, PyObject **objs, int n) {
    int i;
    for (i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, objs[i]);
}

/* Validate and convert one grid row of n '0'/'1' bytes: 1 if clean.
   The compiler vectorises the loop (SSE2 on baseline x86-64, NEON on arm64). */
static int bz_row(const char *p, char *o, Py_ssize_t n) {
    unsigned char acc = 0;
    Py_ssize_t j;
    for (j = 0; j < n; j++) {
        unsigned char c = (unsigned char)p[j];
        acc |= (unsigned char)(c ^ 0x30);
        o[j] = (char)(c & 1);
    }
    return (acc & 0xFE) == 0;
}

/* The occgrid body in one call: starting at b[pos:n], convert every
   row that is exactly h clean cells followed by '\n' into out (row
   *rows onwards), stopping after row w or at the first other line (the
   general path deals with it). Updates *rows; returns the new pos. */
static Py_ssize_t bz_grid(const char *b, Py_ssize_t pos, Py_ssize_t n, char *out,
                          Py_ssize_t h, Py_ssize_t w, Py_ssize_t *rows) {
    Py_ssize_t r = *rows;
    while (r < w && pos + h < n && b[pos + h] == '\n' && bz_row(b + pos, out + r * h, h)) {
        r++;
        pos += h + 1;
    }
    *rows = r;
    return pos;
}


#endif
