/* The optional native fast path of the grader's hot loop (see docs/design/native.md).
 *
 * It accelerates three core functions and must give byte-identical results to them:
 *   build_table  - core.steps.group_steps + core.fingerprints.fingerprint_keys + the ids
 *                  of core.fingerprints.build_step_table
 *   stretches    - core.search._stretches
 *   canonical / observation - core.canonical.canonical_bytes / observation_bytes of a
 *                  msgspec.Raw slice (exposed for the differential tests)
 *
 * Exactness rule: the C code handles only the values whose canonical bytes it can write
 * with certainty (valid JSON; integers of at most 15 digits; floats that are integral and
 * within 2**53; strings without lone surrogates; objects without duplicate keys). For
 * anything else it "bails": it calls the pure-Python function it was given, so the
 * reference decides every unusual case.
 */
#include "_native.h"
#include "_near.h"
#include "_walk.h"

/* ------------------------------------------------------------------------------------ */
/* BLAKE2b (RFC 7693), unkeyed, 16-byte digest: the digest of core.fingerprints.digest.  */

static const uint64_t B2B_IV[8] = {
    0x6A09E667F3BCC908ULL, 0xBB67AE8584CAA73BULL, 0x3C6EF372FE94F82BULL,
    0xA54FF53A5F1D36F1ULL, 0x510E527FADE682D1ULL, 0x9B05688C2B3E6C1FULL,
    0x1F83D9ABFB41BD6BULL, 0x5BE0CD19137E2179ULL};

static const uint8_t B2B_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

#define ROTR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))
#define B2B_G(a, b, c, d, x, y)          \
    do {                                 \
        v[a] = v[a] + v[b] + (x);        \
        v[d] = ROTR64(v[d] ^ v[a], 32);  \
        v[c] = v[c] + v[d];              \
        v[b] = ROTR64(v[b] ^ v[c], 24);  \
        v[a] = v[a] + v[b] + (y);        \
        v[d] = ROTR64(v[d] ^ v[a], 16);  \
        v[c] = v[c] + v[d];              \
        v[b] = ROTR64(v[b] ^ v[c], 63);  \
    } while (0)

static uint64_t load64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
#else
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = (x << 8) | p[i];
    return x;
#endif
}

static void b2b_compress(uint64_t h[8], const uint8_t block[128], uint64_t t, int last) {
    uint64_t v[16], m[16];
    for (int i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = B2B_IV[i];
    }
    v[12] ^= t; /* messages here are far below 2**64 bytes: the high counter stays 0 */
    if (last) v[14] = ~v[14];
    for (int i = 0; i < 16; i++) m[i] = load64(block + 8 * i);
    /* the rounds written out, so that every message index is a constant */
#define B2B_ROUND(r)                                                            \
    do {                                                                        \
        B2B_G(0, 4, 8, 12, m[B2B_SIGMA[r][0]], m[B2B_SIGMA[r][1]]);             \
        B2B_G(1, 5, 9, 13, m[B2B_SIGMA[r][2]], m[B2B_SIGMA[r][3]]);             \
        B2B_G(2, 6, 10, 14, m[B2B_SIGMA[r][4]], m[B2B_SIGMA[r][5]]);            \
        B2B_G(3, 7, 11, 15, m[B2B_SIGMA[r][6]], m[B2B_SIGMA[r][7]]);            \
        B2B_G(0, 5, 10, 15, m[B2B_SIGMA[r][8]], m[B2B_SIGMA[r][9]]);            \
        B2B_G(1, 6, 11, 12, m[B2B_SIGMA[r][10]], m[B2B_SIGMA[r][11]]);          \
        B2B_G(2, 7, 8, 13, m[B2B_SIGMA[r][12]], m[B2B_SIGMA[r][13]]);           \
        B2B_G(3, 4, 9, 14, m[B2B_SIGMA[r][14]], m[B2B_SIGMA[r][15]]);           \
    } while (0)
    B2B_ROUND(0);
    B2B_ROUND(1);
    B2B_ROUND(2);
    B2B_ROUND(3);
    B2B_ROUND(4);
    B2B_ROUND(5);
    B2B_ROUND(6);
    B2B_ROUND(7);
    B2B_ROUND(8);
    B2B_ROUND(9);
    B2B_ROUND(10);
    B2B_ROUND(11);
#undef B2B_ROUND
    for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/* The 16-byte digest of a ++ b (two parts: the name bytes, then the value's bytes). */
void mr_blake2b16(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint8_t out[16]) {
    uint64_t h[8];
    uint8_t block[128];
    size_t fill = 0;
    uint64_t t = 0;
    for (int i = 0; i < 8; i++) h[i] = B2B_IV[i];
    h[0] ^= 0x01010000ULL ^ 16ULL;
    const uint8_t *parts[2] = {a, b};
    size_t sizes[2] = {na, nb};
    for (int k = 0; k < 2; k++) {
        const uint8_t *p = parts[k];
        size_t n = sizes[k];
        while (n > 0) {
            if (fill == 128) {
                t += 128;
                b2b_compress(h, block, t, 0);
                fill = 0;
            }
            size_t take = 128 - fill;
            if (take > n) take = n;
            memcpy(block + fill, p, take);
            fill += take;
            p += take;
            n -= take;
        }
    }
    t += fill;
    memset(block + fill, 0, 128 - fill);
    b2b_compress(h, block, t, 1);
    for (int i = 0; i < 16; i++) out[i] = (uint8_t)(h[i / 8] >> (8 * (i % 8)));
}


/* ------------------------------------------------------------------------------------ */
/* Canonical JSON (core.canonical) of raw JSON bytes.                                   */
/* Results: 0 written, 1 bail (the Python reference must decide), -1 error (raised).    */


typedef struct {
    const uint8_t *p, *end;
    struct Canon *k; /* the call's scratch space and near-duplicate settings */
} Cur;

static void skip_ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int hexval(uint8_t ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static int read_hex4(const uint8_t *p, const uint8_t *end, uint32_t *out) {
    if (end - p < 4) return -1;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return -1;
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return 0;
}

static int put_utf8(Buf *b, uint32_t cp) {
    char t[4];
    Py_ssize_t n;
    if (cp < 0x80) {
        t[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6));
        t[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12));
        t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        t[0] = (char)(0xF0 | (cp >> 18));
        t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return buf_put(b, t, n);
}

/* Length of a valid UTF-8 sequence starting at p (no surrogates, no overlongs), or 0. */
static int utf8_len(const uint8_t *p, const uint8_t *end) {
    uint8_t c = p[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        if (end - p >= 2 && (p[1] & 0xC0) == 0x80) return 2;
        return 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;
        if (c == 0xED && p[1] >= 0xA0) return 0; /* surrogates */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
            (p[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0;
        if (c == 0xF4 && p[1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

/* The character of a one-letter JSON escape (\" \\ \/ \b \f \n \r \t), 0 for another. */
static const char JSON_ESCAPE[128] = {['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
                                      ['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t'};

/* A \uXXXX escape at *pp (a surrogate pair as one code point) into out, *pp moved past
 * it: OK, BAIL (not four hex digits, or a lone surrogate) or FAIL. */
static int decode_u(const uint8_t **pp, const uint8_t *end, Buf *out) {
    const uint8_t *p = *pp;
    uint32_t cp, lo;
    if (read_hex4(p + 2, end, &cp) < 0) return BAIL;
    p += 6;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return BAIL; /* lone low surrogate */
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || read_hex4(p + 2, end, &lo) < 0 ||
            lo < 0xDC00 || lo > 0xDFFF)
            return BAIL;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
    }
    *pp = p;
    return put_utf8(out, cp) < 0 ? FAIL : OK;
}

/* The backslash escape at *pp into out, *pp moved past it: OK, BAIL or FAIL. */
static int decode_escape(const uint8_t **pp, const uint8_t *end, Buf *out) {
    const uint8_t *p = *pp;
    if (end - p < 2 || p[1] >= 0x80) return BAIL;
    if (p[1] == 'u') return decode_u(pp, end, out);
    char lit = JSON_ESCAPE[p[1]];
    if (lit == 0) return BAIL;
    *pp = p + 2;
    return buf_byte(out, lit) < 0 ? FAIL : OK;
}

/* Decode the JSON string at c->p (on its opening quote) into UTF-8 in out. */
static int decode_string(Cur *c, Buf *out) {
    const uint8_t *p = c->p + 1, *end = c->end;
    while (1) {
        const uint8_t *run = p;
        while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) p++;
        if (p > run && buf_put(out, run, p - run) < 0) return FAIL;
        if (p >= end || *p < 0x20) return BAIL; /* the end, or a raw control character */
        if (*p == '"') {
            c->p = p + 1;
            return OK;
        }
        int rc;
        if (*p >= 0x80) {
            int n = utf8_len(p, end);
            rc = n == 0 ? BAIL : buf_put(out, p, n) < 0 ? FAIL : OK;
            p += n;
        } else {
            rc = decode_escape(&p, end, out);
        }
        if (rc != OK) return rc;
    }
}

/* msgspec's spelling of a string (UTF-8 in s): the escapes it writes, nothing else. */
static int encode_string(Buf *out, const char *s, Py_ssize_t n) {
    static const char hex[] = "0123456789abcdef";
    if (buf_byte(out, '"') < 0) return FAIL;
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t j = i;
        while (j < n && (uint8_t)s[j] >= 0x20 && s[j] != '"' && s[j] != '\\') j++;
        if (j > i && buf_put(out, s + i, j - i) < 0) return FAIL;
        if (j >= n) break;
        uint8_t ch = (uint8_t)s[j];
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        Py_ssize_t len = 2;
        switch (ch) {
            case '"': esc[1] = '"'; break;
            case '\\': esc[1] = '\\'; break;
            case '\b': esc[1] = 'b'; break;
            case '\t': esc[1] = 't'; break;
            case '\n': esc[1] = 'n'; break;
            case '\f': esc[1] = 'f'; break;
            case '\r': esc[1] = 'r'; break;
            default:
                esc[1] = 'u';
                esc[2] = '0';
                esc[3] = '0';
                esc[4] = hex[ch >> 4];
                esc[5] = hex[ch & 15];
                len = 6;
        }
        if (buf_put(out, esc, len) < 0) return FAIL;
        i = j + 1;
    }
    return buf_byte(out, '"');
}

static int canon_value(Cur *c, Buf *out, int depth);


/* A new Canon, or NULL with MemoryError. */
Canon *mr_canon_new(void) {
    Canon *k = PyMem_Calloc(1, sizeof(Canon));
    if (k == NULL) PyErr_NoMemory();
    return k;
}

void mr_canon_free(Canon *k) {
    if (k == NULL) return;
    for (int i = 0; i < MAX_NEST + 2; i++) {
        buf_free(&k->tmp[i]);
        PyMem_Free(k->ms[i]);
    }
    buf_free(&k->str);
    buf_free(&k->fc_tmp);
    buf_free(&k->nz[0]);
    buf_free(&k->nz[1]);
    buf_free(&k->out);
    PyMem_Free(k->cand);
    PyMem_Free(k);
}

static int near_ignored(PyObject *ignore, const char *key, Py_ssize_t n) {
    Py_ssize_t k = PyTuple_GET_SIZE(ignore);
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *b = PyTuple_GET_ITEM(ignore, i);
        if (PyBytes_GET_SIZE(b) == n && memcmp(PyBytes_AS_STRING(b), key, (size_t)n) == 0)
            return 1;
    }
    return 0;
}

static int member_cmp(const void *a, const void *b) {
    const Member *x = a, *y = b;
    Py_ssize_t n = x->klen < y->klen ? x->klen : y->klen;
    int r = memcmp(x->base + x->koff, y->base + y->koff, (size_t)n);
    if (r) return r;
    return (x->klen > y->klen) - (x->klen < y->klen);
}

/* One member ("key": value) of an object at depth, its key and value canonicalized into
 * tmp, where *m says they are (vlen -1: left out). OK, BAIL or FAIL. */
static int object_member(Cur *c, Buf *tmp, int depth, Member *m) {
    Canon *k = c->k;
    skip_ws(c);
    if (c->p >= c->end || *c->p != '"') return BAIL;
    m->koff = tmp->n;
    int rc = decode_string(c, tmp);
    if (rc != OK) return rc;
    m->klen = tmp->n - m->koff;
    skip_ws(c);
    if (c->p >= c->end || *c->p != ':') return BAIL;
    c->p++;
    m->voff = tmp->n;
    /* near: a top-level key left out is parsed (not checked) and not written */
    int left_out = depth == 0 && k->near_ignore != NULL &&
                   near_ignored(k->near_ignore, tmp->p + m->koff, m->klen);
    int mask = k->near_mask;
    if (left_out) k->near_mask = 0;
    rc = canon_value(c, tmp, depth + 1);
    k->near_mask = mask;
    m->vlen = left_out ? -1 : tmp->n - m->voff;
    return rc;
}

/* Room for member nm of depth's array: 0, or -1 with MemoryError. */
static int members_room(Canon *k, int depth, Py_ssize_t nm) {
    if (nm < k->mscap[depth]) return 0;
    Py_ssize_t bigger = k->mscap[depth] ? k->mscap[depth] * 2 : 8;
    Member *grown = PyMem_Realloc(k->ms[depth], (size_t)bigger * sizeof(Member));
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    k->ms[depth] = grown;
    k->mscap[depth] = bigger;
    return 0;
}

/* The nm members (their text in tmp) sorted by key and written as an object: OK, BAIL
 * (a duplicate key: the reference decides) or FAIL. */
static int put_members(Buf *out, Member *ms, Py_ssize_t nm, const Buf *tmp) {
    for (Py_ssize_t i = 0; i < nm; i++) ms[i].base = tmp->p;
    qsort(ms, (size_t)nm, sizeof(Member), member_cmp);
    for (Py_ssize_t i = 1; i < nm; i++)
        if (member_cmp(&ms[i - 1], &ms[i]) == 0) return BAIL;
    if (buf_byte(out, '{') < 0) return FAIL;
    for (Py_ssize_t i = 0, first = 1; i < nm; i++) {
        if (ms[i].vlen < 0) continue; /* left out (near-duplicate ignore_arguments) */
        if ((!first && buf_byte(out, ',') < 0) ||
            encode_string(out, tmp->p + ms[i].koff, ms[i].klen) < 0 || buf_byte(out, ':') < 0 ||
            buf_put(out, tmp->p + ms[i].voff, ms[i].vlen) < 0)
            return FAIL;
        first = 0;
    }
    return buf_byte(out, '}') < 0 ? FAIL : OK;
}

static int canon_object(Cur *c, Buf *out, int depth) {
    Canon *k = c->k;
    Buf *tmp = &k->tmp[depth];
    Py_ssize_t nm = 0;
    int rc = OK;
    tmp->n = 0;
    c->p++; /* '{' */
    skip_ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return buf_put(out, "{}", 2) < 0 ? FAIL : OK;
    }
    while (rc == OK) {
        if (members_room(k, depth, nm) < 0) {
            rc = FAIL;
            break;
        }
        rc = object_member(c, tmp, depth, &k->ms[depth][nm]);
        if (rc != OK) break;
        nm++;
        skip_ws(c);
        if (c->p >= c->end || (*c->p != ',' && *c->p != '}')) rc = BAIL;
        else if (*c->p++ == '}') break;
    }
    if (rc == OK) rc = put_members(out, k->ms[depth], nm, tmp);
    if (tmp->cap > (1 << 20)) buf_free(tmp); /* keep no huge buffer between values */
    if (k->mscap[depth] > 4096) {
        PyMem_Free(k->ms[depth]);
        k->ms[depth] = NULL;
        k->mscap[depth] = 0;
    }
    return rc;
}

/* What canon_number reads of a JSON number. */
typedef struct {
    const uint8_t *int_end; /* the end of the integer part */
    Py_ssize_t digits;      /* the integer part's digits */
    int is_float, has_exp, zero_fraction;
} NumScan;

static int digit_at(const uint8_t *p, const uint8_t *end) {
    return p < end && *p >= '0' && *p <= '9';
}

static const uint8_t *digits_end(const uint8_t *p, const uint8_t *end) {
    while (digit_at(p, end)) p++;
    return p;
}

/* The end of the JSON number at p, read into ns; NULL when it is not one. */
static const uint8_t *scan_number(const uint8_t *p, const uint8_t *end, NumScan *ns) {
    ns->is_float = ns->has_exp = 0;
    ns->zero_fraction = 1;
    if (p < end && *p == '-') p++;
    if (!digit_at(p, end)) return NULL;
    const uint8_t *d = p;
    p = *p == '0' ? p + 1 : digits_end(p, end);
    ns->digits = p - d;
    ns->int_end = p;
    if (p < end && *p == '.') {
        ns->is_float = 1;
        if (!digit_at(p + 1, end)) return NULL;
        for (p++; digit_at(p, end); p++)
            if (*p != '0') ns->zero_fraction = 0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        ns->has_exp = ns->is_float = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (!digit_at(p, end)) return NULL;
        p = digits_end(p, end);
    }
    return p;
}

/* An integer's text d (len bytes; digits in its integer part) as it is, "-0" as "0". */
static int put_integer(Buf *out, const uint8_t *d, Py_ssize_t len, Py_ssize_t digits) {
    if (*d == '-' && digits == 1 && d[1] == '0') return buf_byte(out, '0') < 0 ? FAIL : OK;
    return buf_put(out, d, len) < 0 ? FAIL : OK;
}

/* A float's text (len bytes) written as the integer it equals, when it is integral and
 * within 2**53; else BAIL (the reference decides). */
static int put_float(Buf *out, const uint8_t *start, Py_ssize_t len) {
    char text[64], num[32];
    if (len >= (Py_ssize_t)sizeof(text)) return BAIL;
    memcpy(text, start, (size_t)len);
    text[len] = 0;
    double v = PyOS_string_to_double(text, NULL, NULL);
    if (v == -1.0 && PyErr_Occurred()) return FAIL;
    if (!isfinite(v) || v != floor(v) || fabs(v) > 9007199254740992.0) return BAIL;
    int k = snprintf(num, sizeof(num), "%lld", (long long)v);
    if (k <= 0 || k >= (int)sizeof(num)) return BAIL;
    return buf_put(out, num, k) < 0 ? FAIL : OK;
}

static int canon_number(Cur *c, Buf *out) {
    NumScan ns;
    const uint8_t *start = c->p, *p = scan_number(c->p, c->end, &ns);
    if (p == NULL) return BAIL;
    c->p = p;
    if (!ns.is_float) /* over 15 digits may pass 2**53: the reference rounds it */
        return ns.digits > 15 ? BAIL : put_integer(out, start, p - start, ns.digits);
    if (!ns.has_exp && ns.zero_fraction && ns.digits <= 15) /* "30.0", "-2.000": 1.0 == 1 */
        return put_integer(out, start, ns.int_end - start, ns.digits);
    return put_float(out, start, p - start);
}

static int literal(Cur *c, Buf *out, const char *word, Py_ssize_t n) {
    if (c->end - c->p < n || memcmp(c->p, word, (size_t)n) != 0) return BAIL;
    c->p += n;
    return buf_put(out, word, n) < 0 ? FAIL : OK;
}

static int canon_array(Cur *c, Buf *out, int depth) {
    c->p++;
    if (buf_byte(out, '[') < 0) return FAIL;
    skip_ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        return buf_byte(out, ']') < 0 ? FAIL : OK;
    }
    while (1) {
        int rc = canon_value(c, out, depth + 1);
        if (rc != OK) return rc;
        skip_ws(c);
        if (c->p >= c->end || (*c->p != ',' && *c->p != ']')) return BAIL;
        char sep = (char)*c->p++;
        if (buf_byte(out, sep) < 0) return FAIL;
        if (sep == ']') return OK;
    }
}

/* The end of a JSON string at q (after its opening quote) without an escape or a control
 * character, valid UTF-8: its closing quote, or NULL when it is not such a string. */
static const uint8_t *plain_string_end(const uint8_t *q, const uint8_t *end) {
    while (q < end && *q != '"' && *q != '\\' && *q >= 0x20) {
        if (*q < 0x80) {
            q++;
        } else {
            int k = utf8_len(q, end);
            if (k == 0) return NULL;
            q += k;
        }
    }
    return q < end && *q == '"' ? q : NULL;
}

/* The string s (n bytes of UTF-8) written, as the near-duplicate rewrites leave it when
 * they are on (near_text). */
static int put_text(Cur *c, Buf *out, const uint8_t *s, Py_ssize_t n) {
    const uint8_t *t = s;
    Py_ssize_t tn = n;
    int mask = c->k->near_mask;
    if (mask && mr_near_text(c->k, s, n, mask, &t, &tn) < 0) return FAIL;
    return encode_string(out, (const char *)t, tn) < 0 ? FAIL : OK;
}

static int canon_string(Cur *c, Buf *out) {
    const uint8_t *q = plain_string_end(c->p + 1, c->end);
    if (q != NULL) {
        /* no escape and no control character: msgspec writes it back as it is */
        int mask = c->k->near_mask;
        const uint8_t *s = c->p + 1;
        c->p = q + 1;
        if (mask && mr_near_dirty(s, q - s, mask)) {
            const uint8_t *t;
            Py_ssize_t tn;
            if (mr_nz_rewrite(c->k, s, q - s, mask, &t, &tn) < 0) return FAIL;
            return encode_string(out, (const char *)t, tn) < 0 ? FAIL : OK;
        }
        return buf_put(out, s - 1, q + 1 - (s - 1)) < 0 ? FAIL : OK;
    }
    Buf *str = &c->k->str;
    str->n = 0;
    int rc = decode_string(c, str);
    if (rc == OK) rc = put_text(c, out, (const uint8_t *)str->p, str->n);
    if (str->cap > (1 << 20)) buf_free(str);
    return rc;
}

static int canon_value(Cur *c, Buf *out, int depth) {
    if (depth > MAX_NEST) return BAIL;
    skip_ws(c);
    if (c->p >= c->end) return BAIL;
    switch (*c->p) {
        case '{': return canon_object(c, out, depth);
        case '[': return canon_array(c, out, depth);
        case '"': return canon_string(c, out);
        case 't': return literal(c, out, "true", 4);
        case 'f': return literal(c, out, "false", 5);
        case 'n': return literal(c, out, "null", 4);
        default: return canon_number(c, out);
    }
}

/* ES whitespace of core.toolmatch.ES_WHITESPACE (is_blank). */
static int es_space(uint32_t cp) {
    return (cp >= 9 && cp <= 13) || cp == 32 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

/* Whether valid UTF-8 text holds only ES whitespace. */
int mr_utf8_blank(const uint8_t *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        uint32_t cp;
        if (c < 0x80) {
            cp = c;
            i += 1;
        } else if (c < 0xE0) {
            cp = ((uint32_t)(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
            i += 2;
        } else if (c < 0xF0) {
            cp = ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) |
                 (s[i + 2] & 0x3F);
            i += 3;
        } else {
            cp = ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
                 ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
            i += 4;
        }
        if (!es_space(cp)) return 0;
    }
    return 1;
}

/* canon_raw of a top-level string of ASCII without a backslash (core.canonical.
 * _plain_string: its own text; one pass): OK, BAIL (a quote or control character inside
 * is not JSON: the reference decides), FAIL, or NOT_HANDLED (not such a string). */
static int canon_plain_raw(Canon *k, const uint8_t *raw, Py_ssize_t n, int observe, Buf *out,
                           int *empty) {
    if (n < 2 || raw[0] != '"' || raw[n - 1] != '"') return NOT_HANDLED;
    int odd = 0, blank = 1;
    for (Py_ssize_t i = 1; i < n - 1; i++) {
        uint8_t b = raw[i];
        if (b >= 0x80 || b == '\\') return NOT_HANDLED;
        odd |= b == '"' || b < 0x20;
        blank &= b == ' ';
    }
    if (odd) return BAIL;
    const uint8_t *t = raw + 1;
    Py_ssize_t tn = n - 2;
    if (k->near_mask && mr_near_dirty(t, tn, k->near_mask)) {
        if (mr_nz_rewrite(k, raw + 1, n - 2, k->near_mask, &t, &tn) < 0) return FAIL;
        blank = mr_utf8_blank(t, tn);
    }
    if (observe && blank) {
        *empty = 1;
        return OK;
    }
    return buf_byte(out, 's') < 0 || buf_put(out, t, tn) < 0 ? FAIL : OK;
}

/* canon_raw of a top-level JSON string at c (decoded; the rewrites when on): 's' and
 * its text, or nothing when an observation is blank. */
static int canon_raw_string(Cur *c, int observe, Buf *out, int *empty) {
    Canon *k = c->k;
    Py_ssize_t mark = out->n;
    if (buf_byte(out, 's') < 0) return FAIL;
    int rc = decode_string(c, out);
    if (rc != OK) return rc;
    skip_ws(c);
    if (c->p != c->end) return BAIL;
    if (k->near_mask) {
        const uint8_t *t, *text = (const uint8_t *)out->p + mark + 1;
        Py_ssize_t tn;
        if (mr_near_text(k, text, out->n - mark - 1, k->near_mask, &t, &tn) < 0) return FAIL;
        if (t != text) {
            out->n = mark + 1;
            if (buf_put(out, t, tn) < 0) return FAIL;
        }
    }
    if (observe && mr_utf8_blank((const uint8_t *)out->p + mark + 1, out->n - mark - 1)) {
        out->n = mark;
        *empty = 1;
    }
    return OK;
}

/* Whether canonical JSON text (len bytes) is an empty observation: null, [] or {}. */
static int empty_json(const char *body, Py_ssize_t len) {
    return (len == 4 && memcmp(body, "null", 4) == 0) ||
           (len == 2 && (memcmp(body, "[]", 2) == 0 || memcmp(body, "{}", 2) == 0));
}

/* The canonical bytes of raw JSON (canonical_bytes, or observation_bytes when observe)
 * into out; *empty set when the observation is empty. */
int mr_canon_raw(Canon *k, const uint8_t *raw, Py_ssize_t n, int observe, Buf *out,
                 int *empty) {
    *empty = 0;
    int rc = canon_plain_raw(k, raw, n, observe, out, empty);
    if (rc != NOT_HANDLED) return rc;
    Cur c = {raw, raw + n, k};
    skip_ws(&c);
    if (c.p >= c.end) return BAIL;
    if (*c.p == '"') return canon_raw_string(&c, observe, out, empty);
    Py_ssize_t mark = out->n;
    if (buf_byte(out, 'j') < 0) return FAIL;
    rc = canon_value(&c, out, 0);
    if (rc != OK) return rc;
    skip_ws(&c);
    if (c.p != c.end) return BAIL;
    if (observe && empty_json(out->p + mark + 1, out->n - mark - 1)) {
        out->n = mark;
        *empty = 1;
    }
    return OK;
}

/* ------------------------------------------------------------------------------------ */
/* build_table                                                                           */

typedef struct {
    PyObject *raw_type;    /* msgspec.Raw */
    PyObject *canonical;   /* core.canonical.canonical_bytes */
    PyObject *observation; /* core.canonical.observation_bytes */
    PyObject *name_bytes;  /* core.fingerprints.name_bytes */
    PyObject *names;       /* dict: tool name -> its name bytes */
    Buf scratch;
    Canon *k;              /* the canonicalizer's scratch space (canon_new) */
} Ctx;

/* the interned field names (native_exec) */
PyObject *mr_S_type, *mr_S_data, *mr_S_tool_name, *mr_S_tool_call_id, *mr_S_arguments, *mr_S_result;
PyObject *mr_S_tool_call, *mr_S_tool_result;

/* The name bytes of a tool name (a new reference). */
static PyObject *ctx_name_bytes(Ctx *x, PyObject *name) {
    PyObject *nb = PyDict_GetItemWithError(x->names, name);
    if (nb != NULL) {
        Py_INCREF(nb);
        return nb;
    }
    if (PyErr_Occurred()) return NULL;
    nb = PyObject_CallOneArg(x->name_bytes, name);
    if (nb == NULL) return NULL;
    if (!PyBytes_Check(nb)) {
        Py_DECREF(nb);
        PyErr_SetString(PyExc_TypeError, "name_bytes must return bytes");
        return NULL;
    }
    if (PyDict_SetItem(x->names, name, nb) < 0) {
        Py_DECREF(nb);
        return NULL;
    }
    return nb;
}

/* The digest of one call's value into out; returns 1 when the observation is empty,
 * 0 when digested, -1 on error. */
static int call_digest(Ctx *x, PyObject *nb, PyObject *value, int observe, uint8_t out[16]) {
    PyObject *body = NULL;
    x->scratch.n = 0;
    if (value == Py_None) { /* canonical_bytes(None) is b"jnull"; an observation of None is empty */
        if (observe) return 1;
        mr_blake2b16((const uint8_t *)PyBytes_AS_STRING(nb), (size_t)PyBytes_GET_SIZE(nb),
                  (const uint8_t *)"jnull", 5, out);
        return 0;
    }
    if (PyUnicode_CheckExact(value)) {
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(value, &len);
        if (s == NULL) {
            PyErr_Clear(); /* lone surrogates: the reference below */
        } else {
            if (observe && mr_utf8_blank((const uint8_t *)s, len)) return 1;
            if (buf_byte(&x->scratch, 's') < 0 || buf_put(&x->scratch, s, len) < 0) return -1;
            mr_blake2b16((const uint8_t *)PyBytes_AS_STRING(nb), (size_t)PyBytes_GET_SIZE(nb),
                      (const uint8_t *)x->scratch.p, (size_t)x->scratch.n, out);
            return 0;
        }
    }
    if (Py_TYPE(value) == (PyTypeObject *)x->raw_type) {
        Py_buffer view;
        if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0) return -1;
        int empty = 0;
        int rc = mr_canon_raw(x->k, view.buf, view.len, observe, &x->scratch, &empty);
        PyBuffer_Release(&view);
        if (rc == FAIL) return -1;
        if (rc == OK) {
            if (empty) return 1;
            mr_blake2b16((const uint8_t *)PyBytes_AS_STRING(nb), (size_t)PyBytes_GET_SIZE(nb),
                      (const uint8_t *)x->scratch.p, (size_t)x->scratch.n, out);
            return 0;
        }
        /* BAIL: the reference below */
    }
    body = PyObject_CallOneArg(observe ? x->observation : x->canonical, value);
    if (body == NULL) return -1;
    if (body == Py_None) {
        Py_DECREF(body);
        return 1;
    }
    if (!PyBytes_Check(body)) {
        Py_DECREF(body);
        PyErr_SetString(PyExc_TypeError, "canonical bytes must be bytes");
        return -1;
    }
    mr_blake2b16((const uint8_t *)PyBytes_AS_STRING(nb), (size_t)PyBytes_GET_SIZE(nb),
              (const uint8_t *)PyBytes_AS_STRING(body), (size_t)PyBytes_GET_SIZE(body), out);
    Py_DECREF(body);
    return 0;
}


static int entry_cmp(const void *a, const void *b) {
    const Entry *x = a, *y = b;
    Py_ssize_t n = x->n < y->n ? x->n : y->n;
    int r = memcmp(x->d, y->d, (size_t)n);
    if (r) return r;
    return (x->n > y->n) - (x->n < y->n);
}


/* step_key: count- and length-prefixed sorted entries (sorts es in place). */
PyObject *mr_step_key(Entry *es, Py_ssize_t n) {
    if (n > 1) qsort(es, (size_t)n, sizeof(Entry), entry_cmp);
    Py_ssize_t size = 8;
    for (Py_ssize_t i = 0; i < n; i++) size += 8 + es[i].n;
    PyObject *key = PyBytes_FromStringAndSize(NULL, size);
    if (key == NULL) return NULL;
    uint8_t *p = (uint8_t *)PyBytes_AS_STRING(key);
    put_le64(p, (uint64_t)n);
    p += 8;
    for (Py_ssize_t i = 0; i < n; i++) {
        put_le64(p, (uint64_t)es[i].n);
        memcpy(p + 8, es[i].d, (size_t)es[i].n);
        p += 8 + es[i].n;
    }
    return key;
}

int mr_digests_room(Digests *d, Py_ssize_t k) {
    if (k <= d->cap) return 0;
    Py_ssize_t cap = k > 8 ? k : 8;
    Entry *grown = PyMem_Realloc(d->es, (size_t)cap * sizeof(Entry));
    if (grown) d->es = grown;
    uint8_t *dgrown = grown ? PyMem_Realloc(d->dig, (size_t)cap * 16) : NULL;
    if (dgrown) d->dig = dgrown;
    if (!grown || !dgrown) {
        PyErr_NoMemory();
        return -1;
    }
    d->cap = cap;
    return 0;
}

PyObject *mr_digest_steps(Py_ssize_t ns, DigestStep step, void *use, int observe, int period,
                          int *any_empty, int *pure) {
    Digests d = {0};
    PyObject *keys = PyList_New(ns);
    *any_empty = *pure = 0;
    for (Py_ssize_t s = 0; keys != NULL && s < ns; s++) {
        Py_ssize_t k = 0;
        Py_ssize_t empties = step(use, s, &d, &k);
        PyObject *key = NULL;
        if (empties == -2) {
            *pure = 1;
        } else if (empties >= 0 && observe && mr_step_is_empty(empties, k, period)) {
            key = Py_None;
            Py_INCREF(key);
            *any_empty = 1;
        } else if (empties >= 0) {
            key = mr_step_key(d.es, k);
        }
        if (key == NULL) Py_CLEAR(keys);
        else PyList_SET_ITEM(keys, s, key);
    }
    PyMem_Free(d.es);
    PyMem_Free(d.dig);
    return keys;
}




/* The first result of each call id into a dict, as the reference keeps it (setdefault:
 * one lookup); the call id any hashable value. Answers as a WalkResult. */
static int dict_first_result(PyObject *results, PyObject *data, Slot *sl_cid, Slot *sl_res) {
    PyObject *cid = get_attr(data, mr_S_tool_call_id, sl_cid);
    if (cid == NULL) return WALK_ERROR;
    int rc = WALK_OK;
    if (cid != Py_None) {
        PyObject *res = get_attr(data, mr_S_result, sl_res);
        if (res == NULL || PyDict_SetDefault(results, cid, res) == NULL) rc = WALK_ERROR;
        Py_XDECREF(res);
    }
    Py_DECREF(cid);
    return rc;
}

/* The steps as build_table gives them: each step's call index when every step is one call
 * (SingleCallSteps), else a list of index lists. */
static PyObject *walk_steps_list(const Walk *w) {
    PyObject *shape = PyList_New(w->ns);
    if (shape == NULL) return NULL;
    for (Py_ssize_t s = 0; s < w->ns; s++) {
        Py_ssize_t a, b;
        walk_step(w, s, &a, &b);
        PyObject *item;
        if (w->single) {
            item = PyLong_FromSsize_t(w->idx[a]);
        } else {
            item = PyList_New(b - a);
            for (Py_ssize_t j = a; item != NULL && j < b; j++) {
                PyObject *v = PyLong_FromSsize_t(w->idx[j]);
                if (v == NULL) Py_CLEAR(item);
                else PyList_SET_ITEM(item, j - a, v);
            }
        }
        if (item == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
        PyList_SET_ITEM(shape, s, item);
    }
    return shape;
}

/* The steps as build_ids and near_ids give them: the call indices as int64 bytes when
 * every step is one call (an array('q') on the Python side: no int object per step),
 * else walk_steps_list's list of index lists. */
PyObject *mr_walk_shape(const Walk *w) {
    if (!w->single) return walk_steps_list(w);
    PyObject *shape = PyBytes_FromStringAndSize(NULL, w->n * 8);
    if (shape == NULL) return NULL;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(shape);
    for (Py_ssize_t j = 0; j < w->n; j++) out[j] = (int64_t)w->idx[j];
    return shape;
}

/* What build_table keeps of each watched call, in call order (the walk's numbering):
 * its tool name and the value its fingerprint reads (arguments or call id), references. */
typedef struct {
    PyObject **name;
    PyObject **val;
    Py_ssize_t n, cap;
} Calls;

static void calls_free(Calls *c) {
    for (Py_ssize_t i = 0; i < c->n; i++) {
        Py_DECREF(c->name[i]);
        Py_DECREF(c->val[i]);
    }
    PyMem_Free(c->name);
    PyMem_Free(c->val);
}

/* build_table's use of the walk, and of the step pass. */
typedef struct {
    Calls cs;
    PyObject *results; /* observation mode: call id -> first result */
    int mode, period;
    Slot sl_cid, sl_res, sl_val;
    Ctx *x;
    const Walk *w;
} TableUse;

static int table_result(void *use, PyObject *data) {
    TableUse *u = use;
    return dict_first_result(u->results, data, &u->sl_cid, &u->sl_res);
}

static int table_call(void *use, PyObject *data, PyObject *name) {
    TableUse *u = use;
    Calls *c = &u->cs;
    if (c->n == c->cap) { /* both arrays to the same new size */
        Py_ssize_t cap = c->cap;
        if (walk_grow((void **)&c->name, c->n, &cap, sizeof(PyObject *)) < 0) return WALK_ERROR;
        cap = c->cap;
        if (walk_grow((void **)&c->val, c->n, &cap, sizeof(PyObject *)) < 0) return WALK_ERROR;
        c->cap = cap;
    }
    PyObject *val;
    if (u->mode == 0) {
        val = Py_None;
        Py_INCREF(val);
    } else {
        val = get_attr(data, u->mode == 1 ? mr_S_arguments : mr_S_tool_call_id, &u->sl_val);
        if (val == NULL) return WALK_ERROR;
    }
    Py_INCREF(name);
    c->name[c->n] = name;
    c->val[c->n] = val;
    c->n++;
    return WALK_OK;
}

/* A call's digest into out from its name bytes nb and val (mode 1: its arguments; 2: its
 * call id, whose first result is read): 0, 1 when it has no observation (then the digest
 * of "tool + no observation", emptydigest), -1 error. */
static int table_digest(TableUse *u, PyObject *nb, PyObject *val, uint8_t out[16]) {
    PyObject *value = val;
    if (u->mode == 2) {
        value = val == Py_None ? NULL : PyDict_GetItemWithError(u->results, val);
        if (value == NULL && PyErr_Occurred()) return -1;
    }
    int r = 1;
    if (value != NULL) {
        Py_INCREF(value);
        r = call_digest(u->x, nb, value, u->mode == 2, out);
        Py_DECREF(value);
    }
    if (r == 1) {
        static const char tag[] = "\x00no-observation";
        mr_blake2b16((const uint8_t *)PyBytes_AS_STRING(nb), (size_t)PyBytes_GET_SIZE(nb),
                     (const uint8_t *)tag, sizeof(tag) - 1, out);
    }
    return r;
}

/* build_table's step s into d (a DigestStep): each call's name bytes (mode 0) or digest. */
static Py_ssize_t table_step(void *use, Py_ssize_t s, Digests *d, Py_ssize_t *k) {
    TableUse *u = use;
    Py_ssize_t a, b, empties = 0;
    walk_step(u->w, s, &a, &b);
    *k = b - a;
    if (mr_digests_room(d, *k) < 0) return -1;
    for (Py_ssize_t j = 0; j < *k; j++) {
        PyObject *nb = ctx_name_bytes(u->x, u->cs.name[a + j]);
        if (nb == NULL) return -1;
        Py_DECREF(nb); /* borrowed: x->names holds it */
        if (u->mode == 0) {
            d->es[j].d = (uint8_t *)PyBytes_AS_STRING(nb);
            d->es[j].n = PyBytes_GET_SIZE(nb);
            continue;
        }
        int r = table_digest(u, nb, u->cs.val[a + j], d->dig + 16 * j);
        if (r < 0) return -1;
        empties += r;
        mr_digests_set(d, j);
    }
    return empties;
}

/* The ids of core.fingerprints.build_step_table from the keys (None: an empty step):
 * equal keys share the id of their first step, or their rank among the distinct keys
 * when a step is empty (any_empty), and an empty step s has -1 - s. */
static PyObject *table_ids(PyObject *keys, int any_empty) {
    Py_ssize_t ns = PyList_GET_SIZE(keys);
    PyObject *ids = PyList_New(ns), *intern = PyDict_New();
    for (Py_ssize_t s = 0; ids != NULL && intern != NULL && s < ns; s++) {
        PyObject *key = PyList_GET_ITEM(keys, s);
        PyObject *id;
        if (key == Py_None) {
            id = PyLong_FromSsize_t(-1 - s);
        } else {
            id = PyDict_GetItemWithError(intern, key);
            if (id != NULL) {
                Py_INCREF(id);
            } else if (!PyErr_Occurred()) {
                id = PyLong_FromSsize_t(any_empty ? PyDict_GET_SIZE(intern) : s);
                if (id != NULL && PyDict_SetItem(intern, key, id) < 0) Py_CLEAR(id);
            }
        }
        if (id == NULL) Py_CLEAR(ids);
        else PyList_SET_ITEM(ids, s, id);
    }
    if (intern == NULL) Py_CLEAR(ids);
    Py_XDECREF(intern);
    return ids;
}

/* build_table after the walk: (calls_or_steps, single, results, keys, ids, n_calls), or
 * None with *pure set, or NULL. */
static PyObject *table_answer(TableUse *u, const Walk *w, int *pure) {
    int any_empty;
    PyObject *result = NULL, *ids = NULL, *shape = NULL;
    /* 2. fingerprints (core.fingerprints.fingerprint_keys) */
    PyObject *keys = mr_digest_steps(w->ns, table_step, u, u->mode == 2, u->period, &any_empty,
                                     pure);
    /* 3. ids (core.fingerprints.build_step_table) */
    if (keys != NULL) ids = table_ids(keys, any_empty);
    /* 4. the steps: the list of call indices when each step is one call
     * (SingleCallSteps), else a list of index lists */
    if (ids != NULL) shape = walk_steps_list(w);
    if (shape != NULL)
        result = Py_BuildValue("(OOOOOn)", shape, w->single ? Py_True : Py_False,
                               u->results ? u->results : Py_None, keys, ids, w->n);
    Py_XDECREF(shape);
    Py_XDECREF(keys);
    Py_XDECREF(ids);
    return result;
}

/* build_table(events, mode, period, watches, raw_type, canonical, observation, name_bytes)
 * -> None (the pure path must run) or (calls_or_steps, single, results, keys, ids, n_calls) */
static PyObject *build_table(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *events, *watches, *result = NULL;
    Ctx x = {0};
    TableUse u = {0};
    Walk w = {0};
    Events ev;
    int pure = 0;
    if (!PyArg_ParseTuple(args, "OiiOOOOO", &events, &u.mode, &u.period, &watches, &x.raw_type,
                          &x.canonical, &x.observation, &x.name_bytes) ||
        mr_events_open(&ev, events) < 0)
        return NULL;
    u.x = &x;
    u.w = &w;
    x.names = PyDict_New();
    x.k = mr_canon_new();
    if (u.mode == 2) u.results = PyDict_New();
    if (x.names != NULL && x.k != NULL && (u.mode != 2 || u.results != NULL)) {
        /* 1. group (core.steps.group_steps; the turn rules of spec 3.2) */
        int walked = walk_events(ev.items, ev.n, watches, u.mode == 2, table_result, table_call,
                                 &u, &w);
        pure = walked == WALK_PURE;
        if (walked == WALK_OK) result = table_answer(&u, &w, &pure);
    }
    Py_XDECREF(u.results);
    Py_XDECREF(x.names);
    buf_free(&x.scratch);
    mr_canon_free(x.k);
    calls_free(&u.cs);
    walk_free(&w);
    Py_DECREF(ev.seq);
    if (pure && result == NULL) Py_RETURN_NONE;
    return result;
}

/* events_readable(events) -> core.steps.events_readable_pure: every tool_call has data
 * with a tool name (not None), every tool_result has data. */
static PyObject *events_readable(PyObject *Py_UNUSED(self), PyObject *events) {
    PyObject *seq = PySequence_Fast(events, "events must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    Slot sl_type = {0}, sl_data = {0}, sl_name = {0};
    PyObject *answer = Py_True;
    for (Py_ssize_t i = 0; i < n && answer == Py_True; i++) {
        PyObject *type = get_attr(items[i], mr_S_type, &sl_type);
        if (type == NULL) goto error;
        int code = event_code(type);
        if (code < 0) {
            /* not an exact str: compare as Python does */
            int call = PyObject_RichCompareBool(type, mr_S_tool_call, Py_EQ);
            int res = call == 0 ? PyObject_RichCompareBool(type, mr_S_tool_result, Py_EQ) : 0;
            if (call < 0 || res < 0) {
                Py_DECREF(type);
                goto error;
            }
            code = call ? T_CALL : res ? T_RESULT : T_OTHER;
        }
        Py_DECREF(type);
        if (code != T_CALL && code != T_RESULT) continue;
        PyObject *data = get_attr(items[i], mr_S_data, &sl_data);
        if (data == NULL) goto error;
        if (data == Py_None) {
            answer = Py_False;
        } else if (code == T_CALL) {
            PyObject *name = get_attr(data, mr_S_tool_name, &sl_name);
            if (name == NULL) {
                Py_DECREF(data);
                goto error;
            }
            if (name == Py_None) answer = Py_False;
            Py_DECREF(name);
        }
        Py_DECREF(data);
    }
    Py_DECREF(seq);
    Py_INCREF(answer);
    return answer;
error:
    Py_DECREF(seq);
    return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* stretches (core.search._stretches) over an int64 buffer of step ids.                  */

static PyObject *stretches(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    Py_ssize_t p, least;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &p, &least)) return NULL;
    if (view.len % 8 != 0 || p < 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "stretches needs int64 ids and a period >= 1");
        return NULL;
    }
    const int64_t *ids = view.buf;
    Py_ssize_t n = view.len / 8;
    PyObject *out = PyList_New(0);
    if (out == NULL || n < 2 * p) {
        PyBuffer_Release(&view);
        return out;
    }
    if (least < p) least = p;
    Py_ssize_t m = n - p, i = 0;
    while (i < m) {
        if (ids[i] != ids[i + p]) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < m && ids[i] == ids[i + p]) i++;
        if (i - start >= least) {
            PyObject *t = Py_BuildValue("(nn)", start, i - start);
            if (t == NULL || PyList_Append(out, t) < 0) {
                Py_XDECREF(t);
                Py_DECREF(out);
                PyBuffer_Release(&view);
                return NULL;
            }
            Py_DECREF(t);
        }
    }
    PyBuffer_Release(&view);
    return out;
}

/* canonical(raw_bytes, observe) -> bytes, None (empty observation) or False (bail). */
static PyObject *canonical(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    int observe;
    if (!PyArg_ParseTuple(args, "y*p", &view, &observe)) return NULL;
    Buf out = {0};
    int empty = 0;
    Canon *k = mr_canon_new();
    int rc = k == NULL ? FAIL : mr_canon_raw(k, view.buf, view.len, observe, &out, &empty);
    mr_canon_free(k);
    PyBuffer_Release(&view);
    PyObject *r;
    if (rc == FAIL) {
        r = NULL;
    } else if (rc == BAIL) {
        r = Py_False;
        Py_INCREF(r);
    } else if (empty) {
        r = Py_None;
        Py_INCREF(r);
    } else {
        r = PyBytes_FromStringAndSize(out.p, out.n);
    }
    buf_free(&out);
    return r;
}

/* digest(data) -> the 16-byte BLAKE2b digest (checked against hashlib by the tests). */
static PyObject *digest(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    uint8_t out[16];
    mr_blake2b16(view.buf, (size_t)view.len, NULL, 0, out);
    PyBuffer_Release(&view);
    return PyBytes_FromStringAndSize((const char *)out, 16);
}

/* ------------------------------------------------------------------------------------ */
/* The fast hash (FH): the module's one NON-cryptographic 128-bit hash. Grading looks    */
/* keys up with it (build_ids, near_ids: Keys below, where equal bytes, not equal hashes, */
/* make one key), and hash128 gives it for a buffer (no longer the hook's check). One     */
/* state, one finish, two ways in:                                                        */
/* - fh_part, a part of a key (a name, canonical bytes: mostly under 1 KB): every word    */
/*   goes into both lanes, so the state is 128 bits wide at every word;                   */
/* - fh_bulk, a long input (a 256 KiB block of a log): its whole 32-byte rounds through   */
/*   four independent lanes of one multiply chain each (fh_part's two chains over every  */
/*   word would be 3-4 times slower), the four lanes then absorbed as words, the rest as */
/*   a part. A change within one 32-byte stretch reaches each lane by at most one word,  */
/*   so it is always seen before the finish; words far apart in one lane meet in its 64  */
/*   bits (docs/design/guards.md says why that is enough for the check).                 */
/* Every step of a round is a bijection of its lane (add or xor, rotate, multiply by an  */
/* odd constant), so no input word is ever absorbed without effect.                      */

#define FH_M1 0x81b73dcde1212631ULL
#define FH_M2 0x20a9dd094fc601efULL
#define FH_M3 0xc7ac7fee53cfa507ULL
#define FH_M4 0xd2bec571182f9665ULL
#define FH_F1 0x55d425c0d6a0b41dULL
#define FH_F2 0x332e9044c0089f01ULL

/* The state: two 64-bit lanes. */
typedef struct {
    uint64_t a, b;
} FH;

static inline uint64_t fh_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline void fh_word(FH *s, uint64_t w) {
    s->a = fh_rotl(s->a + w * FH_M1, 29) * FH_M2;
    s->b = fh_rotl(s->b ^ (w * FH_M3), 37) * FH_M4;
}

static void fh_init(FH *s) {
    s->a = FH_F1;
    s->b = FH_F2;
}

/* One part: its bytes (the last word zero-padded), then its length, so that a sequence
 * of parts is absorbed without ambiguity. */
static void fh_part(FH *s, const uint8_t *p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) fh_word(s, load64(p + i));
    if (i < n) {
        uint8_t tail[8] = {0};
        memcpy(tail, p + i, n - i);
        fh_word(s, load64(tail));
    }
    fh_word(s, (uint64_t)n ^ 0xff00000000000000ULL);
}

static inline uint64_t fh_mix(uint64_t z, uint64_t m) {
    z ^= z >> 32;
    z *= m;
    z ^= z >> 29;
    z *= FH_M4;
    z ^= z >> 32;
    return z;
}

/* The 128-bit result: a bijection of the two lanes. */
static void fh_final(const FH *s, uint64_t out[2]) {
    uint64_t x = fh_mix(s->a, FH_M1);
    uint64_t y = fh_mix(s->b ^ x, FH_M3);
    out[0] = x + y;
    out[1] = y;
}

/* fh_bulk's lanes: their seeds (the first hexadecimal digits of pi) and round. */
#define FB_S1 0x243F6A8885A308D3ULL
#define FB_S2 0x13198A2E03707345ULL
#define FB_S3 0xA4093822299F31D1ULL
#define FB_S4 0x082EFA98EC4E6C89ULL
#define FB_K 0x452821E638D01377ULL

static inline uint64_t fb_round(uint64_t lane, uint64_t w) {
    return fh_rotl(lane + w * FB_K, 31) * FB_S1;
}

/* The four lanes over the whole 32-byte rounds of p[0 .. n). A function of its own, not
 * inlined: inlined into fh_bulk, GCC interleaves the lanes so that the loop ran ~25%
 * slower (measured on the 2-core AMD EPYC VM, 256 KiB blocks). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void fb_lanes(const uint8_t *p, size_t n, uint64_t v[4]) {
    uint64_t v0 = FB_S1, v1 = FB_S2, v2 = FB_S3, v3 = FB_S4;
    for (size_t i = 0; i + 32 <= n; i += 32) {
        v0 = fb_round(v0, load64(p + i));
        v1 = fb_round(v1, load64(p + i + 8));
        v2 = fb_round(v2, load64(p + i + 16));
        v3 = fb_round(v3, load64(p + i + 24));
    }
    v[0] = v0;
    v[1] = v1;
    v[2] = v2;
    v[3] = v3;
}

/* A long input as one part of s: the lanes over its whole 32-byte rounds, then the four
 * lanes, the rest (0-31 bytes) and the whole length. */
static void fh_bulk(FH *s, const uint8_t *p, size_t n) {
    uint64_t v[4];
    fb_lanes(p, n, v);
    size_t i = n & ~(size_t)31;
    for (int k = 0; k < 4; k++) fh_word(s, v[k]);
    fh_part(s, p + i, n - i);
    fh_word(s, (uint64_t)n);
}

/* The 16 bytes of a 128-bit result, little-endian (the same digests on every machine). */
static void fh_bytes(const uint64_t h[2], uint8_t out[16]) {
    put_le64(out, h[0]);
    put_le64(out + 8, h[1]);
}

/* hash128(data) -> 16 bytes: FH of one buffer by fh_bulk, for the hook cache's check that
 * a log still holds the bytes a saved state was read from (guards/session.py, where its
 * name, part of a saved state's version, says which hash this is). About memory speed;
 * the GIL is released. */
static PyObject *hash128(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    uint64_t h[2];
    Py_BEGIN_ALLOW_THREADS
    FH s;
    fh_init(&s);
    fh_bulk(&s, (const uint8_t *)view.buf, (size_t)view.len);
    fh_final(&s, h);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    uint8_t out[16];
    fh_bytes(h, out);
    return PyBytes_FromStringAndSize((const char *)out, 16);
}

/* has_mark(data, mark): whether the 16-byte ``mark`` is one of the 16-byte words of
 * ``data`` at a multiple of 16 (readers/_marks.py: a hook call looks up a few marks in a
 * string of the session's; bytearray.find takes its two-way path on such lengths, about
 * 2 GB/s, and then needs the alignment checked). Words are compared as unaligned loads. */
static PyObject *has_mark(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "has_mark(data, mark)");
        return NULL;
    }
    Py_buffer data, mark;
    if (PyObject_GetBuffer(args[0], &data, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[1], &mark, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    if (mark.len != 16) {
        PyBuffer_Release(&data);
        PyBuffer_Release(&mark);
        PyErr_SetString(PyExc_ValueError, "a mark is 16 bytes");
        return NULL;
    }
    uint64_t want, want2, word;
    memcpy(&want, mark.buf, 8);
    memcpy(&want2, (const uint8_t *)mark.buf + 8, 8);
    const uint8_t *p = (const uint8_t *)data.buf;
    Py_ssize_t words = data.len / 16;
    int found = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < words; i++) {
        memcpy(&word, p + 16 * i, 8);
        if (word == want) {
            memcpy(&word, p + 16 * i + 8, 8);
            if (word == want2) {
                found = 1;
                break;
            }
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    PyBuffer_Release(&mark);
    return PyBool_FromLong(found);
}

/* ------------------------------------------------------------------------------------ */
/* Exact keys (issue 28, item 2). Grading numbers steps by their keys; two different    */
/* keys must never share a number, whoever wrote the trajectory. So a key is interned:   */
/* its bytes are kept the first time they are seen, and a later key gets the same number */
/* only when its bytes are equal, compared byte for byte. FH only picks where to look    */
/* (and a 64-bit hash compared first saves most byte comparisons); an equal hash with    */
/* different bytes is just another key. Built with -DMAXREPEAT_FH_BITS=n, the hash is    */
/* cut to n bits so that tests can make every lookup meet collisions                     */
/* (tests/core/test_native_collisions.py).                                                */
/*                                                                                        */
/* A key is a tag byte, up to two numbers of keys interned before (8 bytes each), then a */
/* body of bytes: the tag says how many numbers there are, so the bytes never read two   */
/* ways. Numbers are unique across tags (one table), so a key made of numbers is exact   */
/* when its parts are.                                                                    */



void mr_keys_free(Keys *t) {
    buf_free(&t->bytes);
    PyMem_Free(t->end);
    PyMem_Free(t->hash);
    PyMem_Free(t->slot);
    memset(t, 0, sizeof(*t));
}

/* fh_part of a body whose first byte is read as lead (when lead >= 0), without a copy:
 * the same words fh_part would read from the bytes as read. */
static void fh_part_lead(FH *s, const uint8_t *p, size_t n, int lead) {
    if (lead < 0 || n == 0) {
        fh_part(s, p, n);
        return;
    }
    size_t i = 0;
    if (n >= 8) {
        fh_word(s, (load64(p) & ~(uint64_t)0xFF) | (uint64_t)(uint8_t)lead);
        for (i = 8; i + 8 <= n; i += 8) fh_word(s, load64(p + i));
    }
    if (i < n) {
        uint8_t tail[8] = {0};
        memcpy(tail, p + i, n - i);
        if (i == 0) tail[0] = (uint8_t)lead;
        fh_word(s, load64(tail));
    }
    fh_word(s, (uint64_t)n ^ 0xff00000000000000ULL);
}

static uint64_t key_hash(const Key *k) {
    FH s;
    uint64_t out[2];
    fh_init(&s);
    fh_part(&s, k->head, (size_t)k->nh);
    fh_part_lead(&s, k->p, (size_t)k->n, k->lead);
    fh_final(&s, out);
#if KEY_HASH_BITS < 64
    return out[0] & (((uint64_t)1 << KEY_HASH_BITS) - 1);
#else
    return out[0];
#endif
}

/* Whether key number id has k's bytes. */
static int key_equal(const Keys *t, int64_t id, const Key *k) {
    Py_ssize_t start = id > 0 ? t->end[id - 1] : 0;
    const uint8_t *s = (const uint8_t *)t->bytes.p + start;
    if (t->end[id] - start != k->nh + k->n || memcmp(s, k->head, (size_t)k->nh) != 0)
        return 0;
    s += k->nh;
    if (k->n == 0) return 1;
    if (k->lead < 0) return memcmp(s, k->p, (size_t)k->n) == 0;
    return s[0] == (uint8_t)k->lead && memcmp(s + 1, k->p + 1, (size_t)k->n - 1) == 0;
}

/* The slot of key k (hash h): its own, or the free one where it would go. */
static KSlot *keys_slot(const Keys *t, const Key *k, uint64_t h) {
    size_t i = (size_t)h & t->mask;
    while (1) {
        KSlot *s = &t->slot[i];
        if (s->id1 == 0 || (s->h == (uint32_t)(h >> 32) && key_equal(t, s->id1 - 1, k)))
            return s;
        i = (i + 1) & t->mask;
    }
}

static int keys_grow(Keys *t) {
    size_t size = t->slot ? 2 * (t->mask + 1) : 1024;
    KSlot *slot = PyMem_Calloc(size, sizeof(KSlot));
    if (slot == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t mask = size - 1;
    for (size_t j = 0; t->slot != NULL && j <= t->mask; j++) {
        if (t->slot[j].id1 == 0) continue;
        size_t i = (size_t)t->hash[t->slot[j].id1 - 1] & mask;
        while (slot[i].id1) i = (i + 1) & mask;
        slot[i] = t->slot[j];
    }
    PyMem_Free(t->slot);
    t->slot = slot;
    t->mask = mask;
    return 0;
}

/* Key k (hash h)'s number: found, or (when add) made; -1 not found (add == 0), -2 error. */
static int64_t keys_get_h(Keys *t, const Key *k, uint64_t h, int add) {
    if (t->slot == NULL && keys_grow(t) < 0) return -2;
    KSlot *s = keys_slot(t, k, h);
    if (s->id1 != 0) return s->id1 - 1;
    if (!add) return -1;
    if ((size_t)(t->n + 1) * 2 > t->mask + 1) {
        if (keys_grow(t) < 0) return -2;
        s = keys_slot(t, k, h);
    }
    if (t->n == (Py_ssize_t)UINT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "too many distinct keys");
        return -2;
    }
    if (t->n == t->cap) { /* both arrays to the same new size */
        Py_ssize_t cap = t->cap;
        if (walk_grow((void **)&t->end, t->n, &cap, sizeof(Py_ssize_t)) < 0) return -2;
        cap = t->cap;
        if (walk_grow((void **)&t->hash, t->n, &cap, sizeof(uint64_t)) < 0) return -2;
        t->cap = cap;
    }
    if (buf_put(&t->bytes, k->head, k->nh) < 0) return -2;
    Py_ssize_t at = t->bytes.n;
    if (buf_put(&t->bytes, k->p, k->n) < 0) return -2;
    if (k->lead >= 0 && k->n > 0) t->bytes.p[at] = (char)k->lead;
    t->end[t->n] = t->bytes.n;
    t->hash[t->n] = h;
    s->h = (uint32_t)(h >> 32);
    s->id1 = (uint32_t)(t->n + 1);
    return t->n++;
}

static int64_t keys_get(Keys *t, const Key *k, int add) {
    return keys_get_h(t, k, key_hash(k), add);
}

/* Start loading the index slot where a key of hash h is looked up first (a key looked up
 * a while later is then found without waiting for memory: build_ids' arguments). */
static void keys_prefetch(const Keys *t, uint64_t h) {
#if defined(__GNUC__)
    if (t->slot != NULL) __builtin_prefetch(&t->slot[(size_t)h & t->mask]);
#else
    (void)t;
    (void)h;
#endif
}

/* keys_get(t, k, 1) as a number, or -1 with the error set. */
int64_t mr_keys_intern(Keys *t, const Key *k) {
    int64_t id = keys_get(t, k, 1);
    return id < 0 ? -1 : id;
}

/* A cache of call keys by the input's bytes of a value (a msgspec.Raw slice), as the
 * reference caches digests (core.fingerprints.fingerprint_keys): an action repeated is
 * canonicalized once. Its keys are exact too (the raw bytes, compared); it is dropped,
 * like the reference's, when fewer than 1 lookup in 8 hits after a sample, and stops
 * growing at RC_MAX_KEYS keys or RC_MAX_BYTES bytes. */
#define RC_SAMPLE 4096
#define RC_MAX_KEYS ((Py_ssize_t)1 << 20)
#define RC_MAX_BYTES ((Py_ssize_t)64 << 20)

typedef struct {
    Keys keys;      /* tag 'r', the name's number, the raw bytes */
    int64_t *val;   /* by the raw key's number: the call key's number */
    Py_ssize_t vcap, lookups, hits;
    int off;
} RawCache;

static void rc_free(RawCache *c) {
    mr_keys_free(&c->keys);
    PyMem_Free(c->val);
    c->val = NULL;
    c->vcap = 0;
}

/* The call key cached for raw key k: its number, -1 none, -2 error. */
static int64_t rc_find(RawCache *c, const Key *k) {
    c->lookups++;
    int64_t r = c->keys.n ? keys_get(&c->keys, k, 0) : -1;
    if (r >= 0) {
        c->hits++;
        return c->val[r];
    }
    if (r == -2) return -2;
    if (c->lookups == RC_SAMPLE && c->hits * 8 < c->lookups) {
        c->off = 1;
        rc_free(c);
    }
    return -1;
}

/* Raw key k now names call key id (when there is room): 0, or -1 with the error set. */
static int rc_add(RawCache *c, const Key *k, int64_t id) {
    if (c->off || c->keys.n >= RC_MAX_KEYS || c->keys.bytes.n + k->n > RC_MAX_BYTES) return 0;
    int64_t r = mr_keys_intern(&c->keys, k);
    if (r < 0) return -1;
    if (r >= c->vcap && walk_grow((void **)&c->val, r, &c->vcap, sizeof(int64_t)) < 0)
        return -1;
    c->val[r] = id;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* build_ids: build_table's grading answer (the step ids and the first results), without */
/* the BLAKE2b step keys. Grading compares fingerprints, it never publishes them: here a */
/* call's fingerprint is FH (above) of the same canonical bytes, and the table of     */
/* first results by call id is a C hash table whose entries follow the calls. The        */
/* keys (published through Step.fingerprint) are made by build_table when asked for.     */

/* The first result of each call id: entries in the order their ids were first seen (a
 * call and its result are usually close, so the entry a call made is still in cache when
 * its result arrives, and the fingerprint pass reads the entries in order), found by an
 * open-addressing index over Python's (cached) string hash. Keys are exact str. */

static void rt_free(RTable *t) {
    for (Py_ssize_t i = 0; i < t->n; i++) {
        Py_DECREF(t->e[i].key);
        Py_XDECREF(t->e[i].res);
    }
    PyMem_Free(t->e);
    PyMem_Free(t->slot);
    memset(t, 0, sizeof(*t));
}

static int rt_same(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    if (n != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b)) return 0;
    return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)n * PyUnicode_KIND(a)) == 0;
}

/* The entry index of an exact str key, or -1. */
static Py_ssize_t rt_find(const RTable *t, PyObject *key, Py_hash_t h) {
    if (t->slot == NULL) return -1;
    size_t i = (size_t)h & t->mask;
    while (1) {
        uint32_t s = t->slot[i];
        if (s == 0) return -1;
        const REntry *e = &t->e[s - 1];
        if (e->hash == h && rt_same(e->key, key)) return (Py_ssize_t)s - 1;
        i = (i + 1) & t->mask;
    }
}

static int rt_grow(RTable *t) {
    size_t size = t->slot ? 2 * (t->mask + 1) : 1024;
    if (size > ((size_t)1 << 32)) {
        PyErr_SetString(PyExc_OverflowError, "too many call ids");
        return -1;
    }
    uint32_t *slot = PyMem_Calloc(size, sizeof(uint32_t));
    if (slot == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t mask = size - 1;
    for (Py_ssize_t k = 0; k < t->n; k++) {
        size_t i = (size_t)t->e[k].hash & mask;
        while (slot[i]) i = (i + 1) & mask;
        slot[i] = (uint32_t)(k + 1);
    }
    PyMem_Free(t->slot);
    t->slot = slot;
    t->mask = mask;
    return 0;
}

/* The entry of an exact str key, made when new; -1 on error. */
static Py_ssize_t rt_entry(RTable *t, PyObject *key) {
    Py_hash_t h = PyObject_Hash(key);
    if (h == -1) return -1;
    Py_ssize_t found = rt_find(t, key, h);
    if (found >= 0) return found;
    if (t->slot == NULL || (size_t)(t->n + 1) * 2 > t->mask + 1) {
        if (rt_grow(t) < 0) return -1;
    }
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap ? t->cap * 2 : 1024;
        REntry *e = PyMem_Realloc(t->e, (size_t)cap * sizeof(REntry));
        if (e == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->e = e;
        t->cap = cap;
    }
    size_t i = (size_t)h & t->mask;
    while (t->slot[i]) i = (i + 1) & t->mask;
    t->slot[i] = (uint32_t)(t->n + 1);
    Py_INCREF(key);
    t->e[t->n].key = key;
    t->e[t->n].res = NULL;
    t->e[t->n].hash = h;
    return t->n++;
}


static void fr_dealloc(FirstResults *self) {
    PyTypeObject *tp = Py_TYPE(self);
    rt_free(&self->t);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp); /* a heap type: its instances hold it */
}

/* The result of key, borrowed, or NULL (no error set when absent). */
static PyObject *fr_lookup(FirstResults *self, PyObject *key) {
    if (!PyUnicode_Check(key)) return NULL;
    Py_hash_t h = PyObject_Hash(key);
    if (h == -1) return NULL;
    Py_ssize_t k = rt_find(&self->t, key, h);
    return k < 0 ? NULL : self->t.e[k].res;
}

static Py_ssize_t fr_len(FirstResults *self) { return self->answered; }

static PyObject *fr_getitem(FirstResults *self, PyObject *key) {
    PyObject *v = fr_lookup(self, key);
    if (v == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    Py_INCREF(v);
    return v;
}

static int fr_contains(FirstResults *self, PyObject *key) {
    PyObject *v = fr_lookup(self, key);
    if (v == NULL) return PyErr_Occurred() ? -1 : 0;
    return 1;
}

static PyObject *fr_get(FirstResults *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(key, default=None)");
        return NULL;
    }
    PyObject *v = fr_lookup(self, args[0]);
    if (v == NULL) {
        if (PyErr_Occurred()) return NULL;
        v = nargs == 2 ? args[1] : Py_None;
    }
    Py_INCREF(v);
    return v;
}

static PyObject *fr_keys(FirstResults *self, PyObject *Py_UNUSED(unused)) {
    PyObject *out = PyList_New(self->answered);
    if (out == NULL) return NULL;
    Py_ssize_t j = 0;
    for (Py_ssize_t i = 0; i < self->t.n; i++) {
        if (self->t.e[i].res == NULL) continue;
        Py_INCREF(self->t.e[i].key);
        PyList_SET_ITEM(out, j++, self->t.e[i].key);
    }
    return out;
}

static PyObject *fr_iter(FirstResults *self) {
    PyObject *keys = fr_keys(self, NULL);
    if (keys == NULL) return NULL;
    PyObject *it = PyObject_GetIter(keys);
    Py_DECREF(keys);
    return it;
}

static PyMethodDef fr_methods[] = {
    {"get", (PyCFunction)(void (*)(void))fr_get, METH_FASTCALL, "The first result of a call id, or the default."},
    {"keys", (PyCFunction)fr_keys, METH_NOARGS, "The answered call ids."},
    {NULL, NULL, 0, NULL}};

/* A heap type, made from this spec by the module's exec (one per module object). */
static PyType_Slot fr_slots[] = {
    {Py_tp_dealloc, (void *)fr_dealloc},
    {Py_mp_length, (void *)fr_len},
    {Py_mp_subscript, (void *)fr_getitem},
    {Py_sq_contains, (void *)fr_contains},
    {Py_tp_iter, (void *)fr_iter},
    {Py_tp_methods, fr_methods},
    {Py_tp_doc, (void *)"The first result of each call id (read-only mapping)."},
    {0, NULL},
};

static PyType_Spec fr_spec = {
    .name = "maxrepeat.core._native.FirstResults",
    .basicsize = sizeof(FirstResults),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = fr_slots,
};

/* The module's state: its FirstResults type. */
typedef struct {
    PyTypeObject *fr_type;
} NativeState;

static NativeState *native_state(PyObject *module) {
    return (NativeState *)PyModule_GetState(module);
}

/* An empty table (NULL with an exception when it cannot be made). */
FirstResults *mr_fr_new(PyObject *module) {
    FirstResults *fr = PyObject_New(FirstResults, native_state(module)->fr_type);
    if (fr == NULL) return NULL;
    memset(&fr->t, 0, sizeof(fr->t));
    fr->answered = 0;
    return fr;
}


/* The first result of each call id stays: a WalkResult's work, with the entry this
 * result answered into *answered (-1: none, the call id had its first result already or
 * the result has none). */
int mr_fr_first(FrUse *u, PyObject *data, Py_ssize_t *answered) {
    *answered = -1;
    PyObject *cid = get_attr(data, mr_S_tool_call_id, &u->sl_cid);
    if (cid == NULL) return WALK_ERROR;
    int rc = WALK_OK;
    if (cid != Py_None) {
        if (!PyUnicode_CheckExact(cid)) {
            rc = WALK_PURE;
        } else {
            Py_ssize_t k = rt_entry(&u->fr->t, cid);
            if (k >= 0 && u->fr->t.e[k].res == NULL) {
                PyObject *res = get_attr(data, mr_S_result, &u->sl_res);
                if (res == NULL) {
                    k = -1;
                } else {
                    u->fr->t.e[k].res = res;
                    u->fr->answered++;
                    *answered = k;
                }
            }
            if (k < 0) rc = WALK_ERROR;
        }
    }
    Py_DECREF(cid);
    return rc;
}

/* A WalkResult (use: a struct whose first member is an FrUse): fr_first. */
static int fr_result(void *use, PyObject *data) {
    Py_ssize_t answered;
    return mr_fr_first(use, data, &answered);
}

/* The entry of a call's call id into *ent (-1: the call has none). */
int mr_fr_call_entry(FrUse *u, PyObject *data, Py_ssize_t *ent) {
    *ent = -1;
    PyObject *cid = get_attr(data, mr_S_tool_call_id, &u->sl_call);
    if (cid == NULL) return WALK_ERROR;
    int rc = WALK_OK;
    if (cid != Py_None) {
        if (!PyUnicode_CheckExact(cid)) rc = WALK_PURE;
        else if ((*ent = rt_entry(&u->fr->t, cid)) < 0) rc = WALK_ERROR;
    }
    Py_DECREF(cid);
    return rc;
}

/* The number of a tool name's key (tag 'n', the UTF-8 bytes of the name: name_bytes
 * without its length prefix; names that are not plain ASCII go through name_bytes,
 * surrogates included, as the reference encodes them): 0, or -1 with the error set. */
static int name_key(Ctx *x, Keys *keys, PyObject *name, int64_t *id) {
    Key k;
    key_init(&k, 'n');
    if (PyUnicode_IS_COMPACT_ASCII(name)) {
        key_body(&k, PyUnicode_DATA(name), PyUnicode_GET_LENGTH(name));
        *id = mr_keys_intern(keys, &k);
        return *id < 0 ? -1 : 0;
    }
    PyObject *nb = ctx_name_bytes(x, name);
    if (nb == NULL) return -1;
    key_body(&k, PyBytes_AS_STRING(nb) + 8, PyBytes_GET_SIZE(nb) - 8);
    *id = mr_keys_intern(keys, &k);
    Py_DECREF(nb);
    return *id < 0 ? -1 : 0;
}

/* The canonical bytes of a top-level object whose keys are plain ASCII (no escape, no
 * control character, as tool arguments' keys are): the keys are copied as written (they
 * are msgspec's spelling already) and sorted in place, the values canonicalized by
 * canon_value. Anything else (another key, a duplicate, more than FC_MEMBERS members, an
 * empty object, any fault) is NOT_HANDLED: canon_raw then does the whole value. */
#define FC_MEMBERS 32

typedef struct {
    const uint8_t *k;
    Py_ssize_t kn, voff, vlen;
} FMember;


static int fc_less(const FMember *x, const FMember *y) {
    Py_ssize_t n = x->kn < y->kn ? x->kn : y->kn;
    for (Py_ssize_t i = 0; i < n; i++)
        if (x->k[i] != y->k[i]) return x->k[i] < y->k[i] ? -1 : 1;
    return (x->kn > y->kn) - (x->kn < y->kn);
}

static int fc_members(Canon *kc, const uint8_t *raw, Py_ssize_t n, Buf *out);

int mr_fc_object(Canon *kc, const uint8_t *raw, Py_ssize_t n, Buf *out) {
    int rc = fc_members(kc, raw, n, out);
    if (kc->fc_tmp.cap > (1 << 20)) buf_free(&kc->fc_tmp); /* keep no huge buffer */
    return rc;
}

/* A plain ASCII key and its colon at c (on the key's opening quote): the key's text in
 * *k, *kn; OK or NOT_HANDLED. */
static inline int fc_key(Cur *c, const uint8_t **k, Py_ssize_t *kn) {
    *k = ++c->p;
    while (c->p < c->end && *c->p >= 0x20 && *c->p < 0x7f && *c->p != '"' && *c->p != '\\')
        c->p++;
    if (c->p >= c->end || *c->p != '"') return NOT_HANDLED;
    *kn = c->p - *k;
    c->p++;
    skip_ws(c);
    if (c->p >= c->end || *c->p != ':') return NOT_HANDLED;
    c->p++;
    return OK;
}

/* m into the nm sorted members (insertion sort as they come: objects here are small):
 * 0, or -1 for a duplicate key (the reference decides). */
static inline int fc_insert(FMember *ms, Py_ssize_t nm, const FMember *m) {
    Py_ssize_t j = nm;
    while (j > 0) {
        int cmp = fc_less(m, &ms[j - 1]);
        if (cmp == 0) return -1;
        if (cmp > 0) break;
        ms[j] = ms[j - 1];
        j--;
    }
    ms[j] = *m;
    return 0;
}

/* The sorted members (values in tmp) written as 'j' and the object, in one reserve. */
static inline int fc_write(Buf *out, const FMember *ms, Py_ssize_t nm, const Buf *tmp) {
    Py_ssize_t size = 3; /* j { } */
    for (Py_ssize_t i = 0; i < nm; i++)
        if (ms[i].vlen >= 0) size += ms[i].kn + 4 + ms[i].vlen;
    if (buf_reserve(out, size) < 0) return FAIL;
    char *w = out->p + out->n;
    *w++ = 'j';
    *w++ = '{';
    for (Py_ssize_t i = 0, first = 1; i < nm; i++) {
        if (ms[i].vlen < 0) continue; /* left out (near-duplicate ignore_arguments) */
        if (!first) *w++ = ',';
        first = 0;
        *w++ = '"';
        memcpy(w, ms[i].k, (size_t)ms[i].kn);
        w += ms[i].kn;
        *w++ = '"';
        *w++ = ':';
        memcpy(w, tmp->p + ms[i].voff, (size_t)ms[i].vlen);
        w += ms[i].vlen;
    }
    *w++ = '}';
    out->n = w - out->p;
    return OK;
}

static int fc_members(Canon *kc, const uint8_t *raw, Py_ssize_t n, Buf *out) {
    FMember ms[FC_MEMBERS];
    Py_ssize_t nm = 0;
    Cur c = {raw, raw + n, kc};
    Buf *tmp = &kc->fc_tmp;
    tmp->n = 0;
    skip_ws(&c);
    if (c.p >= c.end || *c.p != '{') return NOT_HANDLED;
    c.p++;
    while (1) {
        skip_ws(&c);
        FMember m;
        if (c.p >= c.end || *c.p != '"' || nm == FC_MEMBERS || fc_key(&c, &m.k, &m.kn) != OK)
            return NOT_HANDLED;
        m.voff = tmp->n;
        /* near (_near.c): a key of ignore_arguments is parsed (not checked), not written */
        int left_out = kc->near_ignore != NULL &&
                       near_ignored(kc->near_ignore, (const char *)m.k, m.kn);
        int mask = kc->near_mask;
        if (left_out) kc->near_mask = 0;
        int rc = canon_value(&c, tmp, 1);
        kc->near_mask = mask;
        if (rc != OK) return rc == FAIL ? FAIL : NOT_HANDLED;
        m.vlen = left_out ? -1 : tmp->n - m.voff;
        if (fc_insert(ms, nm++, &m) < 0) return NOT_HANDLED;
        skip_ws(&c);
        if (c.p >= c.end || (*c.p != ',' && *c.p != '}')) return NOT_HANDLED;
        if (*c.p++ == '}') break;
    }
    skip_ws(&c);
    if (c.p != c.end) return NOT_HANDLED;
    return fc_write(out, ms, nm, tmp);
}

/* The body of a call's key: call_digest's canonical bytes of value, set as k's body
 * (in x->scratch, or in *hold, a reference the caller drops after using k): 0 set, 1 an
 * empty observation (no body), -1 error. */
static int body_of(Ctx *x, PyObject *value, int observe, Key *k, PyObject **hold) {
    x->scratch.n = 0;
    if (value == Py_None) {
        if (observe) return 1;
        key_body(k, "jnull", 5);
        return 0;
    }
    if (PyUnicode_CheckExact(value)) {
        Py_ssize_t len;
        const char *str = PyUnicode_AsUTF8AndSize(value, &len);
        if (str == NULL) {
            PyErr_Clear(); /* lone surrogates: the reference below */
        } else {
            if (observe && mr_utf8_blank((const uint8_t *)str, len)) return 1;
            if (buf_byte(&x->scratch, 's') < 0 || buf_put(&x->scratch, str, len) < 0) return -1;
            key_body(k, x->scratch.p, x->scratch.n);
            return 0;
        }
    }
    if (Py_TYPE(value) == (PyTypeObject *)x->raw_type) {
        Py_buffer view;
        if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0) return -1;
        int empty = 0;
        const uint8_t *raw = view.buf;
        int rc = view.len > 2 && raw[0] == '{' ? mr_fc_object(x->k, raw, view.len, &x->scratch)
                                               : NOT_HANDLED;
        if (rc == NOT_HANDLED) {
            x->scratch.n = 0;
            rc = mr_canon_raw(x->k, view.buf, view.len, observe, &x->scratch, &empty);
        }
        PyBuffer_Release(&view);
        if (rc == FAIL) return -1;
        if (rc == OK) {
            if (empty) return 1;
            key_body(k, x->scratch.p, x->scratch.n);
            return 0;
        }
    }
    PyObject *body = PyObject_CallOneArg(observe ? x->observation : x->canonical, value);
    if (body == NULL) return -1;
    if (body == Py_None) {
        Py_DECREF(body);
        return 1;
    }
    if (!PyBytes_Check(body)) {
        Py_DECREF(body);
        PyErr_SetString(PyExc_TypeError, "canonical bytes must be bytes");
        return -1;
    }
    key_body(k, PyBytes_AS_STRING(body), PyBytes_GET_SIZE(body));
    *hold = body;
    return 0;
}

/* The number of a call's key (tag: 'a' arguments, 'o' an observation; the name's number;
 * the body's bytes), through the raw cache when value is a Raw slice: 0, 1 an empty
 * observation (not cached: cheap to see), -1 error. */
static int call_key(Ctx *x, Keys *keys, RawCache *c, uint8_t tag, int64_t name_id,
                    PyObject *value, int observe, int64_t *id) {
    Key rk;
    Py_buffer view;
    int keyed = 0;
    if (!c->off && Py_TYPE(value) == (PyTypeObject *)x->raw_type) {
        if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0) return -1;
        key_init(&rk, tag == 'a' ? 'r' : 'R');
        key_num(&rk, name_id);
        key_body(&rk, view.buf, view.len);
        int64_t r = rc_find(c, &rk);
        if (r != -1 || c->off) PyBuffer_Release(&view);
        if (r == -2) return -1;
        if (r >= 0) {
            *id = r;
            return 0;
        }
        keyed = !c->off;
    }
    Key k;
    PyObject *hold = NULL;
    key_init(&k, tag);
    key_num(&k, name_id);
    int rc = body_of(x, value, observe, &k, &hold);
    if (rc == 0 && (*id = mr_keys_intern(keys, &k)) < 0) rc = -1;
    Py_XDECREF(hold);
    if (rc == 0 && keyed && rc_add(c, &rk, *id) < 0) rc = -1;
    if (keyed) PyBuffer_Release(&view);
    return rc;
}


int mr_icalls_push(ICalls *c, int64_t pre, Py_ssize_t ent) {
    if (c->n == c->cap) { /* both arrays to the same new size */
        Py_ssize_t cap = c->cap;
        if (walk_grow((void **)&c->pre, c->n, &cap, sizeof(int64_t)) < 0) return -1;
        cap = c->cap;
        if (walk_grow((void **)&c->ent, c->n, &cap, sizeof(Py_ssize_t)) < 0) return -1;
        c->cap = cap;
    }
    c->pre[c->n] = pre;
    c->ent[c->n] = ent;
    c->n++;
    return 0;
}

void mr_icalls_free(ICalls *c) {
    PyMem_Free(c->pre);
    PyMem_Free(c->ent);
}

static int id_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}


int mr_sk_init(StepKeys *t, Py_ssize_t ns) {
    t->ns = ns;
    t->sk = PyMem_Malloc((size_t)(ns ? ns : 1) * sizeof(int64_t));
    t->empty = PyMem_Calloc((size_t)(ns ? ns : 1), 1);
    if (t->sk == NULL || t->empty == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

void mr_sk_free(StepKeys *t) {
    PyMem_Free(t->sk);
    PyMem_Free(t->empty);
    PyMem_Free(t->calls);
}

/* Room for the k call keys of the step at hand (t->calls); -1 with MemoryError. */
int mr_sk_room(StepKeys *t, Py_ssize_t k) {
    if (k <= t->cap) return 0;
    Py_ssize_t cap = k > 8 ? k : 8;
    int64_t *grown = PyMem_Realloc(t->calls, (size_t)cap * sizeof(int64_t));
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->calls = grown;
    t->cap = cap;
    return 0;
}

/* Step s from the k call keys in t->calls (sorted here): empty, the call's own key, or
 * a multiset: the key of the sorted numbers. 0, or -1 with the error set. */
int mr_sk_step(StepKeys *t, Keys *keys, Py_ssize_t s, Py_ssize_t k, int empty) {
    if (empty) {
        t->empty[s] = 1;
        t->empties++;
        t->sk[s] = -1;
    } else if (k == 1) {
        t->sk[s] = t->calls[0];
    } else {
        qsort(t->calls, (size_t)k, sizeof(int64_t), id_cmp);
        Key m;
        key_init(&m, 'm');
        key_body(&m, t->calls, k * (Py_ssize_t)sizeof(int64_t));
        if ((t->sk[s] = mr_keys_intern(keys, &m)) < 0) return -1;
    }
    return 0;
}

/* The ids of build_step_table from the step keys (numbers below nkeys): equal keys share
 * the id of their first step, or of their rank among the distinct keys when some step is
 * empty, as the reference numbers them. */
PyObject *mr_ids_of_keys(const StepKeys *t, Py_ssize_t nkeys) {
    Py_ssize_t ns = t->ns;
    int any_empty = t->empties > 0;
    /* int64s (an array('q') on the Python side: no int object per step, and the search
     * scans them as they are) */
    PyObject *ids = PyBytes_FromStringAndSize(NULL, ns * 8);
    if (ids == NULL) return NULL;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(ids);
    int64_t *id_of = PyMem_Malloc((size_t)(nkeys ? nkeys : 1) * sizeof(int64_t));
    if (id_of == NULL) {
        Py_DECREF(ids);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < nkeys; i++) id_of[i] = -1;
    int64_t distinct = 0;
    for (Py_ssize_t s = 0; s < ns; s++) {
        if (t->empty[s]) {
            out[s] = -1 - (int64_t)s;
            continue;
        }
        int64_t *id = &id_of[t->sk[s]];
        if (*id < 0) *id = any_empty ? distinct++ : (int64_t)s;
        out[s] = *id;
    }
    PyMem_Free(id_of);
    return ids;
}

/* A call's arguments key in name-args mode, numbered one call later: its bytes are
 * copied here and its index slot prefetched, so that the lookup (a cache miss in a large
 * table: every distinct argument object is a key) overlaps the next call's work. */
typedef struct {
    Buf bytes;       /* the key's head and body */
    Py_ssize_t nh;   /* the head's length */
    uint64_t h;
    Py_ssize_t call; /* the call's index in ICalls; -1: none waiting */
    PyObject *raw;   /* its Raw value for the raw cache (a reference), or NULL */
    int64_t name_id;
} Staged;

/* build_ids' use of the walk: each call's key numbered as far as is known at the call. */
typedef struct {
    FrUse r; /* first: fr_result's use */
    ICalls cs;
    Ctx *x;
    Keys *keys;
    RawCache *rc;
    int mode;
    Slot sl_val;
    Staged st[2]; /* the waiting key and the one being made */
    int cur;
} IdsUse;

static void staged_free(IdsUse *u) {
    for (int i = 0; i < 2; i++) {
        buf_free(&u->st[i].bytes);
        Py_CLEAR(u->st[i].raw);
    }
}

/* The waiting key (if any) numbered into its call: 0, or -1 with the error set. */
static int staged_resolve(IdsUse *u, Staged *w) {
    if (w->call < 0) return 0;
    Key k;
    memcpy(k.head, w->bytes.p, (size_t)w->nh);
    k.nh = w->nh;
    key_body(&k, w->bytes.p + w->nh, w->bytes.n - w->nh);
    int64_t id = keys_get_h(u->keys, &k, w->h, 1);
    if (id < 0) return -1;
    u->cs.pre[w->call] = id;
    w->call = -1;
    int rc = 0;
    if (w->raw != NULL) {
        Py_buffer view;
        if (PyObject_GetBuffer(w->raw, &view, PyBUF_SIMPLE) < 0) {
            rc = -1;
        } else {
            Key rk;
            key_init(&rk, 'r');
            key_num(&rk, w->name_id);
            key_body(&rk, view.buf, view.len);
            rc = rc_add(u->rc, &rk, id);
            PyBuffer_Release(&view);
        }
        Py_CLEAR(w->raw);
    }
    return rc;
}

/* The arguments key of the call about to be pushed (name number pre, value val): its
 * number into *id (the raw cache knew it), or staged (*id = -1; the key waits in
 * u->st[u->cur]). 0, or -1 with the error set. */
static int staged_make(IdsUse *u, int64_t pre, PyObject *val, int64_t *id) {
    Ctx *x = u->x;
    RawCache *c = u->rc;
    int is_raw = Py_TYPE(val) == (PyTypeObject *)x->raw_type;
    *id = -1;
    if (is_raw && !c->off) {
        Py_buffer view;
        if (PyObject_GetBuffer(val, &view, PyBUF_SIMPLE) < 0) return -1;
        Key rk;
        key_init(&rk, 'r');
        key_num(&rk, pre);
        key_body(&rk, view.buf, view.len);
        int64_t r = rc_find(c, &rk);
        PyBuffer_Release(&view);
        if (r == -2) return -1;
        if (r >= 0) {
            *id = r;
            return 0;
        }
    }
    Key k;
    PyObject *hold = NULL;
    key_init(&k, 'a');
    key_num(&k, pre);
    int rc = body_of(x, val, 0, &k, &hold);
    Staged *st = &u->st[u->cur];
    st->bytes.n = 0;
    if (rc == 0 && (buf_put(&st->bytes, k.head, k.nh) < 0 || buf_put(&st->bytes, k.p, k.n) < 0))
        rc = -1;
    if (rc == 0) {
        st->nh = k.nh;
        st->h = key_hash(&k);
        keys_prefetch(u->keys, st->h);
        st->call = u->cs.n; /* the index the call is pushed at */
        st->name_id = pre;
        if (is_raw && !c->off) {
            Py_INCREF(val);
            st->raw = val;
        }
    }
    Py_XDECREF(hold);
    return rc < 0 ? -1 : 0;
}

static int ids_call(void *use, PyObject *data, PyObject *name) {
    IdsUse *u = use;
    int64_t pre;
    if (name_key(u->x, u->keys, name, &pre) < 0) return WALK_ERROR;
    Py_ssize_t ent = -1;
    if (u->mode == 1) {
        /* the whole key: cs.pre holds the call's key in name-args mode (numbered now, or
         * when the next call is made: staged_make) */
        PyObject *val = get_attr(data, mr_S_arguments, &u->sl_val);
        int rc = val == NULL ? -1 : staged_make(u, pre, val, &pre);
        Py_XDECREF(val);
        if (rc < 0 || mr_icalls_push(&u->cs, pre, ent) < 0) return WALK_ERROR;
        if (pre >= 0) return WALK_OK;
        u->cur ^= 1; /* the key just staged waits; the one before it is numbered */
        return staged_resolve(u, &u->st[u->cur]) < 0 ? WALK_ERROR : WALK_OK;
    }
    if (u->mode == 2) {
        int rc = mr_fr_call_entry(&u->r, data, &ent);
        if (rc != WALK_OK) return rc;
    }
    return mr_icalls_push(&u->cs, pre, ent) < 0 ? WALK_ERROR : WALK_OK;
}

/* Call j's key in observation mode: its name's (pre) with its first result's canonical
 * bytes, or with no observation (*empty set): 0, or -1 with the error set. */
static int ids_observed(Ctx *x, Keys *keys, RawCache *rc, FirstResults *fr, int64_t pre,
                        Py_ssize_t ent, int64_t *id, int *empty) {
    PyObject *value = ent >= 0 ? fr->t.e[ent].res : NULL;
    int r = 1;
    if (value != NULL) {
        Py_INCREF(value);
        r = call_key(x, keys, rc, 'o', pre, value, 1, id);
        Py_DECREF(value);
    }
    if (r <= 0) return r;
    /* "tool + no observation" (emptydigest) */
    Key k;
    key_init(&k, 'e');
    key_num(&k, pre);
    *empty = 1;
    return (*id = mr_keys_intern(keys, &k)) < 0 ? -1 : 0;
}

/* build_ids' IdCall: call j's key in observation mode (ids_observed). */
static int ids_obs(void *use, Py_ssize_t j, int64_t *id, int *empty) {
    IdsUse *u = use;
    int r = ids_observed(u->x, u->keys, u->rc, u->r.fr, u->cs.pre[j], u->cs.ent[j], id, empty);
    return r < 0 ? WALK_ERROR : WALK_OK;
}

int mr_id_steps(const Walk *w, const ICalls *cs, int period, IdCall obs, void *use,
                Keys *keys, StepKeys *ks) {
    if (mr_sk_init(ks, w->ns) < 0) return WALK_ERROR;
    for (Py_ssize_t s = 0; s < w->ns; s++) {
        Py_ssize_t a, b;
        walk_step(w, s, &a, &b);
        Py_ssize_t k = b - a, empties = 0;
        if (mr_sk_room(ks, k) < 0) return WALK_ERROR;
        for (Py_ssize_t j = 0; j < k; j++) {
            if (obs == NULL) { /* numbered at the call */
                ks->calls[j] = cs->pre[a + j];
                continue;
            }
            int empty = 0;
            int rc = obs(use, a + j, &ks->calls[j], &empty);
            if (rc != WALK_OK) return rc;
            empties += empty;
        }
        if (mr_sk_step(ks, keys, s, k, obs != NULL && mr_step_is_empty(empties, k, period)) < 0)
            return WALK_ERROR;
    }
    return WALK_OK;
}

/* build_ids(events, mode, period, watches, raw_type, canonical, observation, name_bytes)
 * -> None (the pure path must run) or
 *    (calls_or_steps, single, first_results_or_None, ids, n_calls, empty_steps):
 *    ids as int64 bytes; calls_or_steps as int64 bytes of the call indices when single */
static PyObject *build_ids(PyObject *self, PyObject *args) {
    PyObject *events, *watches;
    int mode, period;
    Ctx x = {0};
    Keys keys = {0};
    RawCache rc = {0};
    IdsUse u = {0};
    Walk w = {0};
    StepKeys ks = {0};
    if (!PyArg_ParseTuple(args, "OiiOOOOO", &events, &mode, &period, &watches, &x.raw_type,
                          &x.canonical, &x.observation, &x.name_bytes))
        return NULL;
    PyObject *seq = PySequence_Fast(events, "events must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    int observe = mode == 2;
    ICalls *cs = &u.cs;

    PyObject *result = NULL, *ids = NULL, *shape = NULL;
    FirstResults *fr = NULL;

    x.names = PyDict_New();
    if (!x.names) goto error;
    x.k = mr_canon_new();
    if (x.k == NULL) goto error;
    if (observe) {
        fr = mr_fr_new(self);
        if (fr == NULL) goto error;
    }

    /* 1. group (core.steps.group_steps) and number what is known at the call */
    u.r.fr = fr;
    u.x = &x;
    u.keys = &keys;
    u.rc = &rc;
    u.mode = mode;
    u.st[0].call = u.st[1].call = -1;
    int walked = walk_events(items, n, watches, observe, fr_result, ids_call, &u, &w);
    if (walked == WALK_ERROR) goto error;
    if (walked == WALK_PURE) goto fallback;
    if (staged_resolve(&u, &u.st[u.cur ^ 1]) < 0) goto error; /* the last one waiting */

    /* 2. step keys (core.fingerprints.fingerprint_keys, numbered instead of joined) */
    if (mr_id_steps(&w, &u.cs, period, observe ? ids_obs : NULL, &u, &keys, &ks) != WALK_OK)
        goto error;

    /* 3. ids */
    ids = mr_ids_of_keys(&ks, keys.n);
    if (ids == NULL) goto error;

    /* 4. the steps */
    shape = mr_walk_shape(&w);
    if (shape == NULL) goto error;
    result = Py_BuildValue("(OOOOnn)", shape, w.single ? Py_True : Py_False,
                           fr ? (PyObject *)fr : Py_None, ids, w.n, ks.empties);
    goto cleanup;

fallback:
    result = Py_None;
    Py_INCREF(result);
    goto cleanup;
error:
    result = NULL;
cleanup:
    Py_XDECREF(shape);
    Py_XDECREF(fr);
    Py_XDECREF(ids);
    Py_XDECREF(x.names);
    buf_free(&x.scratch);
    mr_canon_free(x.k);
    mr_icalls_free(cs);
    walk_free(&w);
    staged_free(&u);
    rc_free(&rc);
    mr_keys_free(&keys);
    mr_sk_free(&ks);
    Py_DECREF(seq);
    return result;
}

/* fast_canonical(raw_bytes) -> fc_object's canonical bytes, or False (not handled). */
static PyObject *fast_canonical(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Buf out = {0};
    Canon *k = mr_canon_new();
    int rc = k == NULL ? FAIL
             : view.len > 2 && ((const uint8_t *)view.buf)[0] == '{'
                 ? mr_fc_object(k, view.buf, view.len, &out) : NOT_HANDLED;
    mr_canon_free(k);
    PyBuffer_Release(&view);
    PyObject *r;
    if (rc == FAIL) {
        r = NULL;
    } else if (rc != OK) {
        r = Py_False;
        Py_INCREF(r);
    } else {
        r = PyBytes_FromStringAndSize(out.p, out.n);
    }
    buf_free(&out);
    return r;
}

/* fast_hash(data) -> the 16 bytes of build_ids' hash of one part (for the tests). */
static PyObject *fast_hash(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    FH s;
    fh_init(&s);
    fh_part(&s, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    uint64_t out[2];
    fh_final(&s, out);
    uint8_t bytes[16];
    fh_bytes(out, bytes);
    return PyBytes_FromStringAndSize((const char *)bytes, 16);
}

/* ------------------------------------------------------------------------------------ */
/* scan_json (readers._windows.scan_pure): the item boundaries of a JSON container in raw  */
/* bytes, tracking only strings (with escapes) and brackets; resumable across blocks.     */
/* Validation is msgspec's job (each window is decoded by it), so this only has to find   */
/* the right boundaries in valid JSON.                                                    */

/* scan_json(buf, pos, depth, in_str, esc, first)
 *   -> (pos, depth, in_str, esc, last comma or -1) */
static PyObject *scan_json(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, depth;
    int in_str, esc, first;
    if (!PyArg_ParseTuple(args, "y*nniii", &view, &pos, &depth, &in_str, &esc, &first))
        return NULL;
    const uint8_t *b = view.buf;
    Py_ssize_t n = view.len, last = -1;
    if (pos < 0) pos = 0;
    if (esc && pos < n) {
        pos++;
        esc = 0;
    }
    while (pos < n) {
        if (in_str) {
            /* memchr-speed hop to the next quote or backslash */
            const uint8_t *q = memchr(b + pos, '"', (size_t)(n - pos));
            const uint8_t *bs = memchr(b + pos, '\\', q ? (size_t)(q - (b + pos)) : (size_t)(n - pos));
            if (bs != NULL) {
                pos = bs - b;
                if (pos + 1 >= n) {
                    pos = n;
                    esc = 1;
                    break;
                }
                pos += 2;
                continue;
            }
            if (q == NULL) {
                pos = n;
                break;
            }
            pos = q - b + 1;
            in_str = 0;
            continue;
        }
        uint8_t c = b[pos];
        if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            if (depth == 0) break;
            depth--;
        } else if (c == ',' && depth == 0) {
            if (first) break;
            last = pos;
        }
        pos++;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nniin)", pos, depth, in_str, esc, last);
}

/* near-duplicate grading: near_ids, near_keys, near_dirty, near_rewrite (separate files,
 * same module) */

/* ------------------------------------------------------------------------------------ */
/* bloom (engines.windowed.bloom_pure): a Bloom filter over Python's hashes of strings,   */
/* for the windowed grader's "was this call id seen in an earlier segment" (an answer    */
/* that may be a false yes, never a false no: it only decides where exact work is done). */

/* Blocked: the three probes of a key fall in one 64-byte block (one cache miss). */
static void bloom_probes(Py_hash_t h, uint64_t nbits, uint64_t out[3]) {
    uint64_t a = (uint64_t)h, b = a * 0x9E3779B97F4A7C15ULL;
    uint64_t block = nbits < 512 ? nbits : 512;
    uint64_t base = (a & (nbits / block - 1)) * block;
    for (int j = 0; j < 3; j++) out[j] = base + ((b >> (9 * j + 10)) & (block - 1));
}

/* The arguments both take: the filter's bits (a writable buffer of a power-of-two number
 * of bytes) and a sequence (seq, a new reference; what: its error message). 0, or -1 with
 * an exception and the view released. */
static int bloom_args(Py_buffer *view, PyObject *obj, const char *what, PyObject **seq,
                      uint64_t *nbits) {
    *nbits = (uint64_t)view->len * 8;
    if (view->len == 0 || (*nbits & (*nbits - 1)) != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "bloom needs a power-of-two number of bytes");
        return -1;
    }
    *seq = PySequence_Fast(obj, what);
    if (*seq == NULL) {
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Appends i to *out when every bit of hash h was set (a key probably seen); on error *out
 * is cleared (NULL, an exception set). */
static void bloom_probe(PyObject **out, const uint8_t *bits, uint64_t nbits, Py_hash_t h,
                        Py_ssize_t i) {
    uint64_t pr[3];
    bloom_probes(h, nbits, pr);
    for (int j = 0; j < 3; j++)
        if (!(bits[pr[j] >> 3] & (1u << (pr[j] & 7)))) return;
    PyObject *v = PyLong_FromSsize_t(i);
    if (v == NULL || PyList_Append(*out, v) < 0) Py_CLEAR(*out);
    Py_XDECREF(v);
}

static void bloom_set(uint8_t *bits, uint64_t nbits, Py_hash_t h) {
    uint64_t pr[3];
    bloom_probes(h, nbits, pr);
    for (int j = 0; j < 3; j++) bits[pr[j] >> 3] |= (uint8_t)(1u << (pr[j] & 7));
}

/* bloom(bits, keys, add) -> indices of the keys (None: none) whose bits were all set before this call;
 * with add, every key's bits are then set. len(bits) must be a power of two. */
static PyObject *bloom(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    PyObject *keys, *seq;
    int add;
    uint64_t nbits;
    if (!PyArg_ParseTuple(args, "w*Oi", &view, &keys, &add)) return NULL;
    if (bloom_args(&view, keys, "keys must be a sequence", &seq, &nbits) < 0) return NULL;
    uint8_t *bits = view.buf;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyList_New(0);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        if (items[i] == Py_None) continue; /* no key */
        Py_hash_t h = PyObject_Hash(items[i]);
        if (h == -1) {
            Py_CLEAR(out);
            break;
        }
        bloom_probe(&out, bits, nbits, h, i);
    }
    if (out != NULL && add) {
        for (Py_ssize_t i = 0; i < n; i++) {
            if (items[i] == Py_None) continue;
            bloom_set(bits, nbits, PyObject_Hash(items[i])); /* hashes are cached */
        }
    }
    Py_DECREF(seq);
    PyBuffer_Release(&view);
    return out;
}

/* bloom_events(bits, events, add): bloom() over each event's data.tool_call_id (events
 * without data or without an id have no key); returns event indices. The attributes are
 * read through get_attr's cached slots and the hashes kept for the add loop. */
static PyObject *bloom_events(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    PyObject *events, *seq;
    int add;
    uint64_t nbits;
    if (!PyArg_ParseTuple(args, "w*Oi", &view, &events, &add)) return NULL;
    if (bloom_args(&view, events, "events must be a sequence", &seq, &nbits) < 0) return NULL;
    uint8_t *bits = view.buf;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    Py_hash_t *hs = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(Py_hash_t));
    char *has = PyMem_Malloc((size_t)(n > 0 ? n : 1));
    PyObject *out = PyList_New(0);
    Slot sl_data = {0}, sl_cid = {0};
    if (hs == NULL || has == NULL) {
        PyErr_NoMemory();
        Py_CLEAR(out);
    }
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        has[i] = 0;
        PyObject *data = get_attr(items[i], mr_S_data, &sl_data);
        if (data == NULL) {
            PyErr_Clear();
            continue;
        }
        PyObject *cid = data != Py_None ? get_attr(data, mr_S_tool_call_id, &sl_cid) : NULL;
        Py_DECREF(data);
        if (cid == NULL) {
            PyErr_Clear();
            continue;
        }
        if (PyUnicode_Check(cid)) {
            Py_hash_t h = PyObject_Hash(cid);
            if (h == -1) {
                Py_DECREF(cid);
                Py_CLEAR(out);
                break;
            }
            hs[i] = h;
            has[i] = 1;
            bloom_probe(&out, bits, nbits, h, i);
        }
        Py_DECREF(cid);
    }
    if (out != NULL && add) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (has[i]) bloom_set(bits, nbits, hs[i]);
    }
    PyMem_Free(hs);
    PyMem_Free(has);
    Py_DECREF(seq);
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"hash128", hash128, METH_O, "16-byte non-cryptographic hash of a buffer (fast)."},
    {"has_mark", (PyCFunction)(void (*)(void))has_mark, METH_FASTCALL,
     "Whether an 8-byte mark is an aligned word of a buffer."},
    {"build_table", build_table, METH_VARARGS, "Group and fingerprint the watched steps."},
    {"near_ids", mr_near_ids, METH_VARARGS, "Near-duplicate step ids (None: pure path)."},
    {"near_keys", mr_near_keys, METH_VARARGS, "Near-duplicate step keys (None: pure path)."},
    {"near_dirty", mr_py_near_dirty, METH_VARARGS, "Whether a normalizer could change a text."},
    {"near_rewrite", mr_py_near_rewrite, METH_VARARGS, "A text after the normalizers (C)."},
    {"events_readable", events_readable, METH_O, "Whether every call and result has data."},
    {"stretches", stretches, METH_VARARGS, "Maximal stretches of one period."},
    {"canonical", canonical, METH_VARARGS, "Canonical bytes of raw JSON (False: bail)."},
    {"digest", digest, METH_O, "16-byte BLAKE2b digest."},
    {"build_ids", build_ids, METH_VARARGS, "Group the watched steps and number them."},
    {"fast_hash", fast_hash, METH_O, "FH of one part (the key hash's source)."},
    {"scan_json", scan_json, METH_VARARGS, "Item boundaries of a JSON container in raw bytes."},
    {"bloom", bloom, METH_VARARGS, "Test (and add) keys in a Bloom filter of string hashes."},
    {"bloom_events", bloom_events, METH_VARARGS, "bloom() over the events' call ids."},
    {"fast_canonical", fast_canonical, METH_O, "build_ids' canonical bytes of a plain object."},
    {NULL, NULL, 0, NULL}};

/* Multi-phase initialization (PEP 489): the module object is made by the interpreter,
 * then native_exec fills it. The constants of the hot loop (the field names, interned,
 * and the normalizers' byte tables) are process-wide statics, written once with the same
 * values by every exec, and read only after that; the canonicalizer's scratch space is
 * per call (Canon). */
static int native_exec(PyObject *mod) {
    if (mr_S_type == NULL) {
        mr_S_type = PyUnicode_InternFromString("type");
        mr_S_data = PyUnicode_InternFromString("data");
        mr_S_tool_name = PyUnicode_InternFromString("tool_name");
        mr_S_tool_call_id = PyUnicode_InternFromString("tool_call_id");
        mr_S_arguments = PyUnicode_InternFromString("arguments");
        mr_S_result = PyUnicode_InternFromString("result");
        mr_S_tool_call = PyUnicode_InternFromString("tool_call");
        mr_S_tool_result = PyUnicode_InternFromString("tool_result");
        if (!mr_S_tool_call || !mr_S_tool_result || !mr_S_type || !mr_S_data || !mr_S_tool_name ||
            !mr_S_tool_call_id || !mr_S_arguments || !mr_S_result)
            return -1;
        mr_nz_init();          /* _nearnorm.c */
        mr_nz_init_rewrites(); /* _nearrewrite.c */
    }
    NativeState *st = native_state(mod);
    st->fr_type = (PyTypeObject *)PyType_FromModuleAndSpec(mod, &fr_spec, NULL);
    if (st->fr_type == NULL) return -1;
    if (PyModule_AddObjectRef(mod, "FirstResults", (PyObject *)st->fr_type) < 0) return -1;
    /* the bits of the key hash (64; fewer in a build made to test collisions) */
    return PyModule_AddIntConstant(mod, "KEY_HASH_BITS", KEY_HASH_BITS);
}

static int native_traverse(PyObject *mod, visitproc visit, void *arg) {
    NativeState *st = native_state(mod);
    if (st != NULL) Py_VISIT(st->fr_type);
    return 0;
}

static int native_clear(PyObject *mod) {
    NativeState *st = native_state(mod);
    if (st != NULL) Py_CLEAR(st->fr_type);
    return 0;
}

static void native_free(void *mod) { native_clear((PyObject *)mod); }

static PyModuleDef_Slot native_slots[] = {
    {Py_mod_exec, (void *)native_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* the interned field names above are shared by every module object, so one module
     * per process: not loaded in a sub-interpreter (3.12+) */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#ifdef Py_mod_gil
    /* The GIL stays declared as needed on a free-threaded build (3.13t+): the functions
     * read the events list's items and the trajectory's objects without locking them
     * (PySequence_Fast_ITEMS, borrowed references from get_attr's fast slots), which is
     * safe only while no other thread can change them. */
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The native fast path of maxrepeat's hot loop.",
    .m_size = sizeof(NativeState),
    .m_methods = methods,
    .m_slots = native_slots,
    .m_traverse = native_traverse,
    .m_clear = native_clear,
    .m_free = native_free,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModuleDef_Init(&module); }
