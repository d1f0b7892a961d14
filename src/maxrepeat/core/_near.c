/* Near-duplicate grading in C (core/near/steps.py; docs/design/near-duplicates.md, "Cost";
 * docs/design/native.md).
 *
 * Its own translation unit of the one extension module: it uses _native.c's JSON
 * canonicalizer, BLAKE2b, key table and first-result table and the event-field reads
 * (_native.h), the walk (_walk.h) and the normalizers (_near.h). The pure Python
 * path stays the reference and the definition:
 *
 * - The built-in normalizers run in C. `near_dirty` (in _nearnorm.c; and `near_plain`, the
 *   same checks fused with the plain-string test for a top-level string) is true for every
 *   string one of the enabled normalizers could change (a superset: the pre-checks of
 *   core/near/normalizers.py, with any doubt counted as "could"). While a value is
 *   canonicalized, the call's `Canon` holds the mask and the canonicalizer writes a dirty string value
 *   as its rewrite (`nz_rewrite`, _nearrewrite.c: every substitution in order, the text
 *   Python's re.sub gives); a clean value's rewrite is itself, so its canonical bytes are
 *   the raw value's. What the canonicalizer leaves to the reference (a lone surrogate, a
 *   long integer, ...) still goes to Python whole (`fallback_args` / `fallback_obs`: the
 *   Transform, then canonical bytes).
 * - `ignore_arguments` is done here: top-level members named in `Canon.near_ignore` are left
 *   out of the canonical object (their values are still parsed, not checked).
 * - `near_ids` gives grading what it needs (grouping, step ids from each key numbered
 *   exactly: build_ids' Keys, first results); `near_keys` the BLAKE2b keys, when read.
 * - Only settings whose rewrite is a pure function of each string are taken (no `replace`,
 *   no `similarity`: near/steps.py decides). Any exception from the reference (a value that
 *   cannot be compared) makes both return None: the pure path then runs whole and raises
 *   where it must.
 */

#include "_native.h"
#include "_near.h"
#include "_walk.h"

/* One tool's settings: its name bytes, and the argument keys left out (UTF-8 bytes). */
static PyObject *near_tool(PyObject *cache, PyObject *tool_info, PyObject *name) {
    PyObject *info = PyDict_GetItemWithError(cache, name);
    if (info != NULL) return info; /* borrowed */
    if (PyErr_Occurred()) return NULL;
    info = PyObject_CallOneArg(tool_info, name);
    if (info == NULL) return NULL;
    if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) != 2 ||
        !PyBytes_Check(PyTuple_GET_ITEM(info, 0)) || !PyTuple_Check(PyTuple_GET_ITEM(info, 1))) {
        Py_DECREF(info);
        PyErr_SetString(PyExc_TypeError, "tool_info must return (bytes, tuple of bytes)");
        return NULL;
    }
    int rc = PyDict_SetItem(cache, name, info);
    Py_DECREF(info);
    return rc < 0 ? NULL : info;
}

/* The canonical bytes of a raw JSON value into out with the near settings on: OK, BAIL
 * (a dirty string, or anything the canonicalizer leaves to the reference) or FAIL. */
static int near_canon(Canon *kc, PyObject *value, PyObject *raw_type, int mask,
                      PyObject *ignore, int observe, int *empty) {
    if (Py_TYPE(value) != (PyTypeObject *)raw_type) return BAIL;
    Py_buffer view;
    if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0) return FAIL;
    Buf *out = &kc->out;
    kc->near_mask = mask;
    kc->near_ignore = ignore;
    out->n = 0;
    *empty = 0;
    int rc = NOT_HANDLED;
    if (!observe && view.len > 2 && ((const uint8_t *)view.buf)[0] == '{') {
        /* an arguments object with plain keys: the exact path's short path (fc_object) */
        rc = mr_fc_object(kc, view.buf, view.len, out);
        if (rc == NOT_HANDLED) out->n = 0;
    }
    if (rc == NOT_HANDLED) rc = mr_canon_raw(kc, view.buf, view.len, observe, out, empty);
    kc->near_mask = 0;
    kc->near_ignore = NULL;
    PyBuffer_Release(&view);
    return rc;
}

/* Whether a Python error is one the reference raises for a value it cannot compare (the
 * pure path then runs and reports it): anything but MemoryError and the like. */
static int near_value_error(void) {
    return PyErr_ExceptionMatches(PyExc_Exception) && !PyErr_ExceptionMatches(PyExc_MemoryError);
}

/* The digest of an observation after the transform into out: 0, 1 when missing or empty,
 * -1 error, -2 the reference raised (go pure). */
static int near_obs(PyObject *value, PyObject *raw_type, int mask, PyObject *fallback,
                    Canon *kc, uint8_t out[16]) {
    if (value == NULL) return 1;
    int empty = 0;
    Buf *scratch = &kc->out;
    int rc = near_canon(kc, value, raw_type, mask, NULL, 1, &empty);
    if (rc == FAIL) return -1;
    if (rc == OK) {
        if (empty) return 1;
        mr_blake2b16((const uint8_t *)scratch->p, (size_t)scratch->n, NULL, 0, out);
        return 0;
    }
    PyObject *body = PyObject_CallOneArg(fallback, value);
    if (body == NULL) return near_value_error() ? (PyErr_Clear(), -2) : -1;
    if (body == Py_None) {
        Py_DECREF(body);
        return 1;
    }
    if (!PyBytes_Check(body)) {
        Py_DECREF(body);
        PyErr_SetString(PyExc_TypeError, "fallback_obs must return bytes or None");
        return -1;
    }
    mr_blake2b16((const uint8_t *)PyBytes_AS_STRING(body), (size_t)PyBytes_GET_SIZE(body), NULL, 0,
              out);
    Py_DECREF(body);
    return 0;
}

/* digest(a + b"\x01" + key) or digest(a + NO_OBSERVATION): near.steps.observed_key */
static void near_observed(const uint8_t *a, Py_ssize_t na, const uint8_t *key, uint8_t out[16]) {
    static const char tag[] = "\x00no-observation";
    if (key == NULL) {
        mr_blake2b16(a, (size_t)na, (const uint8_t *)tag, sizeof(tag) - 1, out);
        return;
    }
    uint8_t tail[17];
    tail[0] = 1;
    memcpy(tail + 1, key, 16);
    mr_blake2b16(a, (size_t)na, tail, 17, out);
}

/* near_keys' use of the step pass (mr_digest_steps). */
typedef struct {
    PyObject **items;
    Py_ssize_t n;
    PyObject *shape;
    int single, mode, mask;
    PyObject *raw_type, *tool_info, *fallback_args, *fallback_obs;
    PyObject *tools;   /* tool name -> near_tool's settings */
    PyObject *results; /* call id -> first result (modes 2 and 3) */
    Canon *kc;
    Slot sl_data, sl_name, sl_cid, sl_res, sl_args;
} KeysUse;

/* The first result of each call id (observation_keys: every result, watched or not) into
 * u->results: 0, or -1 with the error set. */
static int near_results(KeysUse *u) {
    Slot sl_type = {0};
    for (Py_ssize_t i = 0; i < u->n; i++) {
        PyObject *type = get_attr(u->items[i], mr_S_type, &sl_type);
        if (type == NULL) return -1;
        int code = event_code(type);
        Py_DECREF(type);
        if (code != T_RESULT) continue;
        PyObject *data = get_attr(u->items[i], mr_S_data, &u->sl_data);
        if (data == NULL) return -1;
        PyObject *cid = data == Py_None ? NULL : get_attr(data, mr_S_tool_call_id, &u->sl_cid);
        PyObject *res = cid == NULL || cid == Py_None ? NULL
                                                      : get_attr(data, mr_S_result, &u->sl_res);
        int bad = data != Py_None &&
                  (cid == NULL || (cid != Py_None && (res == NULL ||
                                   PyDict_SetDefault(u->results, cid, res) == NULL)));
        Py_XDECREF(res);
        Py_XDECREF(cid);
        Py_DECREF(data);
        if (bad) return -1;
    }
    return 0;
}

/* The digest of a call's transformed arguments, digest(name bytes + body), into out:
 * 0, -1 error, -2 go pure. */
static int near_args_digest(KeysUse *u, PyObject *data, PyObject *name, PyObject *info,
                            uint8_t out[16]) {
    PyObject *nb = PyTuple_GET_ITEM(info, 0), *ignore = PyTuple_GET_ITEM(info, 1), *body = NULL;
    PyObject *value = get_attr(data, mr_S_arguments, &u->sl_args);
    if (value == NULL) return -1;
    int empty = 0;
    int rc = near_canon(u->kc, value, u->raw_type, u->mask,
                        PyTuple_GET_SIZE(ignore) ? ignore : NULL, 0, &empty);
    if (rc == BAIL) {
        body = PyObject_CallFunctionObjArgs(u->fallback_args, name, value, NULL);
        rc = body == NULL ? (near_value_error() ? (PyErr_Clear(), -2) : FAIL) : OK;
        if (body != NULL && !PyBytes_Check(body)) {
            Py_CLEAR(body);
            PyErr_SetString(PyExc_TypeError, "fallback_args must return bytes");
            rc = FAIL;
        }
    }
    Py_DECREF(value);
    if (rc != OK) return rc == -2 ? -2 : -1;
    const uint8_t *p = body ? (const uint8_t *)PyBytes_AS_STRING(body) : (const uint8_t *)u->kc->out.p;
    Py_ssize_t np = body ? PyBytes_GET_SIZE(body) : u->kc->out.n;
    mr_blake2b16((const uint8_t *)PyBytes_AS_STRING(nb), (size_t)PyBytes_GET_SIZE(nb), p,
                 (size_t)np, out);
    Py_XDECREF(body);
    return 0;
}

/* The digest of a call with its observation (near.steps.observed_key) into out, after
 * prefix (the name bytes, or the arguments' digest): 0, 1 no observation, -1 error,
 * -2 go pure. */
static int near_obs_digest(KeysUse *u, PyObject *data, const uint8_t *prefix,
                           Py_ssize_t nprefix, uint8_t out[16]) {
    PyObject *cid = get_attr(data, mr_S_tool_call_id, &u->sl_cid);
    if (cid == NULL) return -1;
    PyObject *value = cid == Py_None ? NULL : PyDict_GetItemWithError(u->results, cid);
    Py_DECREF(cid);
    if (value == NULL && PyErr_Occurred()) return -1;
    uint8_t obs[16];
    Py_XINCREF(value);
    int r = near_obs(value, u->raw_type, u->mask, u->fallback_obs, u->kc, obs);
    Py_XDECREF(value);
    if (r >= 0) near_observed(prefix, nprefix, r == 0 ? obs : NULL, out);
    return r;
}

/* The digest of the call at event index i into out: 0, 1 no observation, -1 error, -2 go
 * pure (not a call with data and an exact str tool name, or the reference raised). */
static int near_call_digest(KeysUse *u, Py_ssize_t i, uint8_t out[16]) {
    if (i < 0 || i >= u->n) return -2;
    PyObject *data = get_attr(u->items[i], mr_S_data, &u->sl_data);
    if (data == NULL) return -1;
    PyObject *name = data == Py_None ? NULL : get_attr(data, mr_S_tool_name, &u->sl_name);
    int r = name == NULL || !PyUnicode_CheckExact(name) ? (PyErr_Occurred() ? -1 : -2) : 0;
    PyObject *info = r == 0 ? near_tool(u->tools, u->tool_info, name) : NULL;
    if (r == 0 && info == NULL) r = -1;
    uint8_t argd[16];
    const uint8_t *prefix = NULL;
    Py_ssize_t nprefix = 0;
    if (r == 0) {
        prefix = (const uint8_t *)PyBytes_AS_STRING(PyTuple_GET_ITEM(info, 0));
        nprefix = PyBytes_GET_SIZE(PyTuple_GET_ITEM(info, 0));
    }
    if (r == 0 && u->mode != 2) { /* the arguments' digest */
        r = near_args_digest(u, data, name, info, argd);
        prefix = argd;
        nprefix = 16;
        if (r == 0 && u->mode == 1) memcpy(out, argd, 16);
    }
    if (r == 0 && u->mode != 1) r = near_obs_digest(u, data, prefix, nprefix, out);
    Py_XDECREF(name);
    Py_DECREF(data);
    return r;
}

/* near_keys' step s into d (a DigestStep): its calls' digests. */
static Py_ssize_t near_step(void *use, Py_ssize_t s, Digests *d, Py_ssize_t *k) {
    KeysUse *u = use;
    PyObject *item = PyList_GET_ITEM(u->shape, s);
    *k = u->single ? 1 : (PyList_Check(item) ? PyList_GET_SIZE(item) : -1);
    if (*k < 1) return -2;
    if (mr_digests_room(d, *k) < 0) return -1;
    Py_ssize_t empties = 0;
    for (Py_ssize_t j = 0; j < *k; j++) {
        Py_ssize_t i = PyLong_AsSsize_t(u->single ? item : PyList_GET_ITEM(item, j));
        if (i == -1 && PyErr_Occurred()) return -1;
        int r = near_call_digest(u, i, d->dig + 16 * j);
        if (r < 0) return r;
        empties += r;
        mr_digests_set(d, j);
    }
    return empties;
}

/* near_keys(events, shape, single, mode, period, mask, raw_type, tool_info, fallback_args,
 *           fallback_obs) -> (keys, results) or None when the pure path must run: keys one
 * per step (bytes, or None for an empty step); results the first result of each call id
 * (modes 2 and 3; None in mode 1). mode 1: name-args; 2: observation; 3: name-args with
 * with_observation. shape/single: build_table's grouping. tool_info(name) -> (name bytes,
 * ignored keys as UTF-8 bytes); fallback_args(name, value) -> the canonical bytes of the
 * transformed arguments; fallback_obs(value) -> those of the transformed observation, or
 * None when it is empty. */
PyObject *mr_near_keys(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *events, *result = NULL;
    KeysUse u = {0};
    Events ev;
    int period, pure = 0, any_empty;
    if (!PyArg_ParseTuple(args, "OOpiiiOOOO", &events, &u.shape, &u.single, &u.mode, &period,
                          &u.mask, &u.raw_type, &u.tool_info, &u.fallback_args, &u.fallback_obs))
        return NULL;
    if (!PyList_CheckExact(u.shape) || u.mode < 1 || u.mode > 3) {
        PyErr_SetString(PyExc_ValueError, "near_keys: bad shape or mode");
        return NULL;
    }
    if (mr_events_open(&ev, events) < 0) return NULL;
    u.items = ev.items;
    u.n = ev.n;
    u.tools = PyDict_New();
    u.kc = mr_canon_new();
    if (u.mode != 1) u.results = PyDict_New();
    if (u.tools != NULL && u.kc != NULL && (u.mode == 1 || u.results != NULL) &&
        (u.mode == 1 || near_results(&u) == 0)) {
        PyObject *keys = mr_digest_steps(PyList_GET_SIZE(u.shape), near_step, &u, u.mode == 2,
                                         period, &any_empty, &pure);
        if (keys != NULL) result = PyTuple_Pack(2, keys, u.results ? u.results : Py_None);
        Py_XDECREF(keys);
    }
    Py_XDECREF(u.results);
    Py_XDECREF(u.tools);
    mr_canon_free(u.kc);
    Py_DECREF(ev.seq);
    if (pure && result == NULL) Py_RETURN_NONE;
    return result;
}

/* ------------------------------------------------------------------------------------ */
/* near_ids: what grading needs (the step ids, the first results), as build_ids gives it */
/* for exact matching: each call's key numbered exactly (build_ids' Keys) from the parts */
/* its reference key is made of (name bytes; the transformed arguments' canonical bytes; */
/* the number of the transformed observation's canonical bytes, or the no-observation    */
/* mark), so equal keys give equal ids and different keys different ones; the BLAKE2b    */
/* keys (near_keys) are made only when read.                                              */

/* A top-level JSON string value at raw (n bytes, quotes included) that is plain (ASCII,
 * no escape, no quote or control character inside: canon_raw's own plain test) and that
 * no normalizer in mask could change (near_dirty's checks; the ones that need a control
 * character, a backslash or a non-ASCII byte cannot apply), set as k's body: its
 * canonical bytes are 's' and the text, read in place (the opening quote read as 's'):
 * OK; else BAIL (the general path decides). One pass, 16 bytes at a time where SSE2
 * exists, for what canon_raw and near_dirty would each scan. *empty: a blank observation. */
static int near_plain(const uint8_t *raw, Py_ssize_t n, int mask, int observe, Key *k,
                      int *empty) {
    *empty = 0;
    if (n < 2 || raw[0] != '"' || raw[n - 1] != '"') return BAIL;
    Py_ssize_t m = n - 2;
    int blank;
    if (!mr_nz_plain_clean(raw + 1, m, mask, &blank)) return BAIL;
    if (observe && blank) {
        *empty = 1;
        return OK;
    }
    key_body(k, raw, m + 1);
    k->lead = 's';
    return OK;
}

/* The canonical bytes of a value after the transform, set as k's body (in scratch, in
 * the value's own buffer, or in *hold: a reference the caller drops after using k; a
 * Raw value's buffer lives as long as the value): 0 set, 1 empty observation (no body),
 * -1 error, -2 go pure. */
static int near_part(Key *k, PyObject *value, PyObject *raw_type, int mask, PyObject *ignore,
                     int observe, PyObject *fallback, PyObject *name, Canon *kc,
                     PyObject **hold) {
    int empty = 0;
    Buf *scratch = &kc->out;
    if (Py_TYPE(value) == (PyTypeObject *)raw_type) { /* a plain string: one pass, no copy */
        Py_buffer view;
        if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0) return -1;
        int rc = near_plain(view.buf, view.len, mask, observe, k, &empty);
        PyBuffer_Release(&view);
        if (rc == OK) return empty;
    }
    if (value == Py_None) { /* canonical_bytes(None) is b"jnull"; a None observation is empty */
        if (observe) return 1;
        key_body(k, "jnull", 5);
        return 0;
    }
    if (PyUnicode_CheckExact(value)) { /* a str given in memory (not read from a file) */
        Py_ssize_t len;
        const char *str = PyUnicode_AsUTF8AndSize(value, &len);
        if (str == NULL) {
            PyErr_Clear(); /* lone surrogates: the reference below */
        } else {
            const uint8_t *t;
            Py_ssize_t tn;
            if (mr_near_text(kc, (const uint8_t *)str, len, mask, &t, &tn) < 0) return -1;
            if (observe && mr_utf8_blank(t, tn)) return 1;
            scratch->n = 0;
            if (buf_byte(scratch, 's') < 0 || buf_put(scratch, t, tn) < 0) return -1;
            key_body(k, scratch->p, scratch->n);
            return 0;
        }
    }
    int rc = near_canon(kc, value, raw_type, mask, ignore, observe, &empty);
    if (rc == FAIL) return -1;
    if (rc == OK) {
        if (empty) return 1;
        key_body(k, scratch->p, scratch->n);
        return 0;
    }
    PyObject *body = observe ? PyObject_CallOneArg(fallback, value)
                             : PyObject_CallFunctionObjArgs(fallback, name, value, NULL);
    if (body == NULL) return near_value_error() ? (PyErr_Clear(), -2) : -1;
    if (body == Py_None && observe) {
        Py_DECREF(body);
        return 1;
    }
    if (!PyBytes_Check(body)) {
        Py_DECREF(body);
        PyErr_SetString(PyExc_TypeError, "a fallback must return bytes");
        return -1;
    }
    key_body(k, PyBytes_AS_STRING(body), PyBytes_GET_SIZE(body));
    *hold = body;
    return 0;
}

/* near_part, then the key's number into *id: 0 numbered, 1 empty observation, -1 error,
 * -2 go pure. */
static int near_key(Keys *keys, Key *k, int64_t *id, PyObject *value, PyObject *raw_type,
                    int mask, PyObject *ignore, int observe, PyObject *fallback,
                    PyObject *name, Canon *kc) {
    PyObject *hold = NULL;
    int r = near_part(k, value, raw_type, mask, ignore, observe, fallback, name, kc, &hold);
    if (r == 0 && (*id = mr_keys_intern(keys, k)) < 0) r = -1;
    Py_XDECREF(hold);
    return r;
}


/* A call id's observation (the first result's canonical bytes after the transform),
 * numbered once (tag 'O'), or marked empty: kept by the entry's index in the call-id
 * table. */
enum { OBS_UNMADE = 0, OBS_EMPTY = 1, OBS_MADE = 2 };

typedef struct {
    int64_t id;
    uint8_t state;   /* OBS_* */
    uint8_t watched; /* a watched call has this call id */
} NearObs;

/* near_ids' use of the walk (_walk.h): each call's name and arguments numbered at the
 * call, its call id's entry made then; a first result is numbered when it arrives if a
 * watched call already has its id (the usual order), so its bytes are read right after
 * the arguments next to them, while they are still in cache; the others in the step
 * pass. */
typedef struct {
    FrUse r; /* first: fr_result's use */
    ICalls cs;
    Keys *keys;
    PyObject *tools, *tool_info, *raw_type, *fallback_args, *fallback_obs;
    int mode, mask;
    Canon *kc;
    Slot sl_args;
    NearObs *obs; /* by entry index; zeroed when grown */
    Py_ssize_t obs_cap;
} NearUse;

/* Room in u->obs for entry k: 0, or -1 with MemoryError. */
static int near_obs_room(NearUse *u, Py_ssize_t k) {
    if (k < u->obs_cap) return 0;
    Py_ssize_t cap = u->obs_cap ? u->obs_cap : 1024;
    while (cap <= k) cap *= 2;
    NearObs *grown = PyMem_Realloc(u->obs, (size_t)cap * sizeof(NearObs));
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(grown + u->obs_cap, 0, (size_t)(cap - u->obs_cap) * sizeof(NearObs));
    u->obs = grown;
    u->obs_cap = cap;
    return 0;
}

/* Entry k's observation (its first result, value) numbered or marked empty: WALK_OK,
 * WALK_ERROR or WALK_PURE (the reference raised). */
static int near_obs_make(NearUse *u, Py_ssize_t k, PyObject *value) {
    NearObs *o = &u->obs[k];
    Key key;
    key_init(&key, 'O');
    Py_INCREF(value);
    int r = near_key(u->keys, &key, &o->id, value, u->raw_type, u->mask, NULL, 1,
                     u->fallback_obs, NULL, u->kc);
    Py_DECREF(value);
    if (r == -1) return WALK_ERROR;
    if (r == -2) return WALK_PURE;
    o->state = r == 1 ? OBS_EMPTY : OBS_MADE;
    return WALK_OK;
}

static int near_result(void *use, PyObject *data) {
    NearUse *u = use;
    Py_ssize_t k;
    int rc = mr_fr_first(&u->r, data, &k);
    if (rc != WALK_OK || k < 0 || k >= u->obs_cap || !u->obs[k].watched) return rc;
    return near_obs_make(u, k, u->r.fr->t.e[k].res);
}

static int near_call(void *use, PyObject *data, PyObject *name) {
    NearUse *u = use;
    PyObject *info = near_tool(u->tools, u->tool_info, name);
    if (info == NULL) return WALK_ERROR;
    Key k;
    key_init(&k, 'N');
    PyObject *nb = PyTuple_GET_ITEM(info, 0);
    key_body(&k, PyBytes_AS_STRING(nb), PyBytes_GET_SIZE(nb));
    int64_t pre = mr_keys_intern(u->keys, &k);
    if (pre < 0) return WALK_ERROR;
    if (u->mode != 2) {
        PyObject *value = get_attr(data, mr_S_arguments, &u->sl_args);
        PyObject *ignore = PyTuple_GET_ITEM(info, 1);
        key_init(&k, 'A');
        key_num(&k, pre);
        int r = value == NULL ? -1 : near_key(u->keys, &k, &pre, value, u->raw_type, u->mask,
                                              PyTuple_GET_SIZE(ignore) ? ignore : NULL, 0,
                                              u->fallback_args, name, u->kc);
        Py_XDECREF(value);
        if (r == -1) return WALK_ERROR;
        if (r == -2) return WALK_PURE;
    }
    Py_ssize_t ent = -1;
    if (u->mode != 1) {
        int rc = mr_fr_call_entry(&u->r, data, &ent);
        if (rc != WALK_OK) return rc;
        if (ent >= 0) {
            if (near_obs_room(u, ent) < 0) return WALK_ERROR;
            u->obs[ent].watched = 1;
        }
    }
    return mr_icalls_push(&u->cs, pre, ent) < 0 ? WALK_ERROR : WALK_OK;
}

/* Call j's key where results are read: its key at the call (pre) with its observation's
 * number, or the no-observation mark (-1: a call with no result or an empty one, *empty
 * set). WALK_OK, WALK_ERROR or WALK_PURE. */
static int near_call_obs(NearUse *u, int64_t pre, Py_ssize_t ent, int64_t *id, int *empty) {
    PyObject *value = ent >= 0 ? u->r.fr->t.e[ent].res : NULL;
    NearObs *o = value != NULL ? &u->obs[ent] : NULL;
    if (o != NULL && o->state == OBS_UNMADE) { /* its result came first */
        int rc = near_obs_make(u, ent, value);
        if (rc != WALK_OK) return rc;
    }
    Key k;
    key_init(&k, 'C');
    key_num(&k, pre);
    *empty = o == NULL || o->state == OBS_EMPTY;
    key_num(&k, *empty ? -1 : o->id);
    return (*id = mr_keys_intern(u->keys, &k)) < 0 ? WALK_ERROR : WALK_OK;
}

/* near_ids' IdCall: call j's key where results are read (near_call_obs). A step is
 * empty in observation mode only (rules.step_is_empty): with_observation's calls are
 * never counted as empty. */
static int near_obs_call(void *use, Py_ssize_t j, int64_t *id, int *empty) {
    NearUse *u = use;
    int rc = near_call_obs(u, u->cs.pre[j], u->cs.ent[j], id, empty);
    if (u->mode != 2) *empty = 0;
    return rc;
}

/* near_ids(events, mode, period, watches, mask, raw_type, tool_info, fallback_args,
 *          fallback_obs) -> (calls_or_steps, single, ids, first_results_or_None, n_calls,
 * empty_steps) or None when the pure path must run. One pass as build_ids makes it (the
 * shared walk, _walk.h: the grouping of core.steps.group_steps, spec 3.2; a call's
 * arguments numbered when it arrives, its call id's entry made then, so the step pass
 * reads the entries in order; a watched call's first result numbered when it arrives),
 * then the step keys (ids as int64 bytes, ids_of_keys'). calls_or_steps as build_ids
 * gives it: the call indices as int64 bytes when single, else a list of index lists.
 * Other arguments as near_keys'. */
PyObject *mr_near_ids(PyObject *self, PyObject *args) {
    PyObject *events, *watches, *raw_type, *tool_info, *fallback_args, *fallback_obs;
    int mode, period, mask;
    if (!PyArg_ParseTuple(args, "OiiOiOOOO", &events, &mode, &period, &watches, &mask,
                          &raw_type, &tool_info, &fallback_args, &fallback_obs))
        return NULL;
    if (mode < 1 || mode > 3) {
        PyErr_SetString(PyExc_ValueError, "near_ids: bad mode");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(events, "events must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *result = NULL, *ids = NULL, *shape = NULL, *tools = PyDict_New();
    FirstResults *fr = NULL;
    NearUse u = {0};
    Walk w = {0};
    Keys keys = {0};
    StepKeys ks = {0};
    ICalls *cs = &u.cs;
    Canon *kc = mr_canon_new();
    if (tools == NULL || kc == NULL) goto error;
    if (mode != 1) {
        fr = mr_fr_new(self);
        if (fr == NULL) goto error;
    }

    /* 1. group, number each call's name and arguments, the first results by call id */
    u.r.fr = fr;
    u.keys = &keys;
    u.tools = tools;
    u.tool_info = tool_info;
    u.raw_type = raw_type;
    u.fallback_args = fallback_args;
    u.fallback_obs = fallback_obs;
    u.mode = mode;
    u.mask = mask;
    u.kc = kc;
    int walked = walk_events(items, n, watches, mode != 1, near_result, near_call, &u, &w);
    if (walked == WALK_ERROR) goto error;
    if (walked == WALK_PURE) goto pure;

    /* 2. step keys: the observations, then each step's multiset */
    int stepped = mr_id_steps(&w, cs, period, mode == 1 ? NULL : near_obs_call, &u, &keys, &ks);
    if (stepped == WALK_ERROR) goto error;
    if (stepped == WALK_PURE) goto pure;
    ids = mr_ids_of_keys(&ks, keys.n);
    if (ids == NULL) goto error;

    /* 3. the steps (as build_ids gives them) */
    shape = mr_walk_shape(&w);
    if (shape == NULL) goto error;
    result = Py_BuildValue("(OOOOnn)", shape, w.single ? Py_True : Py_False, ids,
                           fr ? (PyObject *)fr : Py_None, w.n, ks.empties);
    goto cleanup;
pure:
    result = Py_None;
    Py_INCREF(result);
    goto cleanup;
error:
    result = NULL;
cleanup:
    Py_XDECREF(shape);
    Py_XDECREF(ids);
    Py_XDECREF(fr);
    Py_XDECREF(tools);
    mr_canon_free(kc);
    mr_icalls_free(cs);
    PyMem_Free(u.obs);
    walk_free(&w);
    mr_keys_free(&keys);
    mr_sk_free(&ks);
    Py_DECREF(seq);
    return result;
}
