#include "model/config/config_enums.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <utility>
#include <vector>

namespace prefix_scorer {
namespace {

template <typename Enum>
using Names = std::vector<std::pair<Enum, std::string_view>>;

const Names<Activation> kActivations{
    {Activation::kSilu, "silu"},
    {Activation::kGeluTanh, "gelu_pytorch_tanh"},
    {Activation::kGelu, "gelu"},
    {Activation::kXielu, "xielu"},
    {Activation::kRelu2, "relu2"},
    {Activation::kGeluTanh, "gelu_new"}};  // read only: the same tanh approximation, written in another order
const Names<RopeType> kRopeTypes{{RopeType::kDefault, "default"},
                                 {RopeType::kLinear, "linear"},
                                 {RopeType::kLlama3, "llama3"},
                                 {RopeType::kLongRope, "longrope"},
                                 {RopeType::kYarn, "yarn"},
                                 {RopeType::kProportional, "proportional"}};
const Names<LayerKind> kLayerKinds{{LayerKind::kSlidingAttention, "sliding_attention"},
                                   {LayerKind::kFullAttention, "full_attention"}};

template <typename Enum>
std::string_view name_of(const Names<Enum>& names, Enum value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  throw std::logic_error("an enum value without a name");
}

template <typename Enum>
Enum parse(const Names<Enum>& names, const std::string& name, const char* what) {
  std::vector<std::string_view> known;
  for (const auto& [value, known_name] : names) {
    if (name == known_name) return value;
    known.push_back(known_name);
  }
  throw std::invalid_argument(
      fmt::format("config.json: unsupported {} '{}' (supported: {})", what, name, fmt::join(known, ", ")));
}

}  // namespace

std::string_view to_string(Activation activation) { return name_of(kActivations, activation); }
std::string_view to_string(RopeType type) { return name_of(kRopeTypes, type); }
std::string_view to_string(LayerKind kind) { return name_of(kLayerKinds, kind); }

Activation parse_activation(const std::string& name) { return parse(kActivations, name, "activation"); }
RopeType parse_rope_type(const std::string& name) { return parse(kRopeTypes, name, "rope type"); }
LayerKind parse_layer_kind(const std::string& name) { return parse(kLayerKinds, name, "layer type"); }

}  // namespace prefix_scorer
