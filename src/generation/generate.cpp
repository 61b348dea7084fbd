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
      {"bytes_to_device", &GenerationStats::bytes_to_device, false},
      {"bytes_to_host", &GenerationStats::bytes_to_host, false},
      {"draft_tokens", &GenerationStats::draft_tokens, false},
      {"accepted_draft_tokens", &GenerationStats::accepted_draft_tokens, false},
      {"joined_in_steps", &GenerationStats::joined_in_steps, false},
      {"kv_bytes_copied", &GenerationStats::kv_bytes_copied, false},
  };
  return fields;
}

GenerationResult PrefixScorer::generate(const std::vector<GenerationRequest>& requests, const StopHook& stop_hook) {
  std::lock_guard<std::mutex> lock(mutex_);
  const CallInFlight in_flight(running_, cancel_);
  const BatchMemory memory = batch_memory(*model_, options_);
  check_generation_requests(*model_, memory, requests);
  return run_generation(*model_, options_, memory, *cache_, requests, stop_hook, cancel_);
}

}  // namespace prefix_scorer
