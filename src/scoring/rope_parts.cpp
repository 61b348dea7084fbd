#include "scoring/rope_parts.h"

#include "model/host_transfers.h"
#include "scoring/requests.h"

#include <algorithm>

namespace prefix_scorer {

void add_stats(ScoringStats& total, const ScoringStats& s) {
  for (const StatsField& f : stats_fields()) {
    if (f.member == &ScoringStats::entries_held || f.member == &ScoringStats::bytes_held ||
        f.member == &ScoringStats::entries_pinned)
      continue;
    total.*f.member = f.member == &ScoringStats::peak_bytes ? std::max(total.*f.member, s.*f.member)
                                                             : total.*f.member + s.*f.member;
  }
}

namespace {

// The parts' scores, in the caller's order, and their counters added up.
ScoringResult score_parts(const Model& model, const Model* long_model, const std::vector<Request>& requests,
                          int64_t max_length, const ProgressHook& on_progress, const PartScorer& score_part) {
  const ModelConfig& config = model.config();
  if (long_model == nullptr || config.rope.type != RopeType::kLongRope)
    return score_part(model, false, requests, on_progress);
  validate_requests(requests, config.vocab_size);
  std::vector<Request> parts[2];
  std::vector<size_t> index_of[2];
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto fed = static_cast<int64_t>(scoring_window(requests[i], config.window(max_length), i).input.size());
    const bool long_rope = config.long_rope(fed);
    parts[long_rope].push_back(requests[i]);
    index_of[long_rope].push_back(i);
  }
  ScoringResult result;
  result.scores.resize(requests.size());
  int64_t done_before = 0, part_total = 0;
  ProgressHook part_progress;
  if (on_progress) {  // one count over both parts
    part_progress = [&](int64_t done, int64_t total) {
      part_total = total;
      on_progress(done_before + done, done_before + total);
    };
  }
  for (const bool long_rope : {false, true}) {
    if (parts[long_rope].empty()) continue;
    part_total = 0;
    const ScoringResult part = score_part(long_rope ? *long_model : model, long_rope, parts[long_rope], part_progress);
    for (size_t k = 0; k < part.scores.size(); ++k) result.scores[index_of[long_rope][k]] = part.scores[k];
    add_stats(result.stats, part.stats);
    done_before += part_total;
  }
  result.stats.requests = static_cast<int64_t>(requests.size());
  return result;
}

}  // namespace

ScoringResult score_by_rope_factors(const Model& model, const Model* long_model, const std::vector<Request>& requests,
                                    int64_t max_length, const ProgressHook& on_progress, const PartScorer& score_part) {
  const TransferCounts before = thread_transfers();
  ScoringResult result = score_parts(model, long_model, requests, max_length, on_progress, score_part);
  result.stats.host_copies += thread_transfers().copies - before.copies;
  result.stats.host_syncs += thread_transfers().syncs - before.syncs;
  return result;
}

}  // namespace prefix_scorer
