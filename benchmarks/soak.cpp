#include "model/config/model_config.h"
#include "soak.h"

#include "prefix_scorer/plain_scorer.h"
#include "prefix_scorer/scorer.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>
#include <thread>

namespace prefix_scorer::bench {
namespace {

double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1048576.0;
}

class RandomWork {
 public:
  RandomWork(uint64_t seed, int64_t vocab_size) : rng_(seed), vocab_size_(vocab_size) {}

  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

  // A prefix tree three levels deep (few-shot prompts, question stems, question tails), each leaf scored against
  // one to five continuations of one to eight tokens; now and then a request repeats.
  std::vector<Request> requests() {
    std::vector<Request> out;
    for (int64_t root = pick(1, 4); root > 0; --root) {
      const TokenIds prompt = draw(pick(0, 300));
      for (int64_t stem = pick(1, 4); stem > 0; --stem) {
        const TokenIds stem_ids = append(prompt, draw(pick(0, 40)));
        for (int64_t leaf = pick(1, 5); leaf > 0; --leaf) {
          TokenIds context = append(stem_ids, draw(pick(0, 30)));
          if (context.empty()) context = draw(1);
          for (int64_t c = pick(1, 5); c > 0; --c) out.push_back({context, draw(pick(1, 8))});
          if (pick(0, 9) == 0) out.push_back(out[static_cast<size_t>(pick(0, static_cast<int64_t>(out.size()) - 1))]);
        }
      }
    }
    return out;
  }

  PrefixScorerOptions options() {
    PrefixScorerOptions o;
    o.min_prefix_len = pick(1, 64);
    o.prefill_batch = pick(1, 32);
    o.max_batch_tokens = pick(64, 8192);
    o.max_batch_rows = pick(1, 64);
    o.max_cache_bytes = pick(0, 1) == 0 ? pick(0, int64_t{1} << 22) : int64_t{1} << 30;
    o.max_cache_entries = pick(1, 64);
    o.keep_cache = pick(0, 1) == 1;
    o.cascade_min_prefix_len = pick(-1, 300);
    o.tree_max_branches = pick(0, 8);
    o.pack_rows = pick(0, 1) == 1;
    o.max_length = pick(0, 2) == 0 ? pick(16, 400) : 0;
    return o;
  }

 private:
  TokenIds draw(int64_t n) {
    TokenIds ids(static_cast<size_t>(n));
    for (auto& id : ids) id = pick(0, vocab_size_ - 1);
    return ids;
  }
  static TokenIds append(TokenIds a, const TokenIds& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  std::mt19937_64 rng_;
  int64_t vocab_size_;
};

}  // namespace

SoakReport soak(const std::shared_ptr<const Model>& model, int64_t workloads, uint64_t seed) {
  RandomWork work(seed, model->config().vocab_size);
  const auto cores = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  SoakReport report;
  report.rss_start_mib = report.rss_warm_mib = rss_mib();
  for (int64_t w = 0; w < workloads; ++w) {
    const std::vector<Request> requests = work.requests();
    const PrefixScorerOptions options = work.options();
    at::set_num_threads(static_cast<int>(work.pick(1, cores)));
    PrefixScorer scorer(model, options);
    const ScoringResult plain = score_plain(*model, requests, options);
    for (int call = 0; call < (options.keep_cache ? 2 : 1); ++call) {  // a second call finds the kept prefixes
      const ScoringResult got = scorer.loglikelihood(requests);
      for (size_t i = 0; i < requests.size(); ++i) {
        const bool same = std::abs(got.scores[i].logprob - plain.scores[i].logprob) <= 1e-4 &&
                          got.scores[i].is_greedy == plain.scores[i].is_greedy;
        report.mismatches += same ? 0 : 1;
      }
    }
    report.workloads += 1;
    report.requests += static_cast<int64_t>(requests.size());
    if ((w + 1) % std::max<int64_t>(1, workloads / 10) == 0) {
      if (report.rss_warm_mib == report.rss_start_mib) report.rss_warm_mib = rss_mib();
      fmt::print(stderr, "soak: {} workloads, {} requests, {} mismatches, resident {:.0f} MiB\n", report.workloads,
                 report.requests, report.mismatches, rss_mib());
    }
  }
  report.rss_end_mib = rss_mib();
  return report;
}

}  // namespace prefix_scorer::bench
