#include "modes.h"

#include "op_count.h"

#include "prefix_scorer/plain_scorer.h"
#include "prefix_scorer/scorer.h"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <stdexcept>

namespace prefix_scorer::bench {

namespace {
volatile std::sig_atomic_t interrupted = 0;
extern "C" void note_interrupt(int) { interrupted = 1; }
}  // namespace

void stop_on_interrupt() { std::signal(SIGINT, note_interrupt); }

const std::vector<std::string>& mode_names() {
  static const std::vector<std::string> names{"naive", "grouped", "prefix"};
  return names;
}

CallOps prefix_call_ops(const std::shared_ptr<const Model>& model, const std::vector<Request>& requests,
                        const PrefixScorerOptions& options) {
  PrefixScorer scorer(model, options);
  CallOps ops;
  ops.by_name = top_level_ops_by_name([&] { ops.forwards = scorer.loglikelihood(requests).stats.forwards; });
  return ops;
}

ModeRun run_mode(const std::string& mode, const std::shared_ptr<const Model>& model,
                 const std::vector<Request>& requests, const PrefixScorerOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  bool drew = false;
  PrefixScorerOptions opts = options;
  opts.on_progress = [&](int64_t done, int64_t total) {
    if (interrupted) {
      if (drew) fmt::print(stderr, "\n");
      throw Interrupted();
    }
    if (elapsed() < 1.0) return;
    const int width = 30, filled = static_cast<int>(width * done / std::max<int64_t>(total, 1));
    fmt::print(stderr, "\r{:>8} [{:<{}}] {}/{} rows {:.1f} s", mode, std::string(filled, '#'), width, done, total,
               elapsed());
    drew = true;
  };

  ModeRun run{mode, 0.0, {}};
  if (mode == "prefix") {
    PrefixScorer scorer(model, opts);
    run.result = scorer.loglikelihood(requests);
  } else if (mode == "naive" || mode == "grouped") {
    const bool grouped = mode == "grouped";
    run.result = score_plain(*model, requests, opts, PlainPathOptions{grouped, grouped});
  } else {
    throw std::invalid_argument(fmt::format("unknown mode '{}' (known: naive, grouped, prefix, all)", mode));
  }
  run.seconds = elapsed();
  if (drew) fmt::print(stderr, "\n");
  return run;
}

}  // namespace prefix_scorer::bench
