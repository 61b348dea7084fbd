#pragma once
// What a loaded layer's weights become for the forward: projections of one input stacked into one matmul (q, k and
// v; gate and up; a latent query's input projection and kv_a), and the rows a multiplier scales (Falcon-H1's muP,
// key and value scales) as tensors.

#include "model/checkpoint/weights.h"
#include "model/config/layer_spec.h"

namespace prefix_scorer {

void stack_projections(LayerWeights& l, const AttentionSpec& a);
void multiplier_rows(LayerWeights& l, const LayerSpec& s);

}  // namespace prefix_scorer
