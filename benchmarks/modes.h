#pragma once
// The scoring modes the benchmark compares on the same requests.

#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace prefix_scorer::bench {

// naive: one full forward per request (the plain path). grouped: one forward per distinct
// context + continuation[:-1] with log-probs for every position, as lm-evaluation-harness's HF backend runs.
// prefix: PrefixScorer.
const std::vector<std::string>& mode_names();

struct ModeRun {
  std::string mode;
  double seconds = 0.0;
  ScoringResult result;
};

// Thrown by run_mode at its next progress report (after a forward) once SIGINT has arrived.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

// Makes SIGINT stop the running mode (Interrupted) instead of killing the process.
void stop_on_interrupt();

// The top-level aten ops of one prefix-mode call on these requests (a fresh scorer), by name, and its forwards.
struct CallOps {
  std::map<std::string, int64_t> by_name;
  int64_t forwards = 0;
};
CallOps prefix_call_ops(const std::shared_ptr<const Model>& model, const std::vector<Request>& requests,
                        const PrefixScorerOptions& options);

// Runs one mode, with a progress bar on stderr once it has run for a second.
ModeRun run_mode(const std::string& mode, const std::shared_ptr<const Model>& model,
                 const std::vector<Request>& requests, const PrefixScorerOptions& options);

}  // namespace prefix_scorer::bench
