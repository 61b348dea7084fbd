#include "prefix_scorer/stop_strings.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace prefix_scorer {

StopHook stop_strings_hook(Tokenizer tokenizer, std::vector<std::vector<std::string>> stops) {
  std::vector<size_t> tails;  // tokens decoded per request
  for (size_t i = 0; i < stops.size(); ++i) {
    size_t longest = 0;
    for (const std::string& s : stops[i]) {
      if (s.empty()) throw std::invalid_argument(fmt::format("generate: request {}: an empty stop string", i));
      longest = std::max(longest, s.size());
    }
    tails.push_back(4 + longest);
  }
  return [tokenizer = std::move(tokenizer), stops = std::move(stops), tails = std::move(tails)](
             size_t request, const TokenIds& generated) {
    if (request >= stops.size())
      throw std::invalid_argument(
          fmt::format("generate: request {} has no stop strings (they were given for {} requests)", request, stops.size()));
    const std::vector<std::string>& strings = stops[request];
    if (strings.empty()) return false;
    const size_t tail = std::min(tails[request], generated.size());
    const std::string text = tokenizer.decode(TokenIds(generated.end() - static_cast<std::ptrdiff_t>(tail), generated.end()));
    return std::any_of(strings.begin(), strings.end(),
                       [&](const std::string& s) { return text.find(s) != std::string::npos; });
  };
}

}  // namespace prefix_scorer
