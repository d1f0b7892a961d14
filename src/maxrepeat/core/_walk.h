/* The walk over a trajectory's events that groups the watched calls into steps
 * (core.steps.group_steps; the turn rules of spec 3.2), written once for build_table,
 * build_ids (_native.c) and near_ids (_near.c): which events count, how a call's tool
 * name is read, the tools filter, the step a call joins, and every condition on which
 * the pure path must run instead. What each of them takes from a call or a result (a
 * reference to keep, a hash, a first-result entry) is its own: two functions the walk
 * calls (`WalkResult`, `WalkCall`).
 *
 * A header, included by _native.c and _near.c: everything here is static inline, and
 * `walk_events` is inlined into each caller, so the two functions are direct calls there
 * and the walk costs what the three copies of it cost. */

#ifndef MAXREPEAT_WALK_H
#define MAXREPEAT_WALK_H

#include "_native.h"

/* What a step of the walk (and a WalkUse function) answers. */
enum { WALK_OK = 0, WALK_ERROR = -1, WALK_PURE = -2 };

#if defined(__GNUC__)
#define WALK_INLINE static inline __attribute__((always_inline))
#else
#define WALK_INLINE static inline
#endif

/* What a use of the walk does with an event. Each answers WALK_OK, WALK_ERROR (an
 * exception set) or WALK_PURE (the pure path must run: the walk stops, no exception).
 * - WalkResult(use, data): a tool_result event with data (not None), borrowed;
 * - WalkCall(use, data, name): a watched tool_call: its data and tool name (an exact
 *   str), both borrowed. It is the call numbered `walk->n` (the walk records its event
 *   index and its step once it answers WALK_OK). */
typedef int (*WalkResult)(void *use, PyObject *data);
typedef int (*WalkCall)(void *use, PyObject *data, PyObject *name);

/* The grouping: the event index of each watched call, the first call of each step, and
 * whether every step is one call (SingleCallSteps). C arrays: no object per step. */
typedef struct {
    Py_ssize_t *idx;
    Py_ssize_t n, cap;
    Py_ssize_t *start;
    Py_ssize_t ns, scap;
    int single;
} Walk;

static inline void walk_free(Walk *w) {
    PyMem_Free(w->idx);
    PyMem_Free(w->start);
}

/* The calls of step s: [*a, *b). */
static inline void walk_step(const Walk *w, Py_ssize_t s, Py_ssize_t *a, Py_ssize_t *b) {
    *a = w->start[s];
    *b = s + 1 < w->ns ? w->start[s + 1] : w->n;
}

/* Room for one more entry in an array of cap elements of size elt (doubled, 1024 at
 * first): 0, or -1 with MemoryError. */
static inline int walk_grow(void **p, Py_ssize_t n, Py_ssize_t *cap, size_t elt) {
    if (n < *cap) return 0;
    Py_ssize_t size = *cap ? *cap * 2 : 1024;
    void *grown = PyMem_Realloc(*p, (size_t)size * elt);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *p = grown;
    *cap = size;
    return 0;
}

/* Records call i (its event index), opening a step when new_step. */
static inline int walk_push(Walk *w, Py_ssize_t i, int new_step) {
    if (new_step) {
        if (walk_grow((void **)&w->start, w->ns, &w->scap, sizeof(Py_ssize_t)) < 0) return -1;
        w->start[w->ns++] = w->n;
    } else {
        w->single = 0;
    }
    if (walk_grow((void **)&w->idx, w->n, &w->cap, sizeof(Py_ssize_t)) < 0) return -1;
    w->idx[w->n++] = i;
    return 0;
}

/* Walks the n events at items: WALK_OK with the grouping in *w (free it with walk_free
 * whatever the answer), WALK_ERROR or WALK_PURE. watches: None (every tool is watched)
 * or the callable that says whether a tool name is (asked once per name). on_result is
 * called only when results is true (each result's data is read either way, as the
 * reference's grouping reads it); a flag rather than a NULL function, so that both
 * functions stay constants once inlined.
 *
 * The pure path runs (WALK_PURE) on an event whose type is not an exact str, a call
 * without data, a call whose tool name is not an exact str, or when a use says so. */
WALK_INLINE int walk_events(PyObject *const *items, Py_ssize_t n, PyObject *watches,
                            int results, WalkResult on_result, WalkCall on_call, void *use,
                            Walk *w) {
    int in_turn = 0, turn_has_step = 0, rc = WALK_OK;
    Slot sl_type = {0}, sl_data = {0}, sl_name = {0};
    memset(w, 0, sizeof(*w));
    w->single = 1;
    PyObject *watched = PyDict_New(); /* tool name -> True / False: the filter's answers */
    if (watched == NULL) return WALK_ERROR;
    for (Py_ssize_t i = 0; i < n && rc == WALK_OK; i++) {
        PyObject *ev = items[i];
        PyObject *type = get_attr(ev, mr_S_type, &sl_type);
        if (type == NULL) {
            rc = WALK_ERROR;
            break;
        }
        int code = event_code(type);
        Py_DECREF(type);
        if (code < 0) {
            rc = WALK_PURE;
            break;
        }
        if (code == T_OTHER) continue;
        if (code == T_START || code == T_END) {
            in_turn = code == T_START;
            turn_has_step = 0;
            continue;
        }
        PyObject *data = get_attr(ev, mr_S_data, &sl_data);
        if (data == NULL) {
            rc = WALK_ERROR;
            break;
        }
        if (code == T_RESULT) {
            if (results && data != Py_None) rc = on_result(use, data);
            Py_DECREF(data);
            continue;
        }
        /* a call */
        PyObject *name = data == Py_None ? NULL : get_attr(data, mr_S_tool_name, &sl_name);
        if (name == NULL || !PyUnicode_CheckExact(name)) {
            rc = name == NULL && data != Py_None ? WALK_ERROR : WALK_PURE;
            Py_XDECREF(name);
            Py_DECREF(data);
            break;
        }
        if (watches != Py_None) {
            PyObject *seen = PyDict_GetItemWithError(watched, name);
            if (seen == NULL) {
                PyObject *r = PyErr_Occurred() ? NULL : PyObject_CallOneArg(watches, name);
                int t = r == NULL ? -1 : PyObject_IsTrue(r);
                Py_XDECREF(r);
                seen = t ? Py_True : Py_False;
                if (t < 0 || PyDict_SetItem(watched, name, seen) < 0) rc = WALK_ERROR;
            }
            if (rc != WALK_OK || seen == Py_False) {
                Py_DECREF(name);
                Py_DECREF(data);
                continue;
            }
        }
        rc = on_call(use, data, name);
        Py_DECREF(name);
        Py_DECREF(data);
        if (rc != WALK_OK) break;
        /* place_call: alone outside a turn; a turn's first watched call opens its step,
         * the later ones join it */
        int new_step = !(in_turn && turn_has_step);
        if (in_turn) turn_has_step = 1;
        if (walk_push(w, i, new_step) < 0) rc = WALK_ERROR;
    }
    Py_DECREF(watched);
    return rc;
}

/* The steps as build_ids and near_ids give them (_native.c): the call indices as int64
 * bytes when every step is one call, else a list of index lists. */
PyObject *mr_walk_shape(const Walk *w);

#endif /* MAXREPEAT_WALK_H */
