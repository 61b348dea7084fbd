#pragma once
// Built-in text workloads, written the way lm-evaluation-harness's task templates write their prompts, from a
// seed. They are encoded into requests by a tokenizer, as lm-eval's HF backend encodes (context, continuation).

#include <cstdint>
#include <string>
#include <vector>

namespace prefix_scorer::bench {

struct TextPair {
  std::string context;
  std::string continuation;
};

struct TextShape {
  int64_t subjects = 1;
  int64_t questions = 1;
  int64_t shots = 0;
};

// The text workloads by name:
//   mmlu-text:      4 subjects x 40 questions; per subject a description and `shots` worked questions (the few-shot
//                   prompt), then each question of varied wording with options A-D, ending in "Answer:"; the four
//                   continuations " A" to " D"
//   hellaswag-text: 256 contexts ("activity: sentences"), each with four continuations of one to three sentences
bool is_text_workload(const std::string& workload);
const std::vector<std::string>& text_workload_names();
// Throws std::invalid_argument for another name.
TextShape named_text_shape(const std::string& workload);

std::vector<TextPair> text_workload(const std::string& workload, const TextShape& shape, uint64_t seed);

// gsm8k-text's prompts: `shots` worked arithmetic word problems written as lm-eval's GSM8K template writes them
// ("Question: ...\nAnswer: ... The answer is N.\n\n", the few-shot prefix every prompt shares), then each of
// `questions` questions ending in "Answer:".
std::vector<std::string> gsm8k_text_prompts(const TextShape& shape, uint64_t seed);

// The small byte-level BPE tokenizer (500 tokens) the benchmark encodes text workloads with by default.
const std::string& builtin_tokenizer_json();

}  // namespace prefix_scorer::bench
