#include "prefix_scorer/types.h"

namespace prefix_scorer {

const std::vector<StatsField>& stats_fields() {
  static const std::vector<StatsField> fields{
      {"requests", &ScoringStats::requests},
      {"forwards", &ScoringStats::forwards},
      {"tokens_computed", &ScoringStats::tokens_computed},
      {"padding_tokens", &ScoringStats::padding_tokens},
      {"scored_rows", &ScoringStats::scored_rows},
      {"truncated", &ScoringStats::truncated},
      {"prefixes_prefilled", &ScoringStats::prefixes_prefilled},
      {"cache_hits", &ScoringStats::cache_hits},
      {"cache_misses", &ScoringStats::cache_misses},
      {"evictions", &ScoringStats::evictions},
      {"fallbacks", &ScoringStats::fallbacks},
      {"cascade_forwards", &ScoringStats::cascade_forwards},
      {"cascade_fallbacks", &ScoringStats::cascade_fallbacks},
      {"trees_packed", &ScoringStats::trees_packed},
      {"rows_shared", &ScoringStats::rows_shared},
      {"prefill_tokens", &ScoringStats::prefill_tokens},
      {"suffix_tokens", &ScoringStats::suffix_tokens},
      {"prefill_padding", &ScoringStats::prefill_padding},
      {"suffix_padding", &ScoringStats::suffix_padding},
      {"entries_held", &ScoringStats::entries_held},
      {"bytes_held", &ScoringStats::bytes_held},
      {"entries_pinned", &ScoringStats::entries_pinned},
      {"peak_bytes", &ScoringStats::peak_bytes},
  };
  return fields;
}

}  // namespace prefix_scorer
