#include "question_bank/src/bank.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file.h"
#include "base/json_reader.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "question_bank/src/question_text.h"

namespace kseek::question_bank {
namespace {

using nlohmann::json;

// "questions[7] (id 'x')", or "questions[7]" while the id is unknown.
std::string EntryName(size_t index, absl::string_view id) {
  if (id.empty()) return absl::StrCat("questions[", index, "]");
  return absl::StrCat("questions[", index, "] (id '", id, "')");
}

absl::Status EntryError(absl::string_view source, size_t index, absl::string_view id,
                        absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": ", EntryName(index, id), ": ", what));
}

// Lower-case letters and digits, in words joined by single '-'.
bool IsSlug(absl::string_view id) {
  if (id.empty() || id.size() > static_cast<size_t>(kMaxIdChars)) return false;
  if (id.front() == '-' || id.back() == '-') return false;
  char prev = 0;
  for (char c : id) {
    bool ok = absl::ascii_islower(static_cast<unsigned char>(c)) ||
              absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-';
    if (!ok || (c == '-' && prev == '-')) return false;
    prev = c;
  }
  return true;
}

// The rules a question obeys on its own (everything but uniqueness).
absl::Status CheckQuestion(const Question& q) {
  if (!IsSlug(q.id))
    return absl::InvalidArgumentError(absl::StrCat(
        "id '", q.id, "' is not a slug (lower-case letters and digits in words joined by '-', at most ",
        kMaxIdChars, " characters)"));
  if (absl::Status s = CheckQuestionText(q.text); !s.ok()) return s;
  if (q.triggers.empty())
    return absl::InvalidArgumentError("triggers: at least one trigger is needed");
  for (size_t i = 0; i < q.triggers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (q.triggers[j] == q.triggers[i])
        return absl::InvalidArgumentError(absl::StrCat(
            "triggers[", i, "]: '", TriggerName(q.triggers[i]), "' is listed twice"));
    }
  }
  return absl::OkStatus();
}

// One entry of "questions" → Question; `r`'s document names the entry
// ("bank.json: questions[3] (id 'x')").
absl::StatusOr<Question> QuestionFromJson(const JsonReader& r) {
  KSEEK_RETURN_IF_ERROR(r.ExpectKeys({"id", "text", "category", "triggers"}));
  Question q;
  KSEEK_ASSIGN_OR_RETURN(q.id, r.String("id"));
  KSEEK_ASSIGN_OR_RETURN(q.text, r.String("text"));
  KSEEK_ASSIGN_OR_RETURN(const std::string category, r.String("category"));
  absl::StatusOr<Category> parsed = ParseCategory(category);
  if (!parsed.ok()) return r.Error(parsed.status().message());
  q.category = *parsed;
  KSEEK_ASSIGN_OR_RETURN(const JsonReader triggers, r.Array("triggers"));
  for (size_t i = 0; i < triggers.size(); ++i) {
    KSEEK_ASSIGN_OR_RETURN(const std::string name, triggers.Element(i).AsString());
    absl::StatusOr<Trigger> trigger = ParseTrigger(name);
    if (!trigger.ok()) return triggers.Element(i).Error(trigger.status().message());
    q.triggers.push_back(*trigger);
  }
  return q;
}

// The id of an entry for error messages, when it has a string one.
std::string IdOf(const json& entry) {
  if (entry.is_object()) {
    auto it = entry.find("id");
    if (it != entry.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

std::string Quoted(absl::string_view s) { return json(std::string(s)).dump(); }

}  // namespace

absl::StatusOr<Bank> Bank::Load(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

absl::StatusOr<Bank> Bank::Parse(absl::string_view json_text, absl::string_view source) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not valid JSON: ", e.what()));
  }
  auto fail = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
  };
  if (!doc.is_object()) return fail("expected an object with \"version\" and \"questions\"");
  for (const auto& [key, value] : doc.items()) {
    if (key != "version" && key != "questions")
      return fail(absl::StrCat("unknown field '", key, "' (expected version, questions)"));
  }
  auto version = doc.find("version");
  if (version == doc.end()) return fail("version: missing");
  if (!version->is_number_integer() || version->get<int64_t>() != kBankFormatVersion)
    return fail(absl::StrCat("version: ", version->dump(), " is not supported (expected ",
                             kBankFormatVersion, ")"));
  auto entries = doc.find("questions");
  if (entries == doc.end()) return fail("questions: missing");
  if (!entries->is_array())
    return fail(absl::StrCat("questions: expected an array, got ", entries->type_name()));
  std::vector<Question> questions;
  for (size_t i = 0; i < entries->size(); ++i) {
    const JsonReader entry((*entries)[i], absl::StrCat(source, ": ", EntryName(i, IdOf((*entries)[i]))));
    absl::StatusOr<Question> q = QuestionFromJson(entry);
    if (!q.ok()) return q.status();
    questions.push_back(*std::move(q));
  }
  return FromQuestions(std::move(questions), source);
}

absl::StatusOr<Bank> Bank::FromQuestions(std::vector<Question> questions,
                                         absl::string_view source) {
  std::map<std::string, size_t> index_of_id;
  std::map<std::string, size_t> index_of_text;
  for (size_t i = 0; i < questions.size(); ++i) {
    const Question& q = questions[i];
    std::string id = IsSlug(q.id) ? q.id : "";
    if (absl::Status s = CheckQuestion(q); !s.ok()) return EntryError(source, i, id, s.message());
    auto [id_at, id_new] = index_of_id.emplace(q.id, i);
    if (!id_new)
      return EntryError(source, i, id, absl::StrCat("duplicate id (also questions[", id_at->second, "])"));
    auto [text_at, text_new] = index_of_text.emplace(absl::AsciiStrToLower(q.text), i);
    if (!text_new)
      return EntryError(source, i, id,
                        absl::StrCat("same text as questions[", text_at->second, "]"));
  }
  Bank bank;
  bank.questions_ = std::move(questions);
  return bank;
}

const Question* Bank::Find(absl::string_view id) const {
  for (const Question& q : questions_)
    if (q.id == id) return &q;
  return nullptr;
}

std::vector<const Question*> Bank::Matching(const std::vector<DecisionPoint>& points) const {
  std::vector<const Question*> out;
  for (const Question& q : questions_)
    if (q.MatchesAny(points)) out.push_back(&q);
  return out;
}

std::string Bank::ToJsonText() const {
  std::string out = absl::StrCat("{\n  \"version\": ", kBankFormatVersion, ",\n  \"questions\": [");
  for (size_t i = 0; i < questions_.size(); ++i) {
    const Question& q = questions_[i];
    std::vector<std::string> triggers;
    for (Trigger t : q.triggers) triggers.push_back(Quoted(TriggerName(t)));
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    {\n",
                    "      \"id\": ", Quoted(q.id), ",\n",
                    "      \"text\": ", Quoted(q.text), ",\n",
                    "      \"category\": ", Quoted(CategoryName(q.category)), ",\n",
                    "      \"triggers\": [", absl::StrJoin(triggers, ", "), "]\n",
                    "    }");
  }
  absl::StrAppend(&out, questions_.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return out;
}

absl::Status AppendQuestion(const std::string& path, const Question& question) {
  absl::StatusOr<Bank> bank = Bank::Load(path);
  if (!bank.ok()) return bank.status();
  std::vector<Question> questions = bank->questions();
  questions.push_back(question);
  absl::StatusOr<Bank> grown = Bank::FromQuestions(std::move(questions), path);
  if (!grown.ok()) return grown.status();

  std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << grown->ToJsonText();
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InternalError(absl::StrCat(tmp, ": cannot write"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat(path, ": cannot replace with ", tmp));
  }
  return absl::OkStatus();
}

}  // namespace kseek::question_bank
