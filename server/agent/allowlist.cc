// The coordinator's agent allowlist (allowlist.h).
#include "server/agent/allowlist.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file.h"
#include "base/json_reader.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"

namespace kseek::agent {

namespace {

using nlohmann::json;

absl::StatusOr<std::vector<std::string>> Strings(const JsonReader& r) {
  if (!r.value().is_array()) return r.Error("expected an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!r.Element(i).value().is_string()) return r.Error("expected an array of strings");
    out.push_back(r.Element(i).value().get<std::string>());
  }
  return out;
}

absl::StatusOr<AllowedAgent> ParseEntry(const std::string& name, const JsonReader& entry) {
  KSEEK_RETURN_IF_ERROR(entry.ExpectObject());
  AllowedAgent agent;
  agent.name = name;
  AgentConfig& c = agent.config;
  std::string network;
  for (const auto& [key, unused] : entry.value().items()) {
    const JsonReader value = *entry.Field(key);
    if (key == "extra_args" || key == "extra_dirs") {
      KSEEK_ASSIGN_OR_RETURN((key == "extra_args" ? c.extra_args : c.extra_dirs), Strings(value));
    } else if (key == "env") {
      if (!value.value().is_object()) return value.Error("expected an object of strings");
      for (const auto& [var, v] : value.value().items()) {
        KSEEK_ASSIGN_OR_RETURN(agent.env[var], value.String(var));
      }
    } else if (key == "network") {
      if (!value.value().is_string() || (value.value() != "none" && value.value() != "host")) {
        return value.Error("expected \"none\" or \"host\"");
      }
      network = value.value().get<std::string>();
    } else if (key == "kind" || key == "program" || key == "model" || key == "start_template" ||
               key == "resume_template") {
      KSEEK_ASSIGN_OR_RETURN(const std::string text, value.AsString());
      if (key == "kind") c.kind = text;
      if (key == "program") c.program = text;
      if (key == "model") c.model = text;
      if (key == "start_template") c.start_template = text;
      if (key == "resume_template") c.resume_template = text;
    } else {
      return value.Error(
          "unknown key (known: kind, program, model, extra_args, extra_dirs, start_template, "
          "resume_template, env, network)");
    }
  }
  agent.isolate_network = network.empty() ? c.kind == "command" : network == "none";
  if (c.kind.empty()) return entry.FieldError("kind", "missing (claude, codex or command)");
  absl::StatusOr<std::unique_ptr<AgentAdapter>> adapter = MakeAdapter(c);
  if (!adapter.ok()) return entry.Error(adapter.status().message());
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
  KSEEK_ASSIGN_OR_RETURN(const json doc, ParseJson(json_text, source));
  const JsonReader root(doc, source);
  if (!doc.is_object() || !doc.contains("agents") || !doc["agents"].is_object()) {
    return root.FieldError("agents", "missing (an object of agents by name)");
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "agents") return root.FieldError(key, "unknown key (known: agents)");
  }
  const JsonReader agents = *root.Field("agents");
  AgentAllowlist list;
  list.source_ = source;
  for (const auto& [name, entry] : doc["agents"].items()) {
    if (name.empty()) return agents.Error("an agent's name is empty");
    KSEEK_ASSIGN_OR_RETURN(list.agents_[name], ParseEntry(name, *agents.Field(name)));
  }
  if (list.agents_.empty()) return agents.Error("empty: no session could run");
  return list;
}

absl::StatusOr<AgentAllowlist> AgentAllowlist::Load(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return Parse(*text, path);
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
