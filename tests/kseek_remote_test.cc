// kseek against a coordinator, as real processes over loopback: `kseek up
// --detach` in a scratch folder, remote `kseek eval` / `show` / `workers`,
// the settings' precedence (flags, environment, config file), the exit
// codes and messages of refused calls, and `kseek down`.
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek::testing {
namespace {

class KseekRemoteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(TempDir("kseek_remote"));
    ProcessResult up = Kseek(*dir_, {}, {"up", "--detach", "--gpus", "none", "--json"});
    ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
    nlohmann::json config = nlohmann::json::parse(ReadFile(*dir_ + "/.kernelseek/client.json"));
    coordinator_ = new std::string(config.at("coordinator").get<std::string>());
    // --json: where everything listens, as one object.
    nlohmann::json listed = nlohmann::json::parse(up.out);
    EXPECT_EQ(listed.at("coordinator"), *coordinator_);
    EXPECT_EQ(listed.at("detached"), true);
    ASSERT_EQ(listed.at("workers").size(), 1u) << up.out;
    EXPECT_EQ(listed["workers"][0].at("name"), "worker host");
  }
  static void TearDownTestSuite() {
    ProcessResult down = Kseek(*dir_, {}, {"down"});
    EXPECT_EQ(down.exit_code, 0) << down.err;
    delete dir_;
    delete coordinator_;
  }

  // Runs kseek in `cwd` with HOME there too (so no user config applies),
  // without inherited KSEEK_* settings, plus `env`.
  static ProcessResult Kseek(const std::string& cwd, const std::vector<std::string>& env,
                             const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "KSEEK_COORDINATOR", "-u", "KSEEK_TOKEN",
                                     "-C", cwd, "HOME=" + cwd};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(BinDir() + "/kseek");
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  }

  static std::vector<std::string> QuickEval(const std::vector<std::string>& extra) {
    std::string task = SourceDir() + "/kernels/softmax";
    std::vector<std::string> args = {"eval", "--json", "--task", task, "--target", "host",
                                     "--scenarios", "r1_c1_f32_host", "--no-timing"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(task + "/fast_host.cc");
    return args;
  }

  static std::string* dir_;
  static std::string* coordinator_;
};

std::string* KseekRemoteTest::dir_ = nullptr;
std::string* KseekRemoteTest::coordinator_ = nullptr;

TEST_F(KseekRemoteTest, EvalGoesThroughTheCoordinatorAndShowFindsIt) {
  ProcessResult eval = Kseek(*dir_, {}, QuickEval({}));
  ASSERT_EQ(eval.exit_code, 0) << eval.out << eval.err;
  nlohmann::json verdict = nlohmann::json::parse(eval.out);
  ASSERT_TRUE(verdict.contains("evaluation_id")) << eval.out;
  std::string id = verdict["evaluation_id"];
  EXPECT_EQ(id.rfind("ev_", 0), 0u) << id;
  EXPECT_TRUE(verdict["all_correct"].get<bool>());
  ASSERT_EQ(verdict["scenarios"].size(), 1u);
  EXPECT_EQ(verdict["scenarios"][0]["name"], "r1_c1_f32_host");

  ProcessResult show = Kseek(*dir_, {}, {"show", "--json", id});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  nlohmann::json e = nlohmann::json::parse(show.out);
  EXPECT_EQ(e["state"], "done");
  EXPECT_EQ(e["verdict"]["scenarios"].size(), 1u);

  ProcessResult table = Kseek(*dir_, {}, {"show", id});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("1/1 correct"), std::string::npos) << table.out;

  ProcessResult list = Kseek(*dir_, {}, {"evals", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  bool listed = false;
  for (const auto& item : nlohmann::json::parse(list.out)) listed |= item["evaluation_id"] == id;
  EXPECT_TRUE(listed) << list.out;
}

TEST_F(KseekRemoteTest, LocalFlagEvaluatesHere) {
  ProcessResult eval = Kseek(*dir_, {}, QuickEval({"--local"}));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_FALSE(nlohmann::json::parse(eval.out).contains("evaluation_id"));
}

TEST_F(KseekRemoteTest, WorkersListsTheHealthyHostWorker) {
  ProcessResult workers = Kseek(*dir_, {}, {"workers", "--json"});
  ASSERT_EQ(workers.exit_code, 0) << workers.err;
  nlohmann::json list = nlohmann::json::parse(workers.out);
  ASSERT_EQ(list.size(), 1u) << workers.out;
  EXPECT_EQ(list[0]["target"], "host");
  EXPECT_TRUE(list[0]["healthy"].get<bool>());
}

TEST_F(KseekRemoteTest, RefusedCallsExitTwoWithTheReason) {
  std::string elsewhere = TempDir("kseek_remote_elsewhere");
  ProcessResult no_token = Kseek(elsewhere, {}, {"evals", "--coordinator", *coordinator_});
  EXPECT_EQ(no_token.exit_code, 2);
  EXPECT_NE(no_token.err.find("missing bearer token"), std::string::npos) << no_token.err;

  ProcessResult bad_token =
      Kseek(elsewhere, {"KSEEK_TOKEN=ks_0000", "KSEEK_COORDINATOR=" + *coordinator_}, {"evals"});
  EXPECT_EQ(bad_token.exit_code, 2);
  EXPECT_NE(bad_token.err.find("unknown or revoked token"), std::string::npos) << bad_token.err;

  ProcessResult unknown = Kseek(*dir_, {}, {"show", "ev_000000000000"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("ev_000000000000"), std::string::npos) << unknown.err;

  ProcessResult no_coordinator = Kseek(elsewhere, {}, {"evals"});
  EXPECT_EQ(no_coordinator.exit_code, 2);
  EXPECT_NE(no_coordinator.err.find("no coordinator configured"), std::string::npos) << no_coordinator.err;
}

TEST_F(KseekRemoteTest, FlagAndEnvironmentOverrideTheConfigFile) {
  std::string dead = "127.0.0.1:" + std::to_string(FreePort());
  ProcessResult by_flag = Kseek(*dir_, {}, {"workers", "--coordinator", dead});
  EXPECT_EQ(by_flag.exit_code, 2);
  EXPECT_NE(by_flag.err.find("cannot reach coordinator " + dead), std::string::npos) << by_flag.err;

  ProcessResult by_env = Kseek(*dir_, {"KSEEK_COORDINATOR=" + dead}, QuickEval({}));
  EXPECT_EQ(by_env.exit_code, 2);
  EXPECT_NE(by_env.err.find("cannot reach coordinator " + dead), std::string::npos) << by_env.err;
}

TEST_F(KseekRemoteTest, UsersSeeOnlyTheirOwnEvaluations) {
  ProcessResult add = Kseek(*dir_, {}, {"admin", "user", "add", "carol"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  std::string token = add.out.substr(0, add.out.find('\n'));
  ASSERT_EQ(token.rfind("ks_", 0), 0u) << add.out;
  std::string token_file = *dir_ + "/carol.token";
  WriteFile(token_file, token + "\n");

  ProcessResult mine = Kseek(*dir_, {}, QuickEval({"--token-file", token_file}));
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  ProcessResult theirs = Kseek(*dir_, {}, QuickEval({}));
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  std::string admin_id = nlohmann::json::parse(theirs.out)["evaluation_id"];

  ProcessResult denied = Kseek(*dir_, {}, {"show", "--token-file", token_file, admin_id});
  EXPECT_EQ(denied.exit_code, 2);
  EXPECT_NE(denied.err.find("belongs to another user"), std::string::npos) << denied.err;

  ProcessResult list = Kseek(*dir_, {}, {"evals", "--json", "--token-file", token_file});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const auto& item : nlohmann::json::parse(list.out)) EXPECT_EQ(item["user"], "carol");

  ProcessResult not_admin = Kseek(*dir_, {}, {"admin", "user", "list", "--token-file", token_file});
  EXPECT_EQ(not_admin.exit_code, 2);
  EXPECT_FALSE(not_admin.err.empty());

  ProcessResult revoke = Kseek(*dir_, {}, {"admin", "user", "revoke", "carol"});
  ASSERT_EQ(revoke.exit_code, 0) << revoke.err;
  ProcessResult revoked = Kseek(*dir_, {}, {"evals", "--token-file", token_file});
  EXPECT_EQ(revoked.exit_code, 2);
  EXPECT_NE(revoked.err.find("unknown or revoked token"), std::string::npos) << revoked.err;
}

}  // namespace
}  // namespace kseek::testing
