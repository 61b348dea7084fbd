// PrefixScorer and its options, for Python; every call that computes releases the GIL.

#include "bindings.h"

#include "prefix_scorer/scorer.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
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

std::vector<std::pair<double, bool>> as_pairs(const ScoringResult& result) {
  std::vector<std::pair<double, bool>> out;
  for (const Score& s : result.scores) out.emplace_back(s.logprob, s.is_greedy);
  return out;
}

}  // namespace

void register_scorer(py::module_& m) {
  py::class_<PrefixScorerOptions>(m, "PrefixScorerOptions", "Batching and prefix-cache options of PrefixScorer.")
      .def(py::init<>())
      .def_readwrite("max_length", &PrefixScorerOptions::max_length,
                     "inputs keep their last max_length + 1 tokens (0: the model's max_position_embeddings)")
      .def_readwrite("max_batch_tokens", &PrefixScorerOptions::max_batch_tokens, "padded tokens per forward")
      .def_readwrite("max_batch_rows", &PrefixScorerOptions::max_batch_rows, "rows per forward")
      .def_readwrite("min_prefix_len", &PrefixScorerOptions::min_prefix_len, "shortest shared prefix worth caching")
      .def_readwrite("prefill_batch", &PrefixScorerOptions::prefill_batch, "prefixes prefilled per forward")
      .def_readwrite("max_cache_bytes", &PrefixScorerOptions::max_cache_bytes, "prefix cache budget in bytes")
      .def_readwrite("max_cache_entries", &PrefixScorerOptions::max_cache_entries, "prefix cache budget in entries")
      .def_readwrite("keep_cache", &PrefixScorerOptions::keep_cache, "keep prefixes for the next call")
      .def_readwrite("max_batch_bytes", &PrefixScorerOptions::max_batch_bytes,
                     "memory one forward may take (0: a quarter of the free CUDA memory, 1 GiB on the CPU)")
      .def_readwrite("tree_max_branches", &PrefixScorerOptions::tree_max_branches,
                     "a prefix only its own rows continue, with at most this many, runs as one packed tree (0: never)")
      .def_readwrite("pack_rows", &PrefixScorerOptions::pack_rows,
                     "rows shorter than their forward's longest share a row one after another instead of padding")
      .def_readwrite("cascade_min_prefix_len", &PrefixScorerOptions::cascade_min_prefix_len,
                     "cascade attention for batches whose prefixes average this many tokens (0: always, -1: never)")
      .def_readwrite("on_progress", &PrefixScorerOptions::on_progress,
                     "called with (rows done, rows in all) during a call; it must not call back into the scorer");

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
      .def_property_readonly("config", [](const PrefixScorer& self) { return self.model().config(); })
      .def_property_readonly(
          "options", [](const PrefixScorer& self) { return self.options(); },
          "The options in force (a copy; max_batch_bytes 0 resolved from the device).");
}

}  // namespace prefix_scorer::python
