#pragma once
// A layer's mixer, the block that mixes tokens: attention, latent attention, Gated DeltaNet, short convolution or
// Mamba2, each in its file under one signature. A mixer reads the layer's normed input `h` ([b, t, hidden], or
// [1, n, hidden] where the forward packs its real tokens) and returns its output projection's result; what it keeps
// for later tokens (keys and values, or a recurrent state) goes into the layer's cache.

#include "model/cache/kv_cache.h"
#include "model/checkpoint/weights.h"
#include "model/config/layer_spec.h"
#include "model/forward_inputs.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace prefix_scorer {

// What a mixer reads beside the layer's weights: the forward's parts (each with its inputs, cache, shared prefixes
// and the keys and values produced so far; mixers other than attention run a forward of one part), the layer's
// index, and whether a later layer reads this one's keys and values.
struct MixerContext {
  const std::vector<PartContext>& parts;
  int64_t index;
  bool read_later;

  const DeviceInputs& in() const { return *parts.front().in; }
  KvCache* cache() const { return parts.front().cache; }
  const SharedPrefixes* shared() const { return parts.front().shared; }
  std::vector<LayerCache>& produced() const { return *parts.front().produced; }
};

using MixerForward = at::Tensor (*)(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                                    const MixerContext& context);

// What a layer's mixer costs and allows, as each mixer's file states it: read by the scorer's memory budget, its
// prefix cache's bytes and its choice between cascade and gather.
struct MixerCosts {
  int64_t cached_per_token = 0;     // values the layer's cache keeps a token: keys and values, or latent attention's
                                    // latents; none where the layer reads another layer's
  int64_t expanded_per_token = 0;   // what attention of the same heads keeps a token (latent attention's keys and
                                    // values expanded, as a gathered prefix holds them); cached_per_token elsewhere
  int64_t state_bytes = 0;          // kept a row whatever its tokens: a recurrent state (fp32) and convolution history
  int64_t workspace_per_token = 0;  // held a token fed inside the mixer, beyond the projections every layer counts
                                    // (a recurrent mixer's chunked scan)
  int64_t score_heads = 0;          // query heads whose (query, key) scores a forward holds at once
  bool cascade_exact = true;        // a shared prefix attended once for all its rows and merged by log-sum-exp gives
                                    // the full forward's numbers (no window cutting into it, no soft-capped scores)
};
using MixerCostsOf = MixerCosts (*)(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes);

// A mixer: its forward and its costs (the cache's values in `dtype_bytes` each).
struct Mixer {
  MixerForward forward;
  MixerCostsOf costs;
};

// Self-attention (attention_mixer.cpp): q, k and v projected together for every part of the forward, each part
// attending within itself.
at::Tensor attention_mixer(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                           const MixerContext& context);
// Multi-head latent attention (latent_attention_mixer.cpp).
at::Tensor latent_attention_mixer(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                                  const MixerContext& context);
// Gated DeltaNet, short convolution and Mamba2 (recurrent_mixers.cpp): from the state before the forward's tokens,
// the state after going into the cache.
at::Tensor recurrent_mixer(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                           const MixerContext& context);
// Attention and Mamba2 side by side on one input, their outputs added (Falcon-H1's layers).
at::Tensor attention_and_mamba2_mixer(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                                      const MixerContext& context);
// Their costs, each in the same file.
MixerCosts attention_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes);
MixerCosts latent_attention_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes);
MixerCosts recurrent_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes);
MixerCosts attention_and_mamba2_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes);

// The mixer a layer runs; a layer of its MLP alone (MixerKind::kNone) has none: no forward, nothing kept.
Mixer mixer_of(const LayerSpec& s);
// The costs of layer `layer`'s mixer.
MixerCosts mixer_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes);
// Whether cascade over shared prefixes gives the full forward's numbers at every layer.
bool cascade_exact(const ModelSpec& spec);

// Shared by the mixers' files.
// Attention with the recurrent `state` kept beside its keys and values in the layer's cache (a hybrid layer's).
at::Tensor attention(const AttentionSpec& a, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                     const std::vector<PartContext>& parts, int64_t index, bool read_later,
                     const std::vector<at::Tensor>& state = {});
// Queries `q` [b, heads, t, width] of a layer over `produced`, the keys and values of the forward's tokens (after
// the cache's), and over the rows' shared prefixes' (`prefix`) by cascade when there are some.
at::Tensor attend_cached(const AttentionSpec& a, const at::Tensor& q, const LayerCache& produced,
                         const LayerCache* prefix, const DeviceInputs& in, const at::Tensor& sinks);
// The shared prefixes' keys and values (or states) at `layer`, or nullptr without shared prefixes.
const LayerCache* shared_prefix(const SharedPrefixes* shared, int64_t layer);
// Keeps a layer's keys and values `fresh` in produced[index], after the cache's rows' when there is a cache.
void keep_produced(LayerCache fresh, KvCache* cache, int64_t index, std::vector<LayerCache>& produced);
// A recurrent layer's state before a forward's tokens: the cache's rows' (the tokens it holds), else each row's
// shared prefix's, else none (zeros).
std::vector<at::Tensor> state_before(const DeviceInputs& in, KvCache* cache, const SharedPrefixes* shared,
                                     int64_t index);
// A Mamba2 mixer from `before` (its state and convolution history; empty: zeros), leaving its state after in `after`.
at::Tensor mamba2(const Mamba2Spec& m, const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                  const std::vector<at::Tensor>& before, LayerCache& after);

}  // namespace prefix_scorer
