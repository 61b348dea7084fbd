// prefix_scorer._testing: hooks for the project's own tests, built and installed only with the test suite
// (PREFIX_SCORER_BUILD_TESTS), never in a user's install.

#include "model/fault_injection.h"

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

namespace py = pybind11;

PYBIND11_MODULE(_testing, m) {
  m.doc() = "Test-only hooks of prefix_scorer.";
  m.def(
      "fail_forward",
      [](int64_t nth, const std::string& fault) {
        using prefix_scorer::testing::ForwardFault;
        if (fault != "out_of_memory" && fault != "torch_error")
          throw std::invalid_argument("fault must be 'out_of_memory' or 'torch_error', got '" + fault + "'");
        prefix_scorer::testing::fail_forward(
            nth, fault == "out_of_memory" ? ForwardFault::out_of_memory : ForwardFault::torch_error);
      },
      py::arg("nth"), py::arg("fault"), "The nth model forward from now (1: the next) throws `fault`, once; 0 disarms.");
}
