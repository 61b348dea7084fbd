#pragma once
// A LoRA adapter as peft saves it (adapter_config.json, adapter_model.safetensors), merged into a checkpoint's
// tensors while they load: W + scale * B A for each adapted layer (transposed for embeddings), on whole tensors
// taken from the adapter where it saved them (modules_to_save, an adapted embedding's base weights). LoRA on
// stacked experts (peft's target_parameters gate_up_proj and down_proj) updates each expert's gate, up and down
// tensors as a checkpoint saves them one by one (mlp.experts.E.gate_proj.weight, ...). Anything else peft can save (DoRA, other adapter types, LoRA
// biases, trainable tokens, ...) is refused by name rather than dropped.

#include "model/checkpoint/safetensors.h"

#include <ATen/ATen.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace prefix_scorer {

// How the adapter's module names (the model peft wrapped) map onto the checkpoint's text-model names: prefixes
// renamed (a multimodal model's language model, `model.language_model.layers.0...` -> `model.layers.0...`), and
// modules the text model does not run (a vision tower), whose factors are left out because no text input reaches them.
struct AdapterNaming {
  std::vector<std::pair<std::string, std::string>> renamed_prefixes;
  std::vector<std::string> unused_prefixes;
};

class LoraAdapter {
 public:
  // Throws FileNotFound for a missing file and std::invalid_argument, naming the adapter and the setting, for what
  // cannot be merged.
  explicit LoraAdapter(const std::string& dir, const AdapterNaming& naming = {});

  // Whether the adapter changes the checkpoint tensor `name` (a delta or a replacement).
  bool changes(const std::string& name) const;
  // Whether the adapter saves the whole tensor `name` (modules_to_save, an adapted embedding's base weights).
  bool replaces(const std::string& name) const { return replacements_.count(name) != 0; }
  // `name` before its LoRA update: the adapter's saved copy of it if it has one, else `checkpoint_tensor`.
  at::Tensor base(const std::string& name, const at::Tensor& checkpoint_tensor);
  // `name` as the adapter makes it: base() plus its LoRA update if it has one (then a new float32 tensor). Both
  // record that the adapter's tensors for `name` were used.
  // `stored_in_out`: the tensor is a projection stored [in, out] (GPT-2's Conv1D), its update B A transposed.
  at::Tensor apply(const std::string& name, const at::Tensor& checkpoint_tensor, bool stored_in_out = false);
  // Throws std::invalid_argument naming an adapter tensor that apply() never took (it targets a tensor the model
  // does not have).
  void check_all_applied() const;

 private:
  struct Delta {
    std::string a, b;  // the adapter's tensor names
    double scale = 1.0;
    bool transpose = false;  // embeddings: B A is [hidden, vocab]
    // One expert's share of factors over stacked experts: A [experts, rank, in], B [out, rank, experts] per expert,
    // rows [row_begin, row_begin + rows) of the expert's update (gate's or up's of gate_up_proj). experts 0: plain.
    int64_t experts = 0, expert = 0, row_begin = 0, rows = 0;
  };

  std::string dir_;
  SafetensorsFile file_;
  std::map<std::string, Delta> deltas_;              // by the checkpoint tensor they change
  std::map<std::string, std::string> replacements_;  // checkpoint tensor -> the adapter's tensor
  std::set<std::string> applied_;
};

}  // namespace prefix_scorer
