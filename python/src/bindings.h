#pragma once
// The register_* function of each bound unit, called by the module file.

#include <pybind11/pybind11.h>

namespace prefix_scorer::python {

void register_build_info(pybind11::module_& m);
void register_model(pybind11::module_& m);
void register_scorer(pybind11::module_& m);
void register_tokenizer(pybind11::module_& m);

}  // namespace prefix_scorer::python
