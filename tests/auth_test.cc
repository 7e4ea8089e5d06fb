// Coordinator authentication: token format and hashing, the first-start
// bootstrap (folder 0700, token files 0600, written once), and bearer-token
// checks with their status codes, through the Admin service in process.
#include "server/auth.h"

#include <sys/stat.h>

#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "server/coordinator_service.h"
#include "server/store.h"
#include "tests/test_util.h"

namespace kseek::server {
namespace {

namespace v1 = ::kernelseek::v1;

int Mode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return st.st_mode & 0777;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

TEST(AuthTest, HashIsSha256Hex) {
  EXPECT_EQ(HashToken("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HashToken(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(AuthTest, TokensAreFreshAndWellFormed) {
  std::string a = NewToken(), b = NewToken();
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), 3u + 64u);
  EXPECT_EQ(a.substr(0, 3), "ks_");
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef", 3), std::string::npos);
  EXPECT_EQ(RandomHex(6).size(), 12u);
}

TEST(AuthTest, RolesParseAndCheck) {
  for (Role r : {Role::kAdmin, Role::kUser, Role::kWorker}) {
    absl::StatusOr<Role> parsed = ParseRole(RoleName(r));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, r);
  }
  absl::StatusOr<Role> bad = ParseRole("root");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(bad.status().message().find("role"), std::string::npos);

  Caller worker{"w", Role::kWorker};
  EXPECT_TRUE(CheckRole(worker, {Role::kWorker, Role::kAdmin}, "Heartbeat").ok());
  absl::Status denied = CheckRole(worker, {Role::kUser, Role::kAdmin}, "SubmitEvaluation");
  EXPECT_TRUE(absl::IsPermissionDenied(denied));
  EXPECT_NE(denied.message().find("SubmitEvaluation"), std::string::npos) << denied;
}

TEST(AuthTest, BootstrapWritesPrivateTokenFilesOnce) {
  std::string dir = kseek::testing::TempDir("auth_test") + "/state";
  ASSERT_TRUE(PrepareStateDir(dir).ok());
  EXPECT_EQ(Mode(dir), 0700);
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir + "/kernelseek.db");
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE(Bootstrap(store->get(), dir).ok());

  std::string admin_file = dir + "/" + kAdminTokenFile;
  std::string worker_file = dir + "/" + kWorkerTokenFile;
  EXPECT_EQ(Mode(admin_file), 0600);
  EXPECT_EQ(Mode(worker_file), 0600);
  std::string admin_token = Trimmed(kseek::testing::ReadFile(admin_file));
  std::string worker_token = Trimmed(kseek::testing::ReadFile(worker_file));
  absl::StatusOr<UserRecord> admin = (*store)->LookupToken(HashToken(admin_token));
  ASSERT_TRUE(admin.ok()) << admin.status();
  EXPECT_EQ(admin->name, kAdminUser);
  EXPECT_EQ(admin->role, "admin");
  absl::StatusOr<UserRecord> workers = (*store)->LookupToken(HashToken(worker_token));
  ASSERT_TRUE(workers.ok()) << workers.status();
  EXPECT_EQ(workers->name, kLocalWorkersUser);
  EXPECT_EQ(workers->role, "worker");
  // The raw token is never stored.
  EXPECT_TRUE(absl::IsNotFound((*store)->LookupToken(admin_token).status()));

  // A second start keeps the users and their files.
  ASSERT_TRUE(Bootstrap(store->get(), dir).ok());
  EXPECT_EQ(Trimmed(kseek::testing::ReadFile(admin_file)), admin_token);
  EXPECT_EQ((*store)->ListUsers().value().size(), 2u);
}

TEST(AuthTest, SecretFilesIgnoreAPermissiveUmask) {
  std::string path = kseek::testing::TempDir("auth_test") + "/secret";
  mode_t old = ::umask(0);
  absl::Status st = WriteSecretFile(path, "s3cret\n");
  ::umask(old);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Mode(path), 0600);
  EXPECT_EQ(kseek::testing::ReadFile(path), "s3cret\n");
}

// Bearer tokens over a real (in-process) gRPC call.
class BearerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = kseek::testing::TempDir("auth_test");
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir + "/kernelseek.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    admin_token_ = NewToken();
    user_token_ = NewToken();
    ASSERT_TRUE(store_->AddUser("root", "admin", HashToken(admin_token_), 1).ok());
    ASSERT_TRUE(store_->AddUser("alice", "user", HashToken(user_token_), 2).ok());
    auth_ = std::make_unique<Authenticator>(store_.get());
    service_ = std::make_unique<AdminService>(
        ServiceContext{store_.get(), nullptr, nullptr, auth_.get()});
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Admin::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // ListUsers with `authorization` set to `header` (none when empty).
  grpc::Status ListUsers(const std::string& header, v1::ListUsersResponse* out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!header.empty()) ctx.AddMetadata("authorization", header);
    return stub_->ListUsers(&ctx, v1::ListUsersRequest(), out);
  }

  std::unique_ptr<Store> store_;
  std::string admin_token_, user_token_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<AdminService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Admin::Stub> stub_;
};

TEST_F(BearerTest, StatusCodesNameTheProblem) {
  v1::ListUsersResponse out;
  grpc::Status st = ListUsers("", &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(st.error_message(), "missing bearer token");

  st = ListUsers("Basic " + admin_token_, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);

  st = ListUsers("Bearer ks_" + std::string(64, '0'), &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(st.error_message(), "unknown or revoked token");

  st = ListUsers("Bearer " + user_token_, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(st.error_message().find("admin"), std::string::npos) << st.error_message();

  st = ListUsers("Bearer " + admin_token_, &out);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(out.users_size(), 2);
  EXPECT_EQ(out.users(1).name(), "alice");
  EXPECT_EQ(out.users(1).tokens(), 1);
}

TEST_F(BearerTest, RevokedUsersLoseAccess) {
  ASSERT_TRUE(store_->RevokeUser("root").ok());
  v1::ListUsersResponse out;
  grpc::Status st = ListUsers("Bearer " + admin_token_, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(st.error_message(), "unknown or revoked token");
}

}  // namespace
}  // namespace kseek::server
