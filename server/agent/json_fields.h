// Reading fields of the agent CLIs' JSON events, which may be absent or of
// another type than documented: a missing or mistyped field reads as empty.
// Pure functions; safe from any thread.
#ifndef KERNELSEEK_SERVER_AGENT_JSON_FIELDS_H_
#define KERNELSEEK_SERVER_AGENT_JSON_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"

namespace kseek::agent {

// j[key] when it is a string, else "".
inline std::string StringField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// j[key] when it is an integer, else nothing.
inline std::optional<int64_t> IntField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_JSON_FIELDS_H_
