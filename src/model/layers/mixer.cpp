#include "model/layers/mixer.h"

#include <algorithm>

namespace prefix_scorer {
namespace {

MixerCosts no_costs(const ModelSpec&, int64_t, int64_t) { return {}; }

}  // namespace

Mixer mixer_of(const LayerSpec& s) {
  if (s.mamba_beside) return {attention_and_mamba2_mixer, attention_and_mamba2_costs};
  switch (s.mixer) {
    case MixerKind::kAttention:
      return {attention_mixer, attention_costs};
    case MixerKind::kLatentAttention:
      return {latent_attention_mixer, latent_attention_costs};
    case MixerKind::kNone:
      return {nullptr, no_costs};
    default:
      return {recurrent_mixer, recurrent_costs};
  }
}

MixerCosts mixer_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes) {
  return mixer_of(spec.layers.at(layer)).costs(spec, layer, dtype_bytes);
}

bool cascade_exact(const ModelSpec& spec) {
  for (int64_t l = 0; l < static_cast<int64_t>(spec.layers.size()); ++l)
    if (!mixer_costs(spec, l, 1).cascade_exact) return false;
  return true;
}

}  // namespace prefix_scorer
