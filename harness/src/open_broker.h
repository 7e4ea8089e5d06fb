// The judge's answer to a kernel host's opens for writing (sandbox.h,
// SeccompOptions::supervise_opens).
//
// A kernel host opens the GPU before its filter is installed, but the
// driver opens its device files again later (to map a memory pool's
// memory, for one); the filter cannot read a path, so it hands each open
// for writing that neither creates nor truncates to this broker, in the
// judge, through the filter's listener. The broker reads the path from the
// host's memory, and opens it itself only when it names a character device
// of the GPU's driver (a major number that /proc/devices gives a name
// starting with "nvidia") or /dev/null; the descriptor it got goes into the
// host as the open's result (SECCOMP_IOCTL_NOTIF_ADDFD). Anything else is
// refused with EPERM, and the broker writes to the host's log the line the
// filter writes for what it refuses itself ("kseek sandbox: system call N
// (openat for writing PATH) refused"), for the first kBrokerLoggedRefusals
// refusals, then once that further ones go unlogged: the judge's writes are
// not under the host's file-size limit, so a host that floods the broker
// with opens cannot fill the disk through them. Files are opened by the
// broker, not by the host, so a path the host changes after the broker read
// it cannot open something else; and the broker looks the path up once
// (O_PATH, which opens nothing), checks that file and opens that very file
// through /proc/self/fd, so a symlink swapped between its check and its
// open cannot make it open another one (as root, a device whose open alone
// acts, or a FIFO whose open would block the broker); a host gains nothing it does not hold already (it
// has the driver's files open since before its filter).
//
// One thread per broker; the destructor stops it.
#ifndef KERNELSEEK_HARNESS_OPEN_BROKER_H_
#define KERNELSEEK_HARNESS_OPEN_BROKER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace kseek {

// The refusals a broker writes to the host's log, each on a line of its
// own; past them one line says that further refusals go unlogged.
inline constexpr int kBrokerLoggedRefusals = 16;

// Whether a character device `rdev` may be opened for a kernel host: the
// GPU driver's (majors from `proc_devices`, the text of /proc/devices) or
// /dev/null.
bool BrokerMayOpen(dev_t rdev, const std::string& proc_devices);

class OpenBroker {
 public:
  // Takes `listener` (closed by the destructor, or here when it fails and
  // returns nullptr); appends its refusals to the file at `log_path`.
  static std::unique_ptr<OpenBroker> Start(int listener, std::string log_path);
  ~OpenBroker();

  OpenBroker(const OpenBroker&) = delete;
  OpenBroker& operator=(const OpenBroker&) = delete;

 private:
  OpenBroker() = default;
  void Loop();
  void Answer();  // one request
  // Answers request `id`: the call returns `value`, or fails with `error`.
  void Respond(uint64_t id, int64_t value, int error);

  int listener_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: the destructor's byte ends Loop
  std::string log_path_;
  std::string proc_devices_;
  size_t request_bytes_ = 0;
  size_t response_bytes_ = 0;
  int refusals_ = 0;  // written to the log so far (the broker's thread only)
  std::thread thread_;
};

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_OPEN_BROKER_H_
