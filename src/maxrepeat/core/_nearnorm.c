/* The built-in normalizers of near-duplicate matching in C (core/near/normalizers.py is the
 * definition; docs/design/native.md, "Near-duplicate keys"). Its own translation unit:
 * what it gives the module is declared in _near.h, what it shares with _nearrewrite.c in
 * _nz.h.
 *
 * near_dirty (and the one-pass variant of near_plain, nz_plain16/nz_plain_at) is true for
 * every text one of the enabled normalizers could change: a superset, the pre-checks of
 * core/near/normalizers.py with any doubt counted as "could".
 */

#include "_native.h"
#include "_near.h"
#include "_nz.h"

/* Whether the character before s[i] is a word character (\w). Non-ASCII counts as not
 * one: a match is then possible, so the text is dirty (the doubt goes to Python). */
static int nz_word_before(const uint8_t *s, Py_ssize_t i) {
    if (i == 0) return 0;
    uint8_t b = s[i - 1];
    return nz_digit(b) || (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || b == '_';
}

/* a unit's first character of the durations pre-check: [numsµh] */
static int nz_unit(const uint8_t *s, Py_ssize_t n, Py_ssize_t p) {
    if (p >= n) return 0;
    uint8_t b = s[p];
    if (b == 'n' || b == 'u' || b == 'm' || b == 's' || b == 'h') return 1;
    return b == 0xC2 && p + 1 < n && s[p + 1] == 0xB5; /* µ */
}

/* the tail of the durations pre-check at p: m[0-9] | ' '?[numsµh] ('m' alone is a unit) */
static int nz_tail(const uint8_t *s, Py_ssize_t n, Py_ssize_t p) {
    if (nz_unit(s, n, p)) return 1;
    return p < n && s[p] == ' ' && nz_unit(s, n, p + 1);
}


/* the two letters after a capital that BLOCK_SCAN's day and month names start with */
static const char *const NZ_PAIRS[] = {"on", "ue", "ed", "hu", "ri", "at", "un", "an", "eb",
                                       "ar", "pr", "ay", "ul", "ug", "ep", "ct", "ov", "ec"};
/* NZ_PAIRS by first letter: bit b - 'a' for each second letter b (nz_init) */
static uint32_t nz_pair_bits[26];

static int nz_pair(uint8_t a, uint8_t b) {
    return a >= 'a' && a <= 'z' && b >= 'a' && b <= 'z' &&
           ((nz_pair_bits[a - 'a'] >> (b - 'a')) & 1);
}

/* whether the literal word stands at s[p] */
#define nz_at(s, n, p, word) \
    ((p) + (Py_ssize_t)sizeof(word) - 1 <= (n) && memcmp((s) + (p), word, sizeof(word) - 1) == 0)

/* the time branches of BLOCK_SCAN at the digit s[i]: [0-9]{3}- | [0-9]?:[0-9]{2}: |
 * [5-9][0-9]{8} (the epoch's) */
static int nz_block_time_at(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    if (nz_run(s, n, i + 1, nz_digit) >= 3 && i + 4 < n && s[i + 4] == '-') return 1;
    if (i + 4 < n && s[i + 1] == ':' && nz_digit(s[i + 2]) && nz_digit(s[i + 3]) &&
        s[i + 4] == ':')
        return 1;
    if (i + 5 < n && nz_digit(s[i + 1]) && s[i + 2] == ':' && nz_digit(s[i + 3]) &&
        nz_digit(s[i + 4]) && s[i + 5] == ':')
        return 1;
    return i + 1 < n && s[i + 1] >= '5' && s[i + 1] <= '9' && nz_run(s, n, i + 2, nz_digit) >= 8;
}

/* the other branches of BLOCK_SCAN at the digit s[i] */
static int nz_block_digit_at(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    if (nz_block_time_at(s, n, i)) return 1;
    /* [0-9]*(\.[0-9]+)?(m[0-9]| ?[numsµh]): only the longest digit runs can be
     * followed by the tail (a shorter run leaves a digit next) */
    Py_ssize_t j = i + 1 + nz_run(s, n, i + 1, nz_digit);
    if (nz_tail(s, n, j)) return 1;
    if (j + 1 < n && s[j] == '.' && nz_digit(s[j + 1]) &&
        nz_tail(s, n, j + 1 + nz_run(s, n, j + 1, nz_digit)))
        return 1;
    /* (?<=\[[0-9])[0-9]{1,6}\] */
    if (i > 0 && s[i - 1] == '[') {
        Py_ssize_t m = nz_run(s, n, i + 1, nz_digit);
        if (m >= 1 && m <= 6 && i + 1 + m < n && s[i + 1 + m] == ']') return 1;
    }
    /* (?<=0)x[0-9a-fA-F]{4} */
    return s[i] == '0' && i + 1 < n && s[i + 1] == 'x' && nz_run(s, n, i + 2, nz_hex) >= 4;
}

/* the process-id and port words of BLOCK_SCAN after the p or P at s[i] */
static int nz_block_p_at(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    return nz_at(s, n, i + 1, "id") || nz_at(s, n, i + 1, "ID") || nz_at(s, n, i + 1, "gid") ||
           nz_at(s, n, i + 1, "GID") || nz_at(s, n, i + 1, "rocess") ||
           nz_at(s, n, i + 1, "ort") || nz_at(s, n, i + 1, "ORT");
}

/* core.near._prechecks.BLOCK_SCAN at position i (s[i] in [0-9A-Za-fpP], no \w before it). */
static int nz_block_at(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    uint8_t c = s[i];
    if (nz_digit(c) && nz_block_digit_at(s, n, i)) return 1;
    if (c >= 'A' && c <= 'Z' && i + 2 < n && nz_pair(s[i + 1], s[i + 2])) return 1;
    /* (?<=[0-9a-fA-F])[0-9a-fA-F]{7} */
    if (nz_hex(c) && nz_run(s, n, i + 1, nz_hex) >= 7) return 1;
    return (c == 'p' || c == 'P') && nz_block_p_at(s, n, i);
}

/* The durations pre-check after an escape (core.near._rewrites.escaped_check) at the
 * backslash s[i]: \\[ntr][0-9]+(\.[0-9]+)?(m[0-9]| ?[numsµh]) */
static int nz_escaped_at(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    if (i + 2 >= n || !(s[i + 1] == 'n' || s[i + 1] == 't' || s[i + 1] == 'r') ||
        !nz_digit(s[i + 2]))
        return 0;
    Py_ssize_t j = i + 3 + nz_run(s, n, i + 3, nz_digit);
    if (nz_tail(s, n, j)) return 1;
    if (j + 1 < n && s[j] == '.' && nz_digit(s[j + 1]))
        return nz_tail(s, n, j + 1 + nz_run(s, n, j + 1, nz_digit));
    return 0;
}

/* Whether a byte may start one of BLOCK_SCAN's branches: [0-9A-Za-fpP]. */
static uint8_t nz_start[256];

void mr_nz_init(void) {
    for (int c = '0'; c <= '9'; c++) nz_start[c] = 1;
    for (int c = 'A'; c <= 'Z'; c++) nz_start[c] = 1;
    for (int c = 'a'; c <= 'f'; c++) nz_start[c] = 1;
    nz_start['p'] = 1;
    for (size_t i = 0; i < sizeof(NZ_PAIRS) / sizeof(NZ_PAIRS[0]); i++)
        nz_pair_bits[NZ_PAIRS[i][0] - 'a'] |= (uint32_t)1 << (NZ_PAIRS[i][1] - 'a');
}

/* whether the literal word ends just before s[i] */
#define nz_before(s, i, word) \
    ((i) >= (Py_ssize_t)sizeof(word) - 1 && \
     memcmp((s) + (i) - (sizeof(word) - 1), word, sizeof(word) - 1) == 0)


#if defined(__SSE2__)
#include <emmintrin.h>
/* 0xFF in each byte of v within [lo, hi] (unsigned) */
static inline __m128i nz_range(__m128i v, int lo, int hi) {
    __m128i d = _mm_xor_si128(_mm_sub_epi8(v, _mm_set1_epi8((char)lo)), _mm_set1_epi8((char)0x80));
    return _mm_andnot_si128(_mm_cmpgt_epi8(d, _mm_set1_epi8((char)((hi - lo) ^ 0x80))),
                            _mm_set1_epi8((char)0xFF));
}

#if defined(__GNUC__)
#define NZ_INLINE static inline __attribute__((always_inline))
#else
#define NZ_INLINE static inline
#endif

/* Bit k: byte k of the 16 holds (a mask of 0xFF / 0x00 bytes). */
NZ_INLINE unsigned nz_bits(__m128i x) { return (unsigned)_mm_movemask_epi8(x); }

/* BLOCK_SCAN for the 16 positions from i whose bit is set in keep (v: their bytes):
 * the candidates (a start character, [0-9A-Za-fpP], with no \w before it) found by
 * comparisons, each then checked by nz_block_at on the text itself. The word characters
 * before them are v's own, one lane up, and before lane 0 the bit `before` (1: s[i - 1]
 * is a word character), so no second load. digit: nz_range(v, '0', '9'), which the
 * callers have at hand. *word: the word characters of v (bit 15 is `before` of the next
 * block). Shared by near_dirty and near_plain. */
NZ_INLINE int nz_block16(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, __m128i v,
                         __m128i digit, unsigned before, unsigned keep, unsigned *word) {
    __m128i du = _mm_or_si128(digit, nz_range(v, 'A', 'Z'));
    unsigned start = nz_bits(_mm_or_si128(_mm_or_si128(du, nz_range(v, 'a', 'f')),
                                          _mm_cmpeq_epi8(v, _mm_set1_epi8('p'))));
    /* \w: ASCII letters, digits, '_' (a non-ASCII byte counts as not one) */
    *word = nz_bits(_mm_or_si128(_mm_or_si128(du, nz_range(v, 'a', 'z')),
                                 _mm_cmpeq_epi8(v, _mm_set1_epi8('_'))));
    unsigned bits = start & ~((*word << 1) | before) & keep;
    while (bits) {
        if (nz_block_at(s, n, i + __builtin_ctz(bits))) return 1;
        bits &= bits - 1;
    }
    return 0;
}
#endif

/* core.near._prechecks.BLOCK_SCAN: a character of [0-9A-Za-fpP] with no \w before it where
 * one of the branches matches (nz_block_at). 16 bytes at a time where SSE2 exists (every
 * x86-64): the candidates are found by comparisons, then each is checked as below. */
static int nz_block_scan(const uint8_t *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    if (nz_start[s[0]] && nz_block_at(s, n, 0)) return 1;
    i = 1;
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        unsigned word;
        if (nz_block16(s, n, i, v, nz_range(v, '0', '9'), (unsigned)nz_word_before(s, i), 0xFFFF,
                       &word))
            return 1;
    }
#endif
    for (; i < n; i++)
        if (nz_start[s[i]] && !nz_word_before(s, i) && nz_block_at(s, n, i)) return 1;
    return 0;
}

/* Whether one of the normalizers in mask could change the UTF-8 text s (see above): the
 * substrings the pre-checks look for (core.near._prechecks.PRECHECKS, BLOCK_NEEDLES and
 * _trailing) are found with memchr, the block scan by nz_block_scan. */
/* _trailing's pre-check: the last character is white space (str.isspace; any non-ASCII
 * one is taken as possibly so), or " \n", "\t\n", "\r\n" inside */
static int nz_trailing_dirty(const uint8_t *s, Py_ssize_t n) {
    uint8_t last = s[n - 1];
    if (last >= 0x80 || last == ' ' || (last >= 9 && last <= 13) || (last >= 28 && last <= 31))
        return 1;
    for (Py_ssize_t i = nz_next(s, n, 1, '\n'); i < n; i = nz_next(s, n, i + 1, '\n'))
        if (s[i - 1] == ' ' || s[i - 1] == '\t' || s[i - 1] == '\r') return 1;
    return 0;
}

static int nz_has_digit(const uint8_t *s, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (nz_digit(s[i])) return 1;
    return 0;
}

/* the temp paths' pre-check: a backslash, or /tmp/, /var/, /dev/shm/ */
static int nz_temp_dirty(const uint8_t *s, Py_ssize_t n) {
    if (memchr(s, '\\', (size_t)n) != NULL) return 1;
    for (Py_ssize_t i = nz_next(s, n, 0, '/'); i < n; i = nz_next(s, n, i + 1, '/'))
        if (nz_at(s, n, i, "/tmp/") || nz_at(s, n, i, "/var/") || nz_at(s, n, i, "/dev/shm/"))
            return 1;
    return 0;
}

/* the block's needles at the colon s[i] (_BLOCK_NEEDLES) */
static int nz_colon_needle(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    return (i > 0 && s[i - 1] == ']') || nz_at(s, n, i, ":::") || nz_at(s, n, i, "::1:") ||
           nz_before(s, i, "localhost") || nz_before(s, i, "127.0.0.1") ||
           nz_before(s, i, "0.0.0.0");
}

/* the five normalizers of _BLOCK: their needles, then the block scan */
static int nz_block_dirty(const uint8_t *s, Py_ssize_t n) {
    for (Py_ssize_t i = nz_next(s, n, 0, ':'); i < n; i = nz_next(s, n, i + 1, ':'))
        if (nz_colon_needle(s, n, i)) return 1;
    for (Py_ssize_t i = nz_next(s, n, 5, 'I'); i < n; i = nz_next(s, n, i + 1, 'I'))
        if (nz_at(s, n, i - 5, "shellId")) return 1;
    return nz_block_scan(s, n);
}

/* the durations' own pre-checks: after an escape, and the keyed durations */
static int nz_dur_dirty(const uint8_t *s, Py_ssize_t n) {
    for (Py_ssize_t i = nz_next(s, n, 0, '\\'); i < n; i = nz_next(s, n, i + 1, '\\'))
        if (nz_escaped_at(s, n, i)) return 1;
    for (Py_ssize_t i = nz_next(s, n, 0, ':'); i < n; i = nz_next(s, n, i + 1, ':'))
        if (mr_nz_keyed_dirty(s, n, i)) return 1;
    return 0;
}

int mr_near_dirty(const uint8_t *s, Py_ssize_t n, int mask) {
    int blank;
    /* n <= 0, not n == 0: a length is never negative, and saying so lets the compiler
     * see that (size_t)n below is no huge bound (-Wstringop-overread) */
    if (n <= 0 || mr_nz_plain_clean(s, n, mask, &blank)) return 0; /* the common case, at once */
    return ((mask & NZ_ANSI) && memchr(s, 0x1b, (size_t)n) != NULL) ||
           ((mask & NZ_TRAIL) && nz_trailing_dirty(s, n)) ||
           ((mask & NZ_NUMBERS) && nz_has_digit(s, n)) ||
           ((mask & NZ_TEMP) && nz_temp_dirty(s, n)) ||
           ((mask & NZ_BLOCK) && nz_block_dirty(s, n)) ||
           ((mask & NZ_DUR) && nz_dur_dirty(s, n));
}

/* near_dirty(text, mask) -> bool: the check, for the tests. */
PyObject *mr_py_near_dirty(PyObject *Py_UNUSED(self), PyObject *args) {
    const char *s;
    Py_ssize_t n;
    int mask;
    if (!PyArg_ParseTuple(args, "s#i", &s, &n, &mask)) return NULL;
    return PyBool_FromLong(mr_near_dirty((const uint8_t *)s, n, mask));
}

/* Whether a number follows the colon s[c] as every match of nz_keyed_dirty has it (' '*,
 * '-'?, a digit): the cheap part of that check, first. */
static int nz_number_after(const uint8_t *s, Py_ssize_t n, Py_ssize_t c) {
    Py_ssize_t j = c + 1;
    while (j < n && s[j] == ' ') j++;
    if (j < n && s[j] == '-') j++;
    return j < n && nz_digit(s[j]);
}

/* The special checks of near_dirty at position i of ASCII text (no control character,
 * no backslash): the temp-path and block needles that start at '/', ':' or 'I'. */
static int nz_needle_at(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, int mask) {
    switch (s[i]) {
        case '/':
            return (mask & NZ_TEMP) &&
                   (nz_at(s, n, i, "/tmp/") || nz_at(s, n, i, "/var/") || nz_at(s, n, i, "/dev/shm/"));
        case ':':
            return ((mask & NZ_BLOCK) && nz_colon_needle(s, n, i)) ||
                   ((mask & NZ_DUR) && nz_number_after(s, n, i) && mr_nz_keyed_dirty(s, n, i));
        case 'I': return (mask & NZ_BLOCK) && i >= 5 && nz_at(s, n, i - 5, "shellId");
    }
    return 0;
}

#if !defined(__SSE2__)
/* Position i of near_plain's scan: 1 when the string is not plain or a normalizer in
 * mask could change it (then the general path decides). Where SSE2 exists, nz_plain16
 * checks every position (x86-64 never compiles this). */
static int nz_plain_at(const uint8_t *s, Py_ssize_t m, Py_ssize_t i, int mask, int *blank) {
    uint8_t c = s[i];
    if (c >= 0x80 || c == '\\' || c == '"' || c < 0x20) return 1;
    if (c != ' ') *blank = 0;
    if ((c == '/' || c == ':' || c == 'I') && nz_needle_at(s, m, i, mask)) return 1;
    if ((mask & NZ_NUMBERS) && nz_digit(c)) return 1;
    return (mask & NZ_BLOCK) && nz_start[c] && !nz_word_before(s, i) && nz_block_at(s, m, i);
}
#else
/* nz_plain_at's checks for the 16 positions from i whose bit is set in keep (v: their
 * bytes; before and *word as nz_block16 takes and gives them). */
NZ_INLINE int nz_plain16(const uint8_t *s, Py_ssize_t m, Py_ssize_t i, __m128i v,
                         unsigned before, unsigned keep, int mask, int *blank, unsigned *word) {
    __m128i bad = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                            _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                               nz_range(v, 0, 0x1f));
    /* high bit: non-ASCII */
    if (((nz_bits(bad) | nz_bits(v)) & keep) != 0) return 1;
    if (*blank && (nz_bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))) & keep) != keep) *blank = 0;
    __m128i special = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')),
                                                _mm_cmpeq_epi8(v, _mm_set1_epi8('I'))));
    unsigned bits = nz_bits(special) & keep;
    while (bits) {
        if (nz_needle_at(s, m, i + __builtin_ctz(bits), mask)) return 1;
        bits &= bits - 1;
    }
    __m128i digit = nz_range(v, '0', '9');
    if ((mask & NZ_NUMBERS) && (nz_bits(digit) & keep)) return 1;
    return (mask & NZ_BLOCK) && nz_block16(s, m, i, v, digit, before, keep, word);
}
#endif

/* Whether text s (m bytes) is plain (ASCII, no quote, backslash or control character)
 * and no normalizer in mask could change it (near_dirty's checks; the ones that need a
 * control character, a backslash or a non-ASCII byte cannot apply): one pass, 16 bytes at
 * a time where SSE2 exists, for what near_dirty's checks would each scan. 1: plain and
 * clean (*blank: only spaces); 0: anything else (near_dirty decides).
 *
 * With SSE2 every position is checked in a block of 16 (the checks of a position are
 * the same in any block): a text of under 16 bytes is copied to a block of its own (the
 * rest of the block not kept); a longer one is read in place, its last block ending with
 * the text (overlapping the one before; the positions checked already not kept). Nothing
 * outside s is read. */
int mr_nz_plain_clean(const uint8_t *s, Py_ssize_t m, int mask, int *blank) {
    *blank = 1;
    if (m == 0) return 1;
    if ((mask & NZ_TRAIL) && s[m - 1] == ' ') return 0;
#if defined(__SSE2__)
    unsigned word = 0; /* the word characters of the block before (nz_block16) */
    if (m < 16) {
        uint8_t tmp[16] = {0};
        memcpy(tmp, s, (size_t)m);
        return !nz_plain16(s, m, 0, _mm_loadu_si128((const __m128i *)tmp), 0, (1u << m) - 1,
                           mask, blank, &word);
    }
    if (nz_plain16(s, m, 0, _mm_loadu_si128((const __m128i *)s), 0, 0xFFFF, mask, blank, &word))
        return 0;
    Py_ssize_t i = 16;
    for (; i + 16 <= m; i += 16)
        if (nz_plain16(s, m, i, _mm_loadu_si128((const __m128i *)(s + i)), (word >> 15) & 1,
                       0xFFFF, mask, blank, &word))
            return 0;
    if (i < m) {
        /* m > 16 here; the positions before i are not kept, and the one at i has s[i - 1]
         * before it in this block */
        Py_ssize_t j = m - 16;
        if (nz_plain16(s, m, j, _mm_loadu_si128((const __m128i *)(s + j)), 0,
                       (0xFFFFu << (i - j)) & 0xFFFF, mask, blank, &word))
            return 0;
    }
    return 1;
#else
    for (Py_ssize_t i = 0; i < m; i++)
        if (nz_plain_at(s, m, i, mask, blank)) return 0;
    return 1;
#endif
}
