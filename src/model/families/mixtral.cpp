// Mixtral: mistral's attention, every layer a mixture of experts as wide as the dense MLP, weights renormalized and
// kept in fp32 through the experts' sum.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> mixtral() {
  ModelFamily mixtral = base("mixtral");
  mixtral.default_eps = 1e-5;
  mixtral.default_rope_theta = 1e6;
  mixtral.always_windowed = true;
  ExpertTraits& e = mixtral.experts;
  e.present = e.dense_sized = e.always_normalized = e.routing_fp32 = true;
  e.default_experts = 8;
  e.default_per_token = 2;
  name_mixtral_experts(e);
  return {mixtral};
}

}  // namespace prefix_scorer::families
