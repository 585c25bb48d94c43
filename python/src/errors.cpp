// Engine exceptions as Python exceptions: UsageError and InputError are ValueErrors, every one is
// a NoveltyError, and each carries the message the CLI prints after "novelty: error: ".
#include "bindings.hpp"

#include "novelty/util/error.hpp"

#include <Python.h>

namespace novelty::python {

namespace {

struct ErrorTypes {
    PyObject* base = nullptr;    // NoveltyError(Exception)
    PyObject* usage = nullptr;   // UsageError(NoveltyError, ValueError)
    PyObject* input = nullptr;   // InputError(NoveltyError, ValueError)
    PyObject* corpus = nullptr;  // CorpusError(NoveltyError)
};

ErrorTypes error_types;

PyObject* new_type(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
    const std::string qualified = std::string("novelty.") + name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
    if (!type) throw nb::python_error();
    m.attr(name) = nb::handle(type);
    return type;
}

void translate(const std::exception_ptr& error, void*) {
    try {
        std::rethrow_exception(error);
    } catch (const UsageError& e) {
        PyErr_SetString(error_types.usage, e.what());
    } catch (const InputError& e) {
        PyErr_SetString(error_types.input, e.what());
    } catch (const CorpusError& e) {
        PyErr_SetString(error_types.corpus, e.what());
    } catch (const Error& e) {
        PyErr_SetString(error_types.base, e.what());
    }
}

}  // namespace

void bind_errors(nb::module_& m) {
    error_types.base = new_type(m, "NoveltyError", PyExc_Exception, "Any failure inside the novelty engine.");
    PyObject* value_bases = PyTuple_Pack(2, error_types.base, PyExc_ValueError);
    error_types.usage = new_type(m, "UsageError", value_bases,
                                 "An invalid argument (k out of range, an unknown method, a bad date, ...).");
    error_types.input = new_type(m, "InputError", value_bases,
                                 "A bad input file or record; the message names the file (or record) and line.");
    Py_DECREF(value_bases);
    error_types.corpus = new_type(m, "CorpusError", error_types.base,
                                  "A corpus directory that is incomplete or inconsistent with its manifest.");
    nb::register_exception_translator(translate);
}

}  // namespace novelty::python
