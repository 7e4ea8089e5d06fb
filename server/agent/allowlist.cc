// The coordinator's agent allowlist (allowlist.h).
#include "agent/allowlist.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace kseek::agent {

namespace {

using nlohmann::json;

absl::Status Bad(const std::string& source, const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", field, ": ", what));
}

absl::StatusOr<std::vector<std::string>> Strings(const json& value, const std::string& source,
                                                 const std::string& field) {
  if (!value.is_array()) return Bad(source, field, "expected an array of strings");
  std::vector<std::string> out;
  for (const json& v : value) {
    if (!v.is_string()) return Bad(source, field, "expected an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

absl::StatusOr<AllowedAgent> ParseEntry(const std::string& name, const json& entry,
                                        const std::string& source) {
  const std::string field = absl::StrCat("agents.", name);
  if (!entry.is_object()) return Bad(source, field, "expected an object");
  AllowedAgent agent;
  agent.name = name;
  AgentConfig& c = agent.config;
  std::string network;
  for (const auto& [key, value] : entry.items()) {
    const std::string at = absl::StrCat(field, ".", key);
    if (key == "extra_args" || key == "extra_dirs") {
      absl::StatusOr<std::vector<std::string>> list = Strings(value, source, at);
      if (!list.ok()) return list.status();
      (key == "extra_args" ? c.extra_args : c.extra_dirs) = *std::move(list);
    } else if (key == "env") {
      if (!value.is_object()) return Bad(source, at, "expected an object of strings");
      for (const auto& [var, v] : value.items()) {
        if (!v.is_string()) return Bad(source, absl::StrCat(at, ".", var), "expected a string");
        agent.env[var] = v.get<std::string>();
      }
    } else if (key == "network") {
      if (!value.is_string() || (value != "none" && value != "host")) {
        return Bad(source, at, "expected \"none\" or \"host\"");
      }
      network = value.get<std::string>();
    } else if (key == "kind" || key == "program" || key == "model" || key == "start_template" ||
               key == "resume_template") {
      if (!value.is_string()) return Bad(source, at, "expected a string");
      std::string text = value.get<std::string>();
      if (key == "kind") c.kind = text;
      if (key == "program") c.program = text;
      if (key == "model") c.model = text;
      if (key == "start_template") c.start_template = text;
      if (key == "resume_template") c.resume_template = text;
    } else {
      return Bad(source, at,
                 "unknown key (known: kind, program, model, extra_args, extra_dirs, "
                 "start_template, resume_template, env, network)");
    }
  }
  agent.isolate_network = network.empty() ? c.kind == "command" : network == "none";
  if (c.kind.empty()) return Bad(source, field + ".kind", "missing (claude, codex or command)");
  absl::StatusOr<std::unique_ptr<AgentAdapter>> adapter = MakeAdapter(c);
  if (!adapter.ok()) return Bad(source, field, std::string(adapter.status().message()));
  return agent;
}

}  // namespace

AgentAllowlist AgentAllowlist::Default() {
  AgentAllowlist list;
  list.source_ = "the default allowlist";
  for (const char* kind : {"claude", "codex"}) {
    AllowedAgent a;
    a.name = kind;
    a.config.kind = kind;
    list.agents_[kind] = a;
  }
  return list;
}

absl::StatusOr<AgentAllowlist> AgentAllowlist::Parse(const std::string& json_text,
                                                     const std::string& source) {
  json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(source, ": not JSON"));
  if (!doc.is_object() || !doc.contains("agents") || !doc["agents"].is_object()) {
    return Bad(source, "agents", "missing (an object of agents by name)");
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "agents") return Bad(source, key, "unknown key (known: agents)");
  }
  AgentAllowlist list;
  list.source_ = source;
  for (const auto& [name, entry] : doc["agents"].items()) {
    if (name.empty()) return Bad(source, "agents", "an agent's name is empty");
    absl::StatusOr<AllowedAgent> agent = ParseEntry(name, entry, source);
    if (!agent.ok()) return agent.status();
    list.agents_[name] = *std::move(agent);
  }
  if (list.agents_.empty()) return Bad(source, "agents", "empty: no session could run");
  return list;
}

absl::StatusOr<AgentAllowlist> AgentAllowlist::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read"));
  std::stringstream buf;
  buf << in.rdbuf();
  return Parse(buf.str(), path);
}

absl::StatusOr<AllowedAgent> AgentAllowlist::Find(const std::string& name) const {
  auto it = agents_.find(name);
  if (it != agents_.end()) return it->second;
  return absl::PermissionDeniedError(
      absl::StrCat("agent \"", name, "\" is not in this coordinator's allowlist (",
                   absl::StrJoin(Names(), ", "), "; ", source_, ")"));
}

std::vector<std::string> AgentAllowlist::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, agent] : agents_) out.push_back(name);
  return out;
}

}  // namespace kseek::agent
