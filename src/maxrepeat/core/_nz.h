/* What the normalizers' check (_nearnorm.c) and rewrites (_nearrewrite.c) share: the
 * normalizer bits and the small byte helpers of their loops (static inline, so each file
 * has them inlined). */
#ifndef MAXREPEAT_NZ_H
#define MAXREPEAT_NZ_H

#include "_native.h"

/* the normalizer bits (core.near.normalizers.NATIVE_BITS) */
enum {
    NZ_ANSI = 1, NZ_TRAIL = 2, NZ_TIME = 4, NZ_TEMP = 8, NZ_NUMBERS = 16, NZ_DUR = 32, NZ_IDS = 64,
    NZ_ADDR = 128, NZ_PIDS = 256,
    /* the five whose pre-checks one scan does (core.near._prechecks.BLOCK) */
    NZ_BLOCK = NZ_TIME | NZ_DUR | NZ_IDS | NZ_ADDR | NZ_PIDS
};

static inline int nz_digit(uint8_t b) { return b >= '0' && b <= '9'; }

static inline int nz_hex(uint8_t b) {
    return nz_digit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
}

/* the length of the run of bytes in `in` at s[p] */
static inline Py_ssize_t nz_run(const uint8_t *s, Py_ssize_t n, Py_ssize_t p, int (*in)(uint8_t)) {
    Py_ssize_t q = p;
    while (q < n && in(s[q])) q++;
    return q - p;
}

/* The next position of byte c at or after i, or n. */
static inline Py_ssize_t nz_next(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, int c) {
    if (i >= n) return n;
    const uint8_t *p = memchr(s + i, c, (size_t)(n - i));
    return p == NULL ? n : p - s;
}

/* _nearrewrite.c: whether a duration key's number follows the colon s[c] */
int mr_nz_keyed_dirty(const uint8_t *s, Py_ssize_t n, Py_ssize_t c);

#endif /* MAXREPEAT_NZ_H */
