#pragma once
// The input of a forward: token rows, their positions and how they pack.

#include <ATen/ATen.h>

namespace prefix_scorer {

class KvCache;
struct SharedPrefixes;

// Token ids of a right-padded batch and where each token sits.
struct ForwardBatch {
  at::Tensor tokens;     // [batch, len] int64
  at::Tensor positions;  // [batch, len] int64
  at::Tensor valid;      // [batch, len] bool, false on padding
  // Optional, for packing: [batch, len] int64. A row holds segments 0, 1, 2, ...: independent sequences, each
  // after the row's cached slots; a token sees the cached slots and its own segment only. Undefined: one segment.
  at::Tensor segment;
  // Optional, for tree packing: [batch, len] int64. A segment holds a trunk (branch 0) and then branches 1, 2, ...,
  // each continuing the trunk from the same position on; a token sees the trunk and its own branch only. Cached
  // slots are trunk. Undefined: every segment is one sequence.
  at::Tensor branch;
  // Optional: [batch] int64, the rope variant each row's tokens rotate by (ModelConfig::rope_variant): 0 the rope
  // as configured, 1 longrope's long factors. Undefined: 0 for every row.
  at::Tensor rope_variant;
};

// One of the batches a forward runs together (Model::forward_together): its tokens, its cache (null: none), the
// flat positions it scores, and the shared prefixes its rows attend to by cascade (null: none).
struct ForwardPart {
  const ForwardBatch* batch = nullptr;
  KvCache* cache = nullptr;
  at::Tensor score_rows;
  const SharedPrefixes* shared = nullptr;
};

}  // namespace prefix_scorer
