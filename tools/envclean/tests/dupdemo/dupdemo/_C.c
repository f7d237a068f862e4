/* dupdemo._C: registers the type name "Widget" in a registry kept in builtins (like
   pybind11's internals) and fails when another copy already registered it */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

int dupcore_abi(void);
int dupcore_register_v2(const char *name);

static PyObject *
widget(PyObject *self, PyObject *args)
{
	return PyUnicode_FromFormat("widget from libdupcore ABI %d", dupcore_abi());
}

static PyMethodDef methods[] = {
	{"widget", widget, METH_NOARGS, "name the core library in use"},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "dupdemo._C", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__C(void)
{
	PyObject *builtins = PyEval_GetBuiltins(), *reg;

	reg = PyDict_GetItemString(builtins, "__dupdemo_internals__");
	if (!reg) {
		reg = PyDict_New();
		if (!reg || PyDict_SetItemString(builtins, "__dupdemo_internals__", reg) < 0)
			return NULL;
		Py_DECREF(reg);
	}
	if (PyDict_GetItemString(reg, "Widget")) {
		PyErr_SetString(PyExc_ImportError, "generic_type: cannot initialize type \"Widget\": "
		                "an object with that name is already defined");
		return NULL;
	}
	if (PyDict_SetItemString(reg, "Widget", Py_True) < 0 || dupcore_register_v2("Widget") < 0)
		return NULL;
	return PyModule_Create(&def);
}
