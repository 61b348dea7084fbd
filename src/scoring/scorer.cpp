#include "prefix_scorer/scorer.h"

#include "prefix_scorer/errors.h"

#include "model/config/layer_spec.h"
#include "model/device_memory.h"
#include "prefix_scorer/rolling_windows.h"
#include "scoring/batching.h"
#include "scoring/call_in_flight.h"
#include "scoring/call_prefixes.h"
#include "scoring/call_stats.h"
#include "scoring/forward_segments.h"
#include "scoring/prefix_cache.h"
#include "scoring/requests.h"
#include "scoring/suffix_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace prefix_scorer {
namespace {

// One loglikelihood call: its rows, their shared prefixes (planned, made live and released), and the suffix runner
// that scores the rows after them. Each window of the plan is laid out once into forwards, which run in turn.
class LoglikelihoodCall {
 public:
  LoglikelihoodCall(const Model& model, const PrefixScorerOptions& options, PrefixCache& cache,
       const std::vector<Request>& requests, ScoringResult& result, std::atomic<bool>& cancel)
      : options_(options),
        cancel_(cancel),
        memory_(batch_memory(model, options)),
        rows_(make_rows(requests, model.config(), options.max_length, true, result.stats.truncated)),
        prefixes_(model, options, memory_, cache, rows_, result.stats),
        suffixes_(model, options, memory_, prefixes_, rows_, requests, result) {
    prefixes_.before_prefill([this] { suffixes_.drop_stack(); });
  }

  void run() {
    const ScoringPlan& plan = prefixes_.plan();
    size_t begin = 0;
    for (const size_t window_end : plan.window_ends) {
      // The window's units (a packed tree or one row), each after its planned prefix, in forwards.
      std::vector<size_t> indices(window_end - begin);
      std::iota(indices.begin(), indices.end(), begin);
      const std::vector<ForwardSegment> units =
          forward_segments(prefixes_.live(), rows_, indices, [](int64_t e) { return e; });
      for (const auto& forward : lay_out_forwards(units, options_, memory_)) run_forward(units, forward, window_end);
      begin = window_end;
    }
  }

 private:
  // Prepares the forward's prefixes (and looks ahead from `ahead`), runs it, and releases them.
  void run_forward(const std::vector<ForwardSegment>& units, const std::vector<RowLayout>& forward, size_t ahead) {
    const size_t total = prefixes_.plan().order.size();
    if (cancel_.exchange(false))
      throw Cancelled(fmt::format("loglikelihood: cancelled after {} of {} rows", done_, total));
    const std::vector<size_t> indices = rows_of(units, forward);
    prefixes_.prepare(indices, ahead);
    suffixes_.run(units, forward);
    prefixes_.release(indices);
    done_ += static_cast<int64_t>(indices.size());
    if (options_.on_progress) options_.on_progress(done_, static_cast<int64_t>(total));
  }

  const PrefixScorerOptions& options_;
  std::atomic<bool>& cancel_;
  const BatchMemory memory_;
  const std::vector<ScoringRow> rows_;
  CallPrefixes prefixes_;
  SuffixRunner suffixes_;
  int64_t done_ = 0;  // rows scored so far
};

void validate_prefix_options(const PrefixScorerOptions& o, const ModelConfig& config) {
  validate_options(o, config);
  if (o.tree_max_branches < 0)
    throw std::invalid_argument(fmt::format("tree_max_branches must be >= 0, got {}", o.tree_max_branches));
  if (o.max_batch_bytes < 0) throw std::invalid_argument(fmt::format("max_batch_bytes must be >= 0, got {}", o.max_batch_bytes));
  if (o.min_prefix_len < 1) throw std::invalid_argument(fmt::format("min_prefix_len must be >= 1, got {}", o.min_prefix_len));
  if (o.prefill_batch < 1) throw std::invalid_argument(fmt::format("prefill_batch must be >= 1, got {}", o.prefill_batch));
  if (o.max_cache_bytes < 0) throw std::invalid_argument(fmt::format("max_cache_bytes must be >= 0, got {}", o.max_cache_bytes));
  if (o.max_draft_tokens < 0) throw std::invalid_argument(fmt::format("max_draft_tokens must be >= 0, got {}", o.max_draft_tokens));
  if (o.max_cache_entries < 0)
    throw std::invalid_argument(fmt::format("max_cache_entries must be >= 0, got {}", o.max_cache_entries));
}

}  // namespace

PrefixScorer::PrefixScorer(std::shared_ptr<const Model> model, PrefixScorerOptions options)
    : model_(std::move(model)),
      options_(std::move(options)),
      cache_(std::make_unique<PrefixCache>(options_.max_cache_bytes, options_.max_cache_entries)) {
  if (!model_) throw std::invalid_argument("PrefixScorer needs a model");
  if (model_->spec().has_recurrent_layers()) {  // a state runs along a whole row: one sequence a row
    options_.pack_rows = false;
    options_.tree_max_branches = 0;
  }
  validate_prefix_options(options_, model_->config());
  if (options_.max_batch_bytes == 0) {
    std::vector<c10::Device> devices;
    for (int64_t l = 0; l < model_->config().num_layers; ++l) devices.push_back(model_->layer_device(l));
    options_.max_batch_bytes = default_batch_bytes(devices);
  }
  if (options_.cascade_min_prefix_len == kCascadeByDevice)
    options_.cascade_min_prefix_len = model_->layer_device(0).is_cpu() ? 256 : -1;
}

PrefixScorer::~PrefixScorer() = default;

ScoringResult PrefixScorer::loglikelihood(const std::vector<Request>& requests) {
  std::lock_guard<std::mutex> lock(mutex_);
  return score_locked(requests);
}

ScoringResult PrefixScorer::score_locked(const std::vector<Request>& requests) {
  cache_->reset_peak();
  const int64_t evictions_before = cache_->evictions();
  const CallInFlight in_flight(running_, cancel_);
  const TransferCounts before = thread_transfers();
  ScoringResult result;
  result.scores.resize(requests.size());
  result.stats.requests = static_cast<int64_t>(requests.size());
  LoglikelihoodCall(*model_, options_, *cache_, requests, result, cancel_).run();
  add_transfers_since(before, result.stats);
  result.stats.evictions = cache_->evictions() - evictions_before;
  result.stats.peak_bytes = cache_->peak_bytes();
  result.stats.entries_held = cache_->entries();
  result.stats.bytes_held = cache_->bytes();
  result.stats.entries_pinned = cache_->pinned();
  add_stats(totals_, result.stats);
  return result;
}

ScoringResult PrefixScorer::loglikelihood_rolling(const std::vector<TokenIds>& documents, int64_t prefix_token) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t max_length = model_->config().window(options_.max_length);
  const int64_t vocab_size = model_->config().vocab_size;
  check_token_ids({prefix_token}, vocab_size, "loglikelihood_rolling: prefix_token");
  std::vector<Request> windows;
  std::vector<size_t> document_of;
  for (size_t d = 0; d < documents.size(); ++d) {
    check_token_ids(documents[d], vocab_size, fmt::format("loglikelihood_rolling: document {}:", d));
    for (auto& w : rolling_windows(documents[d], prefix_token, max_length)) {  // none for an empty document
      windows.push_back(std::move(w));
      document_of.push_back(d);
    }
  }
  const ScoringResult by_window = score_locked(windows);
  ScoringResult result;
  result.stats = by_window.stats;
  result.stats.requests = static_cast<int64_t>(documents.size());
  result.scores.assign(documents.size(), Score{0.0, true});
  for (size_t w = 0; w < windows.size(); ++w) {
    Score& score = result.scores[document_of[w]];
    score.logprob += by_window.scores[w].logprob;
    score.is_greedy = score.is_greedy && by_window.scores[w].is_greedy;
  }
  return result;
}

ScoringStats PrefixScorer::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ScoringStats s = totals_;
  s.entries_held = cache_->entries();
  s.bytes_held = cache_->bytes();
  s.entries_pinned = cache_->pinned();
  return s;
}

void PrefixScorer::cancel() {
  if (running_) cancel_ = true;
}

void PrefixScorer::clear_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_->clear();
}

}  // namespace prefix_scorer
