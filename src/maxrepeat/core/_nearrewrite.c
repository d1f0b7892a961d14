/* The built-in normalizers' rewrites in C: every substitution of
 * core.near.normalizers.NORMALIZERS, in their order, each applied to the text the previous one
 * left, with the output of Python's re.sub (docs/design/native.md, "Near-duplicate keys").
 * Its own translation unit: what it gives the module is declared in _near.h, what it
 * shares with the check (_nearnorm.c) in _nz.h.
 *
 * Texts are UTF-8 (a lone surrogate, from the tests' surrogatepass, reads as its code
 * point: neither a word character nor white space, as for `re`). Where a pattern's meaning
 * depends on one of `re`'s classes for str patterns, the same class is used: \w is
 * str.isalnum() or '_' (Py_UNICODE_ISALNUM), \s and str.rstrip() are str.isspace()
 * (Py_UNICODE_ISSPACE), \d is str.isdecimal(); [0-9], [a-z], ... are ASCII; a leading
 * "[0-9](?<![\w][0-9])" means "no \w before the first character"; `(?i)` matches an
 * ASCII letter in either case plus the four non-ASCII letters `re` folds onto one
 * (U+0130, U+0131 onto i, U+017F onto s, U+212A onto k;
 * tests/core/near/test_near_native.py checks the list against `re` for every code point).
 * Each matcher returns the match the backtracking engine finds at a position: where a
 * pattern ends in \b after greedy or optional parts, the candidate ends are tried in the
 * engine's order (longer first, an optional part before its absence).
 */

#include "_native.h"
#include "_near.h"
#include "_nz.h"

/* a lower-case ASCII letter's (?i) match: the letter in either case, or a non-ASCII
 * letter `re` folds onto it */
static int nz_ci(uint32_t cp, char letter) {
    if (cp < 0x80) return (cp | 0x20) == (uint32_t)letter;
    if (letter == 's') return cp == 0x17F;
    if (letter == 'i') return cp == 0x130 || cp == 0x131;
    if (letter == 'k') return cp == 0x212A;
    return 0;
}

/* first-byte tables, one per substitution (nz_init_rewrites) */
enum { F_ANSI, F_DIGIT, F_DAY, F_MONTH, F_ONE, F_HEX, F_ZERO, F_PID, F_PORT, F_BRACKET,
       F_SLASH, F_WIN, F_COUNT };
static uint8_t nz_first[F_COUNT][256];

static uint8_t nz_wordc[128]; /* ASCII \w */

/* The code point at s[i] and its length in bytes. */
static uint32_t nz_cp(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t *len) {
    uint8_t c = s[i];
    if (c < 0xC0 || (c < 0xE0 && i + 1 >= n) || (c >= 0xE0 && c < 0xF0 && i + 2 >= n) ||
        (c >= 0xF0 && i + 3 >= n)) {
        *len = 1; /* ASCII (or a stray byte, which valid input never has) */
        return c;
    }
    if (c < 0xE0) {
        *len = 2;
        return ((uint32_t)(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
    }
    if (c < 0xF0) {
        *len = 3;
        return ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) |
               (s[i + 2] & 0x3F);
    }
    *len = 4;
    return ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
           ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
}

static int nz_wcp(uint32_t cp) {
    return cp < 0x80 ? nz_wordc[cp] : (int)Py_UNICODE_ISALNUM((Py_UCS4)cp);
}

/* \w at s[i] (not at the end) */
static int nz_w_at(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    if (i >= n) return 0;
    if (s[i] < 0x80) return nz_wordc[s[i]];
    Py_ssize_t len;
    return nz_wcp(nz_cp(s, n, i, &len));
}

/* \w just before s[i] */
static int nz_w_before(const uint8_t *s, Py_ssize_t i) {
    if (i <= 0) return 0;
    if (s[i - 1] < 0x80) return nz_wordc[s[i - 1]];
    Py_ssize_t j = i - 1, len;
    while (j > 0 && (s[j] & 0xC0) == 0x80) j--;
    return nz_wcp(nz_cp(s, i, j, &len));
}

/* \b after a match whose last character is \w: no \w next */
#define NZ_B(s, n, e) (!nz_w_at(s, n, e))

static int nz_d(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) { return i < n && nz_digit(s[i]); }

static int nz_dd(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    return i + 1 < n && nz_digit(s[i]) && nz_digit(s[i + 1]);
}

static int nz_lower(uint8_t b) { return b >= 'a' && b <= 'z'; }
static int nz_upper(uint8_t b) { return b >= 'A' && b <= 'Z'; }
static int nz_hexl(uint8_t b) { return nz_digit(b) || (b >= 'a' && b <= 'f'); }
static int nz_hexu(uint8_t b) { return nz_digit(b) || (b >= 'A' && b <= 'F'); }

/* whether the NUL-terminated word stands at s[i] */
static int nz_word(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, const char *w) {
    if (i >= n || s[i] != (uint8_t)w[0]) return 0; /* most candidates end here */
    size_t k = strlen(w);
    return i >= 0 && i + (Py_ssize_t)k <= n && memcmp(s + i, w, k) == 0;
}

/* whether s[i], s[i+1] is one of the two-letter pairs in `pairs` */
static int nz_in_pairs(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, const char *pairs) {
    if (i + 1 >= n) return 0;
    for (; *pairs; pairs += 2)
        if (s[i] == (uint8_t)pairs[0] && s[i + 1] == (uint8_t)pairs[1]) return 1;
    return 0;
}

static const char NZ_DAYS[] = "onueedhuriatun";
static const char NZ_MONTHS[] = "anebarprayunulugepctovec";

/* What replaces a match at i: s[i .. keep) then tok; or, with tmp, tmp_path's rewrite of
 * s[keep .. end) after s[i .. keep). */
typedef struct {
    Py_ssize_t keep;
    const char *tok;
    int tmp;
} NzRep;

/* A matcher: the end of the match at s[i] (its first byte is in the pass's first-byte
 * table), *r set (keep: i, tok: the substitution's token, unless it says otherwise); or
 * -1. */
typedef Py_ssize_t (*NzMatch)(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r);

/* ---- ansi ---- */
/* \x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]  (the classes are disjoint: no backtracking) */
static Py_ssize_t m_ansi(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (i + 1 >= n) return -1;
    if (s[i + 1] == '[') {
        Py_ssize_t j = i + 2;
        while (j < n && (nz_digit(s[j]) || s[j] == ';' || s[j] == '?')) j++;
        while (j < n && s[j] >= 0x20 && s[j] <= 0x2f) j++;
        return j < n && s[j] >= 0x40 && s[j] <= 0x7e ? j + 1 : -1;
    }
    if ((s[i + 1] == '(' || s[i + 1] == ')') && i + 2 < n &&
        (nz_upper(s[i + 2]) || nz_digit(s[i + 2])))
        return i + 3;
    return -1;
}

/* ---- timestamps ---- */
/* the time zone of the ISO date at t: Z | [+-]dd:?dd | ' '?UTC, or -1 */
static Py_ssize_t ts_zone(const uint8_t *s, Py_ssize_t n, Py_ssize_t t) {
    if (t >= n) return -1;
    if (s[t] == 'Z') return t + 1;
    if (s[t] == '+' || s[t] == '-') {
        if (!nz_dd(s, n, t + 1)) return -1;
        if (t + 3 < n && s[t + 3] == ':' && nz_dd(s, n, t + 4)) return t + 6;
        return nz_dd(s, n, t + 3) ? t + 5 : -1;
    }
    if (nz_word(s, n, t, " UTC")) return t + 4;
    return nz_word(s, n, t, "UTC") ? t + 3 : -1;
}

/* (?:zone)?\b after t: the zone, then none */
static Py_ssize_t ts_zone_b(const uint8_t *s, Py_ssize_t n, Py_ssize_t t) {
    Py_ssize_t z = ts_zone(s, n, t);
    if (z >= 0 && NZ_B(s, n, z)) return z;
    return NZ_B(s, n, t) ? t : -1;
}

/* whether byte b stands at s[i] */
static int nz_is(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, uint8_t b) {
    return i < n && s[i] == b;
}

/* the hours and minutes at p: two digits, a colon, two digits */
static int nz_hhmm(const uint8_t *s, Py_ssize_t n, Py_ssize_t p) {
    return nz_dd(s, n, p) && nz_is(s, n, p + 2, ':') && nz_dd(s, n, p + 3);
}

/* m_date's time after the [T ] at p (hours and minutes checked): the seconds and their
 * fraction, the zone, then \b, in the engine's order; its end, or -1 */
static Py_ssize_t ts_time(const uint8_t *s, Py_ssize_t n, Py_ssize_t p) {
    Py_ssize_t q = p + 6, sec = q + 3, e;
    if (nz_is(s, n, q, ':') && nz_dd(s, n, q + 1)) {
        if ((nz_is(s, n, sec, '.') || nz_is(s, n, sec, ',')) && nz_d(s, n, sec + 1))
            for (Py_ssize_t k = nz_run(s, n, sec + 1, nz_digit); k >= 1; k--)
                if ((e = ts_zone_b(s, n, sec + 1 + k)) >= 0) return e;
        if ((e = ts_zone_b(s, n, sec)) >= 0) return e;
    }
    return ts_zone_b(s, n, q);
}

/* dddd-dd-dd(?:[T ]dd:dd(?::dd(?:[.,]d+)?)?(?:zone)?)?\b */
static Py_ssize_t m_date(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (nz_w_before(s, i) || nz_run(s, n, i, nz_digit) < 4 || !nz_is(s, n, i + 4, '-') ||
        !nz_dd(s, n, i + 5) || !nz_is(s, n, i + 7, '-') || !nz_dd(s, n, i + 8))
        return -1;
    Py_ssize_t p = i + 10, e;
    if ((nz_is(s, n, p, 'T') || nz_is(s, n, p, ' ')) && nz_hhmm(s, n, p + 1) &&
        (e = ts_time(s, n, p)) >= 0)
        return e;
    return NZ_B(s, n, p) ? p : -1;
}

/* m_dayname's day after the name's three letters at j: the rest of the name, a comma,
 * a space and the day's one or two digits; their end, or -1 */
static Py_ssize_t dn_day(const uint8_t *s, Py_ssize_t n, Py_ssize_t j) {
    while (j < n && nz_lower(s[j])) j++;
    if (nz_is(s, n, j, ',')) j++;
    if (!nz_is(s, n, j, ' ') || !nz_d(s, n, j + 1)) return -1;
    return nz_d(s, n, j + 2) ? j + 3 : j + 2;
}

/* m_dayname's month and year at j (a space, the month's name, a space, four digits):
 * their end, or -1 */
static Py_ssize_t dn_month_year(const uint8_t *s, Py_ssize_t n, Py_ssize_t j) {
    if (j < 0 || j + 1 >= n || s[j] != ' ' || !nz_first[F_MONTH][s[j + 1]] ||
        !nz_in_pairs(s, n, j + 2, NZ_MONTHS))
        return -1;
    j += 4;
    while (j < n && nz_lower(s[j])) j++;
    return nz_is(s, n, j, ' ') && nz_run(s, n, j + 1, nz_digit) >= 4 ? j + 5 : -1;
}

/* m_dayname's optional time and zone at j (greedy, each choice final): their end */
static Py_ssize_t dn_tail(const uint8_t *s, Py_ssize_t n, Py_ssize_t j) {
    if (nz_is(s, n, j, ' ') && nz_hhmm(s, n, j + 1) && nz_is(s, n, j + 6, ':') &&
        nz_dd(s, n, j + 7))
        j += 9;
    if (!nz_is(s, n, j, ' ')) return j;
    Py_ssize_t u = nz_run(s, n, j + 1, nz_upper);
    if (u >= 2) return j + 1 + (u > 4 ? 4 : u);
    if ((nz_is(s, n, j + 1, '+') || nz_is(s, n, j + 1, '-')) && nz_run(s, n, j + 2, nz_digit) >= 4)
        return j + 6;
    return j;
}

/* [MTWFS](on|ue|ed|hu|ri|at|un)[a-z]*,? d{1,2} [JFMASOND]MONTH[a-z]* dddd
 * (?: dd:dd:dd)?(?: [A-Z]{2,4}| [+-]dddd)?  (no \b: each greedy choice is final) */
static Py_ssize_t m_dayname(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (nz_w_before(s, i) || !nz_in_pairs(s, n, i + 1, NZ_DAYS)) return -1;
    Py_ssize_t j = dn_month_year(s, n, dn_day(s, n, i + 3));
    return j < 0 ? -1 : dn_tail(s, n, j);
}

/* m_month's year after the day that ends at d (a comma or not, a space, four digits):
 * its end, or -1 */
static Py_ssize_t mo_year(const uint8_t *s, Py_ssize_t n, Py_ssize_t d) {
    if (nz_is(s, n, d, ',') && nz_is(s, n, d + 1, ' ') && nz_run(s, n, d + 2, nz_digit) >= 4)
        return d + 6;
    return nz_is(s, n, d, ' ') && nz_run(s, n, d + 1, nz_digit) >= 4 ? d + 5 : -1;
}

/* m_month's optional time after b, then \b, in the engine's order: the end, or -1 */
static Py_ssize_t mo_time_b(const uint8_t *s, Py_ssize_t n, Py_ssize_t b) {
    if (b < 0) return -1;
    if (nz_is(s, n, b, ' ') && nz_hhmm(s, n, b + 1)) {
        Py_ssize_t c = b + 6;
        if (nz_is(s, n, c, ':') && nz_dd(s, n, c + 1) && NZ_B(s, n, c + 3)) return c + 3;
        if (NZ_B(s, n, c)) return c;
    }
    return NZ_B(s, n, b) ? b : -1;
}

/* [JFMASOND]MONTH[a-z]* +d{1,2}(?:,? dddd)?(?: dd:dd(?::dd)?)?\b */
static Py_ssize_t m_month(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (nz_w_before(s, i) || !nz_in_pairs(s, n, i + 1, NZ_MONTHS)) return -1;
    Py_ssize_t j = i + 3;
    while (j < n && nz_lower(s[j])) j++;
    if (!nz_is(s, n, j, ' ')) return -1;
    while (nz_is(s, n, j, ' ')) j++;
    Py_ssize_t k = nz_run(s, n, j, nz_digit);
    for (k = k > 2 ? 2 : k; k >= 1; k--) {
        Py_ssize_t e = mo_time_b(s, n, mo_year(s, n, j + k));
        if (e < 0) e = mo_time_b(s, n, j + k);
        if (e >= 0) return e;
    }
    return -1;
}

/* d?d:dd:dd(?:[.,]d+)?\b */
static Py_ssize_t m_clock(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (nz_w_before(s, i)) return -1;
    Py_ssize_t q;
    if (nz_d(s, n, i + 1) && i + 2 < n && s[i + 2] == ':') q = i + 2;
    else if (i + 1 < n && s[i + 1] == ':') q = i + 1;
    else return -1;
    if (!nz_dd(s, n, q + 1) || q + 3 >= n || s[q + 3] != ':' || !nz_dd(s, n, q + 4)) return -1;
    Py_ssize_t p = q + 6;
    if (p < n && (s[p] == '.' || s[p] == ',') && nz_d(s, n, p + 1))
        for (Py_ssize_t k = nz_run(s, n, p + 1, nz_digit); k >= 1; k--)
            if (NZ_B(s, n, p + 1 + k)) return p + 1 + k;
    return NZ_B(s, n, p) ? p : -1;
}

/* 1[5-9]d{8}(?:\.d+|d{9}|d{6}|d{3})?\b */
static Py_ssize_t m_epoch(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (nz_w_before(s, i) || i + 1 >= n || s[i + 1] < '5' || s[i + 1] > '9' ||
        nz_run(s, n, i + 2, nz_digit) < 8)
        return -1;
    Py_ssize_t p = i + 10;
    if (p < n && s[p] == '.' && nz_d(s, n, p + 1))
        for (Py_ssize_t k = nz_run(s, n, p + 1, nz_digit); k >= 1; k--)
            if (NZ_B(s, n, p + 1 + k)) return p + 1 + k;
    Py_ssize_t run = nz_run(s, n, p, nz_digit);
    static const int more[3] = {9, 6, 3};
    for (int a = 0; a < 3; a++)
        if (run >= more[a] && NZ_B(s, n, p + more[a])) return p + more[a];
    return NZ_B(s, n, p) ? p : -1;
}

/* ---- durations (no \w and no '.' before the first digit, or an escape: nz_dur_start) ---- */
/* an escaped newline, tab or carriage return written out (\n, \t, \r) just before s[i] */
static int nz_esc_before(const uint8_t *s, Py_ssize_t i) {
    return i >= 2 && s[i - 2] == '\\' && (s[i - 1] == 'n' || s[i - 1] == 't' || s[i - 1] == 'r');
}

/* (?:(?<![\w.])|(?<=\\[ntr])) before s[i] (core.near._rewrites.DUR_BEFORE) */
static int nz_dur_start(const uint8_t *s, Py_ssize_t i) {
    return nz_esc_before(s, i) || !((i > 0 && s[i - 1] == '.') || nz_w_before(s, i));
}

/* d+m[0-9]+(?:\.d+)?s\b */
static Py_ssize_t m_minsec(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (!nz_dur_start(s, i)) return -1;
    Py_ssize_t j = i + 1 + nz_run(s, n, i + 1, nz_digit);
    if (j >= n || s[j] != 'm' || !nz_d(s, n, j + 1)) return -1;
    j += 1 + nz_run(s, n, j + 1, nz_digit);
    if (j < n && s[j] == '.' && nz_d(s, n, j + 1)) j += 1 + nz_run(s, n, j + 1, nz_digit);
    return j < n && s[j] == 's' && NZ_B(s, n, j + 1) ? j + 1 : -1;
}

/* in the pattern's order; each ends in a letter, so at most one is followed by no \w */
static const char *const NZ_UNITS[] = {
    "ns", "us", "\xc2\xb5s", "ms", "s", "sec", "secs", "seconds", "second", "min", "mins",
    "minutes", "minute", "h", "hrs", "hr", "hours", "hour", "milliseconds", "millisecond"};

/* d+(?:\.d+)? ?UNIT\b */
static Py_ssize_t m_duration(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (!nz_dur_start(s, i)) return -1;
    Py_ssize_t j = i + 1 + nz_run(s, n, i + 1, nz_digit);
    if (j < n && s[j] == '.' && nz_d(s, n, j + 1)) j += 1 + nz_run(s, n, j + 1, nz_digit);
    if (j < n && s[j] == ' ') j++;
    for (size_t a = 0; a < sizeof(NZ_UNITS) / sizeof(NZ_UNITS[0]); a++) {
        if (!nz_word(s, n, j, NZ_UNITS[a])) continue;
        Py_ssize_t e = j + (Py_ssize_t)strlen(NZ_UNITS[a]);
        if (NZ_B(s, n, e)) return e;
    }
    return -1;
}

/* ---- durations: a number under a duration key (core.near._rewrites.KEYED) ---- */
/* (?<!\w)((['"]?)([A-Za-z0-9_]+)\2 *: *)-?d+(?:\.d+)?(?:[eE][+-]?d+)?(?![\w.])
 * -> \1<duration> when the key names a duration (_keyed_duration), else kept as it is.
 * Every match holds one colon, after its key: a match is found from its colon, looking
 * back for the key (the longest run of key characters before the spaces, in its quotes
 * or bare), which is the one match the pattern can have there. */

/* the words of _DURATION_NAME and _BOUND_NAME: an upper-case letter stands for itself or
 * its lower case ([Dd]), '~' for an optional '_' */
static const char *const NZ_DUR_WORDS[] = {"Duration", "Elapsed", "Latency", "Took",
                                           "Wall~Time", "Time~Taken"};
static const char *const NZ_BOUND_WORDS[] = {"Time~Out", "Limit", "Deadline", "Budget"};

static int nz_keyc(uint8_t b) { return b < 0x80 && nz_wordc[b]; } /* [A-Za-z0-9_] */

/* whether the word w stands at k[j] (k: len bytes) */
static int nz_kw_at(const uint8_t *k, Py_ssize_t len, Py_ssize_t j, const char *w) {
    for (; *w; w++) {
        if (*w == '~') {
            if (j < len && k[j] == '_') j++; /* the letter after it is no '_' */
            continue;
        }
        if (j >= len) return 0;
        uint8_t c = (uint8_t)*w;
        if (!(k[j] == c || (nz_upper(c) && k[j] == c + 32))) return 0;
        j++;
    }
    return 1;
}

/* whether one of the words stands somewhere in the key k */
static int nz_key_has(const uint8_t *k, Py_ssize_t len, const char *const *words, size_t nw) {
    for (Py_ssize_t j = 0; j < len; j++)
        for (size_t a = 0; a < nw; a++)
            if (nz_kw_at(k, len, j, words[a])) return 1;
    return 0;
}

/* The key before the colon s[c] (spaces between; quoted or not): [*kstart, *kend) its
 * word, *start where the match starts (its quote); 0, or -1 when there is none. */
static int nz_key_before(const uint8_t *s, Py_ssize_t c, Py_ssize_t *kstart, Py_ssize_t *kend,
                         Py_ssize_t *start) {
    Py_ssize_t p = c;
    while (p > 0 && s[p - 1] == ' ') p--;
    if (p == 0) return -1;
    int quoted = s[p - 1] == '"' || s[p - 1] == '\'';
    *kend = quoted ? p - 1 : p;
    *kstart = *kend;
    while (*kstart > 0 && nz_keyc(s[*kstart - 1])) (*kstart)--;
    if (*kstart == *kend || (quoted && (*kstart == 0 || s[*kstart - 1] != s[*kend]))) return -1;
    *start = quoted ? *kstart - 1 : *kstart;
    return nz_w_before(s, *start) ? -1 : 0;
}

/* The end of the number that starts at j (digits, a fraction, an exponent), or -1 */
static Py_ssize_t nz_number_end(const uint8_t *s, Py_ssize_t n, Py_ssize_t j) {
    Py_ssize_t k = nz_run(s, n, j, nz_digit);
    if (k == 0) return -1;
    j += k;
    if (nz_is(s, n, j, '.') && nz_d(s, n, j + 1)) j += 1 + nz_run(s, n, j + 1, nz_digit);
    if (nz_is(s, n, j, 'e') || nz_is(s, n, j, 'E')) {
        Py_ssize_t x = j + 1;
        if (nz_is(s, n, x, '+') || nz_is(s, n, x, '-')) x++;
        if (nz_d(s, n, x)) j = x + nz_run(s, n, x, nz_digit);
    }
    /* (?![\w.]): the number is taken whole, so a shorter one would end before a digit,
     * '.', 'e' or 'E' and fail too */
    return nz_is(s, n, j, '.') || nz_w_at(s, n, j) ? -1 : j;
}

/* whether the key k (len bytes) names a duration and no bound */
static int nz_dur_key(const uint8_t *k, Py_ssize_t len) {
    return nz_key_has(k, len, NZ_DUR_WORDS, sizeof(NZ_DUR_WORDS) / sizeof(NZ_DUR_WORDS[0])) &&
           !nz_key_has(k, len, NZ_BOUND_WORDS, sizeof(NZ_BOUND_WORDS) / sizeof(NZ_BOUND_WORDS[0]));
}

/* The match whose colon is s[c]: its end, *start its start, *keep where its number
 * starts (the end when the key names no duration: the match stays as it is); or -1. */
static Py_ssize_t nz_keyed_at(const uint8_t *s, Py_ssize_t n, Py_ssize_t c, Py_ssize_t *start,
                              Py_ssize_t *keep) {
    Py_ssize_t kstart, kend;
    if (nz_key_before(s, c, &kstart, &kend, start) < 0) return -1;
    Py_ssize_t num = c + 1;
    while (nz_is(s, n, num, ' ')) num++;
    Py_ssize_t j = nz_number_end(s, n, nz_is(s, n, num, '-') ? num + 1 : num);
    if (j < 0) return -1;
    *keep = nz_dur_key(s + kstart, kend - kstart) ? num : j;
    return j;
}

/* near_dirty's check (declared in _nearnorm.c): a duration key's number at colon c */
int mr_nz_keyed_dirty(const uint8_t *s, Py_ssize_t n, Py_ssize_t c) {
    Py_ssize_t start, keep, e = nz_keyed_at(s, n, c, &start, &keep);
    return e >= 0 && keep < e;
}

/* The substitution, as re.sub scans: the matches in the order of their colons, each
 * from the end of the last (a match the key kept still ends the last). */
static Py_ssize_t nz_keyed(const uint8_t *s, Py_ssize_t n, Buf *out) {
    Py_ssize_t done = 0, copied = 0, count = 0;
    out->n = 0;
    for (Py_ssize_t c = nz_next(s, n, 0, ':'); c < n; c = nz_next(s, n, c + 1, ':')) {
        Py_ssize_t start, keep, e = nz_keyed_at(s, n, c, &start, &keep);
        if (e < 0 || start < done) continue;
        done = e;
        if (keep == e) continue;
        if (buf_put(out, s + copied, keep - copied) < 0 || buf_put(out, "<duration>", 10) < 0)
            return -1;
        copied = e;
        count++;
    }
    if (count && buf_put(out, s + copied, n - copied) < 0) return -1;
    return count;
}

/* ---- ids ---- */
/* [0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b */
static Py_ssize_t m_uuid(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    static const int seg[5] = {8, 4, 4, 4, 12};
    if (nz_w_before(s, i)) return -1;
    Py_ssize_t j = i;
    for (int k = 0; k < 5; k++) {
        if (nz_run(s, n, j, nz_hex) < seg[k]) return -1;
        j += seg[k];
        if (k < 4) {
            if (j >= n || s[j] != '-') return -1;
            j++;
        }
    }
    if (!NZ_B(s, n, j)) return -1;
    return j;
}

/* [0-9a-f]{12,}\b|[0-9A-F]{12,}\b: <hex> when it holds a letter and a digit, else kept */
static Py_ssize_t m_hexid(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    if (nz_w_before(s, i)) return -1;
    for (int alt = 0; alt < 2; alt++) {
        int (*in)(uint8_t) = alt ? nz_hexu : nz_hexl;
        if (!in(s[i])) continue;
        Py_ssize_t run = nz_run(s, n, i, in);
        if (run < 12 || !NZ_B(s, n, i + run)) continue;
        int letter = 0, digit = 0;
        for (Py_ssize_t j = i; j < i + run; j++) {
            if (nz_digit(s[j])) digit = 1;
            else letter = 1;
        }
        if (letter && digit) r->tok = "<hex>";
        else r->keep = i + run; /* kept as it is */
        return i + run;
    }
    return -1;
}

/* ---- addresses: 0x[0-9a-fA-F]{4,}\b ---- */
static Py_ssize_t m_addr(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    if (nz_w_before(s, i) || i + 1 >= n || s[i + 1] != 'x') return -1;
    Py_ssize_t k = nz_run(s, n, i + 2, nz_hex);
    if (k < 4 || !NZ_B(s, n, i + 2 + k)) return -1;
    return i + 2 + k;
}

/* ---- pids ---- */
/* ([pP](?:id|ID|gid|GID|rocess|ort|ORT)|shellId)( ?[=:#]? ?)d+\b -> \1\2<n> */
static Py_ssize_t m_pid(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    static const char *const words[] = {"id", "ID", "gid", "GID", "rocess", "ort", "ORT"};
    Py_ssize_t q = -1;
    if (s[i] == 's') {
        if (nz_word(s, n, i, "shellId")) q = i + 7;
    } else if (!nz_w_before(s, i)) {
        for (size_t a = 0; a < sizeof(words) / sizeof(words[0]) && q < 0; a++)
            if (nz_word(s, n, i + 1, words[a])) q = i + 1 + (Py_ssize_t)strlen(words[a]);
    }
    if (q < 0) return -1;
    /* ' ?', '[=:#]?', ' ?': each taken before left out, in the engine's order */
    for (int combo = 0; combo < 8; combo++) {
        Py_ssize_t j = q;
        if (!(combo & 4)) {
            if (j >= n || s[j] != ' ') continue;
            j++;
        }
        if (!(combo & 2)) {
            if (j >= n || (s[j] != '=' && s[j] != ':' && s[j] != '#')) continue;
            j++;
        }
        if (!(combo & 1)) {
            if (j >= n || s[j] != ' ') continue;
            j++;
        }
        Py_ssize_t k = nz_run(s, n, j, nz_digit);
        if (k < 1 || !NZ_B(s, n, j + k)) continue;
        r->keep = j;
        return j + k;
    }
    return -1;
}

/* (localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|::1?):d{2,5}\b -> \1:<port> */
static Py_ssize_t m_port(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    static const char *const hosts[] = {"localhost", "127.0.0.1", "0.0.0.0", "[::1]", "[::]",
                                        "::1", "::"};
    for (size_t a = 0; a < sizeof(hosts) / sizeof(hosts[0]); a++) {
        if (!nz_word(s, n, i, hosts[a])) continue;
        Py_ssize_t g = i + (Py_ssize_t)strlen(hosts[a]);
        if (g >= n || s[g] != ':') continue;
        Py_ssize_t k = nz_run(s, n, g + 1, nz_digit);
        for (k = k > 5 ? 5 : k; k >= 2; k--) {
            if (!NZ_B(s, n, g + 1 + k)) continue;
            r->keep = g;
            return g + 1 + k;
        }
    }
    return -1;
}

/* \[d{2,7}\] -> [<pid>] */
static Py_ssize_t m_bracket(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    Py_ssize_t k = nz_run(s, n, i + 1, nz_digit);
    if (k < 2 || k > 7 || i + 1 + k >= n || s[i + 1 + k] != ']') return -1;
    return i + 2 + k;
}

/* ---- temp-paths ---- */
/* ((?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)/)([^\s'"`:;,)]*) -> tmp_path */
static Py_ssize_t m_tmp(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    static const char *const roots[] = {"tmp/", "var/tmp/", "var/folders/", "dev/shm/"};
    Py_ssize_t starts[2] = {nz_word(s, n, i, "/private/") ? i + 8 : -1, i}, g = -1;
    for (int a = 0; a < 2 && g < 0; a++) {
        if (starts[a] < 0) continue;
        for (size_t b = 0; b < sizeof(roots) / sizeof(roots[0]) && g < 0; b++)
            if (nz_word(s, n, starts[a] + 1, roots[b]))
                g = starts[a] + 1 + (Py_ssize_t)strlen(roots[b]);
    }
    if (g < 0) return -1;
    Py_ssize_t e = g, len;
    while (e < n) {
        uint32_t cp = nz_cp(s, n, e, &len);
        if (Py_UNICODE_ISSPACE((Py_UCS4)cp) || cp == '\'' || cp == '"' || cp == '`' || cp == ':' ||
            cp == ';' || cp == ',' || cp == ')')
            break;
        e += len;
    }
    r->keep = g;
    r->tmp = 1;
    return e;
}

/* _TMP_PART.match of a non-empty path part: every character in [\w.-], and it starts with
 * tmp, pytest- or pymp-, or holds a decimal digit (\d: str.isdecimal) */
static int nz_tmp_part(const uint8_t *s, Py_ssize_t n) {
    int digit = 0;
    for (Py_ssize_t j = 0, len; j < n; j += len) {
        uint32_t cp = nz_cp(s, n, j, &len);
        if (!(nz_wcp(cp) || cp == '.' || cp == '-')) return 0;
        if (cp < 0x80 ? nz_digit((uint8_t)cp) : Py_UNICODE_ISDECIMAL((Py_UCS4)cp)) digit = 1;
    }
    return digit || nz_word(s, n, 0, "tmp") || nz_word(s, n, 0, "pytest-") ||
           nz_word(s, n, 0, "pymp-");
}

/* tmp_path: the root kept, each part of the rest that _TMP_PART matches made <tmp> */
static int nz_put_tmp(Buf *out, const uint8_t *s, Py_ssize_t i, Py_ssize_t g, Py_ssize_t e) {
    if (buf_put(out, s + i, g - i) < 0) return -1;
    for (Py_ssize_t a = g;;) {
        const uint8_t *slash = memchr(s + a, '/', (size_t)(e - a));
        Py_ssize_t b = slash == NULL ? e : slash - s;
        if (b > a && nz_tmp_part(s + a, b - a)) {
            if (buf_put(out, "<tmp>", 5) < 0) return -1;
        } else if (buf_put(out, s + a, b - a) < 0) {
            return -1;
        }
        if (b == e) return 0;
        if (buf_byte(out, '/') < 0) return -1;
        a = b + 1;
    }
}

/* (?i)([a-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp\\)([^\s'"]*) -> \1<tmp> */
static int nz_ci_word(const uint8_t *s, Py_ssize_t n, Py_ssize_t *j, const char *w) {
    for (; *w; w++) {
        Py_ssize_t len;
        if (*j >= n || !nz_ci(nz_cp(s, n, *j, &len), *w)) return 0;
        *j += len;
    }
    return 1;
}

/* the case-folded word w and a backslash at *j, *j moved past them */
static int nz_ci_dir(const uint8_t *s, Py_ssize_t n, Py_ssize_t *j, const char *w) {
    if (!nz_ci_word(s, n, j, w) || !nz_is(s, n, *j, '\\')) return 0;
    (*j)++;
    return 1;
}

/* the end of the run at j of code points that are not white space, nor the byte stop,
 * nor (when quotes) a quote */
static Py_ssize_t nz_path_run(const uint8_t *s, Py_ssize_t n, Py_ssize_t j, uint32_t stop,
                              int quotes) {
    Py_ssize_t len;
    while (j < n) {
        uint32_t cp = nz_cp(s, n, j, &len);
        if (cp == stop || Py_UNICODE_ISSPACE((Py_UCS4)cp) || (quotes && (cp == '\'' || cp == '"')))
            break;
        j += len;
    }
    return j;
}

static Py_ssize_t m_wintmp(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    Py_ssize_t len, j;
    uint32_t cp = nz_cp(s, n, i, &len);
    if (!(cp < 0x80 ? nz_lower((uint8_t)(cp | 0x20)) : nz_ci(cp, 'i') || nz_ci(cp, 's') ||
                                                            nz_ci(cp, 'k')))
        return -1;
    j = i + len;
    if (!nz_word(s, n, j, ":\\")) return -1;
    j += 2;
    if (!nz_ci_dir(s, n, &j, "users")) return -1;
    Py_ssize_t user = j;
    j = nz_path_run(s, n, j, '\\', 0);
    if (j == user || !nz_is(s, n, j, '\\')) return -1;
    j++;
    if (!nz_ci_dir(s, n, &j, "appdata") || !nz_ci_dir(s, n, &j, "local") ||
        !nz_ci_dir(s, n, &j, "temp"))
        return -1;
    r->keep = j;
    return nz_path_run(s, n, j, 0x110000, 1);
}

/* ---- numbers: d+(?:\.d+)?(?:[eE][+-]?d+)? ---- */
static Py_ssize_t m_number(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, NzRep *r) {
    (void)r;
    Py_ssize_t j = i + nz_run(s, n, i, nz_digit);
    if (j < n && s[j] == '.' && nz_d(s, n, j + 1)) j += 1 + nz_run(s, n, j + 1, nz_digit);
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        Py_ssize_t k = j + 1;
        if (k < n && (s[k] == '+' || s[k] == '-')) k++;
        if (nz_d(s, n, k)) j = k + nz_run(s, n, k, nz_digit);
    }
    return j;
}

/* ---- the passes ---- */

/* ASCII \w of any byte (a non-ASCII one is not: its matcher decides exactly) */
static uint8_t nz_wordb[256];
/* the first-byte tables each byte is in, one bit per table */
static uint16_t nz_cls[256];

/* The candidates of a text: each byte in one of the first-byte tables but F_WIN's (a
 * letter), with the tables it is in, anywhere (any) and where no ASCII \w stands before
 * it or an escape does (start: where a pattern that cannot match after a \w can, and a
 * duration after \n, \t or \r written out); a byte after a \w only
 * when one of the tables `anywhere` holds it. A substitution visits
 * its candidates only; one whose table has none is skipped. Made again after a
 * substitution changes the text. */
/* (NzCand, in _native.c: the candidates are kept in the call's Canon.) */
static int nz_gate(Canon *k, const uint8_t *s, Py_ssize_t n, unsigned anywhere, unsigned *any,
                   unsigned *start) {
    unsigned a = 0, w = 0;
    k->ncand = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned c = nz_cls[s[i]];
        if (!c) continue;
        /* after an escape (\t0.5s) too: the durations' matchers may start there (the
         * others check their own look-behind and refuse) */
        unsigned ws = i == 0 || !nz_wordb[s[i - 1]] || nz_esc_before(s, i) ? c : 0;
        if (!(ws | (c & anywhere))) continue; /* no substitution would try it */
        if (k->ncand == k->cand_cap) {
            Py_ssize_t cap = k->cand_cap ? 2 * k->cand_cap : 64;
            NzCand *grown = PyMem_Realloc(k->cand, (size_t)cap * sizeof(NzCand));
            if (grown == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            k->cand = grown;
            k->cand_cap = cap;
        }
        k->cand[k->ncand].pos = i;
        k->cand[k->ncand].any = (uint16_t)c;
        k->cand[k->ncand].start = (uint16_t)ws;
        k->ncand++;
        a |= c;
        w |= ws;
    }
    *any = a;
    *start = w;
    return 0;
}

/* The match at i written to out after the text since the last one: 0, or -1. */
static int nz_put(Buf *out, const uint8_t *s, Py_ssize_t done, Py_ssize_t i, Py_ssize_t e,
                  const NzRep *r) {
    if (buf_put(out, s + done, i - done) < 0) return -1;
    if (r->tmp) return nz_put_tmp(out, s, i, r->keep, e);
    if (buf_put(out, s + i, r->keep - i) < 0) return -1;
    return buf_put(out, r->tok, (Py_ssize_t)strlen(r->tok));
}

/* One substitution over s into out, as re.sub scans (the leftmost match, the next search
 * from its end), visiting the candidates of its first-byte table (after no ASCII \w when
 * lb: the pattern cannot match after a \w): the number of matches (out holds the result
 * when > 0), or -1. */
static Py_ssize_t nz_sub(const Canon *k, const uint8_t *s, Py_ssize_t n, int first, int lb,
                         NzMatch m, const char *tok, Buf *out) {
    unsigned bit = 1u << first;
    Py_ssize_t done = 0, count = 0;
    out->n = 0;
    for (Py_ssize_t c = 0; c < k->ncand; c++) {
        Py_ssize_t i = k->cand[c].pos;
        if (!((lb ? k->cand[c].start : k->cand[c].any) & bit) || i < done) continue;
        NzRep r = {i, tok, 0};
        Py_ssize_t e = m(s, n, i, &r);
        if (e < 0) continue;
        if (nz_put(out, s, done, i, e, &r) < 0) return -1;
        done = e;
        count++;
    }
    if (count && buf_put(out, s + done, n - done) < 0) return -1;
    return count;
}

/* nz_sub visiting every byte of its table (for F_WIN, whose table is every letter) */
static Py_ssize_t nz_sub_bytes(const uint8_t *s, Py_ssize_t n, int first, NzMatch m,
                               const char *tok, Buf *out) {
    const uint8_t *can = nz_first[first];
    Py_ssize_t done = 0, count = 0;
    out->n = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!can[s[i]]) continue;
        NzRep r = {i, tok, 0};
        Py_ssize_t e = m(s, n, i, &r);
        if (e < 0) continue;
        if (nz_put(out, s, done, i, e, &r) < 0) return -1;
        done = e;
        i = e - 1;
        count++;
    }
    if (count && buf_put(out, s + done, n - done) < 0) return -1;
    return count;
}

/* _trailing: [ \t\r]+\n -> \n, then str.rstrip() (white space of str.isspace); the
 * runs are found back from each newline */
static Py_ssize_t nz_trailing(const uint8_t *s, Py_ssize_t n, Buf *out) {
    Py_ssize_t done = 0, count = 0;
    out->n = 0;
    for (Py_ssize_t j = nz_next(s, n, 1, '\n'); j < n; j = nz_next(s, n, j + 1, '\n')) {
        Py_ssize_t k = j;
        while (k > done && (s[k - 1] == ' ' || s[k - 1] == '\t' || s[k - 1] == '\r')) k--;
        if (k == j) continue;
        if (buf_put(out, s + done, k - done) < 0) return -1;
        done = j;
        count++;
    }
    const uint8_t *t = s;
    Py_ssize_t tn = n;
    if (count) {
        if (buf_put(out, s + done, n - done) < 0) return -1;
        t = (const uint8_t *)out->p;
        tn = out->n;
    }
    Py_ssize_t e = tn;
    while (e > 0) {
        Py_ssize_t j = e - 1, len;
        while (j > 0 && (t[j] & 0xC0) == 0x80) j--;
        if (!Py_UNICODE_ISSPACE((Py_UCS4)nz_cp(t, e, j, &len))) break;
        e = j;
    }
    if (e == tn) return count;
    if (!count && buf_put(out, s, e) < 0) return -1;
    out->n = e;
    return count + 1;
}

/* Every substitution of the normalizers in mask (NATIVE_BITS), in order, applied to the
 * UTF-8 text s with kc's buffers (kc->nz: one pass reads one and writes the other):
 * *t, *tn the result (s itself when nothing changed; else valid until kc's next
 * rewrite). OK or FAIL. */
int mr_nz_rewrite(Canon *kc, const uint8_t *s, Py_ssize_t n, int mask, const uint8_t **t,
                      Py_ssize_t *tn) {
    const uint8_t *cur = s;
    Py_ssize_t cn = n, k = 0;
    int w = 0;
    unsigned any, start;
    Buf *nzb = kc->nz;
    if (kc->cand_cap > (1 << 16)) {
        PyMem_Free(kc->cand);
        kc->cand = NULL;
        kc->cand_cap = 0;
    }
    /* the tables whose substitutions try a byte after a \w too */
    unsigned anywhere = (1u << F_ANSI) | (1u << F_PID) | (1u << F_PORT) | (1u << F_BRACKET) |
                        (1u << F_SLASH) | ((mask & NZ_NUMBERS) ? 1u << F_DIGIT : 0);
    if (nz_gate(kc, cur, cn, anywhere, &any, &start) < 0) return FAIL;
    for (int b = 0; b < 2; b++)
        if (nzb[b].cap > (1 << 20)) buf_free(&nzb[b]); /* keep no huge buffer */
#define NZ_TAKE(call)                         \
    do {                                      \
        k = (call);                           \
        if (k < 0) return FAIL;               \
        if (k > 0) {                          \
            cur = (const uint8_t *)nzb[w].p;  \
            cn = nzb[w].n;                    \
            w ^= 1;                           \
            if (nz_gate(kc, cur, cn, anywhere, &any, &start) < 0) return FAIL; \
        }                                     \
    } while (0)
/* a substitution, when its first-byte table has a byte where it could match */
#define NZ_SUB(first, lb, m, tok) \
    if (((lb) ? start : any) & (1u << (first))) NZ_TAKE(nz_sub(kc, cur, cn, first, lb, m, tok, &nzb[w]))
    if ((mask & NZ_ANSI) && cn > 0 && memchr(cur, 0x1b, (size_t)cn) != NULL)
        NZ_SUB(F_ANSI, 0, m_ansi, "");
    if (mask & NZ_TRAIL) NZ_TAKE(nz_trailing(cur, cn, &nzb[w]));
    if (mask & NZ_TIME) {
        NZ_SUB(F_DIGIT, 1, m_date, "<time>");
        NZ_SUB(F_DAY, 1, m_dayname, "<time>");
        NZ_SUB(F_MONTH, 1, m_month, "<time>");
        NZ_SUB(F_DIGIT, 1, m_clock, "<time>");
        NZ_SUB(F_ONE, 1, m_epoch, "<time>");
    }
    if (mask & NZ_DUR) {
        NZ_SUB(F_DIGIT, 1, m_minsec, "<duration>");
        NZ_SUB(F_DIGIT, 1, m_duration, "<duration>");
        if (cn > 0 && memchr(cur, ':', (size_t)cn) != NULL) NZ_TAKE(nz_keyed(cur, cn, &nzb[w]));
    }
    if (mask & NZ_IDS) {
        NZ_SUB(F_HEX, 1, m_uuid, "<uuid>");
        NZ_SUB(F_HEX, 1, m_hexid, "");
    }
    if (mask & NZ_ADDR) NZ_SUB(F_ZERO, 1, m_addr, "<addr>");
    if (mask & NZ_PIDS) {
        NZ_SUB(F_PID, 0, m_pid, "<n>");
        NZ_SUB(F_PORT, 0, m_port, ":<port>");
        NZ_SUB(F_BRACKET, 0, m_bracket, "[<pid>]");
    }
    if (mask & NZ_TEMP) {
        NZ_SUB(F_SLASH, 0, m_tmp, "");
        if (cn > 0 && memchr(cur, '\\', (size_t)cn) != NULL)
            NZ_TAKE(nz_sub_bytes(cur, cn, F_WIN, m_wintmp, "<tmp>", &nzb[w]));
    }
    if (mask & NZ_NUMBERS) NZ_SUB(F_DIGIT, 0, m_number, "<n>");
#undef NZ_SUB
#undef NZ_TAKE
    *t = cur;
    *tn = cn;
    return OK;
}

/* The text of a string value after the normalizers in mask: s itself when near_dirty
 * proves that none changes it, else nz_rewrite's. OK or FAIL. */
int mr_near_text(Canon *kc, const uint8_t *s, Py_ssize_t n, int mask, const uint8_t **t,
                     Py_ssize_t *tn) {
    if (!mr_near_dirty(s, n, mask)) {
        *t = s;
        *tn = n;
        return OK;
    }
    return mr_nz_rewrite(kc, s, n, mask, t, tn);
}

/* near_rewrite(text, mask, check) -> str: the rewrite of text (near_text's when check,
 * nz_rewrite's otherwise), for the tests; lone surrogates pass as their code points. */
PyObject *mr_py_near_rewrite(PyObject *self, PyObject *args) {
    PyObject *text;
    int mask, check;
    (void)self;
    if (!PyArg_ParseTuple(args, "Uip", &text, &mask, &check)) return NULL;
    PyObject *b = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
    if (b == NULL) return NULL;
    const uint8_t *t;
    Py_ssize_t tn;
    const uint8_t *s = (const uint8_t *)PyBytes_AS_STRING(b);
    Py_ssize_t n = PyBytes_GET_SIZE(b);
    Canon *kc = mr_canon_new();
    int rc = kc == NULL ? FAIL
             : check    ? mr_near_text(kc, s, n, mask, &t, &tn)
                        : mr_nz_rewrite(kc, s, n, mask, &t, &tn);
    PyObject *out = rc == OK ? PyUnicode_DecodeUTF8((const char *)t, tn, "surrogatepass") : NULL;
    mr_canon_free(kc);
    Py_DECREF(b);
    return out;
}

void mr_nz_init_rewrites(void) {
    for (int c = '0'; c <= '9'; c++) nz_wordc[c] = nz_wordb[c] = 1;
    for (int c = 'a'; c <= 'z'; c++) nz_wordc[c] = nz_wordc[c - 32] = nz_wordb[c] = nz_wordb[c - 32] = 1;
    nz_wordc['_'] = nz_wordb['_'] = 1;
    nz_first[F_ANSI][0x1b] = 1;
    for (int c = '0'; c <= '9'; c++) nz_first[F_DIGIT][c] = nz_first[F_HEX][c] = 1;
    for (const char *p = "MTWFS"; *p; p++) nz_first[F_DAY][(uint8_t)*p] = 1;
    for (const char *p = "JFMASOND"; *p; p++) nz_first[F_MONTH][(uint8_t)*p] = 1;
    nz_first[F_ONE]['1'] = 1;
    for (int c = 'a'; c <= 'f'; c++) nz_first[F_HEX][c] = nz_first[F_HEX][c - 32] = 1;
    nz_first[F_ZERO]['0'] = 1;
    for (const char *p = "pPs"; *p; p++) nz_first[F_PID][(uint8_t)*p] = 1;
    for (const char *p = "l10[:"; *p; p++) nz_first[F_PORT][(uint8_t)*p] = 1;
    nz_first[F_BRACKET]['['] = 1;
    nz_first[F_SLASH]['/'] = 1;
    for (int c = 'a'; c <= 'z'; c++) nz_first[F_WIN][c] = nz_first[F_WIN][c - 32] = 1;
    /* the lead bytes of U+0130, U+0131 (C4), U+017F (C5), U+212A (E2) */
    nz_first[F_WIN][0xC4] = nz_first[F_WIN][0xC5] = nz_first[F_WIN][0xE2] = 1;
    for (int f = 0; f < F_WIN; f++)
        for (int c = 0; c < 256; c++)
            if (nz_first[f][c]) nz_cls[c] |= (uint16_t)(1u << f);
}
