#include "question_bank/src/self_ask.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace kseek::question_bank {
namespace {

absl::string_view CategoryTitle(Category c) {
  switch (c) {
    case Category::kMovingLayer:
      return "Look at another layer of the system";
    case Category::kRejectingLimit:
      return "Doubt a limit you named";
    case Category::kQuestioningMeasurement:
      return "Doubt what a number tells you";
    case Category::kVerifyingAssumption:
      return "Test what you assumed";
    case Category::kFirstPrinciples:
      return "Reason from the work itself";
    case Category::kScope:
      return "Size and direction of the next step";
  }
  return "";
}

bool IsIdChar(char c) {
  return absl::ascii_islower(static_cast<unsigned char>(c)) ||
         absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-';
}

void AddOnce(std::vector<std::string>& list, std::string id) {
  if (std::find(list.begin(), list.end(), id) == list.end()) list.push_back(std::move(id));
}

}  // namespace

std::string RenderBankForAgent(const Bank& bank) {
  std::string out = absl::StrCat(
      "Questions to ask yourself whenever you are stuck, have stopped gaining, or believe you "
      "have reached a limit. They point at where to look; none of them holds an answer. When "
      "one of them changes what you do next, write a line of its own:\n",
      kAppliedQuestionMarker, " <id>\n",
      "with the id shown before the question (one line per question applied).\n");
  for (Category c : AllCategories()) {
    bool heading = false;
    for (const Question& q : bank.questions()) {
      if (q.category != c) continue;
      if (!heading) {
        absl::StrAppend(&out, "\n", CategoryTitle(c), ":\n");
        heading = true;
      }
      std::vector<absl::string_view> when;
      for (Trigger t : q.triggers) when.push_back(TriggerName(t));
      absl::StrAppend(&out, "- ", q.id, ": ", q.text, " (when: ", absl::StrJoin(when, ", "),
                      ")\n");
    }
  }
  return out;
}

AppliedQuestions ParseAppliedQuestions(absl::string_view agent_text, const Bank& bank) {
  AppliedQuestions out;
  for (absl::string_view line : absl::StrSplit(agent_text, '\n')) {
    size_t start = line.find_first_not_of(" \t>-*`");
    if (start == absl::string_view::npos) continue;
    line.remove_prefix(start);
    if (!absl::StartsWithIgnoreCase(line, kAppliedQuestionMarker)) continue;
    line.remove_prefix(kAppliedQuestionMarker.size());
    line = absl::StripLeadingAsciiWhitespace(line);
    size_t end = 0;
    while (end < line.size() && IsIdChar(line[end])) ++end;
    std::string id(line.substr(0, end));
    while (!id.empty() && id.back() == '-') id.pop_back();
    if (id.empty()) continue;
    bool known = bank.Find(id) != nullptr;
    AddOnce(known ? out.ids : out.unknown_ids, std::move(id));
  }
  return out;
}

}  // namespace kseek::question_bank
