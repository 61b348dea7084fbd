// PrefixScorer::generate: the scorer's cache, lock and cancellation around one generation call.

#include "prefix_scorer/scorer.h"

#include "generation/generation_call.h"
#include "scoring/call_in_flight.h"
#include "scoring/prefix_cache.h"

#include <algorithm>

namespace prefix_scorer {

std::string to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStopId: return "stop_id";
    case FinishReason::kMaxNewTokens: return "max_new_tokens";
    case FinishReason::kStopHook: return "stop_hook";
  }
  return "unknown";
}

const std::vector<GenerationStatsField>& generation_stats_fields() {
  static const std::vector<GenerationStatsField> fields{
      {"requests", &GenerationStats::requests, false},
      {"prefill_forwards", &GenerationStats::prefill_forwards, false},
      {"decode_forwards", &GenerationStats::decode_forwards, false},
      {"prefill_tokens", &GenerationStats::prefill_tokens, false},
      {"prefix_tokens", &GenerationStats::prefix_tokens, false},
      {"generated_tokens", &GenerationStats::generated_tokens, false},
      {"max_rows", &GenerationStats::max_rows, true},
      {"cascade_forwards", &GenerationStats::cascade_forwards, false},
  };
  return fields;
}

namespace {

void add_stats(GenerationStats& total, const GenerationStats& part) {
  for (const GenerationStatsField& f : generation_stats_fields())
    total.*f.member = f.peak ? std::max(total.*f.member, part.*f.member) : total.*f.member + part.*f.member;
}

}  // namespace

GenerationResult PrefixScorer::generate(const std::vector<GenerationRequest>& requests, const StopHook& stop_hook) {
  std::lock_guard<std::mutex> lock(mutex_);
  const CallInFlight in_flight(running_, cancel_);
  check_generation_requests(*model_, options_, requests);
  // LongRoPE: prompts longer than original_max_position_embeddings run on the long factors from their first
  // forward (their prefixes' keys differ, so they run apart, with the cache holding the long factors' prefixes);
  // the others start on the short factors and switch as they grow past it.
  std::vector<std::vector<size_t>> parts(2);
  for (size_t i = 0; i < requests.size(); ++i)
    parts[long_model_ && model_->config().long_rope(static_cast<int64_t>(requests[i].prompt.size()))].push_back(i);
  GenerationResult result;
  result.generations.resize(requests.size());
  int64_t later_budget = 0;  // progress over both parts: the long part's max_new_tokens wait behind the short one's
  for (size_t i : parts[true]) later_budget += requests[i].max_new_tokens;
  for (const bool long_rope : {false, true}) {
    const std::vector<size_t>& part = parts[long_rope];
    if (part.empty()) continue;
    PrefixScorerOptions options = options_;
    if (options_.on_progress) {
      const int64_t before = result.stats.generated_tokens, after = long_rope ? 0 : later_budget;
      options.on_progress = [&, before, after](int64_t done, int64_t total) {
        options_.on_progress(before + done, before + total + after);
      };
    }
    if (cache_long_rope_ != long_rope) {
      cache_->clear();
      cache_long_rope_ = long_rope;
    }
    std::vector<GenerationRequest> subset;
    for (size_t i : part) subset.push_back(requests[i]);
    StopHook hook;
    if (stop_hook) hook = [&](size_t i, const TokenIds& generated) { return stop_hook(part[i], generated); };
    GenerationResult done = run_generation(long_rope ? *long_model_ : *model_, long_rope ? nullptr : long_model_.get(),
                                           options, *cache_, subset, hook, cancel_);
    for (size_t k = 0; k < part.size(); ++k) result.generations[part[k]] = std::move(done.generations[k]);
    add_stats(result.stats, done.stats);
  }
  return result;
}

}  // namespace prefix_scorer
