/* An AVX-512 bulk expander for LL zero-coding: lludp_expand_bulk_simd, with
   the contract of lludp_expand_bulk in _lludp.h. It needs only <Python.h>
   (Py_ssize_t) and <stdint.h> before it.

   It takes the input 64 bytes at a time and expands a whole block with a
   fixed sequence of steps, however many `00 c` pairs it holds:

   - z, the zero bytes of the block: each starts a pair and the byte after it
     is its count (a block holding a `00 00` wrap form goes to the per-pair
     walk below). A pair starting on the last byte is left to the next block.
     Every other byte is a literal.
   - each input byte gets a 4-bit slot, packed into 256 bits (vpshufb of a
     small key, vpmaddubsw, vpmovwb): a literal uses 1 bit of its slot (0001),
     a pair uses min(c, 4) bits of its own slot and min(c - 4, 4) of its count
     byte's, so each slot holds, from its low bit, one bit per output byte it
     makes. pext of the literal bits (pdep of the literal mask into
     0x1111...) by the used bits, word by word, gives the literal bit mask of
     the output, and popcounts its size. Each half of the block (input bytes
     0-31, 32-63) is one 64-bit mask when it makes at most 64 bytes (nearly
     always on object-update data); otherwise lludp_simd_wide does the block
     as one 128-bit mask. Counts above 8 get their last c - 8 zeros inserted
     into the mask afterwards.
   - the literals, packed with vpcompressb, are spread over the output by a
     zero-masking vpexpandb per half, and stored with a 64-byte store each
     (masked near cap).

   Blocks with no zero are copied. Blocks with a wrap form, at most 2 pairs
   (random-like data, where a step per pair is cheaper), more than 128 output
   bytes, or an output that would pass cap go through an exact walk of their
   pairs with masked copies. No load reads at or past n (the window stops 65
   bytes before it: a pair's count may lie one byte past its block) and no
   store reaches cap; the exact loop of lludp_expand_from does the rest. It
   may stop between two literal bytes, never between a zero and its count or
   inside a wrap form, so (*pi, *po) is always a point that loop can carry on
   from, with everything before *po written.

   lludp_expand_bulk_simd returns 0 without touching anything where the CPU
   (or the compiler) lacks the instructions: the caller then takes the
   portable path. It is compiled in for GCC and clang on x86-64 outside
   Windows and Cygwin (MinGW GCC cannot align the stack for spilled zmm
   registers; Cygwin's GCC is taken to share the problem, untested) and
   macOS (kernels 10.15.6 to 12.1 can corrupt the AVX-512 mask registers
   when a signal handler returns, as Go's runtime notes; the only Macs with
   VBMI2 are a few Ice Lake laptops, so the stub costs little there), and
   is a stub elsewhere or with -DLLUDP_NO_SIMD. */
#ifndef GAMECODEC_LLUDP_SIMD_H
#define GAMECODEC_LLUDP_SIMD_H

#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32) && !defined(__CYGWIN__) && \
    !defined(__APPLE__) && !defined(LLUDP_NO_SIMD)
#include <immintrin.h>

#define LLUDP_SIMD_TARGET                                                                       \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt")))

typedef unsigned __int128 lludp_u128;

/* 1 if the CPU has everything the bulk expander uses (checked once; a race
   between threads only repeats the same check). */
static int lludp_simd_ok = -1;

static int lludp_simd_check(void)
{
    if (lludp_simd_ok < 0) {
        __builtin_cpu_init();
        lludp_simd_ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") &&
                        __builtin_cpu_supports("avx512vbmi") &&
                        __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("bmi") &&
                        __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
    }
    return lludp_simd_ok;
}

/* Mask of the low k bits, 0 <= k <= 64. */
LLUDP_SIMD_TARGET static inline uint64_t lludp_simd_low(Py_ssize_t k)
{
    return k >= 64 ? ~(uint64_t)0 : _bzhi_u64(~(uint64_t)0, (unsigned)k);
}

/* Copy len bytes exactly: masked loads and stores touch nothing outside the
   two ranges (and the compiler does not turn them into a memcpy call). */
LLUDP_SIMD_TARGET static inline void lludp_simd_copy(unsigned char *d, const unsigned char *s,
                                                     Py_ssize_t len)
{
    while (len > 0) {
        __mmask64 k = (__mmask64)lludp_simd_low(len);
        _mm512_mask_storeu_epi8(d, k, _mm512_maskz_loadu_epi8(k, s));
        d += 64;
        s += 64;
        len -= 64;
    }
}

/* Write len zero bytes exactly. */
LLUDP_SIMD_TARGET static inline void lludp_simd_zero(unsigned char *d, Py_ssize_t len)
{
    const __m512i zero = _mm512_setzero_si512();
    while (len > 0) {
        _mm512_mask_storeu_epi8(d, (__mmask64)lludp_simd_low(len), zero);
        d += 64;
        len -= 64;
    }
}

/* 128-bit shifts that give 0 for k >= 128. */
static inline lludp_u128 lludp_shl128(lludp_u128 x, unsigned k)
{
    return k >= 128 ? 0 : x << k;
}
static inline lludp_u128 lludp_shr128(lludp_u128 x, unsigned k)
{
    return k >= 128 ? 0 : x >> k;
}

/* OR e (bits at 0..) into the 128-bit (lo, hi) at bit p, 0 <= p <= 128
   (e is 0 when p is 128), without branches: shlx/shrx take counts mod 64. */
#define LLUDP_PLACE(e, p)                                                                   \
    do {                                                                                    \
        uint64_t b_ = (e) << ((p) & 63), a_ = ((e) >> 1) >> ((63 - (p)) & 63);              \
        uint64_t s_ = (uint64_t)0 - (uint64_t)((p) < 64);                                   \
        lo |= b_ & s_;                                                                      \
        hi |= (a_ & s_) | (b_ & ~s_);                                                       \
    } while (0)

/* The 4-bit slots of the block v (w: the block one byte further on, zpk: its
   pairs taken, litk and lit: its literals), 16 input bytes to a word: kw, the
   slot keys (a pair's slot min(c, 4) bits, its count byte's min(c - 4, 4)
   (saturating), a literal's 1); pc, the output bytes of each word; e, the
   literal bit mask of each word's output. Inlined, so the arrays stay in
   registers. */
LLUDP_SIMD_TARGET __attribute__((always_inline)) static inline void
lludp_simd_slots(__m512i v, __m512i w, __mmask64 zpk, __mmask64 litk, uint64_t lit, __m512i ones,
                 __m512i four, __m512i lut, __m512i w116, uint64_t kw[4], unsigned pc[4],
                 uint64_t e[4])
{
    const uint64_t nib1 = 0x1111111111111111ULL;
    __m512i x = _mm512_mask_blend_epi8(zpk, _mm512_subs_epu8(v, four), w);
    __m256i kv;
    __m128i k0, k1;
    int q;
    x = _mm512_min_epu8(x, four);
    x = _mm512_mask_blend_epi8(litk, x, ones);
    x = _mm512_shuffle_epi8(lut, x);
    kv = _mm512_cvtepi16_epi8(_mm512_maddubs_epi16(x, w116));
    k0 = _mm256_castsi256_si128(kv);
    k1 = _mm256_extracti128_si256(kv, 1);
    kw[0] = (uint64_t)_mm_cvtsi128_si64(k0);
    kw[1] = (uint64_t)_mm_extract_epi64(k0, 1);
    kw[2] = (uint64_t)_mm_cvtsi128_si64(k1);
    kw[3] = (uint64_t)_mm_extract_epi64(k1, 1);
    for (q = 0; q < 4; q++) {
        pc[q] = (unsigned)_mm_popcnt_u64(kw[q]);
        e[q] = _pext_u64(_pdep_u64((lit >> (16 * q)) & 0xFFFF, nib1), kw[q]);
    }
}

/* One half of a block (32 input bytes, slot keys k0 and k1, pc0 output bytes
   from the first 16): insert the extra zeros of a run whose count byte ends
   end lanes into the half, into its 64-bit literal mask *m; *t is the half's
   output size and *add the zeros inserted so far. Returns 0 (nothing changed
   after *t and *add) when the half would pass 64 bytes. */
LLUDP_SIMD_TARGET __attribute__((always_inline)) static inline int
lludp_simd_widen(unsigned end, unsigned extra, uint64_t k0, uint64_t k1, unsigned pc0, unsigned *t,
                 unsigned *add, uint64_t *m)
{
    unsigned at = *add + (end <= 16 ? (unsigned)_mm_popcnt_u64(_bzhi_u64(k0, 4 * end))
                                    : pc0 + (unsigned)_mm_popcnt_u64(_bzhi_u64(k1, 4 * (end - 16))));
    *t += extra;
    *add += extra;
    if (*t > 64) return 0;
    *m = (*m & _bzhi_u64(~(uint64_t)0, at)) | ((*m >> at) << ((at + extra) & 63));
    return 1;
}

/* The 64-byte block at s (no wrap form in it) as one unit of up to 128
   output bytes, with one 128-bit literal mask: the output size, or -1 (nothing
   written) if it makes more than 128 bytes or more than room. */
LLUDP_SIMD_TARGET __attribute__((noinline)) static Py_ssize_t
lludp_simd_wide(const unsigned char *s, unsigned char *out, Py_ssize_t room)
{
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i four = _mm512_set1_epi8(4);
    const __m512i eight = _mm512_set1_epi8(8);
    const __m512i lut = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 3, 7, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    const __m512i w116 = _mm512_set1_epi16(0x1001);
    const __m512i iota = _mm512_set_epi8(
        63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41,
        40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
        17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __m512i v = _mm512_loadu_si512((const void *)s), w = _mm512_loadu_si512((const void *)(s + 1));
    __mmask64 zk = _mm512_testn_epi8_mask(v, v);
    uint64_t z = _cvtmask64_u64(zk);
    __mmask64 zpk = _kand_mask64(zk, _cvtu64_mask64(~((uint64_t)1 << 63)));
    __mmask64 litk = _knot_mask64(_kor_mask64(zk, _kshiftli_mask64(zpk, 1)));
    uint64_t lit = ~(z | ((z & ~((uint64_t)1 << 63)) << 1));
    uint64_t m0, m1, lo, hi, kw[4], e[4], big;
    unsigned pc[4], p1, p2, p3;
    Py_ssize_t t;
    __m512i lits, lits1;
    lludp_simd_slots(v, w, zpk, litk, lit, ones, four, lut, w116, kw, pc, e);
    big = _cvtmask64_u64(_mm512_mask_cmpgt_epu8_mask(zpk, w, eight));
    p1 = pc[0];
    p2 = p1 + pc[1];
    p3 = p2 + pc[2];
    t = (Py_ssize_t)(p3 + pc[3]);
    if (t > 128) return -1;
    lo = e[0];
    hi = 0;
    LLUDP_PLACE(e[1], p1);
    LLUDP_PLACE(e[2], p2);
    LLUDP_PLACE(e[3], p3);
    if (big) {
        /* counts above 8: the zeros past the first 8 of each run go right
           after those 8 */
        unsigned pcs[5];
        lludp_u128 acc = ((lludp_u128)hi << 64) | lo;
        Py_ssize_t base = t;
        pcs[0] = 0;
        pcs[1] = p1;
        pcs[2] = p2;
        pcs[3] = p3;
        pcs[4] = (unsigned)base;
        while (big) {
            unsigned j = (unsigned)_tzcnt_u64(big), bits = 4 * (j + 2), q = bits >> 6;
            unsigned extra = (unsigned)s[j + 1] - 8, at;
            big &= big - 1;
            /* output bits before the end of the 8: slots before the pair's
               count byte ends, plus the zeros already added */
            at = pcs[q] + (unsigned)(t - base);
            if (bits & 63) at += (unsigned)_mm_popcnt_u64(_bzhi_u64(kw[q], bits & 63));
            t += extra;
            if (t > 128) return -1;
            acc = (acc & (lludp_shl128(1, at) - 1)) | lludp_shl128(lludp_shr128(acc, at), at + extra);
        }
        lo = (uint64_t)acc;
        hi = (uint64_t)(acc >> 64);
    }
    if (t > room) return -1;
    m0 = lo;
    m1 = hi;
    lits = _mm512_maskz_compress_epi8(litk, v);
    lits1 = _mm512_permutexvar_epi8(_mm512_add_epi8(iota, _mm512_set1_epi8((char)_mm_popcnt_u64(m0))),
                                    lits);
    if (room >= 128) {
        _mm512_storeu_si512((void *)out, _mm512_maskz_expand_epi8(m0, lits));
        _mm512_storeu_si512((void *)(out + 64), _mm512_maskz_expand_epi8(m1, lits1));
    }
    else {
        _mm512_mask_storeu_epi8(out, lludp_simd_low(t), _mm512_maskz_expand_epi8(m0, lits));
        if (t > 64)
            _mm512_mask_storeu_epi8(out + 64, lludp_simd_low(t - 64),
                                    _mm512_maskz_expand_epi8(m1, lits1));
    }
    return t;
}

/* The bulk expander. */
LLUDP_SIMD_TARGET __attribute__((noinline, aligned(64))) static void lludp_simd_bulk(const unsigned char *src, Py_ssize_t n,
                                              unsigned char *dst, Py_ssize_t cap,
                                              Py_ssize_t *pi, Py_ssize_t *po)
{
    Py_ssize_t i = *pi, o = *po;
    __m512i ones = _mm512_set1_epi8(1);
    __m512i four = _mm512_set1_epi8(4);
    __m512i eight = _mm512_set1_epi8(8);
    /* key k (0..4) -> k low bits set */
    __m512i lut = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 3, 7, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    /* vpmaddubsw weights: even byte * 1 + odd byte * 16 */
    __m512i w116 = _mm512_set1_epi16(0x1001);
    __m512i iota = _mm512_set_epi8(
        63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41,
        40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
        17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __mmask64 not63 = _cvtu64_mask64(~((uint64_t)1 << 63));

    /* opaque: kept in registers or reloaded, never rebuilt from immediates */
    __asm__("" : "+v"(ones), "+v"(four), "+v"(eight), "+v"(lut), "+v"(w116), "+v"(iota));
    while (i + 65 <= n) {
        const unsigned char *s = src + i;
        __m512i v = _mm512_loadu_si512((const void *)s);
        __mmask64 zk = _mm512_testn_epi8_mask(v, v);
        uint64_t z = _cvtmask64_u64(zk);
        if (z == 0) {
            /* all literals */
            if (o + 64 > cap) break;
            _mm512_storeu_si512((void *)(dst + o), v);
            i += 64;
            o += 64;
            continue;
        }
        if (z & (z << 1)) goto slow; /* a zero right after a zero: a wrap form */
        if (_mm_popcnt_u64(z) <= 2) goto slow; /* sparse (random-like) data: per pair is cheaper */
        {
            /* masks in k registers (k <-> GPR moves are slow): pairs taken (not
               one on the last byte), their count bytes, the literals */
            __mmask64 zpk = _kand_mask64(zk, not63);
            __mmask64 litk = _knot_mask64(_kor_mask64(zk, _kshiftli_mask64(zpk, 1)));
            uint64_t lit = ~(z | ((z & ~((uint64_t)1 << 63)) << 1));
            uint64_t kw[4], e[4], ma, mb;
            __m512i w = _mm512_loadu_si512((const void *)(s + 1));
            __m512i lits, lits1;
            __mmask64 bigk;
            unsigned pc[4], ta, tb;
            Py_ssize_t t;
            lludp_simd_slots(v, w, zpk, litk, lit, ones, four, lut, w116, kw, pc, e);
            bigk = _mm512_mask_cmpgt_epu8_mask(zpk, w, eight);
            /* the usual case: each half of the block (lanes 0-31, 32-63) makes
               at most 64 bytes, one 64-bit literal mask each (a shift by pc
               mod 64 is harmless: pc is 64 only when the other word is 0) */
            ta = pc[0] + pc[1];
            tb = pc[2] + pc[3];
            ma = e[0] | (e[1] << (pc[0] & 63));
            mb = e[2] | (e[3] << (pc[2] & 63));
            if (!_kortestz_mask64_u8(bigk, bigk)) {
                /* counts above 8: the zeros past the first 8 of each run go
                   right after those 8, in the half of the pair's count byte */
                uint64_t big = _cvtmask64_u64(bigk);
                unsigned adda = 0, addb = 0;
                do {
                    unsigned j = (unsigned)_tzcnt_u64(big), end = j + 2; /* lanes before */
                    unsigned extra = (unsigned)s[j + 1] - 8;
                    big &= big - 1;
                    if (end <= 32) {
                        if (!lludp_simd_widen(end, extra, kw[0], kw[1], pc[0], &ta, &adda, &ma))
                            goto wide;
                    }
                    else if (!lludp_simd_widen(end - 32, extra, kw[2], kw[3], pc[2], &tb, &addb, &mb))
                        goto wide;
                } while (big);
            }
            if (ta > 64 || tb > 64) goto wide;
            t = (Py_ssize_t)(ta + tb);
            if (o + t > cap) goto slow;
            lits = _mm512_maskz_compress_epi8(litk, v);
            lits1 = _mm512_permutexvar_epi8(
                _mm512_add_epi8(iota, _mm512_set1_epi8((char)_mm_popcnt_u64(lit & 0xFFFFFFFFu))),
                lits);
            if (o + 128 <= cap) {
                _mm512_storeu_si512((void *)(dst + o), _mm512_maskz_expand_epi8(ma, lits));
                _mm512_storeu_si512((void *)(dst + o + ta), _mm512_maskz_expand_epi8(mb, lits1));
            }
            else {
                _mm512_mask_storeu_epi8(dst + o, lludp_simd_low(ta),
                                        _mm512_maskz_expand_epi8(ma, lits));
                _mm512_mask_storeu_epi8(dst + o + ta, lludp_simd_low(tb),
                                        _mm512_maskz_expand_epi8(mb, lits1));
            }
            i += 64 - (Py_ssize_t)(s[63] == 0); /* (a scalar load: a short dependency chain) */
            o += t;
            continue;
        wide:
            /* a half makes more than 64 bytes: the whole block at once */
            t = lludp_simd_wide(s, dst + o, cap - o);
            if (t < 0) goto slow;
            i += 64 - (Py_ssize_t)(s[63] == 0); /* (a scalar load: a short dependency chain) */
            o += t;
            continue;
        }
    slow:
        /* one step per zero pair of the block, exactly */
        {
            Py_ssize_t b = i;
            uint64_t m = z;
            while (m) {
                Py_ssize_t p = b + (Py_ssize_t)_tzcnt_u64(m), lit = p - i, c;
                m &= m - 1;
                c = src[p + 1];
                if (c == 0) {
                    /* a wrap form: 256 per extra zero; one reaching the end is left */
                    Py_ssize_t j = p + 1;
                    while (j < n && src[j] == 0) j++;
                    if (j >= n) goto out;
                    c = 256 * (j - p - 1) + src[j];
                    if (o + lit + c > cap) goto out;
                    lludp_simd_copy(dst + o, src + i, lit);
                    o += lit;
                    lludp_simd_zero(dst + o, c);
                    o += c;
                    i = j + 1;
                    goto next; /* the rest from i, as a new block */
                }
                if (o + lit + c > cap) goto out;
                lludp_simd_copy(dst + o, src + i, lit);
                o += lit;
                lludp_simd_zero(dst + o, c);
                o += c;
                i = p + 2;
            }
            /* the literals up to the end of the block */
            if (i < b + 64) {
                Py_ssize_t lit = b + 64 - i;
                if (o + lit > cap) goto out;
                lludp_simd_copy(dst + o, src + i, lit);
                o += lit;
                i += lit;
            }
        }
    next:;
    }
out:
    *pi = i;
    *po = o;
}

/* Run the AVX-512 bulk expander from (*pi, *po) if the CPU has it: returns 1
   if it ran (then (*pi, *po) are where it stopped), 0 if not (nothing done). */
static int lludp_expand_bulk_simd(const unsigned char *src, Py_ssize_t n, unsigned char *dst,
                                  Py_ssize_t cap, Py_ssize_t *pi, Py_ssize_t *po)
{
    if (!lludp_simd_check()) return 0;
    lludp_simd_bulk(src, n, dst, cap, pi, po);
    return 1;
}

#else
static int lludp_expand_bulk_simd(const unsigned char *src, Py_ssize_t n, unsigned char *dst,
                                  Py_ssize_t cap, Py_ssize_t *pi, Py_ssize_t *po)
{
    (void)src;
    (void)n;
    (void)dst;
    (void)cap;
    (void)pi;
    (void)po;
    return 0;
}
#endif

#endif
