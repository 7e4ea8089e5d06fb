// The compile driver (see compile.h): runs nvcc or c++ as a child process
// with the target's flags, captures its output and the ptxas resource
// report, and keeps successful results in an on-disk cache.
//
// A cache entry under `cache_dir` is three files named by the key:
//   <key>.so   the library
//   <key>.log  the compiler output
//   <key>.cmd  the command line
// In the .log and .cmd the source's path is written as @SOURCE@; the
// caller's source_name takes its place when they are returned.
// The .so is renamed into place last, so its presence means the entry is
// complete. Failed compiles are never cached.
#include "harness/src/compile.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/child_process.h"
#include "base/file.h"

namespace kseek {

namespace fs = std::filesystem;

namespace {

// Stands for the temporary source path in cached logs; replaced by the
// caller's source_name when a log is returned.
constexpr absl::string_view kSourceMarker = "@SOURCE@";

// How long `<compiler> --version` may take.
constexpr double kVersionTimeoutS = 60;

std::string GetEnv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// `name` as an executable path: itself when it holds a '/', else the first
// match on $PATH. Empty when not found.
std::string ResolveProgram(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) {
    return IsExecutableFile(name) ? name : "";
  }
  for (absl::string_view dir : absl::StrSplit(GetEnv("PATH"), ':')) {
    std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return "";
}

bool IsCuda(Target t) { return t != Target::kHost; }

// What CompilerFor looks at, for the error when nothing is found.
std::string CompilerSearchDescription(Target t) {
  if (IsCuda(t)) {
    return "looked for $KSEEK_NVCC, $CUDA_HOME/bin/nvcc, "
           "/usr/local/cuda/bin/nvcc and nvcc on PATH; install the CUDA "
           "toolkit or set KSEEK_NVCC to the path of nvcc";
  }
  return "looked for $KSEEK_CXX, $CXX and c++ on PATH; install a C++ "
         "compiler or set KSEEK_CXX to its path";
}

// Quotes `arg` for display in a POSIX shell when it needs it.
std::string ShellQuote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                                            "VWXYZ0123456789_-+=/.,:@%") == std::string::npos) {
    return arg;
  }
  return absl::StrCat("'", absl::StrReplaceAll(arg, {{"'", "'\\''"}}), "'");
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::vector<std::string> quoted;
  quoted.reserve(argv.size());
  for (const std::string& a : argv) quoted.push_back(ShellQuote(a));
  return absl::StrJoin(quoted, " ");
}

// Runs `argv` (no shell) in its own process group with stdin from
// /dev/null and stdout+stderr interleaved into one pipe. After `timeout_s`
// the whole group is killed, so compiler sub-processes (cicc, ptxas,
// cc1plus) go too. Errors only when the child cannot be started.
absl::StatusOr<FinishedChild> RunChild(const std::vector<std::string>& argv, double timeout_s) {
  ChildSpec spec;
  spec.argv = argv;
  return RunToEnd(std::move(spec), absl::Seconds(timeout_s));
}

// `<compiler> --version`, run once per compiler path in this process.
absl::StatusOr<std::string> CompilerVersion(const std::string& compiler) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* versions ABSL_GUARDED_BY(mu) = new std::map<std::string, std::string>;
  {
    absl::MutexLock lock(&mu);
    auto it = versions->find(compiler);
    if (it != versions->end()) return it->second;
  }
  absl::StatusOr<FinishedChild> run = RunChild({compiler, "--version"}, kVersionTimeoutS);
  if (!run.ok()) return run.status();
  if (run->timed_out || run->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        compiler, " --version failed: ",
        run->timed_out ? "timed out" : absl::StrCat("exit ", run->exit_code), "\n", run->output));
  }
  absl::MutexLock lock(&mu);
  return versions->emplace(compiler, run->output).first->second;
}

std::string HexSha256(const std::vector<std::string>& parts) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  for (const std::string& part : parts) {
    // Each part is prefixed by its length so that no two lists of parts
    // hash the same bytes.
    std::string len = absl::StrCat(part.size(), ":");
    EVP_DigestUpdate(ctx.get(), len.data(), len.size());
    EVP_DigestUpdate(ctx.get(), part.data(), part.size());
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &digest_len);
  std::string hex;
  for (unsigned int i = 0; i < digest_len; ++i) {
    absl::StrAppendFormat(&hex, "%02x", digest[i]);
  }
  return hex;
}

absl::Status WriteWholeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", path, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

// Writes `text` to `path` through a temporary name in the same folder.
absl::Status WriteAtomically(const std::string& path, const std::string& text,
                             const std::string& tmp_suffix) {
  std::string tmp = absl::StrCat(path, ".tmp", tmp_suffix);
  absl::Status s = WriteWholeFile(tmp, text);
  if (!s.ok()) return s;
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status err = absl::FailedPreconditionError(
        absl::StrCat("cannot rename ", tmp, " to ", path, ": ", strerror(errno)));
    unlink(tmp.c_str());
    return err;
  }
  return absl::OkStatus();
}

// The compiler flags for `target` without the output and source paths;
// these are what the cache key covers.
std::vector<std::string> TargetFlags(Target target, const std::vector<std::string>& includes) {
  std::vector<std::string> flags;
  switch (target) {
    case Target::kSm90a:
      flags.push_back("-gencode=arch=compute_90a,code=sm_90a");
      break;
    case Target::kSm100a:
      flags.push_back("-gencode=arch=compute_100a,code=sm_100a");
      break;
    case Target::kHost:
      break;
  }
  if (IsCuda(target)) {
    static const char* const kCudaFlags[] = {
#include "harness/src/cuda_flags.inc"
    };
    for (const char* f : kCudaFlags) flags.push_back(f);
  } else {
    for (const char* f : {"-O3", "-march=native", "-std=c++17", "-fPIC", "-shared"}) {
      flags.push_back(f);
    }
  }
  for (const std::string& dir : includes) {
    flags.push_back("-I");
    flags.push_back(dir);
  }
  return flags;
}

// Parses the decimal number that ends right before `pos` in `line`
// (spaces between allowed). False when there is none.
bool NumberBefore(absl::string_view line, size_t pos, int* value) {
  size_t end = pos;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && absl::ascii_isdigit(static_cast<unsigned char>(line[begin - 1]))) {
    --begin;
  }
  if (begin == end) return false;
  return absl::SimpleAtoi(line.substr(begin, end - begin), value);
}

// The number written before `phrase` in `line`, or 0.
int ValueOf(absl::string_view line, absl::string_view phrase) {
  size_t pos = line.find(phrase);
  int value = 0;
  if (pos == absl::string_view::npos || !NumberBefore(line, pos, &value)) {
    return 0;
  }
  return value;
}

std::string LogForCaller(const std::string& stored, const std::string& source_name) {
  return absl::StrReplaceAll(stored, {{kSourceMarker, source_name}});
}

// Fills the part of `out` that a cache entry provides. False when the entry
// is absent or incomplete.
bool LoadCacheEntry(const std::string& base, const std::string& source_name, CompileOutput* out) {
  std::string library = base + ".so";
  if (access(library.c_str(), R_OK) != 0) return false;
  absl::StatusOr<std::string> log = ReadFile(base + ".log");
  absl::StatusOr<std::string> command = ReadFile(base + ".cmd");
  if (!log.ok() || !command.ok()) return false;
  out->library = library;
  out->info.ok = true;
  out->info.cached = true;
  out->info.command = absl::StrReplaceAll(absl::StripTrailingAsciiWhitespace(*command),
                                          {{kSourceMarker, ShellQuote(source_name)}});
  out->info.log = LogForCaller(*log, source_name);
  ParsePtxasReport(out->info.log, &out->info);
  return true;
}

}  // namespace

std::string CompilerFor(Target t) {
  if (IsCuda(t)) {
    std::string explicit_nvcc = GetEnv("KSEEK_NVCC");
    if (!explicit_nvcc.empty()) return ResolveProgram(explicit_nvcc);
    std::string cuda_home = GetEnv("CUDA_HOME");
    if (!cuda_home.empty()) {
      std::string p = cuda_home + "/bin/nvcc";
      if (IsExecutableFile(p)) return p;
    }
    if (IsExecutableFile("/usr/local/cuda/bin/nvcc")) {
      return "/usr/local/cuda/bin/nvcc";
    }
    return ResolveProgram("nvcc");
  }
  for (const char* var : {"KSEEK_CXX", "CXX"}) {
    std::string v = GetEnv(var);
    if (!v.empty()) return ResolveProgram(v);
  }
  return ResolveProgram("c++");
}

void ParsePtxasReport(const std::string& log, CompileInfo* info) {
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (line.find(" registers") != absl::string_view::npos &&
        line.find("Used ") != absl::string_view::npos) {
      info->registers = std::max(info->registers, ValueOf(line, " registers"));
      info->smem_bytes = std::max(info->smem_bytes, ValueOf(line, " bytes smem"));
    }
    if (line.find("bytes stack frame") != absl::string_view::npos) {
      info->stack_bytes = std::max(info->stack_bytes, ValueOf(line, " bytes stack frame"));
      info->spill_bytes +=
          ValueOf(line, " bytes spill stores") + ValueOf(line, " bytes spill loads");
    }
  }
}

std::string AbiIncludeDir() {
  auto has_header = [](const std::string& dir) {
    return !dir.empty() && access((dir + "/kernelseek/abi.h").c_str(), R_OK) == 0;
  };
  std::string from_env = GetEnv("KSEEK_INCLUDE_DIR");
  if (has_header(from_env)) return from_env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string beside = (exe.parent_path().parent_path() / "include").string();
    if (has_header(beside)) return beside;
  }
  if (has_header(KSEEK_SOURCE_INCLUDE_DIR)) return KSEEK_SOURCE_INCLUDE_DIR;
  return "";
}

std::string DefaultCacheDir() {
  std::string dir = GetEnv("KSEEK_CACHE_DIR");
  if (!dir.empty()) return dir;
  std::string xdg = GetEnv("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg + "/kernelseek/compile";
  std::string home = GetEnv("HOME");
  if (home.empty()) {
    struct passwd pw;
    struct passwd* found = nullptr;
    char buf[4096];
    if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found) == 0 && found != nullptr &&
        found->pw_dir != nullptr) {
      home = found->pw_dir;
    }
  }
  if (home.empty()) home = "/tmp";
  return home + "/.cache/kernelseek/compile";
}

absl::StatusOr<CompileOutput> Compile(const CompileRequest& req) {
  const absl::Time start = absl::Now();
  const std::string compiler = CompilerFor(req.target);
  if (compiler.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no compiler found for target ",
                                                      TargetName(req.target), ": ",
                                                      CompilerSearchDescription(req.target)));
  }
  const std::string abi_dir = AbiIncludeDir();
  if (abi_dir.empty()) {
    return absl::FailedPreconditionError(
        "kernelseek/abi.h not found: looked in $KSEEK_INCLUDE_DIR, "
        "<executable dir>/../include and " KSEEK_SOURCE_INCLUDE_DIR
        "; set KSEEK_INCLUDE_DIR to the folder holding kernelseek/abi.h");
  }
  if (req.cache_dir.empty()) {
    return absl::InvalidArgumentError("compile request has no cache_dir");
  }
  std::error_code ec;
  const std::string cache_dir = fs::absolute(req.cache_dir, ec).string();
  fs::create_directories(cache_dir, ec);
  if (ec || access(cache_dir.c_str(), W_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("compile cache ", cache_dir,
                                                      " is not a writable folder",
                                                      ec ? absl::StrCat(": ", ec.message()) : ""));
  }

  std::vector<std::string> includes = {abi_dir};
  for (const std::string& dir : req.include_dirs) {
    includes.push_back(fs::absolute(dir, ec).string());
  }
  const std::vector<std::string> flags = TargetFlags(req.target, includes);
  absl::StatusOr<std::string> version = CompilerVersion(compiler);
  if (!version.ok()) return version.status();

  // The ABI header is part of every source, so its text is keyed too.
  absl::StatusOr<std::string> abi_text = ReadFile(abi_dir + "/kernelseek/abi.h");
  if (!abi_text.ok()) return abi_text.status();
  std::vector<std::string> key_parts = {req.source, compiler, *version, *abi_text};
  key_parts.insert(key_parts.end(), flags.begin(), flags.end());
  const std::string key = HexSha256(key_parts);
  const std::string base = absl::StrCat(cache_dir, "/", key);
  const std::string source_name = req.source_name.empty()
                                      ? absl::StrCat(key, IsCuda(req.target) ? ".cu" : ".cc")
                                      : req.source_name;

  CompileOutput out;
  if (LoadCacheEntry(base, source_name, &out)) {
    out.info.seconds = absl::ToDoubleSeconds(absl::Now() - start);
    return out;
  }

  // Compile in a private folder so that concurrent compiles of the same
  // key never share a file; the results are renamed into the cache.
  std::string work_template = absl::StrCat(cache_dir, "/tmp.", key.substr(0, 16), ".XXXXXX");
  if (mkdtemp(work_template.data()) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create a folder in compile cache ", cache_dir, ": ", strerror(errno)));
  }
  const std::string work = work_template;
  struct RemoveWork {
    std::string path;
    ~RemoveWork() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove_work{work};

  const std::string src_path = absl::StrCat(work, "/", key, IsCuda(req.target) ? ".cu" : ".cc");
  const std::string lib_tmp = absl::StrCat(work, "/", key, ".so");
  absl::Status written = WriteWholeFile(src_path, req.source);
  if (!written.ok()) return written;

  std::vector<std::string> argv = {compiler};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("-o");
  argv.push_back(lib_tmp);
  argv.push_back(src_path);

  // The command as stored: the cache's library path, the source marker.
  std::vector<std::string> shown = argv;
  shown[shown.size() - 2] = base + ".so";
  shown.back() = std::string(kSourceMarker);
  const std::string stored_command = CommandLine(shown);
  out.info.command =
      absl::StrReplaceAll(stored_command, {{kSourceMarker, ShellQuote(source_name)}});

  absl::StatusOr<FinishedChild> run = RunChild(argv, req.timeout_s);
  if (!run.ok()) return run.status();
  std::string log = absl::StrReplaceAll(run->output, {{src_path, kSourceMarker}});
  const bool ok = !run->timed_out && run->exit_code == 0 && access(lib_tmp.c_str(), R_OK) == 0;
  if (run->timed_out) {
    absl::StrAppendFormat(&log,
                          "\nkernelseek: the compiler timed out after %g s "
                          "and was killed\n",
                          req.timeout_s);
  } else if (run->exit_code < 0) {
    absl::StrAppend(&log, "\nkernelseek: the compiler was killed by signal ", run->signal, " (",
                    strsignal(run->signal), ")\n");
  } else if (run->exit_code != 0) {
    absl::StrAppend(&log, "\nkernelseek: the compiler exited with status ", run->exit_code, "\n");
  } else if (!ok) {
    absl::StrAppend(&log, "\nkernelseek: the compiler wrote no library\n");
  }

  out.info.ok = ok;
  out.info.log = LogForCaller(log, source_name);
  ParsePtxasReport(out.info.log, &out.info);
  if (ok) {
    const std::string suffix = work.substr(work.rfind('.'));
    absl::Status s = WriteAtomically(base + ".log", log, suffix);
    if (s.ok()) s = WriteAtomically(base + ".cmd", stored_command + "\n", suffix);
    if (!s.ok()) return s;
    if (rename(lib_tmp.c_str(), (base + ".so").c_str()) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot move the library into compile cache ", cache_dir, ": ", strerror(errno)));
    }
    out.library = base + ".so";
  }
  out.info.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return out;
}

}  // namespace kseek
