// `kseek bank list --bank FILE` and `kseek bank add`: a new question is
// validated with the whole bank and appended, or refused with the file left
// as it was.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek {
namespace {

testing::ProcessResult Kseek(std::vector<std::string> args) {
  args.insert(args.begin(), testing::BinDir() + "/kseek");
  return testing::RunProcess(args);
}

TEST(BankCommand, AddsAValidQuestionAndRefusesABadOne) {
  const std::string bank = testing::TempDir("bank-cli") + "/bank.json";
  testing::WriteFile(bank, testing::ReadFile(testing::SourceDir() + "/question_bank/bank.json"));
  testing::ProcessResult before = Kseek({"bank", "list", "--bank", bank, "--json"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  const size_t shipped = nlohmann::json::parse(before.out).size();
  ASSERT_GE(shipped, 30u);

  testing::ProcessResult added =
      Kseek({"bank", "add", "--bank", bank, "--id", "which-input-decides", "--text",
             "Which input of the task decides the time most, and why that one?", "--category",
             "verifying_assumption", "--triggers", "plateau,turn_end_no_goal"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  nlohmann::json after = nlohmann::json::parse(Kseek({"bank", "list", "--bank", bank, "--json"}).out);
  ASSERT_EQ(after.size(), shipped + 1);
  EXPECT_EQ(after.back()["id"], "which-input-decides");
  EXPECT_EQ(after.back()["triggers"], nlohmann::json({"plateau", "turn_end_no_goal"}));

  const std::string text = testing::ReadFile(bank);
  // A number supplies information: refused, naming the entry; file unchanged.
  testing::ProcessResult digit =
      Kseek({"bank", "add", "--bank", bank, "--id", "two-passes", "--text",
             "Why does the kernel read the input 2 times?", "--category", "first_principles",
             "--triggers", "plateau"});
  EXPECT_EQ(digit.exit_code, 2);
  EXPECT_NE(digit.err.find("two-passes"), std::string::npos) << digit.err;
  testing::ProcessResult duplicate =
      Kseek({"bank", "add", "--bank", bank, "--id", "which-input-decides", "--text",
             "Which other question would you ask here?", "--category", "scope", "--triggers",
             "plateau"});
  EXPECT_EQ(duplicate.exit_code, 2);
  EXPECT_NE(duplicate.err.find("duplicate id"), std::string::npos) << duplicate.err;
  testing::ProcessResult category =
      Kseek({"bank", "add", "--bank", bank, "--id", "new-one", "--text",
             "Which other question would you ask here?", "--category", "hint", "--triggers",
             "plateau"});
  EXPECT_EQ(category.exit_code, 2);
  EXPECT_NE(category.err.find("--category"), std::string::npos) << category.err;
  EXPECT_EQ(testing::ReadFile(bank), text);
}

}  // namespace
}  // namespace kseek
