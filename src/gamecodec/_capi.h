/* The CPython helpers shared by the compiled twins: the one place that knows
   more than the public C API says. Each helper that relies on CPython's
   layout is fenced and commented here, with a version gate or a self-check. */
#ifndef GAMECODEC_CAPI_H
#define GAMECODEC_CAPI_H

#include <Python.h>

/* An instance of a tuple subclass with n empty slots, made the way CPython's
   tuple_subtype_new makes one (including the hash cache reset of 3.14+,
   gh-131525); the caller fills every slot with PyTuple_SET_ITEM before the
   object is used. */
static PyObject *gamecodec_alloc_subtuple(PyObject *cls, Py_ssize_t n) {
    PyObject *obj = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, n);
#if PY_VERSION_HEX >= 0x030E0000
    if (obj != NULL) ((PyTupleObject *)obj)->ob_hash = -1;
#endif
    return obj;
}

#endif
