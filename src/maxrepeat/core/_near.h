/* What the near-duplicate files give the rest of the module (docs/design/native.md,
 * "Files"): the entry points of _near.c, the normalizers' check (_nearnorm.c) and their
 * rewrites (_nearrewrite.c), which the canonicalizer (_native.c) asks of every string
 * value while a near-duplicate call runs. */
#ifndef MAXREPEAT_NEAR_H
#define MAXREPEAT_NEAR_H

#include "_native.h"

/* _near.c: the module functions near_ids and near_keys */
PyObject *mr_near_ids(PyObject *self, PyObject *args);
PyObject *mr_near_keys(PyObject *self, PyObject *args);

/* _nearnorm.c: whether one of the normalizers in mask could change the UTF-8 text s (a
 * superset); the same checks fused with the plain-string test (1: plain and clean);
 * the module function near_dirty; the tables, filled once by the module's exec */
int mr_near_dirty(const uint8_t *s, Py_ssize_t n, int mask);
int mr_nz_plain_clean(const uint8_t *s, Py_ssize_t m, int mask, int *blank);
PyObject *mr_py_near_dirty(PyObject *self, PyObject *args);
void mr_nz_init(void);

/* _nearrewrite.c: every substitution of the normalizers in mask, in order (*t, *tn: the
 * result, s itself when nothing changed); the same after mr_near_dirty's check; the
 * module function near_rewrite; the tables, filled once by the module's exec */
int mr_nz_rewrite(Canon *kc, const uint8_t *s, Py_ssize_t n, int mask, const uint8_t **t,
                  Py_ssize_t *tn);
int mr_near_text(Canon *kc, const uint8_t *s, Py_ssize_t n, int mask, const uint8_t **t,
                 Py_ssize_t *tn);
PyObject *mr_py_near_rewrite(PyObject *self, PyObject *args);
void mr_nz_init_rewrites(void);

#endif /* MAXREPEAT_NEAR_H */
