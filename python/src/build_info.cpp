// build_info for Python, as the JSON text the benchmark's --build-info prints (prefix_scorer.build_info parses it).

#include "bindings.h"

#include "prefix_scorer/build_info.h"

namespace py = pybind11;

namespace prefix_scorer::python {

void register_build_info(py::module_& m) {
  m.def("build_info_json", [] { return to_json(build_info()); }, "What this build was compiled with, as JSON.");
}

}  // namespace prefix_scorer::python
