// ModelOptions and ModelInfo, for Python.

#include "bindings.h"

#include "prefix_scorer/model.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace prefix_scorer::python {

void register_model(py::module_& m) {
  py::class_<ModelOptions>(m, "ModelOptions", "Where and how a model runs.")
      .def(py::init<>())
      .def_readwrite("device", &ModelOptions::device, "cpu, cuda or cuda:N")
      .def_readwrite("layer_devices", &ModelOptions::layer_devices,
                     "the layers split into contiguous blocks over these devices, balanced by their weights' bytes (overrides device)")
      .def_readwrite("dtype", &ModelOptions::dtype, "float32, bfloat16 or float16")
      .def_readwrite("seed", &ModelOptions::seed, "weights of synthetic:NAME models")
      .def_readwrite("adapter", &ModelOptions::adapter,
                     "a LoRA adapter folder (peft's) merged into the weights at load; empty: none")
      .def_readwrite("vocab_size", &ModelOptions::vocab_size,
                     "> 0: the embeddings and output layer resized to this many tokens (rows cut, or the adapter's)");

  py::class_<ModelInfo>(m, "ModelInfo", "A model's type and sizes (heads and head size: the first layer's).")
      .def_readonly("model_type", &ModelInfo::model_type)
      .def_readonly("vocab_size", &ModelInfo::vocab_size)
      .def_readonly("hidden_size", &ModelInfo::hidden_size)
      .def_readonly("num_layers", &ModelInfo::num_layers)
      .def_readonly("num_heads", &ModelInfo::num_heads)
      .def_readonly("num_kv_heads", &ModelInfo::num_kv_heads)
      .def_readonly("head_dim", &ModelInfo::head_dim)
      .def_readonly("max_position_embeddings", &ModelInfo::max_position_embeddings)
      .def_readonly("num_parameters", &ModelInfo::num_parameters)
      .def_readonly("weight_bytes", &ModelInfo::weight_bytes, "the bytes the loaded weights hold")
      .def_readonly("quantized_weight_bytes", &ModelInfo::quantized_weight_bytes,
                    "the bytes of those kept in the checkpoint's quantized form (4-bit codes, FP8, MXFP4, NVFP4)");

  m.def("supported_model_types", &supported_model_types,
        "Every config.json model_type the native engine runs (the multimodal wrappers last).");
  m.def("quantization_refusal", &quantization_refusal, py::arg("quantization_config_json"),
        "Why the native engine does not read a config.json's quantization_config (its JSON text): '' where it does.");
}

}  // namespace prefix_scorer::python
