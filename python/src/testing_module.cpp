// prefix_scorer._testing: hooks for the project's own tests, built and installed only with the test suite
// (PREFIX_SCORER_BUILD_TESTS), never in a user's install.

#include "model/config/model_config.h"
#include "model/fault_injection.h"
#include "model/forward_batch.h"
#include "model/ops/rope.h"
#include "prefix_scorer/plain_scorer.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

  using prefix_scorer::Model;
  using prefix_scorer::ModelOptions;
  using prefix_scorer::TokenIds;
  auto open = [](const std::string& path, const std::string& dtype) {
    ModelOptions options;
    options.dtype = dtype;
    return Model::open(path, options);
  };
  m.def(
      "score_plain",
      [open](const std::string& path, const std::string& dtype, const std::vector<std::pair<TokenIds, TokenIds>>& pairs) {
        std::vector<prefix_scorer::Request> requests;
        for (const auto& [context, continuation] : pairs) requests.push_back({context, continuation});
        std::vector<std::pair<double, bool>> scores;
        for (const auto& s : prefix_scorer::score_plain(open(path, dtype), requests).scores)
          scores.emplace_back(s.logprob, s.is_greedy);
        return scores;
      },
      py::arg("path"), py::arg("dtype"), py::arg("pairs"), py::call_guard<py::gil_scoped_release>(),
      "(summed logprob, is_greedy) of each (context, continuation) by the plain path: a full forward per request.");
  m.def(
      "forward_logprobs",
      [open](const std::string& path, const std::string& dtype, const TokenIds& ids) {
        at::Tensor logprobs;
        {
          py::gil_scoped_release release;
          const auto n = static_cast<int64_t>(ids.size());
          const at::Tensor tokens = at::tensor(ids, at::kLong).reshape({1, n});
          const prefix_scorer::ForwardBatch batch{tokens, at::arange(n, at::kLong).reshape({1, n}),
                                                  at::ones({1, n}, at::kBool)};
          logprobs = open(path, dtype).forward(batch, nullptr, at::arange(n, at::kLong)).contiguous().cpu();
        }
        return py::bytes(static_cast<const char*>(logprobs.data_ptr()), logprobs.nbytes());
      },
      py::arg("path"), py::arg("dtype"), py::arg("ids"),
      "One sequence's float32 log-probabilities at every position, [len(ids), vocab] as bytes, by one forward.");
  m.def(
      "rope_frequencies",
      [](const std::string& config_json) {
        const auto config = prefix_scorer::ModelConfig::from_json(config_json);
        const at::Tensor f = prefix_scorer::inverse_frequencies(config.rope, config.head_dim).contiguous();
        return std::vector<float>(f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
      },
      py::arg("config_json"), "The inverse frequencies of a config.json's rope, as the engine reads and computes them.");
  m.def(
      "config_as_read",
      [](const std::string& config_json) { return prefix_scorer::ModelConfig::from_json(config_json).to_json(); },
      py::arg("config_json"), "A config.json as the engine reads it (its defaults filled in), written back as JSON.");
}
