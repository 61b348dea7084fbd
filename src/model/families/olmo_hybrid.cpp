// OLMo hybrid: OLMo 3's attention layers (norms after attention and MLP, q and k normed over the whole projection,
// no window, no rope as released) between Gated DeltaNet layers normed before their blocks, with their own
// projection names and q, k and v convolved apart, beta doubled (negative eigenvalues) and an output norm of
// epsilon 1e-5.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> olmo_hybrid() {
  ModelFamily f = base("olmo_hybrid");
  f.attention_bias_on_o = f.qk_norm_full_width = f.output_norms_only = f.norm_in_fp32 = true;
  f.deltanet = DeltaNetLayout::kOlmoHybrid;
  // As released (OLMo-core's names, which transformers saves back): every layer's post-attention norm, before the
  // MLP or on the attention's output, is feedforward_layer_norm.
  f.input_norm = "attention_layer_norm";
  f.post_norm = "feedforward_layer_norm";
  return {f};
}

}  // namespace prefix_scorer::families
