#pragma once
// Built-in request workloads of random token ids, deterministic from a seed.

#include "prefix_scorer/types.h"

#include <cstdint>
#include <vector>

namespace prefix_scorer::bench {

// MMLU shape: `subjects` few-shot prefixes of `prefix_len` tokens, each followed by `questions` questions of
// [suffix_min, suffix_max] tokens, each question scored against four one-token choices.
struct MmluShape {
  int64_t subjects = 4;
  int64_t questions = 64;
  int64_t prefix_len = 600;
  int64_t suffix_min = 40;
  int64_t suffix_max = 160;
};

std::vector<Request> mmlu_shape(const MmluShape& shape, int64_t vocab_size, uint64_t seed);

// HellaSwag shape (0-shot): `questions` contexts of [context_min, context_max] tokens, each scored against four
// endings of [ending_min, ending_max] tokens.
struct HellaswagShape {
  int64_t questions = 256;
  int64_t context_min = 60;
  int64_t context_max = 140;
  int64_t ending_min = 10;
  int64_t ending_max = 40;
};

std::vector<Request> hellaswag_shape(const HellaswagShape& shape, int64_t vocab_size, uint64_t seed);

}  // namespace prefix_scorer::bench
