#include "question_bank/src/question_text.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kseek::question_bank {
namespace {

// Lower case, every character that is not a letter or digit read as a
// space, runs of spaces collapsed, one space on each side.
std::string NormaliseWords(absl::string_view text) {
  std::string out = " ";
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (absl::ascii_isalnum(c)) {
      out.push_back(absl::ascii_tolower(c));
    } else if (out.back() != ' ') {
      out.push_back(' ');
    }
  }
  if (out.back() != ' ') out.push_back(' ');
  return out;
}

// True when the normalised text holds `term` (prefix when it ends in '*').
bool ContainsTerm(const std::string& words, absl::string_view term) {
  bool prefix = absl::EndsWith(term, "*");
  if (prefix) term.remove_suffix(1);
  std::string needle = NormaliseWords(term);
  if (prefix) needle.pop_back();  // drop the closing space
  return absl::StrContains(words, needle);
}

// Characters as a reader counts them: UTF-8 continuation bytes are not.
int CountChars(absl::string_view text) {
  int n = 0;
  for (char ch : text)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++n;
  return n;
}

}  // namespace

const std::vector<absl::string_view>& InformationTerms() {
  static const auto* terms = new std::vector<absl::string_view>{
      // Techniques.
      "tma", "wgmma", "mma", "hmma", "umma", "tensor core*", "tensor memory",
      "cp async", "async*", "ldmatrix", "stmatrix", "swizzl*",
      "warp speciali*", "ping pong", "pingpong", "double buffer*",
      "multi buffer*", "software pipelin*", "split k", "stream k",
      "persistent kernel*", "tiling", "tile size*", "fuse", "fused", "fusing",
      "fusion", "prefetch*", "unroll*", "vectori*", "coalesc*", "inline asm",
      "online softmax", "launch bounds",
      // Hardware units, memory spaces and what happens in them.
      "shared memory", "smem", "register*", "shuffle*", "shfl",
      "bank conflict*", "occupancy", "constant memory", "textur*",
      "thread block cluster*",
      // Instruction sets, libraries and tools.
      "ptx", "sass", "cutlass", "cute", "cublas", "cudnn", "triton", "ncu",
      "nsight*", "nvprof", "cuobjdump", "nvdisasm",
      // Operators: questions are operator-agnostic.
      "softmax", "gemm", "matmul", "flash*",
      // Phrases that suggest an action instead of asking.
      "have you tried", "did you try", "have you considered",
      "did you consider", "why not", "what about", "how about", "you should",
      "try using", "instead of using",
  };
  return *terms;
}

absl::Status CheckQuestionText(absl::string_view text) {
  if (absl::StripAsciiWhitespace(text).empty())
    return absl::InvalidArgumentError("text is empty");
  if (absl::StripAsciiWhitespace(text) != text)
    return absl::InvalidArgumentError("text starts or ends with white space");
  int chars = CountChars(text);
  if (chars > kMaxQuestionChars)
    return absl::InvalidArgumentError(absl::StrCat("text is ", chars, " characters long (at most ",
                                                   kMaxQuestionChars, ")"));
  for (char ch : text) {
    if (absl::ascii_iscntrl(static_cast<unsigned char>(ch)))
      return absl::InvalidArgumentError("text must be one line without control characters");
  }
  if (!absl::EndsWith(text, "?") || text.find('?') != text.size() - 1)
    return absl::InvalidArgumentError("text must be one question, ending in its only '?'");
  for (char ch : text) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(ch)))
      return absl::InvalidArgumentError(absl::StrCat(
          "text contains the digit '", std::string(1, ch), "' (questions never carry a number)"));
  }
  std::string words = NormaliseWords(text);
  for (absl::string_view term : InformationTerms()) {
    if (ContainsTerm(words, term))
      return absl::InvalidArgumentError(absl::StrCat(
          "text names '", term,
          "' (questions direct attention and never supply a technique, unit, tool or action)"));
  }
  return absl::OkStatus();
}

}  // namespace kseek::question_bank
