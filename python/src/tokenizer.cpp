// The native tokenizer and lm-eval's pair encoding, for Python.

#include "bindings.h"

#include "prefix_scorer/tokenizer.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace prefix_scorer::python {

void register_tokenizer(py::module_& m) {
  py::class_<Tokenizer>(m, "Tokenizer", "A Hugging Face tokenizer.json, read natively.")
      .def_static(
          "from_file",
          [](const py::object& path) {
            return Tokenizer::from_file(py::module_::import("os").attr("fspath")(path).cast<std::string>());
          },
          py::arg("path"), "tokenizer.json, or a directory holding it (and tokenizer_config.json); str or PathLike.")
      .def("encode", &Tokenizer::encode, py::arg("text"), py::arg("add_special_tokens") = false,
           py::call_guard<py::gil_scoped_release>())
      .def("decode", &Tokenizer::decode, py::arg("ids"), py::arg("skip_special_tokens") = false)
      .def("token_to_id", &Tokenizer::token_to_id, py::arg("token"))
      .def("id_to_token", &Tokenizer::id_to_token, py::arg("id"))
      .def_property_readonly("vocab_size", &Tokenizer::vocab_size)
      .def_property_readonly("bos_token_id", &Tokenizer::bos_token_id)
      .def_property_readonly("eos_token_id", &Tokenizer::eos_token_id)
      .def_property_readonly("adds_special_tokens", &Tokenizer::adds_special_tokens,
                             "whether encode(text, True) adds tokens (a BOS) by the tokenizer's own default");

  m.def(
      "encode_pair",
      [](const Tokenizer& tokenizer, const std::string& context, const std::string& continuation, bool add_special) {
        const Request r = encode_pair(tokenizer, context, continuation, add_special);
        return std::make_pair(r.context, r.continuation);
      },
      py::arg("tokenizer"), py::arg("context"), py::arg("continuation"), py::arg("add_special_tokens"),
      py::call_guard<py::gil_scoped_release>(),
      "(context ids, continuation ids) as lm-evaluation-harness's HF backend encodes a pair.");
}

}  // namespace prefix_scorer::python
