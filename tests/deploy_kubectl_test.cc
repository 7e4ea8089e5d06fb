// `kubectl kustomize deploy/k8s` builds the manifests the way `kubectl apply
// -k` would, with no cluster: every resource file is found, every object but
// the Namespace lands in the namespace kernelseek, and every image gets its
// tag. (`kubectl apply --dry-run=client` is not used: it asks an API server
// for the resource types.) Skips where kubectl or python3's yaml module is
// missing.
#include <set>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek {
namespace {

using json = nlohmann::json;

TEST(DeployKubectl, KustomizationBuilds) {
  testing::ProcessResult version = testing::RunProcess({"kubectl", "version", "--client"});
  if (version.exit_code != 0) GTEST_SKIP() << "skipped: no kubectl to build the kustomization";
  if (testing::RunProcess({"python3", "-c", "import yaml"}).exit_code != 0)
    GTEST_SKIP() << "skipped: no python3 yaml module (scripts/setup.sh installs python3-yaml)";

  testing::ProcessResult built =
      testing::RunProcess({"kubectl", "kustomize", testing::SourceDir() + "/deploy/k8s"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const std::string file = testing::TempDir("kustomize") + "/all.yaml";
  testing::WriteFile(file, built.out);
  testing::ProcessResult parsed = testing::RunProcess(
      {"python3", "-c",
       "import json, sys, yaml\n"
       "json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)\n",
       file});
  ASSERT_EQ(parsed.exit_code, 0) << parsed.err;
  json objects = json::parse(parsed.out);

  std::multiset<std::string> kinds;
  for (const auto& o : objects) {
    const std::string kind = o.value("kind", "");
    const std::string name = kind + " " + o["metadata"].value("name", "");
    kinds.insert(kind);
    if (kind != "Namespace") {
      EXPECT_EQ(o["metadata"].value("namespace", ""), "kernelseek") << name;
    }
    if (!o.contains("spec") || !o["spec"].contains("template")) continue;
    for (const auto& c : o["spec"]["template"]["spec"]["containers"])
      EXPECT_NE(c.value("image", "").find(':'), std::string::npos) << name << ": image without a tag";
  }
  const std::multiset<std::string> want = {"Namespace", "PersistentVolumeClaim", "Deployment", "Service",
                                           "DaemonSet", "DaemonSet", "NetworkPolicy"};
  EXPECT_EQ(kinds, want) << absl::StrJoin(kinds, ", ");
}

}  // namespace
}  // namespace kseek
