// The deployment files in deploy/ say what they must, checked without a
// cluster or a container engine:
//   - the Kubernetes manifests (parsed with python3's yaml module): the
//     coordinator Deployment with its Service and its state on a
//     PersistentVolumeClaim, a worker DaemonSet per GPU architecture on the
//     matching nodes with one nvidia.com/gpu per worker, the worker token from
//     a Secret, time to drain on SIGTERM, probes on the serving ports, the
//     NetworkPolicy and the kustomization's resource list;
//   - the Dockerfiles: `kseek health` as the HEALTHCHECK, SIGTERM to stop;
//   - the Slurm script: bash syntax, the drain signal before the time limit,
//     and its refusals outside a job or with bad settings.
// Each check is also shown to fail on a manifest broken on purpose.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek {
namespace {

using json = nlohmann::json;

std::string DeployDir() { return testing::SourceDir() + "/deploy"; }

// True when python3 can import yaml (scripts/setup.sh installs python3-yaml).
bool HavePythonYaml(std::string* why) {
  testing::ProcessResult r = testing::RunProcess({"python3", "-c", "import yaml"});
  if (r.exit_code == 0) return true;
  *why = r.err.empty() ? "python3 not found" : std::string(absl::StripAsciiWhitespace(r.err));
  return false;
}

// Every YAML document of the file, as JSON (null documents dropped).
json LoadYaml(const std::string& path) {
  static const char kToJson[] =
      "import json, sys, yaml\n"
      "with open(sys.argv[1]) as f:\n"
      "    json.dump([d for d in yaml.safe_load_all(f) if d is not None], sys.stdout)\n";
  testing::ProcessResult r = testing::RunProcess({"python3", "-c", kToJson, path});
  EXPECT_EQ(r.exit_code, 0) << path << ": " << r.err;
  json docs = json::parse(r.out, nullptr, false);
  return docs.is_array() ? docs : json::array();
}

// What a Dockerfile's runtime stage declares (continuation lines joined;
// the last instruction of each kind wins, as in Docker).
struct Dockerfile {
  std::string path;
  int exposed_port = 0;
  std::string stop_signal, healthcheck, entrypoint;
};

Dockerfile ReadDockerfile(const std::string& path) {
  Dockerfile d;
  d.path = path;
  std::string text = absl::StrReplaceAll(testing::ReadFile(path), {{"\\\n", " "}});
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "EXPOSE ")) (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &d.exposed_port);
    if (absl::ConsumePrefix(&line, "STOPSIGNAL ")) d.stop_signal = std::string(absl::StripAsciiWhitespace(line));
    if (absl::ConsumePrefix(&line, "HEALTHCHECK ")) d.healthcheck = std::string(line);
    if (absl::ConsumePrefix(&line, "ENTRYPOINT ")) d.entrypoint = std::string(line);
  }
  return d;
}

// The Dockerfile problems for the image of `role` ("coordinator" or "worker").
std::vector<std::string> CheckDockerfile(const Dockerfile& d, const std::string& role) {
  std::vector<std::string> problems;
  auto problem = [&](const std::string& what) { problems.push_back(absl::StrCat(d.path, ": ", what)); };
  if (d.exposed_port == 0) problem("no EXPOSE port");
  // The words of the command, in exec form (["a", "b"]) or shell form.
  std::string check =
      absl::StrJoin(std::vector<std::string>(absl::StrSplit(d.healthcheck, absl::ByAnyChar(" \t[],\""), absl::SkipEmpty())), " ");
  const std::string address = absl::StrCat("127.0.0.1:", d.exposed_port);
  if (!absl::StrContains(check, "/opt/kernelseek/bin/kseek health") ||
      !absl::StrContains(check, absl::StrCat("--", role, " ", address)))
    problem(absl::StrCat("HEALTHCHECK must run `/opt/kernelseek/bin/kseek health --", role, " ", address,
                         "`, not: ", d.healthcheck));
  if (d.stop_signal != "SIGTERM") problem("STOPSIGNAL must be SIGTERM (the worker drains on it)");
  if (role == "worker" && !absl::StrContains(d.entrypoint, "tini"))
    problem("the worker's ENTRYPOINT must start tini (it passes SIGTERM to the worker alone)");
  return problems;
}

// The value at `path` (object keys) in `j`, or null when a key is missing.
const json& At(const json& j, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return kNull;
    at = &(*at)[key];
  }
  return *at;
}
std::string Str(const json& j, std::initializer_list<const char*> path) {
  const json& v = At(j, path);
  return v.is_string() ? v.get<std::string>() : "";
}
int Int(const json& j, std::initializer_list<const char*> path, int otherwise = 0) {
  const json& v = At(j, path);
  return v.is_number_integer() ? v.get<int>() : otherwise;
}

// The value of --name in a container's args ("--name=value" or "--name
// value"); "" when absent.
std::string Arg(const json& container, const std::string& name) {
  std::vector<std::string> args;
  for (const char* key : {"command", "args"})
    for (const auto& a : At(container, {key}))
      if (a.is_string()) args.push_back(a.get<std::string>());
  for (size_t i = 0; i < args.size(); ++i) {
    if (absl::StartsWith(args[i], "--" + name + "=")) return args[i].substr(name.size() + 3);
    if (args[i] == "--" + name && i + 1 < args.size()) return args[i + 1];
  }
  return "";
}

int PortOf(const std::string& address) {
  int port = 0;
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) return 0;
  return port;
}

// True when `path` is `dir` or lies under it.
bool Under(const std::string& path, const std::string& dir) {
  return !dir.empty() && (path == dir || absl::StartsWith(path, absl::StrCat(absl::StripSuffix(dir, "/"), "/")));
}

// True when every label of `selector` is among `labels`.
bool Selects(const json& selector, const json& labels) {
  if (!selector.is_object() || selector.empty() || !labels.is_object()) return false;
  for (const auto& [k, v] : selector.items())
    if (!labels.contains(k) || labels[k] != v) return false;
  return true;
}

// The container's port number for a port given as a number or a name.
int ResolvePort(const json& container, const json& port) {
  if (port.is_number_integer()) return port.get<int>();
  for (const auto& p : At(container, {"ports"}))
    if (port.is_string() && Str(p, {"name"}) == port.get<std::string>()) return Int(p, {"containerPort"});
  return 0;
}

// The last containerPort of a container (0 when none).
int ContainerPort(const json& container) {
  int port = 0;
  for (const auto& p : At(container, {"ports"})) port = Int(p, {"containerPort"});
  return port;
}

// All manifests of deploy/k8s by file name, each an array of objects.
struct Manifests {
  std::map<std::string, json> files;

  std::vector<const json*> OfKind(const std::string& kind) const {
    std::vector<const json*> out;
    for (const auto& [name, docs] : files)
      for (const auto& d : docs)
        if (Str(d, {"kind"}) == kind) out.push_back(&d);
    return out;
  }
  json& Object(const std::string& kind, const std::string& name) {
    for (auto& [file, docs] : files)
      for (auto& d : docs)
        if (Str(d, {"kind"}) == kind && Str(d, {"metadata", "name"}) == name) return d;
    throw std::runtime_error("no " + kind + " " + name + " in deploy/k8s");
  }
};

Manifests LoadManifests() {
  Manifests m;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(DeployDir() + "/k8s", ec))
    if (e.path().extension() == ".yaml") m.files[e.path().filename().string()] = LoadYaml(e.path().string());
  return m;
}

struct Images {
  Dockerfile coordinator, worker;
};

Images LoadImages() {
  return {ReadDockerfile(DeployDir() + "/docker/Dockerfile.coordinator"),
          ReadDockerfile(DeployDir() + "/docker/Dockerfile.worker")};
}

// The problems of a container's readiness and liveness probes: both
// present, each asking the port the container serves on (the kubelet's
// gRPC or TCP probe, or `kseek health` as an exec probe).
void CheckProbes(const std::string& who, const json& container, int port, std::vector<std::string>* problems) {
  for (const char* kind : {"readinessProbe", "livenessProbe"}) {
    const json& probe = At(container, {kind});
    if (!probe.is_object()) {
      problems->push_back(absl::StrCat(who, ": no ", kind));
      continue;
    }
    int probed = 0;
    if (probe.contains("grpc")) probed = ResolvePort(container, At(probe, {"grpc", "port"}));
    if (probe.contains("tcpSocket")) probed = ResolvePort(container, At(probe, {"tcpSocket", "port"}));
    std::vector<std::string> words;
    for (const auto& w : At(probe, {"exec", "command"}))
      if (w.is_string()) words.push_back(w.get<std::string>());
    if (absl::StrContains(absl::StrJoin(words, " "), "kseek health"))
      for (const auto& w : words) probed = std::max(probed, PortOf(w));
    if (probed != port)
      problems->push_back(absl::StrCat(who, ": ", kind, " does not check the serving port ", port, ": ", probe.dump()));
  }
}

// The coordinator's state dir: its --state-dir, else the image's.
std::string StateDir(const json& container, const Dockerfile& image) {
  if (std::string arg = Arg(container, "state-dir"); !arg.empty()) return arg;
  const std::string flag = "\"--state-dir\", \"";
  size_t at = image.entrypoint.find(flag);
  if (at == std::string::npos) return "";
  at += flag.size();
  return image.entrypoint.substr(at, image.entrypoint.find('"', at) - at);
}

// The architecture a worker DaemonSet's pods are placed on: the
// kernelseek.dev/arch node label it requires ("" when none).
std::string ArchOf(const json& pod_spec) {
  std::string arch = Str(pod_spec, {"nodeSelector", "kernelseek.dev/arch"});
  const json& terms = At(pod_spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                                    "nodeSelectorTerms"});
  for (const auto& term : terms)
    for (const auto& e : At(term, {"matchExpressions"}))
      if (Str(e, {"key"}) == "kernelseek.dev/arch" && Str(e, {"operator"}) == "In" &&
          At(e, {"values"}).size() == 1 && arch.empty())
        arch = At(e, {"values"})[0].get<std::string>();
  return arch;
}

// Everything the Kubernetes manifests must say; one line per problem.
std::vector<std::string> CheckKubernetes(const Manifests& m, const Images& images) {
  std::vector<std::string> problems;
  auto problem = [&](const std::string& what) { problems.push_back(what); };

  // The kustomization lists every other manifest, in the namespace.
  std::set<std::string> listed, present;
  for (const auto& [name, docs] : m.files) {
    if (name != "kustomization.yaml") {
      present.insert(name);
      continue;
    }
    const json& kustomization = docs.empty() ? At(docs, {}) : docs[0];
    for (const auto& r : At(kustomization, {"resources"}))
      if (r.is_string()) listed.insert(r.get<std::string>());
    if (Str(kustomization, {"namespace"}) != "kernelseek") problem("kustomization.yaml: namespace must be kernelseek");
  }
  if (listed != present)
    problem(absl::StrCat("kustomization.yaml: resources [", absl::StrJoin(listed, ", "), "] are not the manifests [",
                         absl::StrJoin(present, ", "), "]"));

  // The coordinator: one Deployment, replaced with Recreate, its state on a
  // ReadWriteOnce claim mounted at the state dir.
  std::vector<const json*> coordinators;
  for (const json* d : m.OfKind("Deployment"))
    for (const auto& c : At(*d, {"spec", "template", "spec", "containers"}))
      if (absl::StartsWith(Str(c, {"image"}), "kernelseek/coordinator")) coordinators.push_back(d);
  if (coordinators.size() != 1) {
    problem(absl::StrCat(coordinators.size(), " coordinator Deployments (image kernelseek/coordinator); want 1"));
    return problems;
  }
  const json& dep = *coordinators[0];
  const std::string dep_name = "Deployment " + Str(dep, {"metadata", "name"});
  const json& pod = At(dep, {"spec", "template", "spec"});
  const json& pod_labels = At(dep, {"spec", "template", "metadata", "labels"});
  if (Int(dep, {"spec", "replicas"}) != 1) problem(dep_name + ": spec.replicas must be 1 (SQLite has one writer)");
  if (Str(dep, {"spec", "strategy", "type"}) != "Recreate")
    problem(dep_name + ": spec.strategy.type must be Recreate (two pods never share the database)");
  if (!Selects(At(dep, {"spec", "selector", "matchLabels"}), pod_labels))
    problem(dep_name + ": spec.selector does not select its own pods");
  if (!At(pod, {"terminationGracePeriodSeconds"}).is_number()) problem(dep_name + ": no terminationGracePeriodSeconds");
  const json& coord = At(pod, {"containers"})[0];
  const int coord_port = ContainerPort(coord);
  if (coord_port != images.coordinator.exposed_port)
    problem(absl::StrCat(dep_name, ": containerPort ", coord_port, " is not the image's port ",
                         images.coordinator.exposed_port));
  CheckProbes(dep_name, coord, coord_port, &problems);
  const std::string state_dir = StateDir(coord, images.coordinator);
  std::set<std::string> claims;
  for (const json* pvc : m.OfKind("PersistentVolumeClaim")) {
    claims.insert(Str(*pvc, {"metadata", "name"}));
    bool rwo = false;
    for (const auto& mode : At(*pvc, {"spec", "accessModes"})) rwo |= mode == "ReadWriteOnce";
    if (!rwo) problem("PersistentVolumeClaim " + Str(*pvc, {"metadata", "name"}) + ": not ReadWriteOnce");
  }
  bool state_on_claim = false;
  for (const auto& v : At(pod, {"volumes"})) {
    if (!claims.count(Str(v, {"persistentVolumeClaim", "claimName"}))) continue;
    for (const auto& mount : At(coord, {"volumeMounts"}))
      state_on_claim |= Str(mount, {"name"}) == Str(v, {"name"}) && Under(state_dir, Str(mount, {"mountPath"}));
  }
  if (!state_on_claim)
    problem(absl::StrCat(dep_name, ": the state dir '", state_dir,
                         "' is not on a volume of a PersistentVolumeClaim of the manifests"));

  // The Service in front of it.
  std::string coordinator_address;
  for (const json* svc : m.OfKind("Service")) {
    if (!Selects(At(*svc, {"spec", "selector"}), pod_labels)) continue;
    for (const auto& p : At(*svc, {"spec", "ports"})) {
      const json& target = p.contains("targetPort") ? At(p, {"targetPort"}) : At(p, {"port"});
      if (ResolvePort(coord, target) == coord_port)
        coordinator_address = absl::StrCat(Str(*svc, {"metadata", "name"}), ":", Int(p, {"port"}));
    }
  }
  if (coordinator_address.empty()) problem("no Service selects the coordinator's pods on its port");

  // The workers: a DaemonSet per architecture, on its nodes, one GPU per
  // container, the token from a Secret, time to drain.
  const std::map<std::string, std::string> kArchTarget = {{"hopper", "sm_90a"}, {"blackwell", "sm_100a"}};
  const bool image_drains_on_sigterm =
      images.worker.stop_signal == "SIGTERM" && absl::StrContains(images.worker.entrypoint, "tini");
  std::map<std::string, int> per_arch;
  std::vector<std::pair<const json*, int>> worker_ports;  // pod labels, port
  for (const json* ds : m.OfKind("DaemonSet")) {
    const std::string who = "DaemonSet " + Str(*ds, {"metadata", "name"});
    const json& spec = At(*ds, {"spec", "template", "spec"});
    const json& labels = At(*ds, {"spec", "template", "metadata", "labels"});
    const std::string arch = ArchOf(spec);
    if (!kArchTarget.count(arch)) {
      problem(who + ": selects no GPU architecture's nodes (kernelseek.dev/arch hopper or blackwell)");
      continue;
    }
    ++per_arch[arch];
    if (!Selects(At(*ds, {"spec", "selector", "matchLabels"}), labels))
      problem(who + ": spec.selector does not select its own pods");
    if (Int(spec, {"terminationGracePeriodSeconds"}, 30) < 300)
      problem(who + ": terminationGracePeriodSeconds under 300 s leaves no time to finish the attempt in hand");
    for (const auto& c : At(spec, {"containers"})) {
      const std::string cwho = who + " container " + Str(c, {"name"});
      if (!absl::StartsWith(Str(c, {"image"}), "kernelseek/worker")) problem(cwho + ": image is not kernelseek/worker");
      if (Arg(c, "target") != kArchTarget.at(arch))
        problem(absl::StrCat(cwho, ": --target=", Arg(c, "target"), " on ", arch, " nodes (want ",
                             kArchTarget.at(arch), ")"));
      if (Arg(c, "gpu") != "0") problem(cwho + ": --gpu must be 0 (the container sees its one GPU as device 0)");
      const json& gpus = At(c, {"resources", "limits", "nvidia.com/gpu"});
      if (!(gpus == 1 || gpus == "1")) problem(cwho + ": resources.limits must ask for exactly one nvidia.com/gpu");
      const int port = ContainerPort(c);
      if (port == 0 || PortOf(Arg(c, "listen")) != port || PortOf(Arg(c, "advertise")) != port)
        problem(absl::StrCat(cwho, ": --listen ", Arg(c, "listen"), ", --advertise ", Arg(c, "advertise"),
                             " and containerPort ", port, " must agree"));
      worker_ports.push_back({&labels, port});
      if (!coordinator_address.empty() && Arg(c, "coordinator") != coordinator_address)
        problem(cwho + ": --coordinator=" + Arg(c, "coordinator") + " is not the Service " + coordinator_address);
      bool token_from_secret = false;
      const std::string token = Arg(c, "token-file");
      for (const auto& mount : At(c, {"volumeMounts"}))
        for (const auto& v : At(spec, {"volumes"}))
          token_from_secret |= Str(v, {"name"}) == Str(mount, {"name"}) && At(v, {"secret"}).is_object() &&
                               Under(token, Str(mount, {"mountPath"}));
      if (!token_from_secret) problem(cwho + ": --token-file '" + token + "' is not on a volume of a Secret");
      if (!At(c, {"lifecycle", "preStop"}).is_object() && !image_drains_on_sigterm)
        problem(cwho + ": nothing drains the worker on termination (no preStop, and the image does not pass "
                       "SIGTERM to it)");
      CheckProbes(cwho, c, port, &problems);
    }
  }
  for (const auto& [arch, target] : kArchTarget)
    if (per_arch[arch] != 1)
      problem(absl::StrCat(per_arch[arch], " worker DaemonSets for ", arch, " (", target, ") nodes; want 1"));

  // The NetworkPolicy admits the coordinator to every worker port and lets
  // the workers reach the coordinator.
  for (const auto& [labels, port] : worker_ports) {
    bool ingress = false, egress = false;
    for (const json* np : m.OfKind("NetworkPolicy")) {
      if (!Selects(At(*np, {"spec", "podSelector", "matchLabels"}), *labels)) continue;
      for (const auto& rule : At(*np, {"spec", "ingress"}))
        for (const auto& p : At(rule, {"ports"}))
          ingress |= Int(p, {"port"}) <= port && port <= Int(p, {"endPort"}, Int(p, {"port"}));
      for (const auto& rule : At(*np, {"spec", "egress"}))
        for (const auto& p : At(rule, {"ports"})) egress |= Int(p, {"port"}) == coord_port;
    }
    if (!ingress) problem(absl::StrCat("no NetworkPolicy admits worker port ", port));
    if (!egress) problem(absl::StrCat("no NetworkPolicy lets workers reach the coordinator port ", coord_port));
  }
  return problems;
}

class DeployManifests : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!HavePythonYaml(&why))
      GTEST_SKIP() << "skipped: no python3 yaml module to parse the manifests (" << why
                   << "; scripts/setup.sh installs python3-yaml)";
  }
};

TEST_F(DeployManifests, KubernetesManifestsSayWhatTheyMust) {
  Manifests m = LoadManifests();
  ASSERT_GE(m.files.size(), 5u);
  std::vector<std::string> problems = CheckKubernetes(m, LoadImages());
  EXPECT_TRUE(problems.empty()) << absl::StrJoin(problems, "\n");
}

TEST_F(DeployManifests, EachCheckCatchesABrokenManifest) {
  struct Case {
    std::string what;
    std::function<void(Manifests&)> mutate;
    std::string expect;  // in one of the problems
  };
  auto worker = [](Manifests& m, const std::string& ds) -> json& {
    return m.Object("DaemonSet", ds)["spec"]["template"]["spec"]["containers"][0];
  };
  auto coordinator_pod = [](Manifests& m) -> json& {
    return m.Object("Deployment", "kernelseekd")["spec"]["template"]["spec"];
  };
  const std::vector<Case> cases = {
      {"no GPU limit", [&](Manifests& m) { worker(m, "kseek-worker-hopper")["resources"]["limits"].erase("nvidia.com/gpu"); },
       "nvidia.com/gpu"},
      {"Blackwell workers on Hopper nodes",
       [&](Manifests& m) {
         m.Object("DaemonSet", "kseek-worker-blackwell")["spec"]["template"]["spec"]["nodeSelector"]
             ["kernelseek.dev/arch"] = "hopper";
       },
       "--target=sm_100a on hopper nodes"},
      {"state not on the claim",
       [&](Manifests& m) { coordinator_pod(m)["containers"][0]["volumeMounts"][0]["mountPath"] = "/data"; },
       "is not on a volume of a PersistentVolumeClaim"},
      {"token from an emptyDir",
       [&](Manifests& m) {
         for (auto& v : m.Object("DaemonSet", "kseek-worker-hopper")["spec"]["template"]["spec"]["volumes"])
           if (v["name"] == "worker-token") v = {{"name", "worker-token"}, {"emptyDir", json::object()}};
       },
       "is not on a volume of a Secret"},
      {"no time to drain",
       [&](Manifests& m) {
         m.Object("DaemonSet", "kseek-worker-blackwell")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 30;
       },
       "terminationGracePeriodSeconds"},
      {"no liveness probe", [&](Manifests& m) { coordinator_pod(m)["containers"][0].erase("livenessProbe"); },
       "no livenessProbe"},
      {"probe on another port",
       [&](Manifests& m) { worker(m, "kseek-worker-hopper")["readinessProbe"]["grpc"]["port"] = 9999; },
       "readinessProbe does not check the serving port 7460"},
      {"two coordinators", [&](Manifests& m) { m.Object("Deployment", "kernelseekd")["spec"]["replicas"] = 2; },
       "spec.replicas must be 1"},
      {"worker dials a wrong name",
       [&](Manifests& m) {
         for (auto& a : worker(m, "kseek-worker-hopper")["args"])
           if (absl::StartsWith(a.get<std::string>(), "--coordinator=")) a = "--coordinator=coordinator:7450";
       },
       "is not the Service kernelseekd:7450"},
      {"manifest left out of the kustomization",
       [&](Manifests& m) { m.files["kustomization.yaml"][0]["resources"].erase(1); }, "kustomization.yaml: resources"},
  };
  const Manifests pristine = LoadManifests();
  const Images images = LoadImages();
  for (const Case& c : cases) {
    Manifests m = pristine;
    c.mutate(m);
    std::vector<std::string> problems = CheckKubernetes(m, images);
    bool caught = false;
    for (const auto& p : problems) caught |= absl::StrContains(p, c.expect);
    EXPECT_TRUE(caught) << c.what << ": expected a problem with '" << c.expect << "', got:\n"
                        << absl::StrJoin(problems, "\n");
  }
}

TEST(DeployDocker, ImagesCheckHealthWithKseekAndStopWithSigterm) {
  Images images = LoadImages();
  std::vector<std::string> problems = CheckDockerfile(images.coordinator, "coordinator");
  for (const auto& p : CheckDockerfile(images.worker, "worker")) problems.push_back(p);
  EXPECT_TRUE(problems.empty()) << absl::StrJoin(problems, "\n");
  EXPECT_EQ(images.coordinator.exposed_port, 7450);
  EXPECT_EQ(images.worker.exposed_port, 7460);

  // The check catches a TCP-only health check and a worker started without tini.
  Dockerfile tcp = images.coordinator;
  tcp.healthcheck = R"(--interval=15s CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/7450"])";
  EXPECT_EQ(CheckDockerfile(tcp, "coordinator").size(), 1u);
  Dockerfile no_tini = images.worker;
  no_tini.entrypoint = R"(["/opt/kernelseek/bin/kseek-worker"])";
  EXPECT_EQ(CheckDockerfile(no_tini, "worker").size(), 1u);
}

TEST(DeploySlurm, ScriptParsesDrainsBeforeTheLimitAndRefusesBadSettings) {
  const std::string script = DeployDir() + "/slurm/kseek-workers.sbatch";
  testing::ProcessResult syntax = testing::RunProcess({"bash", "-n", script});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  const std::string text = testing::ReadFile(script);
  EXPECT_TRUE(absl::StrContains(text, "\n#SBATCH --signal=B:TERM@"))
      << "the batch shell must get SIGTERM before the time limit, to drain the workers";

  auto run = [&](std::vector<std::string> env) {
    std::vector<std::string> argv = {"env", "-i", "PATH=/usr/bin:/bin", "HOME=/nonexistent"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"bash", script});
    return testing::RunProcess(argv);
  };
  testing::ProcessResult outside = run({});
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(outside.err, "submit this script with sbatch")) << outside.err;
  testing::ProcessResult no_coordinator = run({"SLURM_JOB_ID=1", "SLURM_SUBMIT_DIR=/tmp"});
  EXPECT_EQ(no_coordinator.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(no_coordinator.err, "KSEEK_COORDINATOR")) << no_coordinator.err;
  const std::string bundle = std::filesystem::path(testing::BinDir()).parent_path().string();
  const std::string dir = testing::TempDir("sbatch");
  testing::WriteFile(dir + "/worker.token", "ks_test\n");
  const std::vector<std::string> job = {"SLURM_JOB_ID=1", "SLURM_SUBMIT_DIR=" + dir, "KSEEK_COORDINATOR=127.0.0.1:1",
                                        "KSEEK_BUNDLE=" + bundle, "KSEEK_TOKEN_FILE=" + dir + "/worker.token"};
  std::vector<std::string> env = job;
  env.push_back("KSEEK_TARGET=sm_75");
  testing::ProcessResult bad_target = run(env);
  EXPECT_EQ(bad_target.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad_target.err, "KSEEK_TARGET must be sm_90a, sm_100a or host, not 'sm_75'"))
      << bad_target.err;
  env = job;
  env.push_back("KSEEK_TARGET=sm_90a");
  testing::ProcessResult no_gpu = run(env);
  EXPECT_EQ(no_gpu.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(no_gpu.err, "--gpus-per-task=1")) << no_gpu.err;
  env = job;
  env.push_back("KSEEK_BUNDLE=" + dir);
  testing::ProcessResult no_bundle = run(env);
  EXPECT_EQ(no_bundle.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(no_bundle.err, "kseek-worker not found")) << no_bundle.err;
}

}  // namespace
}  // namespace kseek
