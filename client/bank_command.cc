// `kseek bank list|stats|add`: the question bank, at the coordinator or in a
// bank file (service_commands.h).
#include <cstdio>
#include <iostream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli.h"
#include "client/remote.h"
#include "client/service_commands.h"
#include "nlohmann/json.hpp"
#include "question_bank/src/bank.h"

ABSL_DECLARE_FLAG(bool, json);
ABSL_FLAG(std::string, bank, "", "a bank file (bank list: read it instead of asking the coordinator)");
ABSL_FLAG(std::string, id, "", "the new question's id, a slug (bank add)");
ABSL_FLAG(std::string, text, "", "the new question's text (bank add)");
ABSL_FLAG(std::string, category, "", "the new question's category (bank add)");
ABSL_FLAG(std::string, triggers, "", "the new question's triggers, comma-separated (bank add)");

namespace kseek::cli {

namespace v1 = ::kernelseek::v1;
namespace qb = ::kseek::question_bank;

namespace {

const char kBankUsage[] =
    "usage: kseek bank COMMAND [flags]\n"
    "\n"
    "  list [--bank FILE] [--json]     the questions (the coordinator's bank, or FILE)\n"
    "  stats [--json]                  per question, over every session at the coordinator:\n"
    "                                  times asked, gains that followed, median gain\n"
    "  add --bank FILE --id ID --text TEXT --category C --triggers T1,T2\n"
    "                                  validate the new question with the whole bank and\n"
    "                                  append it to FILE (unchanged when anything is wrong)\n"
    "\n"
    "Categories: moving_layer, rejecting_limit, questioning_measurement,\n"
    "verifying_assumption, first_principles, scope. Triggers: turn_end_no_goal, plateau,\n"
    "claimed_limit, failure_streak, compile_failure_streak, correctness_failure_streak, any.\n";

std::vector<std::string> Allowed(std::vector<std::string> names) {
  names.insert(names.end(), kRemoteFlags.begin(), kRemoteFlags.end());
  return names;
}

int Fail(const std::string& sub, const std::string& what) {
  fprintf(stderr, "kseek bank %s: %s\n", sub.c_str(), what.c_str());
  return kExitUsage;
}

int List() {
  v1::ListBankResponse bank;
  if (!absl::GetFlag(FLAGS_bank).empty()) {
    absl::StatusOr<qb::Bank> file = qb::Bank::Load(absl::GetFlag(FLAGS_bank));
    if (!file.ok()) return Fail("list", std::string(file.status().message()));
    bank.set_source(absl::GetFlag(FLAGS_bank));
    for (const qb::Question& q : file->questions()) {
      v1::BankQuestion* out = bank.add_questions();
      out->set_id(q.id);
      out->set_text(q.text);
      out->set_category(std::string(qb::CategoryName(q.category)));
      for (qb::Trigger t : q.triggers) out->add_triggers(std::string(qb::TriggerName(t)));
    }
  } else {
    std::unique_ptr<Remote> remote = ConnectOrReport("bank list");
    if (remote == nullptr) return kExitUsage;
    grpc::ClientContext context;
    remote->Prepare(&context);
    grpc::Status status = remote->coordinator().ListBank(&context, v1::ListBankRequest(), &bank);
    if (!status.ok()) return ReportRpcError("bank list", *remote, status);
  }
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json list = nlohmann::json::array();
    for (const v1::BankQuestion& q : bank.questions()) {
      list.push_back({{"id", q.id()},
                      {"text", q.text()},
                      {"category", q.category()},
                      {"triggers", std::vector<std::string>(q.triggers().begin(), q.triggers().end())}});
    }
    std::cout << list.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("%d questions from %s\n", bank.questions_size(),
                               bank.source().empty() ? "(none)" : bank.source());
  for (const v1::BankQuestion& q : bank.questions()) {
    std::cout << absl::StrFormat("%-28s %-24s %s\n%28s [%s]\n", q.id(), q.category(), q.text(), "",
                                 absl::StrJoin(q.triggers(), ", "));
  }
  return kExitOk;
}

int Stats() {
  std::unique_ptr<Remote> remote = ConnectOrReport("bank stats");
  if (remote == nullptr) return kExitUsage;
  v1::QuestionStatsResponse stats;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().GetQuestionStats(&context, v1::QuestionStatsRequest(), &stats);
  if (!status.ok()) return ReportRpcError("bank stats", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json list = nlohmann::json::array();
    for (const v1::QuestionStat& q : stats.questions()) {
      list.push_back({{"question_id", q.question_id()},
                      {"text", q.text()},
                      {"category", q.category()},
                      {"asked", q.asked()},
                      {"gains", q.gains()},
                      {"median_gain", q.has_median_gain() ? nlohmann::json(q.median_gain()) : nlohmann::json(nullptr)}});
    }
    std::cout << list.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-28s %-24s %6s %6s %12s\n", "question", "category", "asked", "gains",
                               "median gain");
  for (const v1::QuestionStat& q : stats.questions()) {
    std::cout << absl::StrFormat("%-28s %-24s %6d %6d %12s\n", q.question_id(), q.category(), q.asked(), q.gains(),
                                 q.has_median_gain() ? absl::StrFormat("%+.1f%%", 100 * q.median_gain()) : "-");
  }
  return kExitOk;
}

int Add() {
  const std::string path = absl::GetFlag(FLAGS_bank);
  if (path.empty()) return Fail("add", "--bank FILE is required");
  qb::Question q;
  q.id = absl::GetFlag(FLAGS_id);
  q.text = absl::GetFlag(FLAGS_text);
  absl::StatusOr<qb::Category> category = qb::ParseCategory(absl::GetFlag(FLAGS_category));
  if (!category.ok()) return Fail("add", absl::StrCat("--category: ", category.status().message()));
  q.category = *category;
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_triggers), ',', absl::SkipEmpty())) {
    absl::StatusOr<qb::Trigger> t = qb::ParseTrigger(name);
    if (!t.ok()) return Fail("add", absl::StrCat("--triggers: ", t.status().message()));
    q.triggers.push_back(*t);
  }
  absl::Status st = qb::AppendQuestion(path, q);
  if (!st.ok()) return Fail("add", std::string(st.message()));
  std::cout << absl::StrFormat("added %s to %s\n", q.id, path);
  return kExitOk;
}

}  // namespace

int BankCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    fputs(kBankUsage, args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::string sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  std::vector<std::string> flags;
  if (sub == "list") {
    flags = {"bank", "json"};
  } else if (sub == "stats") {
    flags = {"json"};
  } else if (sub == "add") {
    flags = {"bank", "id", "text", "category", "triggers"};
  } else {
    fprintf(stderr, "kseek bank: unknown command '%s'\n\n%s", sub.c_str(), kBankUsage);
    return kExitUsage;
  }
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(rest, Allowed(flags), kBankUsage, &positional, &help)) return help ? kExitOk : kExitUsage;
  if (!positional.empty()) return Fail(sub, "no arguments expected besides flags");
  if (sub == "list") return List();
  if (sub == "stats") return Stats();
  return Add();
}

}  // namespace kseek::cli
