// kseek-service-bench: measures what the evaluation service adds on top of
// a worker, against processes already running (scripts/bench_service.sh
// starts them on loopback).
//
//   --phase overhead    the same evaluation N times directly against a
//                       worker (Worker.Evaluate; one the coordinator does
//                       not know, so that its direct attempts never make the
//                       coordinator's worker look busy) and through the
//                       coordinator (Coordinator.SubmitEvaluation),
//                       interleaved direct/coordinator so both share the
//                       machine's noise; wall time from the call to the
//                       verdict.
//   --phase throughput  M evaluations submitted at once to the coordinator
//                       from --threads threads; evaluations per second to
//                       the last verdict.
//   --phase latency     cheap RPCs (ListWorkers, GetEvaluation) one after
//                       another for --idle-seconds, then again during a
//                       burst of --burst submissions from --threads threads
//                       (each read to Accepted); p50/p99/max of each, idle
//                       and under load, and the burst's rate. The burst's
//                       evaluations are cancelled afterwards.
//
// Each phase starts with one unmeasured evaluation per path so that the
// worker's compile cache holds the kernel. Prints a table, or one JSON
// object with --json.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/file.h"
#include "harness/src/task.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "kernelseek/v1/worker.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "proto/job_credential.h"
#include "proto/request.h"

ABSL_FLAG(std::string, phase, "overhead", "overhead or throughput");
ABSL_FLAG(std::string, coordinator, "", "kernelseekd address (HOST:PORT)");
ABSL_FLAG(std::string, token_file, "", "file holding a user or admin bearer token");
ABSL_FLAG(std::string, worker, "",
          "address of a kseek-worker registered with no coordinator, for the direct path "
          "(overhead phase)");
ABSL_FLAG(std::string, job_credential_file, "",
          "the job credential of the --worker (its --job-credential-file)");
ABSL_FLAG(std::string, task, "", "task folder");
ABSL_FLAG(std::string, kernel, "", "kernel source file (a host kernel of the task)");
ABSL_FLAG(std::string, scenario, "", "the one scenario to run");
ABSL_FLAG(int, n, 20, "evaluations per path (overhead phase)");
ABSL_FLAG(int, m, 20, "evaluations submitted at once (throughput phase)");
ABSL_FLAG(int, threads, 0, "submitting threads (throughput phase; 0: one per evaluation)");
ABSL_FLAG(int, wait_workers, 1, "healthy host workers to wait for before measuring");
ABSL_FLAG(int, burst, 1000, "submissions in the burst (latency phase)");
ABSL_FLAG(double, idle_seconds, 5, "how long cheap RPCs are timed before the burst (latency phase)");
ABSL_FLAG(bool, json, false, "print one JSON object instead of a table");

namespace {

namespace v1 = kernelseek::v1;
using Clock = std::chrono::steady_clock;

// One evaluation may take this long before the bench gives up on it.
constexpr absl::Duration kEvaluationDeadline = absl::Seconds(300);
constexpr absl::Duration kWorkerWait = absl::Seconds(30);

void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

absl::Status FromGrpc(const grpc::Status& status, const std::string& what) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", status.error_message()));
}

// Reads a stream of evaluation events to its verdict. Fails when the
// evaluation failed, the verdict is not all correct, or the stream ends
// without a verdict.
absl::Status ReadToVerdict(grpc::ClientReader<v1::EvaluationEvent>* reader,
                           const std::string& what) {
  v1::EvaluationEvent event;
  bool verdict_seen = false;
  std::string error;
  while (reader->Read(&event)) {
    if (event.has_failed()) error = event.failed().error();
    if (event.has_verdict()) {
      verdict_seen = true;
      if (!event.verdict().all_correct()) {
        error = absl::StrCat("verdict not all correct: ", event.verdict().error());
      }
    }
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return FromGrpc(status, what);
  if (!error.empty()) return absl::InternalError(absl::StrCat(what, ": ", error));
  if (!verdict_seen) return absl::InternalError(absl::StrCat(what, ": stream ended without a verdict"));
  return absl::OkStatus();
}

// The two ways of running the same request, each returning its wall time.
class Paths {
 public:
  Paths(v1::EvaluationRequest request, std::string token)
      : request_(std::move(request)), token_(std::move(token)) {}

  void ConnectCoordinator(const std::string& address) {
    coordinator_ = v1::Coordinator::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  void ConnectWorker(const std::string& address, std::string job_credential) {
    worker_ = v1::Worker::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    job_credential_ = std::move(job_credential);
  }

  absl::StatusOr<double> Direct() {
    v1::Attempt attempt;
    attempt.set_evaluation_id(absl::StrCat("bench_direct_", direct_count_.fetch_add(1)));
    attempt.set_number(1);
    *attempt.mutable_request() = request_;
    const Clock::time_point start = Clock::now();
    grpc::ClientContext context;
    SetDeadline(&context, kEvaluationDeadline);
    context.AddMetadata(kseek::kJobCredentialMetadata, job_credential_);
    auto reader = worker_->Evaluate(&context, attempt);
    absl::Status status = ReadToVerdict(reader.get(), "Worker.Evaluate");
    if (!status.ok()) return status;
    return Millis(start);
  }

  absl::StatusOr<double> ThroughCoordinator() {
    const Clock::time_point start = Clock::now();
    grpc::ClientContext context;
    SetDeadline(&context, kEvaluationDeadline);
    context.AddMetadata("authorization", absl::StrCat("Bearer ", token_));
    auto reader = coordinator_->SubmitEvaluation(&context, request_);
    absl::Status status = ReadToVerdict(reader.get(), "Coordinator.SubmitEvaluation");
    if (!status.ok()) return status;
    return Millis(start);
  }

  // Submits and reads to Accepted; the new evaluation's id.
  absl::StatusOr<std::string> SubmitOnly() {
    grpc::ClientContext context;
    SetDeadline(&context, absl::Seconds(60));
    context.AddMetadata("authorization", absl::StrCat("Bearer ", token_));
    auto reader = coordinator_->SubmitEvaluation(&context, request_);
    v1::EvaluationEvent event;
    bool accepted = reader->Read(&event) && event.has_accepted();
    context.TryCancel();
    grpc::Status status = reader->Finish();
    if (!accepted) return FromGrpc(status, "Coordinator.SubmitEvaluation");
    return event.evaluation_id();
  }

  // One cheap call, by name; its wall time.
  absl::StatusOr<double> Cheap(const std::string& rpc, const std::string& evaluation_id) {
    const Clock::time_point start = Clock::now();
    grpc::ClientContext context;
    SetDeadline(&context, absl::Seconds(30));
    context.AddMetadata("authorization", absl::StrCat("Bearer ", token_));
    grpc::Status status;
    if (rpc == "ListWorkers") {
      v1::ListWorkersResponse response;
      status = coordinator_->ListWorkers(&context, v1::ListWorkersRequest(), &response);
    } else {
      v1::EvaluationRef ref;
      ref.set_evaluation_id(evaluation_id);
      v1::Evaluation response;
      status = coordinator_->GetEvaluation(&context, ref, &response);
    }
    if (!status.ok()) return FromGrpc(status, "Coordinator." + rpc);
    return Millis(start);
  }

  absl::Status Cancel(const std::string& evaluation_id) {
    grpc::ClientContext context;
    SetDeadline(&context, absl::Seconds(30));
    context.AddMetadata("authorization", absl::StrCat("Bearer ", token_));
    v1::EvaluationRef ref;
    ref.set_evaluation_id(evaluation_id);
    v1::CancelEvaluationResponse response;
    grpc::Status status = coordinator_->CancelEvaluation(&context, ref, &response);
    // One that finished meanwhile has nothing to cancel.
    if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) return absl::OkStatus();
    return status.ok() ? absl::OkStatus() : FromGrpc(status, "Coordinator.CancelEvaluation");
  }

  // Waits until the coordinator knows `count` healthy host workers.
  absl::Status WaitForWorkers(int count) {
    const absl::Time give_up = absl::Now() + kWorkerWait;
    int healthy = 0;
    while (absl::Now() < give_up) {
      grpc::ClientContext context;
      SetDeadline(&context, absl::Seconds(5));
      context.AddMetadata("authorization", absl::StrCat("Bearer ", token_));
      v1::ListWorkersResponse response;
      const grpc::Status status =
          coordinator_->ListWorkers(&context, v1::ListWorkersRequest(), &response);
      if (!status.ok()) return FromGrpc(status, "Coordinator.ListWorkers");
      healthy = 0;
      for (const v1::WorkerStatus& worker : response.workers()) {
        if (worker.healthy() && worker.info().target() == "host") ++healthy;
      }
      if (healthy >= count) return absl::OkStatus();
      absl::SleepFor(absl::Milliseconds(100));
    }
    return absl::DeadlineExceededError(absl::StrFormat(
        "%d healthy host workers after %s; wanted %d", healthy, absl::FormatDuration(kWorkerWait),
        count));
  }

 private:
  static double Millis(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }

  const v1::EvaluationRequest request_;
  const std::string token_;
  std::unique_ptr<v1::Coordinator::Stub> coordinator_;
  std::unique_ptr<v1::Worker::Stub> worker_;
  std::string job_credential_;  // for the worker
  std::atomic<int> direct_count_{0};
};

struct Summary {
  double median = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
};

Summary Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  Summary s;
  const size_t n = ms.size();
  s.median = n % 2 == 1 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  s.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / n;
  s.min = ms.front();
  s.max = ms.back();
  return s;
}

nlohmann::json ToJson(const Summary& s) {
  return {{"median_ms", s.median}, {"mean_ms", s.mean}, {"min_ms", s.min}, {"max_ms", s.max}};
}

absl::Status RunOverhead(Paths& paths, int n, bool json) {
  if (n < 1) return absl::InvalidArgumentError("--n: must be at least 1");
  // Warm-up: the first evaluation compiles; the rest hit the cache.
  if (absl::StatusOr<double> ms = paths.Direct(); !ms.ok()) return ms.status();
  if (absl::StatusOr<double> ms = paths.ThroughCoordinator(); !ms.ok()) return ms.status();
  std::vector<double> direct, coordinator;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<double> a = paths.Direct();
    if (!a.ok()) return a.status();
    direct.push_back(*a);
    absl::StatusOr<double> b = paths.ThroughCoordinator();
    if (!b.ok()) return b.status();
    coordinator.push_back(*b);
  }
  const Summary d = Summarize(direct);
  const Summary c = Summarize(coordinator);
  if (json) {
    const nlohmann::json out = {
        {"phase", "overhead"},
        {"n", n},
        {"direct", ToJson(d)},
        {"coordinator", ToJson(c)},
        {"ratio_median", c.median / d.median},
        {"ratio_mean", c.mean / d.mean},
        {"difference_median_ms", c.median - d.median},
        {"difference_mean_ms", c.mean - d.mean},
    };
    std::printf("%s\n", out.dump().c_str());
    return absl::OkStatus();
  }
  std::printf("overhead: %d evaluations per path, interleaved\n", n);
  std::printf("  %-12s %10s %10s %10s %10s\n", "path", "median ms", "mean ms", "min ms", "max ms");
  for (const auto& [name, s] : {std::pair<const char*, Summary>{"direct", d}, {"coordinator", c}}) {
    std::printf("  %-12s %10.1f %10.1f %10.1f %10.1f\n", name, s.median, s.mean, s.min, s.max);
  }
  std::printf("  coordinator/direct: %.3fx median (%+.1f ms), %.3fx mean (%+.1f ms)\n",
              c.median / d.median, c.median - d.median, c.mean / d.mean, c.mean - d.mean);
  return absl::OkStatus();
}

absl::Status RunThroughput(Paths& paths, int m, int threads, int workers, bool json) {
  if (m < 1) return absl::InvalidArgumentError("--m: must be at least 1");
  if (threads <= 0) threads = m;
  threads = std::min(threads, m);
  // Warm-up: one evaluation per worker fills their compile caches.
  {
    std::vector<std::thread> warm;
    std::vector<absl::Status> statuses(workers);
    for (int i = 0; i < workers; ++i) {
      warm.emplace_back([&paths, &statuses, i] { statuses[i] = paths.ThroughCoordinator().status(); });
    }
    for (std::thread& t : warm) t.join();
    for (const absl::Status& s : statuses) {
      if (!s.ok()) return s;
    }
  }
  std::atomic<int> next{0};
  std::vector<absl::Status> statuses(m);
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next.fetch_add(1); i < m; i = next.fetch_add(1)) {
        statuses[i] = paths.ThroughCoordinator().status();
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const absl::Status& s : statuses) {
    if (!s.ok()) return s;
  }
  const double rate = m / seconds;
  if (json) {
    const nlohmann::json out = {{"phase", "throughput"}, {"workers", workers}, {"m", m},
                                {"threads", threads},   {"seconds", seconds}, {"evals_per_s", rate}};
    std::printf("%s\n", out.dump().c_str());
    return absl::OkStatus();
  }
  std::printf("throughput: %d host worker(s), %d evaluations from %d threads: %.2f s, %.2f evals/s\n",
              workers, m, threads, seconds, rate);
  return absl::OkStatus();
}

double Percentile(std::vector<double> ms, double p) {
  std::sort(ms.begin(), ms.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * ms.size()));
  return ms[std::min(ms.size() - 1, rank == 0 ? 0 : rank - 1)];
}

absl::Status RunLatency(Paths& paths, int burst, int threads, double idle_seconds, bool json) {
  if (burst < 1) return absl::InvalidArgumentError("--burst: must be at least 1");
  if (threads <= 0) threads = 8;
  absl::StatusOr<std::string> known = paths.SubmitOnly();
  if (!known.ok()) return known.status();
  const std::vector<std::string> rpcs = {"ListWorkers", "GetEvaluation"};
  // Probes the cheap RPCs in turn until `stop`; latencies by RPC.
  auto probe = [&](const std::atomic<bool>& stop, std::vector<std::vector<double>>* out,
                   absl::Status* error) {
    for (size_t i = 0; !stop; ++i) {
      absl::StatusOr<double> ms = paths.Cheap(rpcs[i % rpcs.size()], *known);
      if (!ms.ok()) {
        *error = ms.status();
        return;
      }
      (*out)[i % rpcs.size()].push_back(*ms);
    }
  };
  std::vector<std::vector<double>> idle(rpcs.size()), loaded(rpcs.size());
  absl::Status probe_error;
  {
    std::atomic<bool> stop{false};
    std::thread prober(probe, std::cref(stop), &idle, &probe_error);
    absl::SleepFor(absl::Seconds(idle_seconds));
    stop = true;
    prober.join();
  }
  if (!probe_error.ok()) return probe_error;

  std::vector<std::string> ids(burst);
  std::vector<absl::Status> statuses(burst);
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::thread prober(probe, std::cref(stop), &loaded, &probe_error);
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next.fetch_add(1); i < burst; i = next.fetch_add(1)) {
        absl::StatusOr<std::string> id = paths.SubmitOnly();
        statuses[i] = id.status();
        if (id.ok()) ids[i] = *id;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  stop = true;
  prober.join();
  int accepted = 0;
  absl::Status first_error;
  for (const absl::Status& st : statuses) {
    if (st.ok()) {
      ++accepted;
    } else if (first_error.ok()) {
      first_error = st;
    }
  }
  for (const std::string& id : ids) {
    if (!id.empty()) paths.Cancel(id).IgnoreError();
  }
  paths.Cancel(*known).IgnoreError();
  if (!probe_error.ok()) return probe_error;
  for (const auto& samples : loaded) {
    if (samples.empty()) return absl::InternalError("no cheap call completed during the burst");
  }

  if (json) {
    nlohmann::json out = {{"phase", "latency"},   {"burst", burst},        {"threads", threads},
                          {"accepted", accepted}, {"burst_seconds", seconds},
                          {"submissions_per_s", burst / seconds}};
    if (!first_error.ok()) out["first_error"] = first_error.ToString();
    for (size_t r = 0; r < rpcs.size(); ++r) {
      for (const auto& [when, samples] : {std::pair<const char*, const std::vector<double>*>{"idle", &idle[r]},
                                          {"under_load", &loaded[r]}}) {
        out[rpcs[r]][when] = {{"n", samples->size()},
                              {"p50_ms", Percentile(*samples, 50)},
                              {"p99_ms", Percentile(*samples, 99)},
                              {"max_ms", Percentile(*samples, 100)}};
      }
    }
    std::printf("%s\n", out.dump().c_str());
    return absl::OkStatus();
  }
  std::printf("latency: burst of %d submissions from %d threads: %d accepted in %.2f s (%.0f/s)%s\n", burst,
              threads, accepted, seconds, burst / seconds,
              first_error.ok() ? "" : absl::StrCat("; first refusal: ", first_error.ToString()).c_str());
  std::printf("  %-14s %-11s %6s %9s %9s %9s\n", "rpc", "when", "n", "p50 ms", "p99 ms", "max ms");
  for (size_t r = 0; r < rpcs.size(); ++r) {
    for (const auto& [when, samples] :
         {std::pair<const char*, const std::vector<double>*>{"idle", &idle[r]}, {"under load", &loaded[r]}}) {
      std::printf("  %-14s %-11s %6zu %9.2f %9.2f %9.2f\n", rpcs[r].c_str(), when, samples->size(),
                  Percentile(*samples, 50), Percentile(*samples, 99), Percentile(*samples, 100));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::EvaluationRequest> BuildRequest() {
  v1::EvaluationRequest request;
  absl::StatusOr<v1::TaskFiles> files = kseek::PackTask(absl::GetFlag(FLAGS_task), kseek::Target::kHost);
  if (!files.ok()) return files.status();
  *request.mutable_task() = *std::move(files);
  request.set_target("host");
  const std::string kernel = absl::GetFlag(FLAGS_kernel);
  absl::StatusOr<std::string> source = kseek::ReadFile(kernel);
  if (!source.ok()) return source.status();
  request.set_kernel_source(*std::move(source));
  const size_t slash = kernel.find_last_of('/');
  request.set_kernel_name(slash == std::string::npos ? kernel : kernel.substr(slash + 1));
  request.add_scenario_names(absl::GetFlag(FLAGS_scenario));
  request.mutable_timing()->set_disabled(true);
  return request;
}

absl::Status Run() {
  const std::string phase = absl::GetFlag(FLAGS_phase);
  if (phase != "overhead" && phase != "throughput" && phase != "latency") {
    return absl::InvalidArgumentError("--phase: overhead, throughput or latency");
  }
  for (const auto& [name, value] :
       {std::pair<const char*, std::string>{"--coordinator", absl::GetFlag(FLAGS_coordinator)},
        {"--token-file", absl::GetFlag(FLAGS_token_file)},
        {"--task", absl::GetFlag(FLAGS_task)},
        {"--kernel", absl::GetFlag(FLAGS_kernel)},
        {"--scenario", absl::GetFlag(FLAGS_scenario)}}) {
    if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": required"));
  }
  if (phase == "overhead" && absl::GetFlag(FLAGS_worker).empty()) {
    return absl::InvalidArgumentError("--worker: required for --phase overhead");
  }
  if (phase == "overhead" && absl::GetFlag(FLAGS_job_credential_file).empty()) {
    return absl::InvalidArgumentError("--job-credential-file: required for --phase overhead");
  }
  absl::StatusOr<std::string> token = kseek::ReadFile(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) return token.status();
  absl::StatusOr<v1::EvaluationRequest> request = BuildRequest();
  if (!request.ok()) return request.status();

  Paths paths(*std::move(request), std::string(absl::StripAsciiWhitespace(*token)));
  paths.ConnectCoordinator(absl::GetFlag(FLAGS_coordinator));
  const int workers = absl::GetFlag(FLAGS_wait_workers);
  if (absl::Status s = paths.WaitForWorkers(workers); !s.ok()) return s;
  if (phase == "overhead") {
    absl::StatusOr<std::string> credential =
        kseek::ReadFile(absl::GetFlag(FLAGS_job_credential_file));
    if (!credential.ok()) return credential.status();
    paths.ConnectWorker(absl::GetFlag(FLAGS_worker),
                        std::string(absl::StripAsciiWhitespace(*credential)));
    return RunOverhead(paths, absl::GetFlag(FLAGS_n), absl::GetFlag(FLAGS_json));
  }
  if (phase == "latency") {
    return RunLatency(paths, absl::GetFlag(FLAGS_burst), absl::GetFlag(FLAGS_threads),
                      absl::GetFlag(FLAGS_idle_seconds), absl::GetFlag(FLAGS_json));
  }
  return RunThroughput(paths, absl::GetFlag(FLAGS_m), absl::GetFlag(FLAGS_threads), workers,
                       absl::GetFlag(FLAGS_json));
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "kseek-service-bench --phase overhead|throughput|latency --coordinator ADDR --token-file FILE "
      "[--worker ADDR] --task DIR --kernel FILE --scenario NAME [--n 20] [--m 20] [--threads 0] [--burst 1000] [--idle-seconds 5] [--wait-workers 1] [--json]");
  // Flags are documented with dashes (--token-file), as for the servers;
  // Abseil names them with underscores.
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    std::string& a = args[i];
    if (a.compare(0, 2, "--") != 0) continue;
    const size_t end = std::min(a.find('='), a.size());
    std::replace(a.begin() + 2, a.begin() + end, '-', '_');
  }
  std::vector<char*> argp;
  for (std::string& a : args) argp.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(argp.size()), argp.data());
  const absl::Status status = Run();
  if (!status.ok()) {
    std::fprintf(stderr, "kseek-service-bench: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
