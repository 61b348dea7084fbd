// prefix_scorer._core: the native library for Python, with its errors mapped to Python's types.

#include "bindings.h"

#include "prefix_scorer/errors.h"

#include <c10/util/Exception.h>

namespace py = pybind11;

namespace {

// torch.cuda.OutOfMemoryError where torch is already imported, else MemoryError.
PyObject* out_of_memory_type() {
  py::module_ sys = py::module_::import("sys");
  if (sys.attr("modules").contains("torch")) {
    py::object cuda = sys.attr("modules")["torch"].attr("cuda");
    if (py::hasattr(cuda, "OutOfMemoryError")) return cuda.attr("OutOfMemoryError").ptr();
  }
  return PyExc_MemoryError;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "Native core of prefix_scorer: model, prefix-caching scorer and tokenizer.";
  prefix_scorer::python::register_build_info(m);
  prefix_scorer::python::register_model(m);
  prefix_scorer::python::register_scorer(m);
  prefix_scorer::python::register_tokenizer(m);

  py::register_exception<prefix_scorer::Cancelled>(m, "Cancelled", PyExc_RuntimeError);
  // std::invalid_argument already maps to ValueError and std::bad_alloc to MemoryError.
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const prefix_scorer::FileNotFound& e) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } catch (const c10::OutOfMemoryError& e) {
      PyErr_SetString(out_of_memory_type(), e.what_without_backtrace());
    } catch (const c10::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
    }
  });
}
