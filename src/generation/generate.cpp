// PrefixScorer::generate: the scorer's cache, lock and cancellation around one generation call.

#include "prefix_scorer/scorer.h"

#include "generation/generation_call.h"
#include "scoring/call_in_flight.h"
#include "scoring/prefix_cache.h"

namespace prefix_scorer {

std::string to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStopId: return "stop_id";
    case FinishReason::kMaxNewTokens: return "max_new_tokens";
    case FinishReason::kStopHook: return "stop_hook";
  }
  return "unknown";
}

GenerationResult PrefixScorer::generate(const std::vector<GenerationRequest>& requests, const StopHook& stop_hook) {
  std::lock_guard<std::mutex> lock(mutex_);
  const CallInFlight in_flight(running_, cancel_);
  if (cache_long_rope_) {  // generation runs on the short factors only (longer requests are refused)
    cache_->clear();
    cache_long_rope_ = false;
  }
  return run_generation(*model_, options_, *cache_, requests, stop_hook, cancel_);
}

}  // namespace prefix_scorer
