/* The declarations the module's translation units share (docs/design/native.md, "Files").
 *
 * The extension is four C files, each its own translation unit, linked into one module:
 *   _native.c      the module (its functions, state and type), BLAKE2b, the JSON
 *                  canonicalizer, FH, the exact key table, the first-result table,
 *                  build_table and build_ids;
 *   _near.c        near-duplicate grading: near_ids and near_keys;
 *   _nearnorm.c    the normalizers' check (near_dirty, nz_plain_clean);
 *   _nearrewrite.c the normalizers' rewrites (nz_rewrite, near_text).
 * This header declares what _native.c gives the others (functions prefixed mr_, with
 * external linkage but hidden from outside the module); _near.h what the near-duplicate
 * files give; _walk.h is the event walk, inlined where it is used. Everything else is
 * static. The small helpers of hot loops are static inline here, so that no call crosses
 * a file where a loop runs.
 */
#ifndef MAXREPEAT_NATIVE_H
#define MAXREPEAT_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Only the module's init function is seen outside the shared object: the mr_ functions
 * link the files together and nothing else (and, hidden, they cannot be interposed). */
#if defined(__GNUC__) && !defined(_WIN32)
#pragma GCC visibility push(hidden)
#endif

/* ------------------------------------------------------------------------------------ */
/* A growable byte buffer.                                                              */

typedef struct {
    char *p;
    Py_ssize_t n, cap;
} Buf;

static inline int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (b->n + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra) cap *= 2;
    char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, const void *data, Py_ssize_t n) {
    if (n <= 0) return 0; /* data may be NULL then: memcpy(NULL, 0) is undefined */
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->p + b->n, data, (size_t)n);
    b->n += n;
    return 0;
}

static inline int buf_byte(Buf *b, char c) {
    if (b->n >= b->cap && buf_reserve(b, 1) < 0) return -1;
    b->p[b->n++] = c;
    return 0;
}

static inline void buf_free(Buf *b) {
    PyMem_Free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* Results of the canonicalizer: 0 written, 1 bail (the Python reference must decide),
 * -1 error (raised). */
#define OK 0
#define BAIL 1
#define FAIL (-1)
#define MAX_NEST 200

struct Canon;

typedef struct {
    Py_ssize_t koff, klen, voff, vlen;
    const char *base;
} Member;

/* A candidate position of the near-duplicate rewrites (_nearrewrite.c, nz_gate). */
typedef struct {
    Py_ssize_t pos;
    uint16_t any, start;
} NzCand;

/* What one call into the module canonicalizes with: its scratch space (one buffer per
 * nesting level, reused from value to value: no allocation per value) and, for the
 * near-duplicate path (_near.c), the settings: near_mask names the normalizers on, and a
 * string value that one of them could change (near_dirty) is written as their rewrite
 * (nz_rewrite, _nearrewrite.c); near_ignore (a tuple of UTF-8 bytes) names top-level keys
 * left out. Both are 0/NULL on the exact paths. Made by canon_new at each entry point
 * and freed there (no state shared between calls or threads). */
typedef struct Canon {
    int near_mask;
    PyObject *near_ignore;
    Buf tmp[MAX_NEST + 2];
    Member *ms[MAX_NEST + 2];
    Py_ssize_t mscap[MAX_NEST + 2];
    Buf str;    /* canon_value's decoded strings */
    Buf fc_tmp; /* fc_members' values */
    Buf nz[2];  /* the rewrites' buffers: one pass reads one and writes the other */
    NzCand *cand;
    Py_ssize_t ncand, cand_cap;
    Buf out;    /* the near-duplicate path's canonical bytes (_near.c) */
} Canon;

/* the interned field names of the events (written once by the module's exec) */
extern PyObject *mr_S_type, *mr_S_data, *mr_S_tool_name, *mr_S_tool_call_id, *mr_S_arguments, *mr_S_result;
extern PyObject *mr_S_tool_call, *mr_S_tool_result;

typedef struct {
    uint8_t *d;
    Py_ssize_t n;
} Entry;

static inline void put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Attribute reads of the event structs: msgspec Structs keep their fields in slots (member
 * descriptors) and use the generic getattr, so a field is read at its offset once the
 * type is known; any other object (or an unset slot) goes through PyObject_GetAttr. */
typedef struct {
    PyTypeObject *tp;
    Py_ssize_t off;
} Slot;

static inline PyObject *get_attr(PyObject *obj, PyObject *name, Slot *sc) {
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp != sc->tp) {
        sc->tp = tp;
        sc->off = -1;
        if (tp->tp_getattro == PyObject_GenericGetAttr) {
            PyObject *d = _PyType_Lookup(tp, name);
            if (d != NULL && Py_TYPE(d) == &PyMemberDescr_Type) {
                PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
                if ((m->type == T_OBJECT_EX || m->type == T_OBJECT) && m->offset > 0)
                    sc->off = m->offset;
            }
        }
    }
    if (sc->off >= 0) {
        PyObject *v = *(PyObject **)((char *)obj + sc->off);
        if (v != NULL) {
            Py_INCREF(v);
            return v;
        }
    }
    return PyObject_GetAttr(obj, name);
}

enum { T_OTHER = 0, T_CALL, T_RESULT, T_START, T_END };

static inline int event_code(PyObject *type) {
    if (!PyUnicode_CheckExact(type)) return -1;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(type, &n);
    if (s == NULL) {
        PyErr_Clear();
        return -1;
    }
    if (n == 9 && memcmp(s, "tool_call", 9) == 0) return T_CALL;
    if (n == 11 && memcmp(s, "tool_result", 11) == 0) return T_RESULT;
    if (n == 10 && memcmp(s, "turn_start", 10) == 0) return T_START;
    if (n == 8 && memcmp(s, "turn_end", 8) == 0) return T_END;
    return T_OTHER;
}

#ifdef MAXREPEAT_FH_BITS
#define KEY_HASH_BITS MAXREPEAT_FH_BITS
#else
#define KEY_HASH_BITS 64
#endif

typedef struct {
    uint8_t head[17]; /* the tag, then the numbers (little-endian) */
    Py_ssize_t nh;
    const uint8_t *p; /* the body */
    Py_ssize_t n;
    int lead; /* >= 0: the body's first byte is read as this (a string's quote as 's') */
} Key;

typedef struct {
    uint32_t h;   /* the hash's high half (the low half chose the slot) */
    uint32_t id1; /* the key's number + 1; 0: a free slot */
} KSlot;

typedef struct {
    Buf bytes;          /* every key's bytes, one after another */
    Py_ssize_t *end;    /* key k's bytes end at end[k] (start at end[k - 1], or 0) */
    uint64_t *hash;     /* key k's hash (where it goes when the index grows) */
    Py_ssize_t n, cap;  /* keys, room in end */
    KSlot *slot;
    size_t mask;
} Keys;

static inline void key_init(Key *k, uint8_t tag) {
    k->head[0] = tag;
    k->nh = 1;
    k->p = NULL;
    k->n = 0;
    k->lead = -1;
}

static inline void key_num(Key *k, int64_t v) {
    put_le64(k->head + k->nh, (uint64_t)v);
    k->nh += 8;
}

static inline void key_body(Key *k, const void *p, Py_ssize_t n) {
    k->p = p;
    k->n = n;
    k->lead = -1;
}

typedef struct {
    PyObject *key;    /* the call id (a reference) */
    PyObject *res;    /* its first result (a reference), NULL while none came */
    Py_hash_t hash;
} REntry;

typedef struct {
    REntry *e;
    Py_ssize_t n, cap;
    uint32_t *slot; /* entry index + 1; 0 is free */
    size_t mask;
} RTable;

/* FirstResults: the table as a read-only mapping (call id -> first result), what
 * StepTable.results is on this path (previews and reports look a few ids up). It holds
 * only strings and the trajectory's result values, so it is not tracked by the GC. */
typedef struct {
    PyObject_HEAD
    RTable t;
    Py_ssize_t answered;
} FirstResults;

/* What build_ids and near_ids take from the events besides the calls: the first result of
 * each call id, and each call's entry in that table (made at the call, so that the step
 * pass reads the entries in order). Call ids are exact str here; any other call id sends
 * the trajectory to the pure path. The first member of their WalkResult's use. */
typedef struct {
    FirstResults *fr;
    Slot sl_cid, sl_res, sl_call;
} FrUse;

/* What build_ids and near_ids keep of each watched call, in call order (the walk's
 * numbering): the number of the key known at the call (its name's, or in name-args mode
 * the whole call's), and where results are read the call id's entry (-1: none). */
typedef struct {
    int64_t *pre;
    Py_ssize_t *ent;
    Py_ssize_t n, cap;
} ICalls;

/* The step keys of build_ids and near_ids: a step's key is its call's key, or for more
 * calls the key of their sorted numbers (tag 'm'); an empty step (rules.step_is_empty)
 * is marked and has none. */
typedef struct {
    int64_t *sk;      /* a step's key number */
    uint8_t *empty;   /* 1: an empty step */
    Py_ssize_t ns, empties;
    int64_t *calls;   /* the step at hand: its calls' key numbers */
    Py_ssize_t cap;
} StepKeys;

/* fc_object: not its kind of object (canon_raw does the whole value) */
#define NOT_HANDLED 2

/* ------------------------------------------------------------------------------------ */
/* What the four entry points that group and key the steps share (build_table, build_ids, */
/* near_keys, near_ids).                                                                  */

/* rules.step_is_empty, its one statement in C: a step of observation mode is empty when
 * one of its k calls has no observation and either all of them have none or the period
 * is over 1 (the caller counts empties only where observations are read). */
static inline int mr_step_is_empty(Py_ssize_t empties, Py_ssize_t k, int period) {
    return empties > 0 && (empties == k || period > 1);
}

/* The events of a call: the sequence (a new reference), its items and length. */
typedef struct {
    PyObject *seq;
    PyObject **items;
    Py_ssize_t n;
} Events;

/* Opens events: 0, or -1 with the error set (nothing to close then). */
static inline int mr_events_open(Events *ev, PyObject *events) {
    ev->seq = PySequence_Fast(events, "events must be a sequence");
    if (ev->seq == NULL) return -1;
    ev->n = PySequence_Fast_GET_SIZE(ev->seq);
    ev->items = PySequence_Fast_ITEMS(ev->seq);
    return 0;
}

/* The BLAKE2b step keys of build_table and near_keys: a step's calls' 16-byte digests
 * (dig) and their entries (es), room for cap calls. */
typedef struct {
    Entry *es;
    uint8_t *dig;
    Py_ssize_t cap;
} Digests;

/* Room in d for a step of k calls: 0, or -1 with MemoryError. */
int mr_digests_room(Digests *d, Py_ssize_t k);
/* Call j's digest (16 bytes, in d->dig) is made: its entry. */
static inline void mr_digests_set(Digests *d, Py_ssize_t j) {
    d->es[j].d = d->dig + 16 * j;
    d->es[j].n = 16;
}
/* One step's calls digested into d (mr_digests_set for each): the number of calls
 * without an observation, or -1 with the error set, or -2 when the pure path must run.
 * *k: the step's number of calls. */
typedef Py_ssize_t (*DigestStep)(void *use, Py_ssize_t s, Digests *d, Py_ssize_t *k);
/* The shared pass of build_table and near_keys: the BLAKE2b key of each of ns steps
 * (step_key's), None for an empty one (only where observe), as a list; NULL with the
 * error set, or with *pure set when the pure path must run. *any_empty: a step was. */
PyObject *mr_digest_steps(Py_ssize_t ns, DigestStep step, void *use, int observe, int period,
                          int *any_empty, int *pure);

/* The step keys of build_ids and near_ids: call j's number from its observation (only
 * called where observations are read): WALK_OK (*empty set when it has none), WALK_ERROR
 * or WALK_PURE. */
typedef int (*IdCall)(void *use, Py_ssize_t j, int64_t *id, int *empty);
/* The shared pass of build_ids and near_ids: each step's key into ks (mr_sk_step) from
 * its calls' numbers: cs->pre where nothing is observed, else obs's. WALK_OK, WALK_ERROR
 * or WALK_PURE. */
struct Walk;
int mr_id_steps(const struct Walk *w, const ICalls *cs, int period, IdCall obs, void *use,
                Keys *keys, StepKeys *ks);

/* ------------------------------------------------------------------------------------ */
/* Functions of _native.c the other files call.                                          */

/* BLAKE2b (16-byte digest) of a ++ b */
void mr_blake2b16(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint8_t out[16]);

/* the canonicalizer: a call's scratch space (NULL with MemoryError), and its end */
Canon *mr_canon_new(void);
void mr_canon_free(Canon *k);
/* canonical bytes of raw JSON (observation_bytes when observe) into out: OK, BAIL, FAIL;
 * *empty set when the observation is empty */
int mr_canon_raw(Canon *k, const uint8_t *raw, Py_ssize_t n, int observe, Buf *out,
                 int *empty);
/* a top-level object with plain ASCII keys: OK, BAIL, FAIL or NOT_HANDLED */
int mr_fc_object(Canon *kc, const uint8_t *raw, Py_ssize_t n, Buf *out);
/* whether valid UTF-8 text holds only ES whitespace */
int mr_utf8_blank(const uint8_t *s, Py_ssize_t n);

/* build_table's step key: count- and length-prefixed sorted entries (sorts es) */
PyObject *mr_step_key(Entry *es, Py_ssize_t n);

/* the exact key table */
void mr_keys_free(Keys *t);
int64_t mr_keys_intern(Keys *t, const Key *k);

/* the first-result table */
FirstResults *mr_fr_new(PyObject *module);
int mr_fr_first(FrUse *u, PyObject *data, Py_ssize_t *answered);
int mr_fr_call_entry(FrUse *u, PyObject *data, Py_ssize_t *ent);

/* the calls and step keys of build_ids and near_ids */
int mr_icalls_push(ICalls *c, int64_t pre, Py_ssize_t ent);
void mr_icalls_free(ICalls *c);
int mr_sk_init(StepKeys *t, Py_ssize_t ns);
void mr_sk_free(StepKeys *t);
int mr_sk_room(StepKeys *t, Py_ssize_t k);
int mr_sk_step(StepKeys *t, Keys *keys, Py_ssize_t s, Py_ssize_t k, int empty);
PyObject *mr_ids_of_keys(const StepKeys *t, Py_ssize_t nkeys);

#endif /* MAXREPEAT_NATIVE_H */
