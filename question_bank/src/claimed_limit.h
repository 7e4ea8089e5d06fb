// Finding a claimed limit in the agent's words: "we are memory bound",
// "this cannot be improved further", "the kernel is now optimal".
//
// The detection is rough on purpose and fully written down here. A text is
// cut into sentences (at . ! ? and line ends) and each sentence into clauses
// (at , ; : and the words "but", "although", "though", "however", "whereas").
// Sentences ending in '?' are skipped: an agent asking itself whether it is
// at a limit has not claimed one. Text is read in lower case, with "n't",
// "cannot" and "can't" read as "not" / "can not", and '-' as a space. A
// clause claims a limit when it matches one of these patterns (regular
// expressions, also in ClaimPatterns()):
//   hardware limit   (hardware|physical|fundamental|theoretical) (limit|limits|ceiling|maximum|max)
//   at the limit     (at|hit|hitting|reached|reaching|against) (the|a|its|our) (limit|ceiling|wall)
//   bound            (memory|bandwidth|compute|dram|hbm) bound
//   limited by       (bound|limited|bottlenecked) by (the )?(memory|dram|hbm|compute|bandwidth)
//   peak             (at|near|reached|reaching|hit|hitting|close to|saturating|saturate|saturated) (the )?(theoretical )?peak
//   theoretical peak theoretical (peak|maximum|max)
//   speed of light   speed of light
//   saturated        saturat(e|ed|es|ing) (the )?(memory |dram |hbm )?bandwidth
//   cannot improve   (can|could|will) not be (improved|optimi[sz]ed|made faster|sped up)
//   no room          no (more |further )?(room|headroom)
//   nothing left     nothing (left|more) to (gain|optimi[sz]e|improve|squeeze)
//   no further gain  no (further|more) (gains?|improvements?|speedups?)
//   as fast as       as fast as (possible|it gets|it goes|(it|this|we|the hardware|the kernel)
//                    (can|could|will) (go|get|be|run))
//   best we can      best (we|it) can (do|get)
//   optimal          (is|are|already|now|essentially|basically|near|nearly|close to|practically|effectively|fully) optimal
//   diminishing      diminishing returns
// A match does not count when one of the six words before it in its clause
// is a negation or a condition: not, no, never, nowhere, far, without,
// hardly, doubt, unlikely, whether, if, unless, instead, rather, below,
// only. So "we are not memory bound yet", "far from the theoretical peak",
// "only at half of the theoretical peak" and "check whether it is memory
// bound" are not claims; "suboptimal" is not "optimal"
// (whole words only), and "the optimal block size" is not a claim (no
// predicate before "optimal"). What this misses, by design: claims in other
// words, double negations, and claims inside a question.
//
// Pure functions, thread-safe.
#ifndef KERNELSEEK_QUESTION_BANK_CLAIMED_LIMIT_H_
#define KERNELSEEK_QUESTION_BANK_CLAIMED_LIMIT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace kseek::question_bank {

struct LimitClaim {
  std::string pattern;  // the pattern's name, e.g. "bound"
  std::string clause;   // the clause that matched, as read (lower case)
};

// The first claim in `text`, or nullopt.
std::optional<LimitClaim> FindClaimedLimit(absl::string_view text);

// The patterns above as (name, regular expression), in the order tried.
const std::vector<std::pair<std::string, std::string>>& ClaimPatterns();

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_CLAIMED_LIMIT_H_
