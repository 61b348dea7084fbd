#include "generation_bench.h"

#include "model/cache/kv_cache.h"
#include "model/config/model_config.h"
#include "model/forward_batch.h"
#include "op_count.h"
#include "prefix_scorer/scorer.h"
#include "scoring/batching.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <string>

namespace prefix_scorer::bench {
namespace {

struct GenerationRun {
  std::string mode;
  double seconds = 0.0;
  int64_t prefill_tokens = 0;  // prompt tokens computed (prefixes included)
  int64_t decode_tokens = 0;   // tokens fed one a row per step (finished rows kept stepping included)
  int64_t generated = 0;       // tokens the requests wanted
  int64_t decode_steps = 0;    // prefix mode: the running batch's steps, the draft tokens fed and those taken
  int64_t draft_tokens = 0;
  int64_t accepted_draft_tokens = 0;
  int64_t kv_bytes_copied = 0;  // prefix mode: cached keys and values copied after they were written
  std::vector<TokenIds> tokens;
  double peak_rss_mib = -1;  // the process's peak resident memory while the mode ran
};

GenerationRun run_naive(const Model& model, const std::vector<GenerationRequest>& requests, int64_t batch_rows) {
  GenerationRun run;
  run.mode = "naive";
  run.tokens.resize(requests.size());
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].prompt.size() > requests[b].prompt.size(); });
  for (size_t begin = 0; begin < order.size(); begin += static_cast<size_t>(batch_rows)) {
    const std::vector<size_t> rows(order.begin() + begin,
                                   order.begin() + std::min(order.size(), begin + static_cast<size_t>(batch_rows)));
    const auto b = static_cast<int64_t>(rows.size());
    std::vector<const TokenIds*> prompts;
    std::vector<int64_t> last, positions;
    int64_t steps = 0;
    for (size_t r : rows) prompts.push_back(&requests[r].prompt);
    KvCache cache(model.config().num_layers);
    const ForwardBatch batch = make_batch(prompts, std::vector<int64_t>(rows.size(), 0));
    for (int64_t i = 0; i < b; ++i) {
      const auto len = static_cast<int64_t>(prompts[i]->size());
      last.push_back(i * batch.tokens.size(1) + len - 1);
      positions.push_back(len);
      steps = std::max(steps, requests[rows[i]].max_new_tokens);
      run.prefill_tokens += len;
    }
    at::Tensor picked = model.forward(batch, &cache, at::tensor(last, at::kLong)).argmax(-1).cpu();
    for (int64_t step = 0;; ++step) {
      for (int64_t i = 0; i < b; ++i) {
        TokenIds& out = run.tokens[rows[i]];
        if (static_cast<int64_t>(out.size()) < requests[rows[i]].max_new_tokens) out.push_back(picked[i].item<int64_t>());
      }
      if (step + 1 == steps) break;
      ForwardBatch next;
      next.tokens = at::zeros({b, 1}, at::kLong);
      for (int64_t i = 0; i < b; ++i) next.tokens[i][0] = picked[i];  // finished rows keep stepping, as in HF
      next.positions = at::tensor(positions, at::kLong).view({b, 1}) + step;
      next.valid = at::ones({b, 1}, at::kBool);
      picked = model.forward(next, &cache, at::arange(b, at::kLong)).argmax(-1).cpu();
      run.decode_tokens += b;
    }
  }
  for (const TokenIds& t : run.tokens) run.generated += static_cast<int64_t>(t.size());
  return run;
}

GenerationRun run_prefix(const std::shared_ptr<const Model>& model, const std::vector<GenerationRequest>& requests,
                         const PrefixScorerOptions& options) {
  PrefixScorer scorer(model, options);
  const GenerationResult result = scorer.generate(requests);
  GenerationRun run;
  run.mode = "prefix";
  run.prefill_tokens = result.stats.prefill_tokens + result.stats.prefix_tokens;
  run.decode_tokens = result.stats.generated_tokens - result.stats.requests;  // each row's first token is prefill's
  run.generated = result.stats.generated_tokens;
  run.decode_steps = result.stats.decode_forwards;
  run.draft_tokens = result.stats.draft_tokens;
  run.accepted_draft_tokens = result.stats.accepted_draft_tokens;
  run.kv_bytes_copied = result.stats.kv_bytes_copied;
  for (const Generation& g : result.generations) run.tokens.push_back(g.tokens);
  return run;
}

// Top-level aten ops of one decode step, per layer, by name: those of a call that generates 10 tokens for up to four
// of the prompts, less those of one that generates 2, over the 8 steps between them and the model's layers. Without
// drafts (max_draft_tokens 0): a step of one token a row, 8 steps whatever the prompts repeat.
std::map<std::string, double> decode_ops_per_layer(const std::shared_ptr<const Model>& model,
                                                   const std::vector<GenerationRequest>& requests,
                                                   const PrefixScorerOptions& options) {
  std::vector<GenerationRequest> few(requests.begin(), requests.begin() + std::min<size_t>(4, requests.size()));
  auto ops_generating = [&](int64_t tokens) {
    for (GenerationRequest& r : few) {
      r.max_new_tokens = tokens;
      r.stop_ids.clear();
    }
    PrefixScorerOptions one_token_steps = options;
    one_token_steps.max_draft_tokens = 0;
    PrefixScorer scorer(model, one_token_steps);
    return top_level_ops_by_name([&] { scorer.generate(few); });
  };
  const std::map<std::string, int64_t> two = ops_generating(2);
  std::map<std::string, double> per_layer;
  for (const auto& [name, count] : ops_generating(10)) {
    const auto found = two.find(name);
    const int64_t extra = count - (found == two.end() ? 0 : found->second);
    if (extra != 0) per_layer[name] = static_cast<double>(extra) / 8 / static_cast<double>(model->info().num_layers);
  }
  return per_layer;
}

// A mode's own peak resident memory: Linux sets the process's high-water mark (VmHWM) back to the current resident
// size when "5" is written to /proc/self/clear_refs. -1 where either is missing.
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

double peak_rss_mib_since_reset() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // in kB
  }
  return -1;
}

}  // namespace

bool is_generation_workload(const std::string& workload) {
  return workload == "gsm8k-shape" || workload == "gsm8k-text" || workload == "reasoning-shape";
}

GenerationShape named_generation_shape(const std::string& workload) {
  GenerationShape shape;
  if (workload == "reasoning-shape") {
    shape.questions = 32;
    shape.max_new_tokens = 1024;
    shape.every_token = true;
  }
  return shape;
}

std::vector<TokenIds> gsm8k_shape_prompts(const GenerationShape& shape, int64_t vocab_size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto token = [&] { return std::uniform_int_distribution<int64_t>(1, vocab_size - 1)(rng); };
  TokenIds prefix;
  for (int64_t i = 0; i < shape.prefix_len; ++i) prefix.push_back(token());
  std::vector<TokenIds> prompts;
  for (int64_t q = 0; q < shape.questions; ++q) {
    TokenIds prompt = prefix;
    const int64_t len = std::uniform_int_distribution<int64_t>(shape.question_min, shape.question_max)(rng);
    for (int64_t i = 0; i < len; ++i) prompt.push_back(token());
    prompts.push_back(std::move(prompt));
  }
  return prompts;
}

std::vector<GenerationRequest> generation_requests(std::vector<TokenIds> prompts, const GenerationShape& shape,
                                                   uint64_t seed) {
  std::mt19937_64 rng(seed + 1);
  const int64_t most = shape.max_new_tokens, fewest = shape.every_token ? most : std::max<int64_t>(1, most / 8);
  std::vector<GenerationRequest> requests;
  for (TokenIds& prompt : prompts) {
    GenerationRequest r;
    r.prompt = std::move(prompt);
    r.max_new_tokens = std::uniform_int_distribution<int64_t>(fewest, most)(rng);
    requests.push_back(std::move(r));
  }
  return requests;
}

nlohmann::json run_generation_modes(const std::shared_ptr<const Model>& model,
                                    const std::vector<GenerationRequest>& requests,
                                    const std::vector<std::string>& modes, const PrefixScorerOptions& options,
                                    bool count_ops) {
  std::vector<GenerationRun> runs;
  for (const std::string& mode : modes) {
    reset_peak_rss();
    const auto start = std::chrono::steady_clock::now();
    GenerationRun run = mode == "naive" ? run_naive(*model, requests, options.max_batch_rows)
                                        : run_prefix(model, requests, options);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.peak_rss_mib = peak_rss_mib_since_reset();
    runs.push_back(std::move(run));
  }
  nlohmann::json report = nlohmann::json::array();
  for (const GenerationRun& run : runs) {
    nlohmann::json line{{"mode", run.mode},
                        {"seconds", run.seconds},
                        {"prefill_tokens", run.prefill_tokens},
                        {"decode_tokens", run.decode_tokens},
                        {"generated_tokens", run.generated},
                        {"output_tokens_per_second", run.generated / run.seconds},
                        {"ms_per_output_token", 1e3 * run.seconds / run.generated},
                        {"peak_rss_mib", run.peak_rss_mib}};
    std::string extra;
    if (run.mode == "prefix") {
      line["decode_steps"] = run.decode_steps;
      line["draft_tokens"] = run.draft_tokens;
      line["accepted_draft_tokens"] = run.accepted_draft_tokens;
      line["kv_bytes_copied"] = run.kv_bytes_copied;
      extra += fmt::format("; {} decode steps, {} draft tokens fed, {} taken; {:.1f} MiB of cached keys and values "
                           "copied", run.decode_steps, run.draft_tokens, run.accepted_draft_tokens,
                           static_cast<double>(run.kv_bytes_copied) / (1 << 20));
      if (count_ops) {
        const std::map<std::string, double> by_name = decode_ops_per_layer(model, requests, options);
        double ops = 0;
        for (const auto& [name, count] : by_name) ops += count;
        line["ops_per_decode_step_per_layer"] = ops;
        line["ops_per_decode_step_per_layer_by_name"] = by_name;
        extra += fmt::format("; {:.1f} top-level aten ops per decode step and layer", ops);
      }
    }
    if (runs.front().mode == "naive" && &run != &runs.front()) {
      int64_t same = 0;
      for (size_t i = 0; i < requests.size(); ++i) same += run.tokens[i] == runs.front().tokens[i] ? 1 : 0;
      line["speedup_over_naive"] = runs.front().seconds / run.seconds;
      line["same_tokens_as_naive"] = static_cast<double>(same) / static_cast<double>(requests.size());
      extra += fmt::format("; {:.2f}x over naive, same tokens as naive for {}/{} requests",
                          runs.front().seconds / run.seconds, same, requests.size());
    }
    fmt::print(stderr, "{:>7}: {:.2f} s, prefill {} tokens, decode {} tokens, {} generated ({:.1f} tokens/s, {:.2f} ms per output token), peak RSS {:.0f} MiB{}\n",
               run.mode, run.seconds, run.prefill_tokens, run.decode_tokens, run.generated,
               run.generated / run.seconds, 1e3 * run.seconds / run.generated, run.peak_rss_mib, extra);
    report.push_back(line);
  }
  return report;
}

}  // namespace prefix_scorer::bench
