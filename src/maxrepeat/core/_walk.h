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
typedef struct Walk {
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

/* The walk's own state: the turn, the field reads, the filter's answers. */
typedef struct {
    int in_turn, turn_has_step;
    Slot sl_type, sl_data, sl_name;
    PyObject *watched; /* tool name -> True / False */
} WalkState;

/* Whether the tool name is watched: 1, 0, or -1 with the error set. watches: None (every
 * tool is), or the callable asked once per name (its answers kept in watched). */
WALK_INLINE int walk_watched(PyObject *watches, PyObject *watched, PyObject *name) {
    if (watches == Py_None) return 1;
    PyObject *seen = PyDict_GetItemWithError(watched, name);
    if (seen != NULL) return seen == Py_True;
    if (PyErr_Occurred()) return -1;
    PyObject *r = PyObject_CallOneArg(watches, name);
    int t = r == NULL ? -1 : PyObject_IsTrue(r);
    Py_XDECREF(r);
    if (t < 0 || PyDict_SetItem(watched, name, t ? Py_True : Py_False) < 0) return -1;
    return t;
}

/* The tool_call event i (its data borrowed): its tool name read and filtered; a watched
 * call handed to on_call, then placed (place_call: alone outside a turn; a turn's first
 * watched call opens its step, the later ones join it). */
WALK_INLINE int walk_call(WalkState *st, Walk *w, Py_ssize_t i, PyObject *data,
                          PyObject *watches, WalkCall on_call, void *use) {
    PyObject *name = data == Py_None ? NULL : get_attr(data, mr_S_tool_name, &st->sl_name);
    if (name == NULL || !PyUnicode_CheckExact(name)) {
        int rc = name == NULL && data != Py_None ? WALK_ERROR : WALK_PURE;
        Py_XDECREF(name);
        return rc;
    }
    int watched = walk_watched(watches, st->watched, name);
    int rc = watched < 0 ? WALK_ERROR : watched ? on_call(use, data, name) : WALK_OK;
    Py_DECREF(name);
    if (rc != WALK_OK || !watched) return rc;
    int new_step = !(st->in_turn && st->turn_has_step);
    if (st->in_turn) st->turn_has_step = 1;
    return walk_push(w, i, new_step) < 0 ? WALK_ERROR : WALK_OK;
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
    int rc = WALK_OK;
    WalkState st = {0};
    memset(w, 0, sizeof(*w));
    w->single = 1;
    st.watched = PyDict_New();
    if (st.watched == NULL) return WALK_ERROR;
    for (Py_ssize_t i = 0; i < n && rc == WALK_OK; i++) {
        PyObject *type = get_attr(items[i], mr_S_type, &st.sl_type);
        if (type == NULL) {
            rc = WALK_ERROR;
            break;
        }
        int code = event_code(type);
        Py_DECREF(type);
        if (code < 0) rc = WALK_PURE;
        if (code == T_START || code == T_END) {
            st.in_turn = code == T_START;
            st.turn_has_step = 0;
        }
        if (code != T_CALL && code != T_RESULT) continue;
        PyObject *data = get_attr(items[i], mr_S_data, &st.sl_data);
        if (data == NULL) rc = WALK_ERROR;
        else if (code == T_CALL) rc = walk_call(&st, w, i, data, watches, on_call, use);
        else if (results && data != Py_None) rc = on_result(use, data);
        Py_XDECREF(data);
    }
    Py_DECREF(st.watched);
    return rc;
}

/* The steps as build_ids and near_ids give them (_native.c): the call indices as int64
 * bytes when every step is one call, else a list of index lists. */
PyObject *mr_walk_shape(const Walk *w);

#endif /* MAXREPEAT_WALK_H */
