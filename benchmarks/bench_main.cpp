// prefix-scorer-bench: scores a JSONL file of requests or a built-in workload, and reports timing.

#include "prefix_scorer/prefix_scorer.h"
#include <ATen/Parallel.h>
#include "request_io.h"
#include "workloads.h"

#include <fmt/format.h>

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace prefix_scorer;

constexpr const char* kUsage = R"(usage: prefix-scorer-bench [options]
  --model SPEC              checkpoint directory or synthetic:NAME (tiny, small, llama-1b, llama-8b)
                            [synthetic:tiny]
  --requests IN.jsonl       score lines {"context": [ids], "continuation": [ids]} ...
  --output OUT.jsonl        ... and write lines {"logprob": x, "is_greedy": b} in the same order
  --workload mmlu-shape     built-in workload when no --requests is given [mmlu-shape]
     --subjects N --questions N --prefix-len N --suffix-min N --suffix-max N   its sizes [4 64 600 40 160]
  --seed N                  workload and synthetic-weight seed [0]
  --device D                cpu, cuda, cuda:N [cpu]
  --layer-devices D1,D2,..  split the layers into contiguous blocks over these devices
  --dtype T                 float32, bfloat16, float16 [float32]
  --max-length N            lm-eval truncation window; 0 = the model's max_position_embeddings [0]
  --max-batch-tokens N      padded tokens per forward [8192]
  --max-batch-rows N        rows per forward [64]
  --threads N               CPU threads; 0 = all cores [0]
)";

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

std::map<std::string, std::string> parse_flags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0 || i + 1 >= argc)
      throw UsageError(fmt::format("expected '--flag value', got '{}' (see --help)", arg));
    flags[arg.substr(2)] = argv[++i];
  }
  return flags;
}

class Flags {
 public:
  explicit Flags(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  std::string text(const std::string& name, const std::string& fallback) {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    std::string value = it->second;
    values_.erase(it);
    return value;
  }
  int64_t number(const std::string& name, int64_t fallback) {
    const std::string value = text(name, std::to_string(fallback));
    try {
      size_t used = 0;
      const int64_t n = std::stoll(value, &used);
      if (used == value.size()) return n;
    } catch (const std::exception&) {
    }
    throw UsageError(fmt::format("--{} expects an integer, got '{}'", name, value));
  }
  void reject_unknown() const {
    if (!values_.empty()) throw UsageError(fmt::format("unknown flag --{} (see --help)", values_.begin()->first));
  }

 private:
  std::map<std::string, std::string> values_;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (begin <= text.size() && !text.empty()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    items.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(int argc, char** argv) {
  Flags flags(parse_flags(argc, argv));
  const std::string model_spec = flags.text("model", "synthetic:tiny");
  const std::string requests_path = flags.text("requests", "");
  const std::string output_path = flags.text("output", "");
  const std::string workload = flags.text("workload", "mmlu-shape");
  bench::MmluShape shape;
  shape.subjects = flags.number("subjects", shape.subjects);
  shape.questions = flags.number("questions", shape.questions);
  shape.prefix_len = flags.number("prefix-len", shape.prefix_len);
  shape.suffix_min = flags.number("suffix-min", shape.suffix_min);
  shape.suffix_max = flags.number("suffix-max", shape.suffix_max);
  ModelOptions model_options;
  model_options.seed = static_cast<uint64_t>(flags.number("seed", 0));
  model_options.device = flags.text("device", "cpu");
  model_options.layer_devices = split_list(flags.text("layer-devices", ""));
  model_options.dtype = flags.text("dtype", "float32");
  ScoringOptions options;
  options.max_length = flags.number("max-length", options.max_length);
  options.max_batch_tokens = flags.number("max-batch-tokens", options.max_batch_tokens);
  options.max_batch_rows = flags.number("max-batch-rows", options.max_batch_rows);
  const int64_t threads = flags.number("threads", 0);
  flags.reject_unknown();
  if (threads < 0) throw UsageError("--threads must be >= 0");
  if (workload != "mmlu-shape") throw UsageError(fmt::format("unknown workload '{}' (known: mmlu-shape)", workload));
  at::set_num_threads(threads > 0 ? static_cast<int>(threads)
                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));

  // Forwards allocate and free tensors of tens of MB; glibc would map and unmap each one and page-fault it in
  // again, which costs as much as the math on the CPU. Keep freed memory in the heap instead.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);

  auto start = std::chrono::steady_clock::now();
  const Model model = Model::open(model_spec, model_options);
  const double load_s = seconds_since(start);
  const std::vector<Request> requests =
      requests_path.empty() ? bench::mmlu_shape(shape, model.config().vocab_size, model_options.seed)
                            : bench::read_requests(requests_path);
  const std::string source = requests_path.empty() ? "workload " + workload : requests_path;

  start = std::chrono::steady_clock::now();
  const ScoringResult result = score_plain(model, requests, options);
  const double score_s = seconds_since(start);
  if (!output_path.empty()) bench::write_scores(output_path, result.scores);

  const ScoringStats& s = result.stats;
  fmt::print(stderr, "model {} ({} layers, hidden {}, {}) loaded in {:.2f} s\n", model_spec, model.config().num_layers,
             model.config().hidden_size, model_options.dtype, load_s);
  fmt::print(stderr, "{}: {} requests\n", source, s.requests);
  fmt::print(stderr, "mode naive: {:.3f} s, {:.1f} requests/s, {} tokens computed ({:.0f} tokens/s), {} padding, "
             "{} forwards, {} scored rows, {} truncated\n",
             score_s, s.requests / score_s, s.tokens_computed, s.tokens_computed / score_s, s.padding_tokens,
             s.forwards, s.scored_rows, s.truncated);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    fmt::print(stderr, "prefix-scorer-bench: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::string message = e.what();
    const size_t newline = message.find('\n');  // c10 errors append a backtrace
    fmt::print(stderr, "prefix-scorer-bench: error: {}\n", message.substr(0, newline));
    return 1;
  }
}
