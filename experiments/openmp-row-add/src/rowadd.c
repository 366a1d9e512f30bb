/*
 * Squares an N x N matrix whose entries are -1, 0 or 1 with a row-add kernel: for every
 * nonzero a[i][k], row k of the matrix is added to (or subtracted from) row i of the product.
 *
 *   rowadd --n=N --threads=T [--seed=S]
 *
 * One source, three builds (see lab.toml):
 *   seq        compiled without -fopenmp: the pragma is ignored, the loop is plain C;
 *   omp        -fopenmp: the row loop is written inside the parallel region, so the
 *              compiler outlines it into the region's function and vectorises it there;
 *   omp-fixed  -fopenmp -DROW_ADD_FIX: the inner loop is a small function with restrict
 *              pointers that must not be inlined back into the parallel region.
 *
 * Only the kernel is timed (two clock reads). Before a time is reported the product is
 * verified with Freivalds' test (Freivalds 1977): C x == A (A x) for random vectors x, in
 * O(N^2) per vector. A product that fails is an error and no time is printed.
 *
 * Prints one JSON object line on stdout; everything else goes to stderr.
 * Exit status: 0 ok, 1 the product failed verification, 2 bad command line.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef ROW_ADD_FIX
#define BUILD "omp-fixed"
#elif defined(_OPENMP)
#define BUILD "omp"
#else
#define BUILD "seq"
#endif

#define FREIVALDS_ROUNDS 2

struct options {
    int n;
    int threads;
    uint64_t seed;
};

static void usage_error(const char *arg, const char *why)
{
    fprintf(stderr, "error: %s: %s\n", arg, why);
    /* An argument holding a space was probably several options passed as one word
     * (a shell that does not split variables). Refuse rather than run the default. */
    if (strchr(arg, ' '))
        fprintf(stderr, "hint: \"%s\" contains a space: were several options passed as one "
                        "argument?\n", arg);
    fprintf(stderr, "usage: rowadd --n=N --threads=T [--seed=S]\n");
    exit(2);
}

static long parse_long(const char *arg, const char *text, long lo, long hi)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < lo || v > hi)
        usage_error(arg, "not a whole number in range");
    return v;
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = {0, 0, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--n=", 4) == 0)
            o.n = (int)parse_long(a, a + 4, 1, 8192);
        else if (strncmp(a, "--threads=", 10) == 0)
            o.threads = (int)parse_long(a, a + 10, 1, 1024);
        else if (strncmp(a, "--seed=", 7) == 0)
            o.seed = (uint64_t)parse_long(a, a + 7, 0, 1L << 62);
        else
            usage_error(a, "unknown option");
    }
    if (o.n == 0 || o.threads == 0)
        usage_error(argc > 1 ? argv[1] : "(none)", "--n and --threads are required");
#ifndef _OPENMP
    if (o.threads != 1)
        usage_error("--threads", "the sequential build runs on one thread only");
#endif
    return o;
}

/* splitmix64 (Steele, Lea & Flood 2014): a small seeded generator, the same on every build. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int32_t *random_matrix(int n, uint64_t seed)
{
    int32_t *a = malloc((size_t)n * n * sizeof *a);
    if (!a) {
        fprintf(stderr, "error: out of memory for a %d x %d matrix\n", n, n);
        exit(2);
    }
    uint64_t s = seed;
    for (size_t i = 0; i < (size_t)n * n; i++)
        a[i] = (int32_t)(next_random(&s) % 3) - 1;
    return a;
}

#ifdef ROW_ADD_FIX
/* The fix: a function with no aliasing questions, kept out of the parallel region so that it
 * is compiled like the sequential loop. */
__attribute__((noinline)) static void row_add(int32_t *restrict c, const int32_t *restrict b,
                                              int n)
{
    for (int j = 0; j < n; j++)
        c[j] += b[j];
}

__attribute__((noinline)) static void row_sub(int32_t *restrict c, const int32_t *restrict b,
                                              int n)
{
    for (int j = 0; j < n; j++)
        c[j] -= b[j];
}
#endif

/* C = A * A. C must be zeroed. */
static void square(const int32_t *a, int32_t *c, int n)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        int32_t *ci = c + (size_t)i * n;
        for (int k = 0; k < n; k++) {
            int32_t aik = a[(size_t)i * n + k];
            const int32_t *ak = a + (size_t)k * n;
#ifdef ROW_ADD_FIX
            if (aik == 1)
                row_add(ci, ak, n);
            else if (aik == -1)
                row_sub(ci, ak, n);
#else
            if (aik == 1)
                for (int j = 0; j < n; j++)
                    ci[j] += ak[j];
            else if (aik == -1)
                for (int j = 0; j < n; j++)
                    ci[j] -= ak[j];
#endif
        }
    }
}

/* y = M x, with M of int32 and x, y of int64. */
static void mat_vec(const int32_t *m, const int64_t *x, int64_t *y, int n)
{
    for (int i = 0; i < n; i++) {
        int64_t s = 0;
        for (int j = 0; j < n; j++)
            s += (int64_t)m[(size_t)i * n + j] * x[j];
        y[i] = s;
    }
}

/* Freivalds' test: for random x, C x must equal A (A x). A wrong product passes one round
 * with probability at most 1/2 for x in {0,1}^n; with 32-bit random entries far less. */
static int verified(const int32_t *a, const int32_t *c, int n, uint64_t seed)
{
    int64_t *x = malloc(n * sizeof *x), *ax = malloc(n * sizeof *ax);
    int64_t *aax = malloc(n * sizeof *aax), *cx = malloc(n * sizeof *cx);
    uint64_t s = seed ^ 0x5eedf00du;
    int ok = x && ax && aax && cx;
    for (int round = 0; ok && round < FREIVALDS_ROUNDS; round++) {
        for (int j = 0; j < n; j++)
            x[j] = (int64_t)(next_random(&s) >> 44); /* 20 bits: no overflow in A (A x) */
        mat_vec(a, x, ax, n);
        mat_vec(a, ax, aax, n);
        mat_vec(c, x, cx, n);
        ok = memcmp(aax, cx, n * sizeof *cx) == 0;
    }
    free(x), free(ax), free(aax), free(cx);
    return ok;
}

/* FNV-1a 64 over the product's entries, little-endian bytes. */
static uint64_t checksum(const int32_t *c, int n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        uint32_t v = (uint32_t)c[i];
        for (int b = 0; b < 4; b++) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 0x100000001b3u;
        }
    }
    return h;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The number of threads the parallel region actually runs with. */
static int team_size(void)
{
    int team = 1;
#ifdef _OPENMP
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
    }
#endif
    return team;
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
#ifdef _OPENMP
    omp_set_num_threads(o.threads);
#endif
    int n = o.n;
    int32_t *a = random_matrix(n, o.seed);
    int32_t *c = calloc((size_t)n * n, sizeof *c);
    if (!c) {
        fprintf(stderr, "error: out of memory for the product\n");
        return 2;
    }
    memset(c, 0, (size_t)n * n * sizeof *c); /* touch every page before timing */
    long nonzeros = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        nonzeros += a[i] != 0;

    /* Starts the thread team before the clock does; it is also what the run echoes. */
    int team = team_size();

    double t0 = seconds_now();
    square(a, c, n);
    double kernel_s = seconds_now() - t0;

    if (!verified(a, c, n, o.seed)) {
        fprintf(stderr, "error: the %s build's product fails Freivalds' test at n=%d, "
                        "%d threads; not reporting a time\n", BUILD, n, team);
        return 1;
    }
    /* Element additions the kernel performs: one row of n per nonzero entry. */
    double adds = (double)nonzeros * n;
    printf("{\"config\":{\"build\":\"%s\",\"n\":%d,\"threads\":%d,\"seed\":%" PRIu64 "}"
           ",\"kernel_s\":%.6f,\"gadds\":%.4f,\"checksum\":\"%016" PRIx64 "\"}\n",
           BUILD, n, team, o.seed, kernel_s, adds / kernel_s / 1e9, checksum(c, n));
    free(a);
    free(c);
    return 0;
}
