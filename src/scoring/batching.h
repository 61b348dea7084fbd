#pragma once
// Splitting length-sorted rows into forwards under a token budget, and building right-padded batches.

#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <cstdint>
#include <utility>
#include <vector>
#include "model/forward_batch.h"

namespace prefix_scorer {

// What a forward's memory grows with: per token slot of a row, the keys and values of every layer (its own, and
// a prefix's gathered in front of them); per (query, key) pair of a row, one layer's attention workspace, as the
// attention path the model takes holds it; per token fed, one layer's activations; per row, the logits of one
// scored position and every recurrent layer's state; once, the dequantization of weights kept quantized.
struct BatchMemory {
  int64_t max_bytes = 0;  // 0: unbounded
  int64_t kv_bytes_per_token = 0;
  int64_t bytes_per_score = 0;
  int64_t bytes_per_fed_token = 0;
  int64_t bytes_per_row = 0;
  int64_t state_bytes_per_row = 0;  // also what a cached prefix entry keeps besides its tokens' keys and values
  DequantizeWorkspace dequantize;   // Model::dequantize_workspace
  int64_t experts = 0, experts_per_token = 0;  // the most routed experts of a layer, and chosen per token
};

// The budget options.max_batch_bytes sets, and what the model's forwards hold on its first layer's device (the
// attention path: soft-capped scores, cascade by matmuls on CUDA when options allow cascade, else fused kernels).
BatchMemory batch_memory(const Model& model, const PrefixScorerOptions& options);

// The memory a forward of `rows` rows takes, the longest `suffix` tokens long after a `prefix` of cached keys.
int64_t forward_bytes(const BatchMemory& memory, int64_t rows, int64_t suffix, int64_t prefix);

// Whether such a forward fits memory.max_bytes (0: unbounded).
inline bool within_memory(const BatchMemory& memory, int64_t rows, int64_t suffix, int64_t prefix) {
  return memory.max_bytes == 0 || forward_bytes(memory, rows, suffix, prefix) <= memory.max_bytes;
}

// A forward pads at most a sixteenth of its tokens (a single row aside): a padded token costs as much as a real
// one, a further forward only its fixed overhead.
inline bool within_padding(int64_t padded_tokens, int64_t real_tokens) {
  return 16 * (padded_tokens - real_tokens) <= padded_tokens;
}

// Half-open [begin, end) ranges over rows sorted by descending length: each range holds at least one row, and at
// most `max_rows` rows, `max_tokens` padded tokens (rows x first row's length) and, where rows continue cached
// prefixes of `prefix_lengths` (empty: none), forward_bytes within memory.max_bytes.
std::vector<std::pair<size_t, size_t>> cut_batches(const std::vector<int64_t>& lengths_descending,
                                                    int64_t max_tokens, int64_t max_rows,
                                                    const std::vector<int64_t>& prefix_lengths = {},
                                                    const BatchMemory& memory = {});

// A right-padded batch of `rows`; row i's tokens sit at positions start_positions[i], start_positions[i] + 1, ...
// and rotate by rope variant rope_variants[i] (empty: 0 for all). Padding repeats the row's last position (so a
// padded query always sees the row's keys) and is marked invalid.
ForwardBatch make_batch(const std::vector<const TokenIds*>& rows, const std::vector<int64_t>& start_positions,
                        const std::vector<int64_t>& rope_variants = {});

// One row of a packed batch: its tokens, their positions, their segments and their tree branches (see
// ForwardBatch::segment and ForwardBatch::branch), and the rope variant of all of them.
struct PackedRow {
  TokenIds tokens;
  std::vector<int64_t> positions;
  std::vector<int64_t> segment;
  std::vector<int64_t> branch;
  int64_t rope_variant = 0;
};

// A right-padded batch of packed rows (padding: invalid, the row's last segment, trunk, at the row's last
// position); the segment, branch and rope variant tensors are set only when some row needs them.
ForwardBatch make_packed_batch(const std::vector<PackedRow>& rows);

// Flat indices (row * width + position) of the last scored[i] positions of each row of lengths[i] tokens.
at::Tensor last_positions(const std::vector<int64_t>& lengths, const std::vector<int64_t>& scored, int64_t width);

// Adds one forward of `batch` to the forward, token and padding counts; returns its real tokens.
int64_t count_forward(const ForwardBatch& batch, ScoringStats& stats);

}  // namespace prefix_scorer
