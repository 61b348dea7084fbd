// prefix-scorer-bench: scores a JSONL file of requests or a built-in workload, and reports timing.

#include "generation_bench.h"
#include "model/config/model_config.h"
#include "modes.h"
#include "prefix_scorer/prefix_scorer.h"
#include "report.h"
#include "request_io.h"
#include "scoring/prefix_kv.h"
#include "soak.h"
#include "text_workloads.h"
#include "workloads.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace prefix_scorer;

constexpr const char* kUsage = R"(usage: prefix-scorer-bench [options]
  --model SPEC              checkpoint directory or synthetic:NAME (tiny, small, llama-1b, llama-8b,
                            tiny-gemma2, tiny-gemma3, tiny-moe, tiny-phi3, gemma2-2b, gemma3-1b,
                            phi3-mini, qwen3-moe-a3b, pythia-1b, phi-2,
                            starcoder2-3b, gpt2, gpt-oss-20b, tiny-gemma4,
                            gemma4-e2b, tiny-glm4-moe, glm4.5-air,
                            ernie4.5-21b-a3b, hunyuan-a13b, minimax-m2,
                            seed-oss-36b, exaone4-32b, hunyuan-0.5b,
                            ernie4.5-0.3b, apertus-8b, tiny-qwen3.5,
                            qwen3.5-9b, qwen3.5-35b-a3b, qwen3-next-80b-a3b,
                            olmo-hybrid-7b, lfm2-1.2b, tiny-granite4,
                            granite-4.0-h-tiny, lfm3-1.7b, nemotron-h-8b,
                            falcon-h1-1.5b, lfm2-8b-a1b, tiny-deepseek-v3,
                            deepseek-v3, kimi-k2, glm-4.7-flash,
                            mistral-small-4, deepseek-v3.2, glm-5)
                            [synthetic:tiny]
  --mode M                  naive, grouped, prefix or all (the three on the same requests) [prefix]
  --requests IN.jsonl       score lines {"context": [ids], "continuation": [ids]} (or both as text, encoded
                            with the model directory's tokenizer.json as lm-evaluation-harness does) ...
  --output OUT.jsonl        ... and write lines {"logprob": x, "is_greedy": b} in the same order (last mode's)
  --workload W              built-in workload when no --requests is given [mmlu-shape]: subjects x questions
                            after a shared few-shot prefix, each question scored against four choices
                                               --subjects --questions --prefix-len --context-min/max --choice-min/max
     mmlu-shape:                                   4          64          600          40-160          1-1
     hellaswag-shape (0-shot):                     1         256            0          60-140         10-40
     arc25-shape (25-shot):                        1          64         2500          20-60           3-15
     hellaswag10-shape (10-shot):                  1          64         1000          60-140         10-40
                            or a text workload, encoded with the tokenizer as lm-eval encodes pairs:
                                               --subjects --questions --shots
     mmlu-text (5-shot, choices " A" to " D"):     4          40         5
     hellaswag-text (0-shot, sentence endings):    1         256         0
                            or generation (modes naive and prefix; see --max-new-tokens):
                                               --questions --prefix-len --max-new-tokens
     gsm8k-shape (8-shot, 40-120-token questions): 64         900          128
                                               --questions --shots --max-new-tokens
     gsm8k-text (worked word problems, encoded):   64         8           128
                                               --questions --prefix-len --max-new-tokens
     reasoning-shape (every one of N tokens):      32         900          1024
  --max-new-tokens N        gsm8k-shape, gsm8k-text: each question wants N/8 to N new tokens, drawn from the seed;
                            reasoning-shape: N each, no early stop [128; reasoning-shape 1024]
  --add-bos-token B         auto, true or false: text requests get the tokenizer's special tokens (auto: when
                            the tokenizer's template adds them, as lm-eval with add_bos_token unset) [auto]
  --tokenizer PATH          tokenizer.json or its directory [the model directory's, when it has one; else, for
                            text workloads, a built-in 500-token byte-level BPE]
  --tokenize FILE           only encode FILE with the tokenizer and report its throughput
  --seed N                  workload and synthetic-weight seed [0]
  --json FILE               also write the report as JSON
  --dump-requests FILE      write the requests as JSONL of token ids (to replay them elsewhere)
  --dump-config FILE        write the model's config.json (to build the same shape elsewhere)
  --device D                cpu, cuda, cuda:N [cpu]
  --layer-devices D1,D2,..  split the layers into contiguous blocks over these devices
  --dtype T                 float32, bfloat16, float16 [float32]
  --quantize F              synthetic models, for speed: int4 keeps their projections and experts as 4-bit
                            codes (W4A16), int8 their projections as 8-bit codes per channel (W8A16), fp8 as
                            FP8 in blocks of 128 x 128 (stacked experts: MXFP4 with int4 and fp8)
)";

// After the scorer options, which come from option_fields().
constexpr const char* kUsageTail = R"(  --threads N               CPU threads; 0 = all cores [0]
  --count-ops B             count the prefix mode's top-level aten ops per forward (generation: per decode
                            step) and layer, in one more run under torch's profiler, outside the timings [false]
  --soak N                  score N random workloads (random prefix trees, budgets, thread counts) with the
                            prefix scorer and the plain path, report mismatches and resident memory, and exit
  --build-info              print what this build was compiled with as one JSON object, and exit
)";

// A scorer option's flag: its name with dashes.
std::string flag_name(const OptionField& field) {
  std::string name = field.name;
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

// The usage text, each scorer option's line made from option_fields(): meaning wrapped, default last.
std::string usage() {
  const PrefixScorerOptions defaults;
  std::string text = kUsage;
  for (const OptionField& field : option_fields()) {
    const std::string value = field.number != nullptr ? std::to_string(defaults.*field.number)
                                                      : (defaults.*field.flag ? "true" : "false");
    std::string line = fmt::format("  --{} {}", flag_name(field), field.number != nullptr ? "N" : "B");
    std::string help = fmt::format("{} [{}]", field.help, value);
    line += std::string(std::max<size_t>(2, 28 - line.size()), ' ');
    while (line.size() + help.size() > 114) {  // wrap at a space, continuing under the meaning
      const size_t cut = help.rfind(' ', 114 - line.size());
      text += line + help.substr(0, cut) + "\n";
      help = help.substr(cut + 1);
      line = std::string(28, ' ');
    }
    text += line + help + "\n";
  }
  return text + kUsageTail;
}

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

std::map<std::string, std::string> parse_flags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage().c_str(), stdout);
      std::exit(0);
    }
    if (arg == "--build-info") {
      std::puts(to_json(build_info()).c_str());
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
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  bool boolean(const std::string& name, bool fallback) {
    const std::string value = text(name, fallback ? "true" : "false");
    if (value == "true" || value == "false") return value == "true";
    throw UsageError(fmt::format("--{} expects true or false, got '{}'", name, value));
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

std::string flags_list(const std::vector<std::string>& items) { return fmt::format("{}", fmt::join(items, ",")); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The tokenizer for text requests: --tokenizer, else the model directory's tokenizer.json when there is one.
std::optional<Tokenizer> find_tokenizer(const std::string& flag, const std::string& model_spec) {
  if (!flag.empty()) return Tokenizer::from_file(flag);
  if (model_spec.rfind("synthetic:", 0) != 0 && std::filesystem::exists(model_spec + "/tokenizer.json"))
    return Tokenizer::from_file(model_spec);
  return std::nullopt;
}

std::string add_bos_flag(const std::string& value) {
  if (value == "true" || value == "false" || value == "auto") return value;
  throw UsageError(fmt::format("--add-bos-token expects auto, true or false, got '{}'", value));
}

int tokenize_only(const std::string& path, const std::optional<Tokenizer>& tokenizer) {
  if (!tokenizer) throw UsageError("--tokenize needs --tokenizer or a model directory with tokenizer.json");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("cannot read '{}'", path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto start = std::chrono::steady_clock::now();
  const TokenIds ids = tokenizer->encode(text);
  const double s = seconds_since(start);
  fmt::print(stderr, "encoded {:.2f} MB into {} tokens in {:.3f} s: {:.2f} MB/s, {:.0f} tokens/s\n", text.size() / 1e6,
             ids.size(), s, text.size() / 1e6 / s, ids.size() / s);
  return 0;
}

// Text workloads take --subjects, --questions and --shots; the shape flags belong to the token-id workloads.
bench::TextShape text_shape_flags(Flags& flags, const std::string& workload) {
  for (const char* shape_only : {"prefix-len", "context-min", "context-max", "choice-min", "choice-max"}) {
    if (flags.has(shape_only))
      throw UsageError(fmt::format("--{} does not apply to the text workload {}", shape_only, workload));
  }
  bench::TextShape shape = bench::named_text_shape(workload);
  shape.subjects = flags.number("subjects", shape.subjects);
  shape.questions = flags.number("questions", shape.questions);
  shape.shots = flags.number("shots", shape.shots);
  return shape;
}

void check_tokenizer_fits(const std::string& workload, const bench::TextEncoding& encoding, int64_t vocab_size) {
  if (encoding.tokenizer->vocab_size() > vocab_size)
    throw std::invalid_argument(fmt::format("{}: the tokenizer's {} tokens do not fit the model's vocabulary of {}",
                                            workload, encoding.tokenizer->vocab_size(), vocab_size));
}

std::vector<Request> encode_text_workload(const std::string& workload, const bench::TextShape& shape, uint64_t seed,
                                          const bench::TextEncoding& encoding, int64_t vocab_size) {
  check_tokenizer_fits(workload, encoding, vocab_size);
  std::vector<Request> requests;
  for (const auto& pair : bench::text_workload(workload, shape, seed))
    requests.push_back(encode_pair(*encoding.tokenizer, pair.context, pair.continuation, encoding.add_special_tokens));
  return requests;
}

int soak_only(const std::shared_ptr<const Model>& model, int64_t workloads, uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  const bench::SoakReport r = bench::soak(model, workloads, seed);
  fmt::print(stderr,
             "soak: {} workloads, {} requests against the plain path in {:.0f} s: {} mismatches; resident memory "
             "{:.0f} MiB at start, {:.0f} MiB after the first tenth, {:.0f} MiB at the end\n",
             r.workloads, r.requests, seconds_since(start), r.mismatches, r.rss_start_mib, r.rss_warm_mib, r.rss_end_mib);
  return r.mismatches == 0 ? 0 : 1;
}

// Reads the workload's size flags now (so that every flag is checked before the model loads) and returns what
// builds its requests once the vocabulary is known.
std::function<std::vector<Request>(int64_t vocab_size)> workload_requests(
    Flags& flags, const std::string& workload, uint64_t seed, const std::string& path,
    const std::function<bench::TextEncoding()>& text_encoding) {
  if (path.empty() && bench::is_text_workload(workload)) {
    const bench::TextShape shape = text_shape_flags(flags, workload);
    return [=](int64_t vocab_size) { return encode_text_workload(workload, shape, seed, text_encoding(), vocab_size); };
  }
  bench::ChoiceShape shape;
  try {
    shape = bench::named_shape(workload);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  shape.subjects = flags.number("subjects", shape.subjects);
  shape.questions = flags.number("questions", shape.questions);
  shape.prefix_len = flags.number("prefix-len", shape.prefix_len);
  shape.context_min = flags.number("context-min", shape.context_min);
  shape.context_max = flags.number("context-max", shape.context_max);
  shape.choice_min = flags.number("choice-min", shape.choice_min);
  shape.choice_max = flags.number("choice-max", shape.choice_max);
  if (!path.empty()) return [=](int64_t) { return bench::read_requests(path, text_encoding); };
  return [=](int64_t vocab_size) { return bench::choice_workload(shape, vocab_size, seed, workload); };
}

int run(int argc, char** argv) {
  Flags flags(parse_flags(argc, argv));
  const std::string model_spec = flags.text("model", "synthetic:tiny");
  const std::string mode = flags.text("mode", "prefix");
  const std::string requests_path = flags.text("requests", "");
  const std::string output_path = flags.text("output", "");
  const std::string json_path = flags.text("json", "");
  const std::string dump_path = flags.text("dump-requests", "");
  const std::string config_path = flags.text("dump-config", "");
  const std::string workload = flags.text("workload", "mmlu-shape");
  ModelOptions model_options;
  model_options.seed = static_cast<uint64_t>(flags.number("seed", 0));
  model_options.device = flags.text("device", "cpu");
  model_options.layer_devices = split_list(flags.text("layer-devices", ""));
  model_options.dtype = flags.text("dtype", "float32");
  model_options.quantize = flags.text("quantize", "");
  PrefixScorerOptions options;
  for (const OptionField& field : option_fields()) {
    if (field.number != nullptr) options.*field.number = flags.number(flag_name(field), options.*field.number);
    if (field.flag != nullptr) options.*field.flag = flags.boolean(flag_name(field), options.*field.flag);
  }
  const int64_t threads = flags.number("threads", 0);
  const bool count_ops = flags.boolean("count-ops", false);
  const std::string tokenizer_flag = flags.text("tokenizer", "");
  const std::string add_bos = add_bos_flag(flags.text("add-bos-token", "auto"));
  const std::string tokenize_path = flags.text("tokenize", "");
  const int64_t soak_workloads = flags.number("soak", 0);
  std::optional<Tokenizer> tokenizer;  // loaded for the first text request only
  auto text_encoding = [&]() -> bench::TextEncoding {
    tokenizer = find_tokenizer(tokenizer_flag, model_spec);
    if (!tokenizer && requests_path.empty()) tokenizer = Tokenizer::from_json(bench::builtin_tokenizer_json());
    if (!tokenizer) return {};
    return {&*tokenizer, add_bos == "true" || (add_bos == "auto" && tokenizer->adds_special_tokens())};
  };
  const bool generating = requests_path.empty() && bench::is_generation_workload(workload);
  bench::GenerationShape generation = bench::named_generation_shape(workload);
  if (generating) {
    generation.questions = flags.number("questions", generation.questions);
    if (workload == "gsm8k-text")
      generation.shots = flags.number("shots", generation.shots);
    else
      generation.prefix_len = flags.number("prefix-len", generation.prefix_len);
    generation.max_new_tokens = flags.number("max-new-tokens", generation.max_new_tokens);
    if (generation.questions < 1 || generation.prefix_len < 0 || generation.shots < 0 || generation.max_new_tokens < 1)
      throw UsageError(fmt::format("{} needs --questions >= 1, --prefix-len or --shots >= 0 and --max-new-tokens >= 1",
                                   workload));
  }
  const auto make_requests = generating ? nullptr
                                        : workload_requests(flags, workload, model_options.seed, requests_path, text_encoding);
  flags.reject_unknown();
  if (!tokenize_path.empty()) return tokenize_only(tokenize_path, find_tokenizer(tokenizer_flag, model_spec));
  if (threads < 0) throw UsageError("--threads must be >= 0");
  std::vector<std::string> modes{mode};
  const std::vector<std::string> known = generating ? std::vector<std::string>{"naive", "prefix"} : bench::mode_names();
  if (mode == "all") modes = known;
  for (const auto& m : modes) {
    if (std::find(known.begin(), known.end(), m) == known.end())
      throw UsageError(fmt::format("unknown mode '{}' (known: {}, all)", m, fmt::join(known, ", ")));
  }
  const int used_threads =
      threads > 0 ? static_cast<int>(threads) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(used_threads);

  // Forwards allocate and free tensors of tens of MB; glibc would map and unmap each one and page-fault it in
  // again, which costs as much as the math on the CPU. Keep freed memory in the heap instead.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);

  const auto start = std::chrono::steady_clock::now();
  const auto model = std::make_shared<const Model>(Model::open(model_spec, model_options));
  const double load_seconds = seconds_since(start);
  if (soak_workloads > 0) return soak_only(model, soak_workloads, model_options.seed);
  if (generating) {
    std::vector<TokenIds> prompts;
    if (workload == "gsm8k-text") {
      const bench::TextEncoding encoding = text_encoding();
      check_tokenizer_fits(workload, encoding, model->config().vocab_size);
      for (const std::string& text : bench::gsm8k_text_prompts({1, generation.questions, generation.shots}, model_options.seed))
        prompts.push_back(encoding.tokenizer->encode(text, encoding.add_special_tokens));
    } else {
      prompts = bench::gsm8k_shape_prompts(generation, model->config().vocab_size, model_options.seed);
    }
    const auto requests = bench::generation_requests(std::move(prompts), generation, model_options.seed);
    fmt::print(stderr, "model {} ({} layers, hidden {}) loaded in {:.2f} s; {}: {} prompts\n", model_spec,
               model->config().num_layers, model->config().hidden_size, load_seconds, workload, requests.size());
    bench::stop_on_interrupt();
    const nlohmann::json report = bench::run_generation_modes(model, requests, modes, options, count_ops);
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << report.dump(2) << '\n';
      if (!out) throw std::runtime_error(fmt::format("cannot write report '{}'", json_path));
    }
    return 0;
  }
  const std::vector<Request> requests = make_requests(model->config().vocab_size);
  const std::string source = requests_path.empty() ? workload : requests_path;
  if (!dump_path.empty()) bench::write_requests(dump_path, requests);
  if (!config_path.empty()) {
    std::ofstream out(config_path);
    out << model->config().to_json() << '\n';
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", config_path));
  }

  bench::stop_on_interrupt();
  std::vector<bench::ModeRun> runs;
  for (const auto& m : modes) runs.push_back(bench::run_mode(m, model, requests, options));
  if (!output_path.empty()) bench::write_scores(output_path, runs.back().result.scores);

  bench::RunInfo info{model_spec,
                            source,
                            model_options.layer_devices.empty() ? model_options.device
                                                                : flags_list(model_options.layer_devices),
                            model_options.dtype,
                            used_threads,
                            bench::floor_work(requests, *model, options.max_length),
                            bench::matmul_rate(*model),
                            model->attention_kernels(),
                            kv_bytes(*model, 1),
                            kv_bytes(*model, 1, true),
                            state_bytes(*model),
                            model->info().weight_bytes,
                            model->info().quantized_weight_bytes};
  if (count_ops && std::find(modes.begin(), modes.end(), "prefix") != modes.end()) {  // the prefix call, run again
    const bench::CallOps ops = bench::prefix_call_ops(model, requests, options);
    info.prefix_ops = ops.by_name;
    info.prefix_forwards = ops.forwards;
    info.layers = model->config().num_layers;
  }
  const nlohmann::json report = bench::build_report(info, runs);
  fmt::print(stderr, "model {} ({} layers, hidden {}) loaded in {:.2f} s; {}: {} requests\n", model_spec,
             model->config().num_layers, model->config().hidden_size, load_seconds, source, requests.size());
  bench::print_report(report);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << report.dump(2) << '\n';
    if (!out) throw std::runtime_error(fmt::format("cannot write report '{}'", json_path));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    fmt::print(stderr, "prefix-scorer-bench: {}\n", e.what());
    return 2;
  } catch (const bench::Interrupted&) {
    fmt::print(stderr, "prefix-scorer-bench: interrupted\n");
    return 130;
  } catch (const std::exception& e) {
    std::string message = e.what();
    const size_t newline = message.find('\n');  // c10 errors append a backtrace
    fmt::print(stderr, "prefix-scorer-bench: error: {}\n", message.substr(0, newline));
    return 1;
  }
}
