#include "prefix_scorer/types.h"

namespace prefix_scorer {

const std::vector<OptionField>& option_fields() {
  using O = PrefixScorerOptions;
  auto number = [](const char* name, int64_t O::*member, const char* help) {
    return OptionField{name, member, nullptr, help};
  };
  auto flag = [](const char* name, bool O::*member, const char* help) { return OptionField{name, nullptr, member, help}; };
  static const std::vector<OptionField> fields{
      number("max_length", &O::max_length,
             "inputs keep their last max_length + 1 tokens, as lm-eval truncates (0: max_position_embeddings)"),
      number("max_batch_tokens", &O::max_batch_tokens, "padded tokens per forward"),
      number("max_batch_rows", &O::max_batch_rows, "rows per forward"),
      number("min_prefix_len", &O::min_prefix_len, "shortest shared prefix worth caching"),
      number("prefill_batch", &O::prefill_batch, "distinct prefixes prefilled per forward"),
      number("max_cache_bytes", &O::max_cache_bytes, "prefix cache budget in bytes"),
      number("max_cache_entries", &O::max_cache_entries, "prefix cache budget in entries"),
      flag("keep_cache", &O::keep_cache, "cached prefixes survive to the next call"),
      number("cascade_min_prefix_len", &O::cascade_min_prefix_len,
             "cascade attention (each cached prefix once for all its rows) for batches whose prefixes average this "
             "many tokens (0: always, -1: never, -2: by device, 256 on the CPU and never on CUDA)"),
      number("max_batch_bytes", &O::max_batch_bytes,
             "memory one forward may take (0: a quarter of the free CUDA memory, 1 GiB on the CPU)"),
      number("tree_max_branches", &O::tree_max_branches,
             "a prefix only its own rows continue, with at most this many, runs as one packed tree (0: never)"),
      flag("pack_rows", &O::pack_rows,
           "rows shorter than their forward's longest share a row one after another instead of padding"),
      number("max_draft_tokens", &O::max_draft_tokens,
             "generation: draft tokens a greedy row feeds a step by prompt lookup, kept where the model agrees (0: none)"),
  };
  return fields;
}

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
      {"host_copies", &ScoringStats::host_copies},
      {"host_syncs", &ScoringStats::host_syncs},
      {"bytes_to_device", &ScoringStats::bytes_to_device},
      {"bytes_to_host", &ScoringStats::bytes_to_host},
      {"entries_held", &ScoringStats::entries_held},
      {"bytes_held", &ScoringStats::bytes_held},
      {"entries_pinned", &ScoringStats::entries_pinned},
      {"peak_bytes", &ScoringStats::peak_bytes},
  };
  return fields;
}

}  // namespace prefix_scorer
