// PrefixScorer and its options, for Python; every call that computes releases the GIL.

#include "bindings.h"

#include "prefix_scorer/scorer.h"
#include "prefix_scorer/stop_strings.h"
#include "prefix_scorer/tokenizer.h"
#include "prefix_scorer/rolling_windows.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>

namespace py = pybind11;

namespace prefix_scorer::python {
namespace {

using TokenPair = std::pair<TokenIds, TokenIds>;

// A call runs with the GIL released, where Python's signal handlers cannot run, so the progress
// hook takes the GIL after each batch and lets them run: Ctrl-C (KeyboardInterrupt) stops a call within one batch.
std::function<void(int64_t, int64_t)> interruptible(std::function<void(int64_t, int64_t)> on_progress) {
  return [on_progress = std::move(on_progress)](int64_t done, int64_t total) {
    {
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
    if (on_progress) on_progress(done, total);
  };
}

py::dict stats_dict(const ScoringStats& s) {
  py::dict d;
  for (const StatsField& f : stats_fields()) d[f.name] = s.*f.member;
  return d;
}

py::dict generation_stats_dict(const GenerationStats& s) {
  py::dict d;
  for (const GenerationStatsField& f : generation_stats_fields()) d[f.name] = s.*f.member;
  return d;
}

// A StopHook made in C++ (stop strings on the native tokenizer), kept opaque in Python so that generate runs it
// without the GIL instead of wrapping it as a Python callable.
struct StopStrings {
  StopHook hook;
};

py::tuple generate(PrefixScorer& self, const std::vector<GenerationRequest>& requests, const StopHook& stop_hook) {
  GenerationResult result;
  {
    py::gil_scoped_release release;  // a Python hook takes the GIL back for each call
    result = self.generate(requests, stop_hook);
  }
  py::list generations;
  for (const Generation& g : result.generations) generations.append(py::make_tuple(g.tokens, to_string(g.finish), g.logprobs));
  return py::make_tuple(generations, generation_stats_dict(result.stats));
}

std::vector<std::pair<double, bool>> as_pairs(const ScoringResult& result) {
  std::vector<std::pair<double, bool>> out;
  for (const Score& s : result.scores) out.emplace_back(s.logprob, s.is_greedy);
  return out;
}

}  // namespace

void register_scorer(py::module_& m) {
  py::class_<PrefixScorerOptions> options(m, "PrefixScorerOptions", "Batching and prefix-cache options of PrefixScorer.");
  options.def(py::init<>());
  for (const OptionField& field : option_fields()) {
    if (field.number != nullptr) {
      options.def_property(
          field.name, [member = field.number](const PrefixScorerOptions& o) { return o.*member; },
          [member = field.number](PrefixScorerOptions& o, int64_t value) { o.*member = value; }, field.help);
    } else {
      options.def_property(
          field.name, [member = field.flag](const PrefixScorerOptions& o) { return o.*member; },
          [member = field.flag](PrefixScorerOptions& o, bool value) { o.*member = value; }, field.help);
    }
  }
  options.def_readwrite("on_progress", &PrefixScorerOptions::on_progress,
                        "called with (rows done, rows in all) during a call; it must not call back into the scorer");

  py::class_<SamplingOptions>(m, "SamplingOptions", "How a generated row picks its next token.")
      .def(py::init<>())
      .def_readwrite("greedy", &SamplingOptions::greedy, "the argmax (HF generate's do_sample=False)")
      .def_readwrite("temperature", &SamplingOptions::temperature, "0: greedy")
      .def_readwrite("top_k", &SamplingOptions::top_k, "0: no top-k cut")
      .def_readwrite("top_p", &SamplingOptions::top_p, "1: no nucleus cut")
      .def_readwrite("seed", &SamplingOptions::seed, "the request's own random stream");
  py::class_<GenerationRequest>(m, "GenerationRequest", "A prompt's ids and when to stop it.")
      .def(py::init<>())
      .def_readwrite("prompt", &GenerationRequest::prompt)
      .def_readwrite("max_new_tokens", &GenerationRequest::max_new_tokens)
      .def_readwrite("stop_ids", &GenerationRequest::stop_ids)
      .def_readwrite("sampling", &GenerationRequest::sampling);

  m.def(
      "windows_after",
      [](const TokenIds& context, const TokenIds& target, int64_t max_length) {
        std::vector<std::pair<TokenIds, TokenIds>> out;
        for (Request& w : windows_after(context, target, max_length)) out.emplace_back(std::move(w.context), std::move(w.continuation));
        return out;
      },
      py::arg("context"), py::arg("target"), py::arg("max_length"),
      "(context, continuation) pairs that score target after context in pieces of at most max_length tokens, each "
      "after as much of the text before it as fits (lm-eval's rolling windows, after the prefix token alone).");

  py::class_<StopStrings>(m, "StopStrings",
                          "Stop strings checked in C++ on the native tokenizer's decode of each row's last tokens: "
                          "pass it to generate as stop_hook.")
      .def(py::init([](const Tokenizer& tokenizer, std::vector<std::vector<std::string>> stops) {
             return StopStrings{stop_strings_hook(tokenizer, std::move(stops))};
           }),
           py::arg("tokenizer"), py::arg("stops"), "stops[i]: request i's stop strings (none: no stop string).");

  py::class_<PrefixScorer, std::shared_ptr<PrefixScorer>>(m, "PrefixScorer",
                                                           "Scores loglikelihood requests, each shared prefix once.")
      .def(py::init([](const std::string& spec, const ModelOptions& model_options, PrefixScorerOptions options) {
             options.on_progress = interruptible(std::move(options.on_progress));
             py::gil_scoped_release release;
             auto model = std::make_shared<const Model>(Model::open(spec, model_options));
             return std::make_shared<PrefixScorer>(std::move(model), options);
           }),
           py::arg("model"), py::arg("model_options"), py::arg("options"),
           "Loads a checkpoint directory or synthetic:NAME.")
      .def(
          "loglikelihood",
          [](PrefixScorer& self, const std::vector<TokenPair>& pairs) {
            std::vector<Request> requests;
            requests.reserve(pairs.size());
            for (const auto& [context, continuation] : pairs) requests.push_back({context, continuation});
            return as_pairs(self.loglikelihood(requests));
          },
          py::arg("pairs"), py::call_guard<py::gil_scoped_release>(),
          "(logprob, is_greedy) of each (context ids, continuation ids) pair, in order.")
      .def(
          "loglikelihood_rolling",
          [](PrefixScorer& self, const std::vector<TokenIds>& documents, int64_t prefix_token) {
            return as_pairs(self.loglikelihood_rolling(documents, prefix_token));
          },
          py::arg("documents"), py::arg("prefix_token"), py::call_guard<py::gil_scoped_release>(),
          "(summed logprob, all greedy) of each token sequence over lm-eval's disjoint rolling windows.")
      .def(
          "generate",
          [](PrefixScorer& self, const std::vector<GenerationRequest>& requests, const StopStrings& stop_strings) {
            return generate(self, requests, stop_strings.hook);
          },
          py::arg("requests"), py::arg("stop_hook"),
          "The same with stop strings checked in C++ (no call into Python per token).")
      .def("generate", &generate, py::arg("requests"), py::arg("stop_hook") = StopHook(),
           "([(new token ids, finish reason, their logprobs)] in order, stats): each prompt continued until a stop id, "
           "the hook (called with (request index, ids so far); True ends the row) or max_new_tokens.")
      .def(
          "stats",
          [](const PrefixScorer& self) {
            ScoringStats s;
            {
              py::gil_scoped_release release;  // a call in flight holds the scorer and may call back into Python
              s = self.stats();
            }
            return stats_dict(s);
          },
          "Totals over every call so far, with the cache's current size.")
      .def("clear_cache", &PrefixScorer::clear_cache, py::call_guard<py::gil_scoped_release>())
      .def("cancel", &PrefixScorer::cancel,
           "Stops the call in flight (from another thread) before its next forward: it raises "
           "prefix_scorer.Cancelled.")
      .def_property_readonly("model_info", [](const PrefixScorer& self) { return self.model().info(); })
      .def_property_readonly(
          "num_parameters", [](const PrefixScorer& self) { return self.model().num_parameters(); },
          "The model's weights, counted as transformers counts them (tied embeddings once).")
      .def_property_readonly(
          "options", [](const PrefixScorer& self) { return self.options(); },
          "The options in force (a copy; max_batch_bytes 0 resolved from the device).");
}

}  // namespace prefix_scorer::python
