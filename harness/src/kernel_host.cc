// Kernel hosts (kernel_host.h): the judge's side and the host's own loop.
#include "harness/src/kernel_host.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "harness/src/runner_data.h"
#include "harness/src/runner_protocol.h"
#include "harness/src/runner_scenario.h"
#include "harness/src/sandbox.h"
#include "nlohmann/json.hpp"

namespace kseek {

using nlohmann::json;

namespace {

constexpr size_t kMaxPacket = size_t{1} << 20;
constexpr int kHostSocketFd = 3;
constexpr int kHostLibraryFd = 4;
constexpr size_t kMaxMessage = 500;

// The host's answer to "go".
struct GoReply {
  int32_t status = 0;  // 0 called, 1 device error (ask last_error), 2 nothing armed
  int32_t rc = 0;
  double device_ms = 0;
  double host_ms = 0;
  double cpu_ms = 0;  // timed calls: the process's CPU time over the call
};

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Sends one packet, with `fd` attached when >= 0.
bool SendPacket(int sock, const std::string& text, int fd) {
  iovec iov{const_cast<char*>(text.data()), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  while (true) {
    const ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n) == text.size();
    if (errno != EINTR) return false;
  }
}

// How long a process polls for the message that ends a wait inside the
// judge's clock before it blocks. On GPU targets the judge waits for a
// call's reply, and the host for the `go` of a timed call, by polling:
// a process asleep in recv pays the CPU's wake-up from an idle state,
// which differs between processes and from one moment to the next (it was
// up to 0.5 ms per call between two honest processes on the H200 machine)
// and would read as work hidden from the timing.
constexpr auto kSpinWait = std::chrono::milliseconds(250);

// Receives one packet (and a descriptor when `fd` is not null); false at
// end of file or on an error. With `spin`, polls for up to kSpinWait
// before it blocks.
bool ReceivePacket(int sock, std::string* text, int* fd, bool spin = false) {
  // One buffer for every packet: resizing a string to the largest packet
  // on every call would write a megabyte each time.
  static char* const buffer = new char[kMaxPacket];
  iovec iov{buffer, kMaxPacket};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  // Nothing yet (or interrupted): poll on while spinning, then block.
  auto nothing_yet = [](ssize_t n) {
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  };
  const auto until = std::chrono::steady_clock::now() + kSpinWait;
  ssize_t n;
  do {
    msg.msg_controllen = sizeof(control);
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (spin && nothing_yet(n) && std::chrono::steady_clock::now() < until);
  while (nothing_yet(n)) {
    msg.msg_controllen = sizeof(control);
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  }
  if (n <= 0) return false;
  text->assign(buffer, static_cast<size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int got = -1;
    memcpy(&got, CMSG_DATA(c), sizeof(int));
    if (fd != nullptr && *fd < 0) {
      *fd = got;
    } else {
      close(got);  // nobody asked for it
    }
  }
  return true;
}

}  // namespace

double ClockMs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// ---------------------------------------------------------------------------
// The judge's side.

// A sealed memfd holding the file at `path`.
absl::StatusOr<int> SealedCopy(const std::string& path) {
  const int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", strerror(errno)));
  const int fd = memfd_create("kseek-kernel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    close(in);
    return absl::InternalError(absl::StrCat("memfd_create: ", strerror(errno)));
  }
  char buf[1 << 16];
  ssize_t n;
  bool ok = true;
  while (ok && (n = read(in, buf, sizeof(buf))) != 0) {
    if (n < 0) {
      ok = errno == EINTR;
      continue;
    }
    ok = write(fd, buf, static_cast<size_t>(n)) == n;
  }
  close(in);
  if (!ok || fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int err = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("copying ", path, ": ", strerror(err)));
  }
  return fd;
}

bool KernelHostRunsAs(const std::string& runner_path, uid_t uid, gid_t gid, std::string* why) {
  ChildSpec spec;
  spec.path = runner_path;
  spec.argv = {runner_path, "--kernel-host", "--probe"};
  spec.uid = uid;
  spec.gid = gid;
  absl::StatusOr<FinishedChild> run = RunToEnd(spec, absl::Seconds(30));
  if (!run.ok()) {
    *why = std::string(run.status().message());
    return false;
  }
  if (run->exit_code == 0) return true;
  *why = absl::StrCat("the runner ", run->description, ": ", run->output.substr(0, 300));
  return false;
}

absl::StatusOr<std::unique_ptr<KernelHost>> KernelHost::Start(const KernelHostOptions& options) {
  absl::StatusOr<int> library = SealedCopy(options.library);
  if (!library.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot load the ", options.role,
                                                      " library: ", library.status().message()));
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  ChildSpec spec;
  spec.path = options.runner_path;
  spec.argv = {options.runner_path, "--kernel-host",
               "--library", options.library,
               "--role", options.role,
               "--target", std::string(TargetName(options.target)),
               "--gpu", std::to_string(options.gpu)};
  if (options.seccomp) spec.argv.push_back("--seccomp");
  spec.env = options.env;
  spec.stdout_to = ChildOutput::kFile;
  spec.stderr_to = ChildOutput::kFile;
  spec.output_file = options.log_path;
  spec.pass_fds = {{sv[1], kHostSocketFd}, {*library, kHostLibraryFd}};
  spec.uid = options.uid;
  spec.gid = options.gid;
  spec.new_session = true;
  spec.die_with_parent = true;
  spec.rlimits = {{RLIMIT_CORE, 0}, {RLIMIT_FSIZE, uint64_t{1} << 30}, {RLIMIT_NOFILE, 4096}};
  if (options.isolate_network) spec.unshare_flags = CLONE_NEWNET;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  close(sv[1]);
  close(*library);
  if (!child.ok()) {
    close(sv[0]);
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start the ", options.role, "'s process: ", child.status().message()));
  }
  std::unique_ptr<KernelHost> host(new KernelHost());
  host->options_ = options;
  host->child_ = std::move(*child);
  host->socket_ = sv[0];
  absl::StatusOr<std::string> hello = host->Receive(false, &host->broker_);
  if (!hello.ok()) return absl::FailedPreconditionError(hello.status().message());
  json j = json::parse(*hello, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    host->Died("");
    return absl::FailedPreconditionError(j["error"].get<std::string>());
  }
  if (!j.is_object() || j.value("ready", false) != true) {
    return absl::FailedPreconditionError(
        host->Died(absl::StrCat("sent a bad first message: ", hello->substr(0, 200))));
  }
  return host;
}

KernelHost::~KernelHost() {
  if (socket_ >= 0) close(socket_);
  // ChildProcess's destructor kills what is left of its group.
}

std::string KernelHost::Died(const std::string& what) {
  if (!dead_) {
    dead_ = true;
    child_->Kill();
    child_->Wait(absl::Now() + absl::Seconds(5));
  }
  std::string text = absl::StrCat("the ", options_.role, "'s process ",
                                  what.empty() ? child_->ExitDescription() : what);
  const std::string tail = LogTail();
  if (!tail.empty()) absl::StrAppend(&text, "; its last output:\n", tail);
  return text;
}

std::string KernelHost::LogTail() const { return LastLinesOfFile(options_.log_path); }

uint64_t KernelHost::LogBytes() const {
  struct stat st {};
  return stat(options_.log_path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

std::string KernelHost::LogSince(uint64_t offset, size_t max_bytes) const {
  const uint64_t end = LogBytes();
  if (end <= offset) return "";
  const int fd = open(options_.log_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  // The last max_bytes of what came after offset (and a little more, for
  // whole lines).
  const uint64_t from = end - offset > 2 * max_bytes ? end - 2 * max_bytes : offset;
  std::string text(static_cast<size_t>(end - from), '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), static_cast<off_t>(from));
  close(fd);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (from > offset && !lines.empty()) lines.erase(lines.begin());  // a partial first line
  std::string out = absl::StrJoin(lines, " | ");
  if (out.size() > max_bytes) out = "..." + out.substr(out.size() - max_bytes);
  return out;
}

absl::Status KernelHost::Send(const std::string& text, int fd) {
  if (dead_) return absl::AbortedError(Died(""));
  if (!SendPacket(socket_, text, fd)) return absl::AbortedError(Died(""));
  return absl::OkStatus();
}

absl::StatusOr<std::string> KernelHost::Receive(bool spin, std::unique_ptr<OpenBroker>* broker) {
  if (dead_) return absl::AbortedError(Died(""));
  std::string text;
  int fd = -1;
  if (!ReceivePacket(socket_, &text, broker != nullptr ? &fd : nullptr, spin)) {
    return absl::AbortedError(Died(""));
  }
  if (broker == nullptr) return text;
  // A sandboxed host's first packet may be its filter's listener, before
  // it loads the library: from then on the judge answers its opens.
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (fd >= 0 && j.is_object() && j.value("listener", false) == true && *broker == nullptr) {
    // Start takes the listener; where it fails, the host's opens for
    // writing fail (ENOSYS) as the listener closes.
    *broker = OpenBroker::Start(fd, options_.log_path);
    return Receive(spin);
  }
  if (fd >= 0) close(fd);
  return text;
}

absl::Status KernelHost::Map(int id, const SharedAllocation& a) {
  json m{{"op", "map"}, {"id", id}, {"bytes", a.bytes}, {"handle", absl::BytesToHexString(a.handle)}};
  absl::Status st = Send(Dump(m), a.fd);
  if (!st.ok()) return st;
  absl::StatusOr<std::string> reply = Receive();
  if (!reply.ok()) return reply.status();
  json r = json::parse(*reply, nullptr, false);
  if (r.is_object() && r.value("ok", false) == true) return absl::OkStatus();
  if (r.is_object() && r.contains("error") && r["error"].is_string()) {
    return absl::InternalError(absl::StrCat("the ", options_.role, "'s process could not map a buffer: ",
                                            r["error"].get<std::string>()));
  }
  return absl::AbortedError(Died(absl::StrCat("answered a map with: ", reply->substr(0, 200))));
}

absl::Status KernelHost::Unmap(int id) {
  absl::Status st = Send(Dump(json{{"op", "unmap"}, {"id", id}}));
  if (!st.ok()) return st;
  absl::StatusOr<std::string> reply = Receive();
  if (!reply.ok()) return reply.status();
  return absl::OkStatus();
}

absl::Status KernelHost::Arm(const std::vector<std::pair<std::string, int64_t>>& params,
                             const std::vector<HostTensor>& tensors, bool timed) {
  json ps = json::array();
  for (const auto& [name, value] : params) ps.push_back(json::array({name, value}));
  json ts = json::array();
  for (const HostTensor& t : tensors) {
    ts.push_back({{"id", t.id}, {"offset", t.offset}, {"name", t.name},
                  {"dtype", static_cast<int>(t.dtype)}, {"shape", t.shape}});
  }
  absl::Status st = Send(Dump(json{{"op", "arm"}, {"timed", timed}, {"params", ps}, {"tensors", ts}}));
  if (!st.ok()) return st;
  absl::StatusOr<std::string> reply = Receive();
  if (!reply.ok()) return reply.status();
  json r = json::parse(*reply, nullptr, false);
  if (r.is_object() && r.value("ok", false) == true) return absl::OkStatus();
  return absl::AbortedError(Died(absl::StrCat("answered a call with: ", reply->substr(0, 200))));
}

absl::Status KernelHost::Ping() {
  absl::Status st = Send("p");
  if (!st.ok()) return st;
  absl::StatusOr<std::string> reply = Receive();
  if (!reply.ok()) return reply.status();
  if (*reply != "p") return absl::AbortedError(Died("answered a ping with something else"));
  return absl::OkStatus();
}

absl::StatusOr<HostCall> KernelHost::Go() {
  absl::Status st = Send("g");
  if (!st.ok()) return st;
  absl::StatusOr<std::string> reply = Receive(/*spin=*/options_.target != Target::kHost);
  if (!reply.ok()) return reply.status();
  GoReply g;
  if (reply->size() != sizeof(g)) {
    return absl::AbortedError(
        Died(absl::StrCat("answered a call with a malformed message: ", reply->substr(0, 200))));
  }
  memcpy(&g, reply->data(), sizeof(g));
  HostCall c;
  c.rc = g.rc;
  c.device_ms = g.device_ms;
  c.host_ms = g.host_ms;
  c.cpu_ms = g.cpu_ms;
  if (g.status == 0 && g.rc == 0) return c;
  if (g.status == 2) return absl::AbortedError(Died("was told to call without a call armed"));
  st = Send(Dump(json{{"op", "last_error"}}));
  if (!st.ok()) return st;
  reply = Receive();
  if (!reply.ok()) return reply.status();
  json r = json::parse(*reply, nullptr, false);
  const std::string text =
      r.is_object() && r.contains("error") && r["error"].is_string() ? r["error"].get<std::string>() : "";
  if (g.status == 1) {
    Died("");
    return absl::InternalError(absl::StrCat("device error ", text));
  }
  c.message = text.substr(0, kMaxMessage);
  return c;
}

// ---------------------------------------------------------------------------
// The host's side.

namespace {

// Gives up every capability (bounding, ambient, effective, permitted,
// inheritable): a host that runs as root owns no privilege.
void DropCapabilities() {
  for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  syscall(SYS_capset, &header, data);
}

int Fail(int sock, const std::string& error) {
  SendPacket(sock, Dump(json{{"error", error}}), -1);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(2);
}

}  // namespace

int ServeKernel(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  // Stopping is the judge's decision (it kills the session it started).
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) signal(sig, SIG_IGN);
  std::string library, role = "kernel", target_name;
  int gpu = 0;
  bool seccomp = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--probe") _exit(0);  // KernelHostRunsAs
    if (arg == "--library" && i + 1 < argc) library = argv[++i];
    else if (arg == "--role" && i + 1 < argc) role = argv[++i];
    else if (arg == "--target" && i + 1 < argc) target_name = argv[++i];
    else if (arg == "--gpu" && i + 1 < argc) (void)absl::SimpleAtoi(argv[++i], &gpu);
    else if (arg == "--seccomp") seccomp = true;
  }
  const int sock = kHostSocketFd;
  absl::StatusOr<Target> target = ParseTarget(target_name);
  if (!target.ok()) return Fail(sock, std::string(target.status().message()));
  absl::StatusOr<std::unique_ptr<Device>> device =
      *target == Target::kHost ? OpenHostDevice() : OpenCudaDevice(*target, gpu);
  if (!device.ok()) return Fail(sock, std::string(device.status().message()));
  DropCapabilities();
  if (seccomp) {
    SeccompOptions so;
    so.allow_threads = *target != Target::kHost;
    so.supervise_opens = true;
    int listener = -1;
    absl::Status st = InstallSeccomp(so, &listener);
    if (!st.ok()) return Fail(sock, absl::StrCat("cannot sandbox the ", role, ": ", st.message()));
    // The judge answers the opens the filter hands over (open_broker.h);
    // this process keeps no copy of the listener.
    if (listener >= 0) {
      const bool sent = SendPacket(sock, Dump(json{{"listener", true}}), listener);
      close(listener);
      if (!sent) return 2;
    }
  }
  // Loaded under the sandbox: static constructors and ifunc resolvers are
  // the library's code.
  absl::StatusOr<Kernel> kernel =
      LoadKernel(absl::StrCat("/proc/self/fd/", kHostLibraryFd), role, library);
  if (!kernel.ok()) return Fail(sock, std::string(kernel.status().message()));
  if (!SendPacket(sock, Dump(json{{"ready", true}}), -1)) return 2;

  struct Mapped {
    void* base = nullptr;
    size_t bytes = 0;
  };
  std::map<int, Mapped> mapped;
  // The call the next "go" makes.
  struct Armed {
    bool ready = false;
    bool timed = false;
    std::vector<std::string> names;
    std::vector<kseek_param> params;
    std::vector<std::string> tensor_names;
    std::vector<kseek_tensor> tensors;
  } armed;
  std::string last_error;
  bool device_broken = false;
  bool awaiting_go = false;  // a timed call was just armed
  std::string text;
  while (true) {
    int fd = -1;
    // A timed call's `go` comes within moments of its `arm`.
    const bool spin = awaiting_go;
    awaiting_go = false;
    if (!ReceivePacket(sock, &text, &fd, spin)) break;  // the judge is done
    if (text == "p") {  // a ping: answered at once
      if (!SendPacket(sock, "p", -1)) break;
      continue;
    }
    const bool go = text == "g";
    json m = go ? json() : json::parse(text, nullptr, false);
    json reply;
    try {
      const std::string op = go ? "go" : m.at("op").get<std::string>();
      if (op == "map") {
        SharedAllocation a;
        a.fd = fd;
        a.bytes = m.at("bytes").get<size_t>();
        a.handle = absl::HexStringToBytes(m.at("handle").get<std::string>());
        absl::StatusOr<void*> p = (*device)->Map(a);
        if (fd >= 0) close(fd);
        fd = -1;
        if (p.ok()) {
          mapped[m.at("id").get<int>()] = Mapped{*p, a.bytes};
          reply = json{{"ok", true}};
        } else {
          reply = json{{"error", std::string(p.status().message())}};
        }
      } else if (op == "unmap") {
        auto it = mapped.find(m.at("id").get<int>());
        if (it != mapped.end()) {
          (*device)->Unmap(it->second.base, it->second.bytes);
          mapped.erase(it);
        }
        reply = json{{"ok", true}};
      } else if (op == "arm") {
        armed = Armed();
        for (const json& p : m.at("params")) armed.names.push_back(p.at(0).get<std::string>());
        size_t i = 0;
        for (const json& p : m.at("params")) {
          armed.params.push_back(kseek_param{armed.names[i++].c_str(), p.at(1).get<int64_t>()});
        }
        const json& ts = m.at("tensors");
        for (const json& t : ts) armed.tensor_names.push_back(t.at("name").get<std::string>());
        armed.tensors.resize(ts.size());
        bool bad = false;
        for (size_t t = 0; t < ts.size(); ++t) {
          kseek_tensor& x = armed.tensors[t];
          auto it = mapped.find(ts[t].at("id").get<int>());
          const size_t offset = ts[t].at("offset").get<size_t>();
          if (it == mapped.end() || offset > it->second.bytes) {
            bad = true;
            break;
          }
          x = ContiguousTensor(armed.tensor_names[t].c_str(),
                               static_cast<unsigned char*>(it->second.base) + offset,
                               ts[t].at("dtype").get<int32_t>(),
                               ts[t].at("shape").get<std::vector<int64_t>>());
        }
        armed.timed = m.at("timed").get<bool>();
        armed.ready = !bad;
        awaiting_go = armed.ready && armed.timed && (*device)->has_device_clock();
        reply = bad ? json{{"error", "a call named a buffer that is not mapped"}} : json{{"ok", true}};
      } else if (op == "go") {
        // The call itself: a short binary reply, so that as little as
        // possible lies between the judge's clocks and the kernel.
        GoReply g;
        if (!armed.ready) {
          g.status = 2;
        } else {
          // Rebuilt from the armed copy: a kernel may scribble on what it got.
          std::vector<kseek_param> params = armed.params;
          std::vector<kseek_tensor> tensors = armed.tensors;
          kseek_launch_args args{};
          args.abi_version = KSEEK_ABI_VERSION;
          args.num_params = static_cast<int32_t>(params.size());
          args.params = params.data();
          args.num_tensors = static_cast<int32_t>(tensors.size());
          args.tensors = tensors.data();
          args.stream = (*device)->stream();
          Sample sample;
          absl::Status st;
          if (armed.timed) {
            const double cpu0 = ClockMs(CLOCK_PROCESS_CPUTIME_ID);
            absl::StatusOr<Sample> t = (*device)->TimedCall([&] { return kernel->launch(&args); });
            g.cpu_ms = ClockMs(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
            if (t.ok()) sample = *t;
            else st = t.status();
          } else {
            sample.rc = kernel->launch(&args);
            st = (*device)->Synchronize();
          }
          g.rc = sample.rc;
          g.device_ms = sample.device_ms;
          g.host_ms = sample.host_ms;
          if (!st.ok()) {
            g.status = 1;
            last_error = std::string(st.message());
          } else if (sample.rc != 0 && kernel->error_message != nullptr) {
            const char* msg = kernel->error_message();
            last_error = msg != nullptr ? std::string(msg).substr(0, kMaxMessage) : "";
          }
        }
        if (!SendPacket(sock, std::string(reinterpret_cast<const char*>(&g), sizeof(g)), -1)) break;
        if (g.status == 1) device_broken = true;
        continue;
      } else if (op == "last_error") {
        reply = json{{"error", last_error}, {"device", device_broken}};
        if (!SendPacket(sock, Dump(reply), -1)) break;
        if (device_broken) break;  // a broken context: the judge starts a new host
        continue;
      } else {
        reply = json{{"error", absl::StrCat("unknown op '", op, "'")}};
      }
    } catch (const json::exception& e) {
      reply = json{{"error", absl::StrCat("malformed request: ", e.what())}};
    }
    if (fd >= 0) close(fd);
    if (!SendPacket(sock, Dump(reply), -1)) break;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  // Skip static destructors: the library may have its own.
  _exit(0);
}

}  // namespace kseek
