/* Differential fuzz and benchmark for the LLUDP zero expander
   (src/gamecodec/lludp/_lludp.h: its bulk walk and the whole expander)
   against a byte-at-a-time reference: caps that cut the output anywhere, a
   canary after cap, and a no-access page right after the input.

   Build (from the repository root; only Py_ssize_t is used from Python.h,
   nothing is linked from Python):
     INC=-I$(python -c "import sysconfig;print(sysconfig.get_paths()['include'])")
     cc -O3 -ffp-contract=off $INC -I src/gamecodec/lludp -o /tmp/expand_fuzz tools/expand_fuzz.c
   Run:
     /tmp/expand_fuzz fuzz [iterations] [seed]     (exit 1 on any mismatch)
     /tmp/expand_fuzz bench FILE...                (against memcpy)
   Built as is, the SSE2 paths are checked (on x86-64); with -DLLUDP_NO_SIMD,
   the portable word-at-a-time ones: .ci/run builds it both ways.

   libFuzzer (coverage-guided, clang): built with -DEXPAND_LIBFUZZER this file
   has no main but LLVMFuzzerTestOneInput; the input's first two bytes choose
   the output cap (relative to the full expansion), the rest is the zero-coded
   input, checked by the same three passes against the reference:
     clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
       -DEXPAND_LIBFUZZER $INC -I src/gamecodec/lludp -o /tmp/expand_libfuzzer \
       tools/expand_fuzz.c
     /tmp/expand_libfuzzer -max_total_time=20 -max_len=4096   (a crash file on a mismatch) */
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "_lludp.h"

/* The bulk walk as lludp_expand_from runs it: 0 (nothing done) where it would not. */
static int bulk(const unsigned char *src, Py_ssize_t n, unsigned char *dst, Py_ssize_t cap,
                Py_ssize_t *pi, Py_ssize_t *po)
{
#ifdef LLUDP_HAVE_CTZ
    if (n - *pi >= 96) {
        lludp_expand_bulk(src, n, dst, cap, pi, po);
        return 1;
    }
#endif
    (void)src, (void)dst, (void)cap, (void)pi, (void)po;
    return 0;
}

/* ------------------------------------------------------------ reference */

/* One unit of byte-at-a-time LL zero-code expansion at src[*pi]: a literal
   byte, or a zero run (00 c; each further 00 adds 256; a run reaching the end
   counts one more). Writes it at dst[*po] and advances both, or returns -1
   (nothing changed) when it does not fit in cap: as the viewer checks it, a
   zero run must end before cap, save a lone 00 ending the input. */
static int ref_step(const unsigned char *src, Py_ssize_t n, unsigned char *dst, Py_ssize_t cap,
                    Py_ssize_t *pi, Py_ssize_t *po)
{
    Py_ssize_t i = *pi, o = *po, j, count, k;
    if (src[i] != 0) {
        if (o >= cap) return -1;
        dst[o] = src[i];
        *pi = i + 1;
        *po = o + 1;
        return 0;
    }
    j = i + 1;
    while (j < n && src[j] == 0) j++;
    count = 256 * (j - i - 1);
    if (j < n) {
        count += src[j];
        j++;
    }
    else {
        count += 1;
    }
    if (count > cap - o - (j - i > 1)) return -1; /* j - i == 1: a lone 00 at the end */
    for (k = 0; k < count; k++) dst[o + k] = 0;
    *pi = j;
    *po = o + count;
    return 0;
}

/* Byte-at-a-time LL zero-code expansion of src[0:n] into dst (cap bytes).
   Returns the output size, or -1 on overflow with *err = the input index of
   the literal byte or zero run that does not fit and *outso = output so far.
   unit[i] (if not NULL, n + 1 entries) gets the output offset at each input
   index where a literal byte or zero run starts (and at n), -1 elsewhere. */
static Py_ssize_t ref_expand(const unsigned char *src, Py_ssize_t n, unsigned char *dst,
                             Py_ssize_t cap, Py_ssize_t *err, Py_ssize_t *outso, Py_ssize_t *unit)
{
    Py_ssize_t i = 0, o = 0, k;
    if (unit)
        for (k = 0; k <= n; k++) unit[k] = -1;
    while (i < n) {
        if (unit) unit[i] = o;
        if (ref_step(src, n, dst, cap, &i, &o) < 0) {
            *err = i;
            *outso = o;
            return -1;
        }
    }
    if (unit) unit[n] = o;
    *outso = o;
    return o;
}

/* The reference carried on from (*pi, *po): the same loop, as the exact
   finishing loop would. Returns 0, or -1 on overflow (*pi at the unit). */
static int ref_continue(const unsigned char *src, Py_ssize_t n, unsigned char *dst, Py_ssize_t cap,
                        Py_ssize_t *pi, Py_ssize_t *po)
{
    while (*pi < n)
        if (ref_step(src, n, dst, cap, pi, po) < 0) return -1;
    return 0;
}

/* ------------------------------------------------------------ random */

static uint64_t rng_state = 88172645463325252ULL;
static inline uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}
static inline uint32_t rndn(uint32_t k) { return (uint32_t)((rnd() >> 32) % k); }

/* A count byte by one of several distributions. */
static unsigned char gen_count(int mode)
{
    switch (mode) {
    case 0: return (unsigned char)rndn(256);           /* anything, 0 included */
    case 1: return (unsigned char)(1 + rndn(16));      /* small */
    case 2: {                                          /* extremes */
        static const unsigned char v[] = {0, 1, 1, 255, 255, 2, 254, 128, 127, 64, 63, 65};
        return v[rndn(sizeof v)];
    }
    case 3: return (unsigned char)(1 + rndn(4));       /* tiny */
    default:                                           /* object-update like */
        if (rndn(10) == 0) return (unsigned char)(32 + rndn(169));
        return (unsigned char)(1 + rndn(16));
    }
}

/* Fill buf[0:n] with a zero-coded-looking stream. */
static void gen_input(unsigned char *buf, Py_ssize_t n)
{
    int style = (int)rndn(4), mode = (int)rndn(5);
    uint32_t p0 = rndn(513); /* zero probability in 1/1024 */
    Py_ssize_t i = 0;
    if (rndn(8) == 0) p0 = rndn(4) == 0 ? 0 : rndn(8);
    if (style == 0) {
        /* raw bytes with a given zero density */
        for (i = 0; i < n; i++)
            buf[i] = rndn(1024) < p0 ? 0 : (unsigned char)(1 + rndn(255));
        return;
    }
    while (i < n) {
        if (rndn(1024) < p0) {
            buf[i++] = 0;
            /* sometimes extra zeros (wrap forms) */
            if (rndn(style == 3 ? 4 : 40) == 0) {
                int extra = 1 + (int)rndn(3);
                while (extra-- && i < n) buf[i++] = 0;
            }
            if (i < n) buf[i++] = gen_count(mode);
        }
        else {
            buf[i++] = (unsigned char)(1 + rndn(255));
        }
    }
}

/* ------------------------------------------------------------ fuzz */

#define GUARD 256
#define CANARY 0xA5

static long failures = 0;

static void fail(const char *what, const unsigned char *src, Py_ssize_t n, Py_ssize_t cap)
{
    Py_ssize_t k;
    failures++;
    if (failures > 5) return;
    fprintf(stderr, "FAIL %s: n=%zd cap=%zd input:", what, (ssize_t)n, (ssize_t)cap);
    for (k = 0; k < n && k < 400; k++) fprintf(stderr, " %02x", src[k]);
    fprintf(stderr, "\n");
}

/* One case: the reference against bulk walk + reference finish, bulk walk
   + lludp_expand_from finish, and lludp_expand_from alone. */
static void check_case(const unsigned char *src, Py_ssize_t n, Py_ssize_t cap, unsigned char *ref,
                       unsigned char *out, Py_ssize_t *unit, long *ran_bulk)
{
    Py_ssize_t err = -2, rso = 0, r, k;
    int pass;
    r = ref_expand(src, n, ref, cap, &err, &rso, unit);
    /* pass 0: bulk walk, then the reference loop; pass 1: bulk walk, then
       lludp_expand_from; pass 2: lludp_expand_from alone (the expander as
       the codec runs it) */
    for (pass = 0; pass < 3; pass++) {
        Py_ssize_t i = 0, o = 0, bi, bo;
        int rc;
        memset(out, 0xCC, (size_t)cap);
        memset(out + cap, CANARY, GUARD);
        if (pass < 2 && !bulk(src, n, out, cap, &i, &o))
            continue; /* input too short for the bulk walk: pass 2 only */
        bi = i;
        bo = o;
        if (bi > 0) (*ran_bulk)++;
        /* the bulk stops only where a unit starts, with the reference's output offset */
        if (!(bi >= 0 && bi <= n && unit[bi] >= 0 && unit[bi] == bo && bo <= cap)) {
            fprintf(stderr, "stop at i=%zd o=%zd (unit %zd) ref r=%zd err=%zd\n", (ssize_t)bi,
                    (ssize_t)bo, (ssize_t)(bi <= n && bi >= 0 ? unit[bi] : -9), (ssize_t)r,
                    (ssize_t)err);
            fail("bad stop", src, n, cap);
            return;
        }
        if (r < 0 && bi > err) {
            fail("bulk passed the overflow point", src, n, cap);
            return;
        }
        if (pass == 0)
            rc = ref_continue(src, n, out, cap, &i, &o);
        else
            rc = lludp_expand_from(src, n, out, cap, &i, &o);
        for (k = 0; k < GUARD; k++)
            if (out[cap + k] != CANARY) {
                fail("store past cap", src, n, cap);
                return;
            }
        if (r >= 0) {
            if (rc != 0 || o != r || memcmp(out, ref, (size_t)r) != 0) {
                fprintf(stderr, "rc=%d o=%zd r=%zd pass=%d bulk stop %zd/%zd\n", rc, (ssize_t)o,
                        (ssize_t)r, pass, (ssize_t)bi, (ssize_t)bo);
                for (k = 0; k < r; k++)
                    if (out[k] != ref[k]) {
                        fprintf(stderr, "first diff at out %zd: %02x vs ref %02x\n", (ssize_t)k,
                                out[k], ref[k]);
                        break;
                    }
                fail("result", src, n, cap);
                return;
            }
        }
        else {
            if (rc != -1 || i != err || o != rso || memcmp(out, ref, (size_t)rso) != 0) {
                fprintf(stderr, "overflow: rc=%d i=%zd err=%zd o=%zd rso=%zd pass=%d\n", rc,
                        (ssize_t)i, (ssize_t)err, (ssize_t)o, (ssize_t)rso, pass);
                fail("overflow verdict", src, n, cap);
                return;
            }
        }
    }
}

static int fuzz(long iters, uint64_t seed)
{
    const Py_ssize_t maxn = 65536 + 64;
    const Py_ssize_t maxout = 256 * maxn + 1024;
    unsigned char *src = malloc((size_t)maxn + 64);
    unsigned char *ref = malloc((size_t)maxout);
    unsigned char *out = malloc((size_t)maxout + GUARD);
    unsigned char *scratch = malloc((size_t)maxout);
    Py_ssize_t *unit = malloc(sizeof(Py_ssize_t) * (size_t)(maxn + 1));
    long it, cases = 0, ran_bulk = 0, overflow_cases = 0, big = 0;
    /* the input is copied to end right at a PROT_NONE page: a load at or past
       src[n] faults */
    long page = sysconf(_SC_PAGESIZE);
    size_t span = ((size_t)maxn + (size_t)page - 1) / (size_t)page * (size_t)page;
    unsigned char *map = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *guard = map + span;
    if (map == MAP_FAILED || mprotect(guard, (size_t)page, PROT_NONE) != 0) {
        perror("mmap");
        return 2;
    }
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (it = 0; it < iters; it++) {
        Py_ssize_t n, full, err, so, cap;
        int c, ncaps;
        uint32_t sel = rndn(1000);
        if (sel < 3) {
            n = 65536 - (Py_ssize_t)rndn(70);
            big++;
        }
        else if (sel < 100) n = 65 + (Py_ssize_t)rndn(2000);
        else n = (Py_ssize_t)rndn(301);
        gen_input(src, n);
        full = ref_expand(src, n, scratch, maxout, &err, &so, NULL);
        ncaps = sel < 3 ? 3 : 8;
        for (c = 0; c < ncaps; c++) {
            Py_ssize_t pick = (Py_ssize_t)rndn(9);
            switch (pick) {
            case 0: cap = full; break;
            case 1: cap = full + 1; break;
            case 2: cap = full - 1; break;
            case 3: cap = full + 1 + (Py_ssize_t)rndn(300); break;
            case 4: cap = full - 1 - (Py_ssize_t)rndn(300); break;
            case 5: cap = full > 0 ? (Py_ssize_t)rndn((uint32_t)full + 1) : 0; break;
            case 6: cap = full - (Py_ssize_t)rndn(130); break;
            case 7: cap = full + (Py_ssize_t)rndn(130); break;
            default: cap = 0; break;
            }
            if (cap < 0) cap = 0;
            if (cap > maxout) cap = maxout;
            if (cap < full) overflow_cases++;
            memcpy(guard - n, src, (size_t)n);
            check_case(guard - n, n, cap, ref, out, unit, &ran_bulk);
            cases++;
            if (failures > 5) goto done;
        }
    }
done:
    printf("fuzz: %ld inputs (%ld of ~64 KiB), %ld cases (%ld with cap below the output), "
           "bulk advanced in %ld runs, failures %ld\n",
           iters, big, cases, overflow_cases, ran_bulk, failures);
    free(src);
    free(ref);
    free(out);
    free(scratch);
    free(unit);
    munmap(map, span + (size_t)page);
    return failures != 0;
}

/* ------------------------------------------------------------ bench */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static volatile Py_ssize_t sink;

/* The bulk walk first, then lludp_expand_from's loop (what lludp_expand does). */
static Py_ssize_t expand_new(const unsigned char *src, Py_ssize_t n, unsigned char *dst,
                             Py_ssize_t cap, Py_ssize_t *err)
{
    Py_ssize_t i = 0, o = 0;
    bulk(src, n, dst, cap, &i, &o);
    if (lludp_expand_from(src, n, dst, cap, &i, &o) < 0) {
        *err = i;
        return -1;
    }
    return o;
}

#define ROUNDS 41
#define REPS 200

static void bench_one(const char *name, const unsigned char *src, Py_ssize_t n)
{
    Py_ssize_t cap = 256 * n + 64, err, r_old, r_new;
    unsigned char *dst = malloc((size_t)cap), *dst2 = malloc((size_t)cap);
    double t_mem[ROUNDS], t_old[ROUNDS], t_new[ROUNDS];
    int r, k, which;
    r_old = lludp_expand(src, n, dst, cap, &err);
    r_new = expand_new(src, n, dst2, cap, &err);
    if (r_old != r_new || memcmp(dst, dst2, (size_t)r_old) != 0) {
        printf("%s: MISMATCH old %zd new %zd\n", name, (ssize_t)r_old, (ssize_t)r_new);
        exit(1);
    }
    for (r = 0; r < ROUNDS; r++) {
        /* interleave the three so drift hits them alike */
        for (which = 0; which < 3; which++) {
            double t0 = now_ns();
            for (k = 0; k < REPS; k++) {
                if (which == 0) {
                    memcpy(dst, src, (size_t)n);
                    __asm__ volatile("" ::"r"(dst) : "memory");
                }
                else if (which == 1) {
                    sink = lludp_expand(src, n, dst, cap, &err);
                }
                else {
                    sink = expand_new(src, n, dst, cap, &err);
                }
            }
            double dt = (now_ns() - t0) / REPS;
            if (which == 0) t_mem[r] = dt;
            else if (which == 1) t_old[r] = dt;
            else t_new[r] = dt;
        }
    }
    qsort(t_mem, ROUNDS, sizeof(double), cmp_double);
    qsort(t_old, ROUNDS, sizeof(double), cmp_double);
    qsort(t_new, ROUNDS, sizeof(double), cmp_double);
    {
        double m = t_mem[ROUNDS / 2], a = t_old[ROUNDS / 2], b = t_new[ROUNDS / 2];
        printf("%-22s n=%zd out=%zd  memcpy %8.0f ns | old %8.0f ns (%5.2fx) | new %8.0f ns "
               "(%5.2fx) | min: memcpy %.0f old %.0f new %.0f\n",
               name, (ssize_t)n, (ssize_t)r_old, m, a, a / m, b, b / m, t_mem[0], t_old[0],
               t_new[0]);
    }
    free(dst);
    free(dst2);
}

static unsigned char *read_file(const char *path, Py_ssize_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long len;
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len + 64);
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) exit(2);
    fclose(f);
    *n = len;
    return buf;
}

#ifdef EXPAND_LIBFUZZER

/* Buffers for inputs up to MAXN bytes, allocated on the first call; the input
   is copied to end right at a PROT_NONE page. */
#define LF_MAXN 65536
static unsigned char *lf_ref, *lf_out, *lf_scratch, *lf_guard;
static Py_ssize_t *lf_unit;

static void lf_setup(void)
{
    const size_t maxout = 256 * (size_t)LF_MAXN + 1024;
    long page = sysconf(_SC_PAGESIZE);
    size_t span = ((size_t)LF_MAXN + (size_t)page - 1) / (size_t)page * (size_t)page;
    unsigned char *map = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + span, (size_t)page, PROT_NONE) != 0) abort();
    lf_guard = map + span;
    lf_ref = malloc(maxout);
    lf_out = malloc(maxout + GUARD);
    lf_scratch = malloc(maxout);
    lf_unit = malloc(sizeof(Py_ssize_t) * (LF_MAXN + 1));
    if (!lf_ref || !lf_out || !lf_scratch || !lf_unit) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Py_ssize_t n, full, err, so, cap, delta;
    long ran_bulk = 0;
    unsigned char mode;
    if (size < 2) return 0;
    if (!lf_guard) lf_setup();
    mode = data[0];
    delta = data[1];
    n = (Py_ssize_t)(size - 2 > LF_MAXN ? LF_MAXN : size - 2);
    memcpy(lf_guard - n, data + 2, (size_t)n);
    full = ref_expand(lf_guard - n, n, lf_scratch, 256 * (Py_ssize_t)LF_MAXN + 1024, &err, &so,
                      NULL);
    switch (mode % 6) {
    case 0: cap = full; break;
    case 1: cap = full + delta; break;
    case 2: cap = full - 1 - delta; break;
    case 3: cap = full > 0 ? full * delta / 255 : 0; break;
    case 4: cap = delta; break;
    default: cap = full - 1; break;
    }
    if (cap < 0) cap = 0;
    check_case(lf_guard - n, n, cap, lf_ref, lf_out, lf_unit, &ran_bulk);
    if (failures) abort(); /* libFuzzer saves the input */
    return 0;
}

#else

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "fuzz") == 0) {
        long iters = argc >= 3 ? atol(argv[2]) : 200000;
        uint64_t seed = argc >= 4 ? strtoull(argv[3], NULL, 10) : 1;
        return fuzz(iters, seed);
    }
    if (argc >= 2 && strcmp(argv[1], "bench") == 0) {
        int a;
        for (a = 2; a < argc; a++) {
            Py_ssize_t n;
            unsigned char *buf = read_file(argv[a], &n);
            bench_one(argv[a], buf, n);
            free(buf);
        }
        return 0;
    }
    fprintf(stderr, "usage: %s fuzz [iters] [seed] | bench files...\n", argv[0]);
    return 2;
}

#endif /* EXPAND_LIBFUZZER */
