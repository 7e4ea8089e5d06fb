#include "server/agent/command_adapter.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace kseek::agent {
namespace {

constexpr absl::string_view kPlaceholders[] = {"workspace", "prompt", "session_id", "model"};

// The first {identifier} in `word` that is not a known placeholder, or "".
std::string UnknownPlaceholder(absl::string_view word) {
  for (size_t open = word.find('{'); open != absl::string_view::npos;
       open = word.find('{', open + 1)) {
    const size_t close = word.find('}', open);
    if (close == absl::string_view::npos) return "";
    const absl::string_view name = word.substr(open + 1, close - open - 1);
    bool identifier = !name.empty();
    for (char c : name) identifier = identifier && (absl::ascii_isalnum(c) || c == '_');
    if (!identifier) continue;
    bool known = false;
    for (absl::string_view p : kPlaceholders) known = known || name == p;
    if (!known) return std::string(word.substr(open, close - open + 1));
  }
  return "";
}

absl::StatusOr<std::vector<std::string>> ParseTemplate(absl::string_view field,
                                                       absl::string_view text,
                                                       bool allow_session_id) {
  absl::StatusOr<std::vector<std::string>> words = SplitCommandTemplate(text);
  if (!words.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", words.status().message()));
  }
  if (words->empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": is empty"));
  for (const std::string& word : *words) {
    if (std::string unknown = UnknownPlaceholder(word); !unknown.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": unknown placeholder ", unknown,
          " (known: {workspace}, {prompt}, {session_id}, {model})"));
    }
    if (!allow_session_id && word.find("{session_id}") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": {session_id} is known only when resuming (use it in resume_template)"));
    }
  }
  return words;
}

class LineParser : public EventParser {
 public:
  std::vector<AgentEvent> ParseLine(absl::string_view line) override {
    line = absl::StripSuffix(line, "\r");
    if (line.empty()) return {};
    return {AgentEvent::Message(line)};
  }
};

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitCommandTemplate(absl::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0; else word += c;
    } else if (c == '\\') {
      if (i + 1 == text.size()) return absl::InvalidArgumentError("ends with a backslash");
      word += text[++i];
      in_word = true;
    } else if (quote == '"') {
      if (c == '"') quote = 0; else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    return absl::InvalidArgumentError(absl::StrCat("unterminated ", std::string(1, quote),
                                                   " quote"));
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

absl::StatusOr<std::unique_ptr<CommandAdapter>> CommandAdapter::Create(AgentConfig config) {
  absl::StatusOr<std::vector<std::string>> start =
      ParseTemplate("start_template", config.start_template, /*allow_session_id=*/false);
  if (!start.ok()) return start.status();
  std::vector<std::string> resume;
  if (!config.resume_template.empty()) {
    absl::StatusOr<std::vector<std::string>> parsed =
        ParseTemplate("resume_template", config.resume_template, /*allow_session_id=*/true);
    if (!parsed.ok()) return parsed.status();
    resume = *std::move(parsed);
  }
  return std::unique_ptr<CommandAdapter>(
      new CommandAdapter(std::move(config), *std::move(start), std::move(resume)));
}

CommandAdapter::CommandAdapter(AgentConfig config, std::vector<std::string> start_words,
                               std::vector<std::string> resume_words)
    : config_(std::move(config)),
      start_words_(std::move(start_words)),
      resume_words_(std::move(resume_words)) {}

absl::StatusOr<AgentInvocation> CommandAdapter::Invocation(const TurnRequest& turn) const {
  if (absl::Status s = ValidateTurn(turn); !s.ok()) return s;
  const bool resume = !turn.resume_session_id.empty();
  if (resume && resume_words_.empty()) {
    return absl::InvalidArgumentError(
        "resume_session_id: the command adapter has no resume_template, so it cannot resume");
  }
  // One pass over each word, so that a prompt holding "{workspace}" stays as
  // written.
  const std::vector<std::pair<std::string, std::string>> values = {
      {"{workspace}", turn.workspace},
      {"{prompt}", turn.prompt},
      {"{session_id}", turn.resume_session_id},
      {"{model}", config_.model}};
  AgentInvocation inv;
  inv.cwd = turn.workspace;
  inv.env = turn.env;
  for (const std::string& word : resume ? resume_words_ : start_words_) {
    inv.argv.push_back(absl::StrReplaceAll(word, values));
  }
  return inv;
}

std::unique_ptr<EventParser> CommandAdapter::NewParser() const {
  return std::make_unique<LineParser>();
}

}  // namespace kseek::agent
