#pragma once
// Built-in request workloads of random token ids, deterministic from a seed.

#include "prefix_scorer/types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace prefix_scorer::bench {

// A multiple-choice workload: `subjects` shared few-shot prefixes of `prefix_len` tokens (0: none), each followed
// by `questions` question contexts of [context_min, context_max] tokens, each scored against four choices of
// [choice_min, choice_max] tokens.
struct ChoiceShape {
  int64_t subjects = 1;
  int64_t questions = 64;
  int64_t prefix_len = 0;
  int64_t context_min = 40;
  int64_t context_max = 160;
  int64_t choice_min = 1;
  int64_t choice_max = 1;
};

// The shapes by name:
//   mmlu-shape:        4 subjects x 64 questions, 600-token prefix, 40-160-token questions, one-token choices
//   hellaswag-shape:   256 questions (0-shot), 60-140-token contexts, 10-40-token endings
//   arc25-shape:       64 questions after one ~2,500-token 25-shot prefix, 20-60-token questions, 3-15-token choices
//   hellaswag10-shape: 64 questions after one ~1,000-token 10-shot prefix, 60-140-token contexts, 10-40-token endings
// Throws std::invalid_argument for another name.
ChoiceShape named_shape(const std::string& workload);
const std::vector<std::string>& workload_names();

std::vector<Request> choice_workload(const ChoiceShape& shape, int64_t vocab_size, uint64_t seed,
                                     const std::string& workload);

}  // namespace prefix_scorer::bench
