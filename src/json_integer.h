#pragma once
// Integers read from JSON files of strangers: never a silently cut or undefined conversion.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace prefix_scorer {

// `value` as an int64: an integer in range, or a float with an integral value in range (some configs write
// 4096.0). Throws std::invalid_argument "<what> must be an integer (<value>)" otherwise.
inline int64_t json_integer(const nlohmann::json& value, const std::string& what) {
  const auto wrong = [&](const char* why) {
    return std::invalid_argument(fmt::format("{} {} ({})", what, why, value.dump()));
  };
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > uint64_t{INT64_MAX}) throw wrong("is out of range");
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (!(d >= -0x1p63 && d < 0x1p63) || d != std::trunc(d)) throw wrong("must be an integer");
    return static_cast<int64_t>(d);
  }
  throw wrong("must be an integer");
}

}  // namespace prefix_scorer
