#pragma once
// Infinity and NaN in config.json. JSON has no token for them: Python's json module writes bare Infinity, -Infinity
// and NaN (older Mamba2 and Nemotron-H configs hold `"time_step_limit": [0.0, Infinity]`), and transformers 5
// writes {"__float__": "Infinity"} instead. Both are read here; any other text stays an error of the JSON parser.

#include <nlohmann/json.hpp>

#include <string>

namespace prefix_scorer {

// `text` with each bare Infinity, -Infinity and NaN outside strings written as transformers 5 writes it.
std::string quote_special_floats(const std::string& text);

// A JSON number, or a special float as transformers 5 writes it; anything else throws std::invalid_argument that
// names `what`.
double json_float(const nlohmann::json& value, const std::string& what);

}  // namespace prefix_scorer
