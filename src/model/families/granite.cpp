// Granite 3: Llama with multipliers of the embeddings, the attention scores and each block's output, and a divisor
// of the logits. Granite 4 (granitemoehybrid): the same multipliers over Mamba2 layers (model.layers.N.mamba.)
// between attention layers without rope (as released), each layer's MLP a shared one (shared_mlp's input_linear,
// gate's rows then up's, and output_linear) beside experts (block_sparse_moe: a softmax over the top logits, in fp32;
// every expert's gate and up stacked by rows in input_linear, down in output_linear), or alone without experts.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> granite() {
  ModelFamily granite = base("granite");
  granite.attention_bias_on_o = granite.reads_mlp_bias = granite.reads_multipliers = true;
  ModelFamily hybrid = base("granitemoehybrid");
  hybrid.attention_bias_on_o = hybrid.reads_multipliers = true;
  hybrid.mamba2 = Mamba2Keys::kGranite;
  hybrid.mlp_module = "shared_mlp";
  hybrid.gate_up_proj = "input_linear";
  hybrid.down_proj = "output_linear";
  ExpertTraits& e = hybrid.experts;
  e.present = e.dense_sized = e.gate_up_rows = true;
  e.experts_key = "num_local_experts";
  e.default_experts = 8;
  e.default_per_token = 2;
  e.scores = RouterScores::kFp32SoftmaxOfChosen;
  e.router = "block_sparse_moe.router.layer.weight";
  e.gate = "block_sparse_moe.input_linear.weight";
  e.down = "block_sparse_moe.output_linear.weight";
  e.shared = "shared_mlp";
  return {granite, hybrid};
}

}  // namespace prefix_scorer::families
