#include "question_bank/src/claimed_limit.h"

#include <regex>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace kseek::question_bank {
namespace {

// How many words before a match are searched for a negation or condition.
constexpr int kCueWindowWords = 6;

bool IsCue(absl::string_view word) {
  static const auto* cues = new absl::flat_hash_set<absl::string_view>{
      "not",   "no",       "never",   "nowhere", "far",     "without", "hardly", "doubt",
      "unlikely", "whether", "if",    "unless",  "instead", "rather",  "below",  "only"};
  return cues->contains(word);
}

bool IsClauseWord(absl::string_view word) {
  return word == "but" || word == "although" || word == "though" || word == "however" ||
         word == "whereas";
}

// Lower case, contractions expanded, typographic apostrophes made plain.
std::string ReadText(absl::string_view text) {
  std::string s = absl::AsciiStrToLower(text);
  s = absl::StrReplaceAll(s, {{"\xE2\x80\x99", "'"}, {"\xE2\x80\x98", "'"}});
  return absl::StrReplaceAll(s, {{"cannot", "can not"},
                                 {"can't", "can not"},
                                 {"won't", "will not"},
                                 {"n't", " not"}});
}

// Words of a clause fragment: letters, digits and '%'; anything else splits.
std::vector<std::string> Words(absl::string_view s) {
  std::vector<std::string> words;
  std::string word;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (absl::ascii_isalnum(c) || c == '%') {
      word.push_back(static_cast<char>(c));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// The clauses of one sentence, each as its words joined by single spaces.
std::vector<std::string> Clauses(absl::string_view sentence) {
  std::vector<std::string> clauses;
  for (absl::string_view part : absl::StrSplit(sentence, absl::ByAnyChar(",;:"))) {
    std::string clause;
    for (const std::string& w : Words(part)) {
      if (IsClauseWord(w)) {
        if (!clause.empty()) clauses.push_back(std::move(clause));
        clause.clear();
        continue;
      }
      if (!clause.empty()) clause.push_back(' ');
      clause += w;
    }
    if (!clause.empty()) clauses.push_back(std::move(clause));
  }
  return clauses;
}

struct CompiledPattern {
  std::string name;
  std::regex re;
};

const std::vector<CompiledPattern>& Compiled() {
  static const auto* compiled = [] {
    auto* v = new std::vector<CompiledPattern>;
    for (const auto& [name, expr] : ClaimPatterns())
      v->push_back({name, std::regex("\\b(?:" + expr + ")\\b", std::regex::ECMAScript)});
    return v;
  }();
  return *compiled;
}

// True when a cue is among the last kCueWindowWords words of `before`.
bool NegatedBefore(absl::string_view before) {
  std::vector<std::string> words = Words(before);
  size_t start = words.size() > kCueWindowWords ? words.size() - kCueWindowWords : 0;
  for (size_t i = start; i < words.size(); ++i)
    if (IsCue(words[i])) return true;
  return false;
}

std::optional<LimitClaim> ClaimInClause(const std::string& clause) {
  for (const CompiledPattern& p : Compiled()) {
    for (auto it = std::sregex_iterator(clause.begin(), clause.end(), p.re);
         it != std::sregex_iterator(); ++it) {
      absl::string_view before(clause.data(), static_cast<size_t>(it->position(0)));
      if (!NegatedBefore(before)) return LimitClaim{p.name, clause};
    }
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& ClaimPatterns() {
  static const auto* patterns = new std::vector<std::pair<std::string, std::string>>{
      {"hardware limit",
       "(hardware|physical|fundamental|theoretical) (limit|limits|ceiling|maximum|max)"},
      {"at the limit", "(at|hit|hitting|reached|reaching|against) (the|a|its|our) (limit|ceiling|wall)"},
      {"bound", "(memory|bandwidth|compute|dram|hbm) bound"},
      {"limited by", "(bound|limited|bottlenecked) by (the )?(memory|dram|hbm|compute|bandwidth)"},
      {"peak",
       "(at|near|reached|reaching|hit|hitting|close to|saturating|saturate|saturated) (the )?"
       "(theoretical )?peak"},
      {"theoretical peak", "theoretical (peak|maximum|max)"},
      {"speed of light", "speed of light"},
      {"saturated", "saturat(e|ed|es|ing) (the )?(memory |dram |hbm )?bandwidth"},
      {"cannot improve", "(can|could|will) not be (improved|optimi[sz]ed|made faster|sped up)"},
      {"no room", "no (more |further )?(room|headroom)"},
      {"nothing left", "nothing (left|more) to (gain|optimi[sz]e|improve|squeeze)"},
      {"no further gain", "no (further|more) (gains?|improvements?|speedups?)"},
      {"as fast as",
       "as fast as (possible|it gets|it goes|(it|this|we|the hardware|the kernel) "
       "(can|could|will) (go|get|be|run))"},
      {"best we can", "best (we|it) can (do|get)"},
      {"optimal",
       "(is|are|already|now|essentially|basically|near|nearly|close to|practically|effectively|"
       "fully) optimal"},
      {"diminishing", "diminishing returns"},
  };
  return *patterns;
}

std::optional<LimitClaim> FindClaimedLimit(absl::string_view text) {
  std::string read = ReadText(text);
  size_t start = 0;
  while (start < read.size()) {
    size_t end = read.find_first_of(".!?\n", start);
    if (end == std::string::npos) end = read.size();
    bool question = end < read.size() && read[end] == '?';
    if (!question) {
      std::string sentence = read.substr(start, end - start);
      for (char& c : sentence)
        if (c == '-') c = ' ';
      for (const std::string& clause : Clauses(sentence))
        if (auto claim = ClaimInClause(clause)) return claim;
    }
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace kseek::question_bank
