// Conversions between the harness's verdict types (harness/src/verdict.h)
// and their protocol messages (kernelseek/v1/verdict.proto). Lossless both
// ways; plain functions, thread-safe.
#ifndef KERNELSEEK_PROTO_CONVERT_H_
#define KERNELSEEK_PROTO_CONVERT_H_

#include "harness/src/verdict.h"
#include "kernelseek/v1/verdict.pb.h"

namespace kseek {

namespace v1 = ::kernelseek::v1;

v1::TimeStats ToProto(const TimeStats& t);
v1::ScenarioResult ToProto(const ScenarioResult& s);
v1::Verdict ToProto(const Verdict& v);

TimeStats FromProto(const v1::TimeStats& t);
// A status string that is not one of the six becomes kCrash with a note in
// the error (a newer worker must not crash an older coordinator).
ScenarioResult FromProto(const v1::ScenarioResult& s);
Verdict FromProto(const v1::Verdict& v);

}  // namespace kseek

#endif  // KERNELSEEK_PROTO_CONVERT_H_
