#include "report.h"

#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace prefix_scorer::bench {
namespace {

const ModeRun* find_mode(const std::vector<ModeRun>& runs, const std::string& mode) {
  for (const auto& run : runs) {
    if (run.mode == mode) return &run;
  }
  return nullptr;
}

nlohmann::json stats_json(const ScoringStats& s) {
  nlohmann::json j;
  for (const StatsField& f : stats_fields()) j[f.name] = s.*f.member;
  return j;
}

// The process's peak resident memory so far (all modes that ran).
double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace

nlohmann::json build_report(const RunInfo& info, const std::vector<ModeRun>& runs) {
  nlohmann::json report = {{"model", info.model},
                           {"workload", info.workload},
                           {"device", info.device},
                           {"dtype", info.dtype},
                           {"threads", info.threads},
                           {"attention", info.attention},
                           {"floor", {{"unique_tokens", info.floor.unique_tokens},
                                      {"scored_positions", info.floor.scored_positions},
                                      {"weight_flops", info.floor.weight_flops},
                                      {"attention_flops", info.floor.attention_flops},
                                      {"flops", info.floor.flops}}},
                           {"matmul_flops_per_s", info.matmul_rate},
                           {"peak_rss_mib", peak_rss_mib()},
                           {"weights", {{"bytes", info.weight_bytes}, {"quantized_bytes", info.quantized_weight_bytes}}},
                           {"cache", {{"kv_bytes_per_token", info.kv_bytes_per_token},
                                      {"expanded_kv_bytes_per_token", info.expanded_kv_bytes_per_token},
                                      {"state_bytes_per_prefix", info.state_bytes_per_row}}},
                           {"modes", nlohmann::json::array()}};
  if (info.prefix_forwards > 0) {
    int64_t total = 0;
    for (const auto& [name, count] : info.prefix_ops) total += count;
    const auto per_layer_forward = static_cast<double>(info.prefix_forwards * std::max<int64_t>(info.layers, 1));
    const auto cat = info.prefix_ops.find("aten::cat");
    report["prefix_ops"] = {{"top_level_ops", total},
                            {"forwards", info.prefix_forwards},
                            {"ops_per_forward_per_layer", static_cast<double>(total) / per_layer_forward},
                            {"cat", cat == info.prefix_ops.end() ? 0 : cat->second},
                            {"by_name", info.prefix_ops}};
  }
  const ModeRun* grouped = find_mode(runs, "grouped");
  const ModeRun* naive = find_mode(runs, "naive");
  for (const auto& run : runs) {
    const ScoringStats& s = run.result.stats;
    nlohmann::json mode = {{"mode", run.mode},
                           {"seconds", run.seconds},
                           {"requests_per_s", s.requests / run.seconds},
                           {"scores", run.result.scores.size()},
                           {"tokens_computed", s.tokens_computed},
                           {"mfu", info.floor.flops / run.seconds / info.matmul_rate},
                           {"stats", stats_json(s)}};
    if (grouped != nullptr) mode["speedup_over_grouped"] = grouped->seconds / run.seconds;
    if (naive != nullptr) {
      double max_diff = 0.0;
      int64_t agree = 0;
      const auto& a = run.result.scores;
      const auto& b = naive->result.scores;
      if (a.size() != b.size()) {  // a mode that lost or invented scores must not report perfect agreement
        throw std::runtime_error(fmt::format("mode {} returned {} scores where naive returned {}", run.mode, a.size(),
                                             b.size()));
      }
      for (size_t i = 0; i < a.size(); ++i) {
        max_diff = std::max(max_diff, std::abs(a[i].logprob - b[i].logprob));
        agree += a[i].is_greedy == b[i].is_greedy ? 1 : 0;
      }
      mode["max_abs_logprob_diff_to_naive"] = max_diff;
      mode["is_greedy_agreement"] = a.empty() ? 1.0 : static_cast<double>(agree) / static_cast<double>(a.size());
    }
    report["modes"].push_back(mode);
  }
  return report;
}

void print_report(const nlohmann::json& report) {
  fmt::print(stderr, "model {} | {} | {} {} | {} threads | peak RSS {:.0f} MiB\n", report["model"].get<std::string>(),
             report["workload"].get<std::string>(), report["device"].get<std::string>(),
             report["dtype"].get<std::string>(), report["threads"].get<int64_t>(),
             report["peak_rss_mib"].get<double>());
  fmt::print(stderr, "attention: {}\n", report["attention"].get<std::string>());
  fmt::print(stderr, "weights: {:.1f} MiB ({:.1f} MiB of it kept quantized)\n",
             report["weights"]["bytes"].get<int64_t>() / 1048576.0, report["weights"]["quantized_bytes"].get<int64_t>() / 1048576.0);
  const auto& floor = report["floor"];
  fmt::print(stderr,
             "floor: {} unique tokens, {} scored positions, {:.3g} FLOP ({:.3g} weights, {:.3g} attention); "
             "matmul rate {:.1f} GFLOP/s\n",
             floor["unique_tokens"].get<int64_t>(), floor["scored_positions"].get<int64_t>(),
             floor["flops"].get<double>(), floor["weight_flops"].get<double>(), floor["attention_flops"].get<double>(),
             report["matmul_flops_per_s"].get<double>() / 1e9);
  fmt::print(stderr, "{:>8} {:>9} {:>10} {:>12} {:>7} {:>9} {:>12} {:>7}\n", "mode", "seconds", "requests/s", "tokens",
             "MFU", "speedup", "max|diff|", "greedy");
  for (const auto& m : report["modes"]) {
    const std::string speedup = m.contains("speedup_over_grouped")
                                    ? fmt::format("{:.2f}x", m["speedup_over_grouped"].get<double>())
                                    : "-";
    const std::string diff =
        m.contains("max_abs_logprob_diff_to_naive") ? fmt::format("{:.2e}", m["max_abs_logprob_diff_to_naive"].get<double>()) : "-";
    const std::string greedy =
        m.contains("is_greedy_agreement") ? fmt::format("{:.1f}%", 100 * m["is_greedy_agreement"].get<double>()) : "-";
    fmt::print(stderr, "{:>8} {:>9.3f} {:>10.1f} {:>12} {:>6.1f}% {:>9} {:>12} {:>7}\n", m["mode"].get<std::string>(),
               m["seconds"].get<double>(), m["requests_per_s"].get<double>(), m["tokens_computed"].get<int64_t>(),
               100 * m["mfu"].get<double>(), speedup, diff, greedy);
  }
  const auto& cache = report["cache"];
  const int64_t state = cache["state_bytes_per_prefix"].get<int64_t>();
  const int64_t kv = cache["kv_bytes_per_token"].get<int64_t>();
  const int64_t expanded = cache["expanded_kv_bytes_per_token"].get<int64_t>();
  if (expanded != kv)
    fmt::print(stderr, "cache: {} bytes a token (latents), {} bytes with the same heads' keys and values ({:.1f}x), "
               "{} bytes a prefix's recurrent state\n", kv, expanded, static_cast<double>(expanded) / kv, state);
  else
    fmt::print(stderr, "cache: {} bytes a token (keys and values), {} bytes a prefix's recurrent state\n", kv, state);
  for (const auto& m : report["modes"]) {
    if (m["mode"] != "prefix") continue;
    const auto& s = m["stats"];
    if (state > 0)
      fmt::print(stderr, "prefix states cached: {} prefixes x {} bytes = {:.2f} MiB\n",
                 s["prefixes_prefilled"].get<int64_t>(), state,
                 static_cast<double>(s["prefixes_prefilled"].get<int64_t>() * state) / 1048576.0);
    fmt::print(stderr,
               "prefix cache: {} prefixes prefilled ({} tokens), {} packed trees, {} rows sharing a row, {} hits, {} misses, {} evictions, "
               "{} fallbacks, {} suffix tokens, {} padding ({} prefill, {} suffix), {} forwards, peak {:.1f} MiB, "
               "{} entries held\n",
               s["prefixes_prefilled"].get<int64_t>(), s["prefill_tokens"].get<int64_t>(),
               s["trees_packed"].get<int64_t>(), s["rows_shared"].get<int64_t>(), s["cache_hits"].get<int64_t>(),
               s["cache_misses"].get<int64_t>(), s["evictions"].get<int64_t>(), s["fallbacks"].get<int64_t>(),
               s["suffix_tokens"].get<int64_t>(), s["padding_tokens"].get<int64_t>(), s["prefill_padding"].get<int64_t>(),
               s["suffix_padding"].get<int64_t>(), s["forwards"].get<int64_t>(),
               s["peak_bytes"].get<int64_t>() / 1048576.0, s["entries_held"].get<int64_t>());
  }
  if (report.contains("prefix_ops")) {
    const auto& ops = report["prefix_ops"];
    fmt::print(stderr, "prefix call: {} top-level aten ops in {} forwards, {:.1f} per forward and layer, {} cat\n",
               ops["top_level_ops"].get<int64_t>(), ops["forwards"].get<int64_t>(),
               ops["ops_per_forward_per_layer"].get<double>(), ops["cat"].get<int64_t>());
  }
}

}  // namespace prefix_scorer::bench
