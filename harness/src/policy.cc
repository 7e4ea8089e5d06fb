// The static policy check (see policy.h).
//
// The source is read the way the compiler's first phases read it: lines
// joined at backslash-newline, then comments and string/char literals
// blanked (their lengths and newlines kept, so positions map back to the
// original lines). The text of an #include target is kept. What remains is
// searched for forbidden includes and identifiers.
//
// Built-in rules. An include is matched, case-insensitively, against the
// #include target:
//
//   kind            | patterns                                    | matches when the pattern
//   ----------------+---------------------------------------------+----------------------------
//   vendor library  | cutlass cute/ cublas cudnn cufft curand     | starts a path component
//                   | cusparse cusolver cutensor nccl nvshmem     | ("cute/" does not match
//                   | torch aten/ c10/                            | "execute/")
//   host threads    | thread future execution pthread.h           | is the whole target or its
//   files, process  | fstream filesystem unistd.h dlfcn.h fcntl.h | last path components
//                   | spawn.h signal.h csignal link.h elf.h       |
//   system headers  | sys/ bits/                                  | starts the target
//   macro include   | #include NAME                               | always (it cannot be read)
//
// CUB and Thrust ship inside CUDA and are allowed; so are <cstdio> (printf),
// <cstdlib> and <iostream>, whose dangerous functions are caught by name.
//
// Identifiers are matched whole, never as substrings:
//
//   kind              | identifiers                                 | flagged
//   ------------------+---------------------------------------------+---------------------
//   streams, graphs,  | cudaStreamCreate[WithFlags|WithPriority]    | anywhere
//   events, device    | cuStreamCreate[WithPriority]                |
//   state, host       | cudaStreamBeginCapture[ToGraph]             |
//   callbacks         | cuStreamBeginCapture                        |
//                     | cudaGraph{Create,Instantiate,Launch}        |
//                     | cudaGraphInstantiateWithFlags               |
//                     | cuGraph{Create,Instantiate,Launch}          |
//                     | cudaEventCreate[WithFlags] cuEventCreate    |
//                     | cudaEventRecord cuEventRecord               |
//                     | cudaEventElapsedTime cuEventElapsedTime     |
//                     | cudaStreamPerThread CU_STREAM_PER_THREAD    |
//                     | cudaLaunchHostFunc cuLaunchHostFunc         |
//                     | cudaStreamAddCallback cuStreamAddCallback   |
//                     | cudaDeviceReset cudaSetDevice               |
//                     | cudaDeviceSetLimit cuCtxCreate cuCtxDestroy |
//                     | cu[da]CtxResetPersistingL2Cache             |
//                     | cuDevicePrimaryCtxReset                     |
//                     | cudaProfilerStart cudaProfilerStop          |
//   host threads      | pthread_create thrd_create                  | anywhere
//                     | thread jthread async                        | qualified by std::, or
//                     |                                             | anywhere after `using
//                     |                                             | namespace std`
//                     | fork vfork clone                            | used as a function (*)
//   files, processes, | dlopen dlmopen dlsym dlvsym RTLD_NEXT       | anywhere
//   signals, loading, | RTLD_DEFAULT dl_iterate_phdr syscall ptrace |
//   environment,      | popen posix_spawn[p] execl execlp execle    |
//   clocks            | execv execvp execvpe execve execveat        |
//                     | fexecve ifstream ofstream fstream getenv    |
//                     | secure_getenv setenv putenv unsetenv atexit |
//                     | at_quick_exit mprotect clock_gettime        |
//                     | gettimeofday memfd_create shm_open          |
//                     | fopen freopen open openat creat read write  | used as a function (*)
//                     | pread pwrite mmap system exit _exit _Exit   |
//                     | quick_exit kill raise signal sigaction      |
//                     | unlink ioctl socket                         |
//   load-time code    | constructor destructor section ifunc (and   | inside __attribute__((..))
//                     | the __x__ spellings)                        | or after gnu::
//   asm               | asm text (its literals joined) holding      | in any asm statement
//                     | syscall, sysenter,                          |
//                     | int $0x80, svc, init_array, fini_array,     |
//                     | .ctors, .dtors                              |
//
// Token pasting (## in a #define) is refused: it can assemble any name.
// Comments between '#' and a directive's name are read through.
//
// (*) "Used as a function": followed by "(" (also as "(write)(...)"), its address taken ("&write"),
// assigned ("= write;"), or named in a #define body; and not a member
// (".read(", "->write(") nor qualified by a namespace or class other than
// std:: ("file::open("). So `cudaMemcpyAsync`, `stream.write(...)` and a
// variable named `thread` pass. abort() stays allowed: it only crashes.
//
// The same rules apply to both families: a .cu file holds host code too.
// A task's forbidden_includes are case-insensitive substrings of the target;
// its forbidden_symbols are identifiers flagged anywhere ("ns::name" also
// requires that qualifier).
//
// This is a reading of the text, not of the preprocessed program, and a
// courtesy: it refuses early, with the line, what the run-time sandbox
// (sandbox.h, in the kernel hosts) refuses anyway. No guarantee rests on it.
#include "harness/src/policy.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace kseek {

namespace {

// ---------------------------------------------------------------------------
// Rule tables.

enum class IncludeMatch {
  kLibrary,  // starts a path component of the target
  kHeader,   // the target is the name, or ends with "/" + name
  kFolder,   // the target starts with it
};

struct IncludeRule {
  const char* pattern;
  IncludeMatch match;
};

constexpr IncludeRule kIncludeRules[] = {
    {"cutlass", IncludeMatch::kLibrary},  {"cute/", IncludeMatch::kLibrary},
    {"cublas", IncludeMatch::kLibrary},   {"cudnn", IncludeMatch::kLibrary},
    {"cufft", IncludeMatch::kLibrary},    {"curand", IncludeMatch::kLibrary},
    {"cusparse", IncludeMatch::kLibrary}, {"cusolver", IncludeMatch::kLibrary},
    {"cutensor", IncludeMatch::kLibrary}, {"nccl", IncludeMatch::kLibrary},
    {"nvshmem", IncludeMatch::kLibrary},  {"torch", IncludeMatch::kLibrary},
    {"aten/", IncludeMatch::kLibrary},    {"c10/", IncludeMatch::kLibrary},
    {"thread", IncludeMatch::kHeader},    {"future", IncludeMatch::kHeader},
    {"execution", IncludeMatch::kHeader}, {"pthread.h", IncludeMatch::kHeader},
    {"fstream", IncludeMatch::kHeader},   {"filesystem", IncludeMatch::kHeader},
    {"unistd.h", IncludeMatch::kHeader},  {"dlfcn.h", IncludeMatch::kHeader},
    {"fcntl.h", IncludeMatch::kHeader},   {"spawn.h", IncludeMatch::kHeader},
    {"signal.h", IncludeMatch::kHeader},  {"csignal", IncludeMatch::kHeader},
    {"link.h", IncludeMatch::kHeader},    {"elf.h", IncludeMatch::kHeader},
    {"sys/", IncludeMatch::kFolder},      {"bits/", IncludeMatch::kFolder},
};

enum class SymbolMatch {
  kAnywhere,   // every occurrence
  kFunction,   // used as a function (see the table above)
  kStd,        // qualified by std::
  kAttribute,  // inside __attribute__((...)) or after gnu::
};

struct SymbolRule {
  const char* name;
  SymbolMatch match;
};

constexpr SymbolRule kSymbolRules[] = {
    // Streams, graphs, events and device-wide state.
    {"cudaStreamCreate", SymbolMatch::kAnywhere},
    {"cudaStreamCreateWithFlags", SymbolMatch::kAnywhere},
    {"cudaStreamCreateWithPriority", SymbolMatch::kAnywhere},
    {"cuStreamCreate", SymbolMatch::kAnywhere},
    {"cuStreamCreateWithPriority", SymbolMatch::kAnywhere},
    {"cudaStreamBeginCapture", SymbolMatch::kAnywhere},
    {"cudaStreamBeginCaptureToGraph", SymbolMatch::kAnywhere},
    {"cuStreamBeginCapture", SymbolMatch::kAnywhere},
    {"cudaGraphCreate", SymbolMatch::kAnywhere},
    {"cudaGraphInstantiate", SymbolMatch::kAnywhere},
    {"cudaGraphInstantiateWithFlags", SymbolMatch::kAnywhere},
    {"cudaGraphLaunch", SymbolMatch::kAnywhere},
    {"cuGraphCreate", SymbolMatch::kAnywhere},
    {"cuGraphInstantiate", SymbolMatch::kAnywhere},
    {"cuGraphLaunch", SymbolMatch::kAnywhere},
    {"cudaEventCreate", SymbolMatch::kAnywhere},
    {"cudaEventCreateWithFlags", SymbolMatch::kAnywhere},
    {"cuEventCreate", SymbolMatch::kAnywhere},
    {"cudaEventRecord", SymbolMatch::kAnywhere},
    {"cuEventRecord", SymbolMatch::kAnywhere},
    {"cudaEventElapsedTime", SymbolMatch::kAnywhere},
    {"cuEventElapsedTime", SymbolMatch::kAnywhere},
    {"cudaStreamPerThread", SymbolMatch::kAnywhere},
    {"CU_STREAM_PER_THREAD", SymbolMatch::kAnywhere},
    {"cudaLaunchHostFunc", SymbolMatch::kAnywhere},
    {"cuLaunchHostFunc", SymbolMatch::kAnywhere},
    {"cudaStreamAddCallback", SymbolMatch::kAnywhere},
    {"cuStreamAddCallback", SymbolMatch::kAnywhere},
    {"cudaDeviceReset", SymbolMatch::kAnywhere},
    {"cudaSetDevice", SymbolMatch::kAnywhere},
    {"cudaDeviceSetLimit", SymbolMatch::kAnywhere},
    {"cudaCtxResetPersistingL2Cache", SymbolMatch::kAnywhere},
    {"cuCtxResetPersistingL2Cache", SymbolMatch::kAnywhere},
    {"cuCtxCreate", SymbolMatch::kAnywhere},
    {"cuCtxDestroy", SymbolMatch::kAnywhere},
    {"cuDevicePrimaryCtxReset", SymbolMatch::kAnywhere},
    {"cudaProfilerStart", SymbolMatch::kAnywhere},
    {"cudaProfilerStop", SymbolMatch::kAnywhere},
    // Host threads.
    {"pthread_create", SymbolMatch::kAnywhere},
    {"thrd_create", SymbolMatch::kAnywhere},
    {"thread", SymbolMatch::kStd},
    {"jthread", SymbolMatch::kStd},
    {"async", SymbolMatch::kStd},
    {"fork", SymbolMatch::kFunction},
    {"vfork", SymbolMatch::kFunction},
    {"clone", SymbolMatch::kFunction},
    // Files, processes, signals, dynamic loading, the environment, timers.
    {"dlopen", SymbolMatch::kAnywhere},
    {"dlmopen", SymbolMatch::kAnywhere},
    {"dlsym", SymbolMatch::kAnywhere},
    {"dlvsym", SymbolMatch::kAnywhere},
    {"RTLD_NEXT", SymbolMatch::kAnywhere},
    {"RTLD_DEFAULT", SymbolMatch::kAnywhere},
    {"dl_iterate_phdr", SymbolMatch::kAnywhere},
    {"syscall", SymbolMatch::kAnywhere},
    {"ptrace", SymbolMatch::kAnywhere},
    {"popen", SymbolMatch::kAnywhere},
    {"posix_spawn", SymbolMatch::kAnywhere},
    {"posix_spawnp", SymbolMatch::kAnywhere},
    {"execl", SymbolMatch::kAnywhere},
    {"execlp", SymbolMatch::kAnywhere},
    {"execle", SymbolMatch::kAnywhere},
    {"execv", SymbolMatch::kAnywhere},
    {"execvp", SymbolMatch::kAnywhere},
    {"execvpe", SymbolMatch::kAnywhere},
    {"execve", SymbolMatch::kAnywhere},
    {"execveat", SymbolMatch::kAnywhere},
    {"fexecve", SymbolMatch::kAnywhere},
    {"ifstream", SymbolMatch::kAnywhere},
    {"ofstream", SymbolMatch::kAnywhere},
    {"fstream", SymbolMatch::kAnywhere},
    {"getenv", SymbolMatch::kAnywhere},
    {"secure_getenv", SymbolMatch::kAnywhere},
    {"setenv", SymbolMatch::kAnywhere},
    {"putenv", SymbolMatch::kAnywhere},
    {"unsetenv", SymbolMatch::kAnywhere},
    {"atexit", SymbolMatch::kAnywhere},
    {"at_quick_exit", SymbolMatch::kAnywhere},
    {"mprotect", SymbolMatch::kAnywhere},
    {"clock_gettime", SymbolMatch::kAnywhere},
    {"gettimeofday", SymbolMatch::kAnywhere},
    {"memfd_create", SymbolMatch::kAnywhere},
    {"shm_open", SymbolMatch::kAnywhere},
    {"fopen", SymbolMatch::kFunction},
    {"freopen", SymbolMatch::kFunction},
    {"open", SymbolMatch::kFunction},
    {"openat", SymbolMatch::kFunction},
    {"creat", SymbolMatch::kFunction},
    {"read", SymbolMatch::kFunction},
    {"write", SymbolMatch::kFunction},
    {"pread", SymbolMatch::kFunction},
    {"pwrite", SymbolMatch::kFunction},
    {"mmap", SymbolMatch::kFunction},
    {"system", SymbolMatch::kFunction},
    {"exit", SymbolMatch::kFunction},
    {"_exit", SymbolMatch::kFunction},
    {"_Exit", SymbolMatch::kFunction},
    {"quick_exit", SymbolMatch::kFunction},
    {"kill", SymbolMatch::kFunction},
    {"raise", SymbolMatch::kFunction},
    {"signal", SymbolMatch::kFunction},
    {"sigaction", SymbolMatch::kFunction},
    {"unlink", SymbolMatch::kFunction},
    {"ioctl", SymbolMatch::kFunction},
    {"socket", SymbolMatch::kFunction},
    // Code that runs when the library is loaded or unloaded.
    {"constructor", SymbolMatch::kAttribute},
    {"__constructor__", SymbolMatch::kAttribute},
    {"destructor", SymbolMatch::kAttribute},
    {"__destructor__", SymbolMatch::kAttribute},
    {"section", SymbolMatch::kAttribute},
    {"__section__", SymbolMatch::kAttribute},
    {"ifunc", SymbolMatch::kAttribute},
    {"__ifunc__", SymbolMatch::kAttribute},
};

// Text inside an asm statement that makes it forbidden.
constexpr const char* kAsmPatterns[] = {
    "syscall",    "sysenter",   "int $0x80", "int 0x80", "svc ",
    "init_array", "fini_array", ".ctors",    ".dtors",
};

// ---------------------------------------------------------------------------
// Reading the source.

bool IsIdentStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}
bool IsIdentChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// A string literal's original text (between its quotes) and where it began.
struct Literal {
  size_t pos;
  std::string text;
};

// The source after line splicing and blanking. text[i] came from original
// line line_of[i] (1-based).
struct CleanSource {
  std::string text;
  std::vector<int> line_of;
  std::vector<Literal> literals;
  // [begin, end) of the lines that are preprocessor directives, with
  // whether each is a #define.
  struct Directive {
    size_t begin, end;
    bool is_define;
  };
  std::vector<Directive> directives;
};

// Joins lines ending in a backslash (spaces after it are tolerated, as
// GCC does), keeping each character's original line.
void Splice(const std::string& src, CleanSource* out) {
  int line = 1;
  for (size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\\') {
      size_t j = i + 1;
      while (j < src.size() && IsBlank(src[j])) ++j;
      if (j < src.size() && src[j] == '\n') {
        ++line;
        i = j;
        continue;
      }
    }
    out->text.push_back(c);
    out->line_of.push_back(line);
    if (c == '\n') ++line;
  }
}

// Is `s` at `i` the start of `word` followed by a non-identifier char?
bool WordAt(const std::string& s, size_t i, absl::string_view word) {
  if (s.compare(i, word.size(), word.data(), word.size()) != 0) return false;
  size_t end = i + word.size();
  return end >= s.size() || !IsIdentChar(s[end]);
}

// Whether the '\'' at `i` is a C++14 digit separator (1'000'000).
bool IsDigitSeparator(const std::string& s, size_t i) {
  size_t b = i;
  while (b > 0 && (IsIdentChar(s[b - 1]) || s[b - 1] == '.' || s[b - 1] == '\'')) {
    --b;
  }
  return b < i && absl::ascii_isdigit(static_cast<unsigned char>(s[b]));
}

// Whether the string literal whose opening quote is at `i` is a raw one
// (R"d(...)d", with an optional u8, u, U or L before the R).
bool IsRawString(const std::string& s, size_t i) {
  size_t b = i;
  while (b > 0 && IsIdentChar(s[b - 1])) --b;
  absl::string_view prefix(s.data() + b, i - b);
  for (absl::string_view p : {"R", "u8R", "uR", "UR", "LR"}) {
    if (prefix == p) return true;
  }
  return false;
}

// Blanks comments and literals in out->text, in place, and records the
// directives. The quoted target of an #include is kept.
void Blank(CleanSource* out) {
  std::string& s = out->text;
  const size_t n = s.size();
  bool line_start = true;   // only blanks since the last newline
  bool in_include = false;  // inside an #include directive
  bool in_directive = false;
  CleanSource::Directive directive{0, 0, false};
  auto blank = [&s](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      if (s[k] != '\n') s[k] = ' ';
    }
  };
  size_t i = 0;
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      if (in_directive) {
        directive.end = i;
        out->directives.push_back(directive);
      }
      line_start = true;
      in_include = in_directive = false;
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      size_t end = s.find('\n', i);
      if (end == std::string::npos) end = n;
      blank(i, end);
      i = end;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      end = end == std::string::npos ? n : end + 2;
      blank(i, end);
      i = end;
      continue;
    }
    if (line_start && (c == '#' || (c == '%' && i + 1 < n && s[i + 1] == ':'))) {
      in_directive = true;
      directive = {i, n, false};
      size_t j = i + (c == '#' ? 1 : 2);
      // Blanks and comments may stand between '#' and the directive's name
      // (`#/**/include` is an include).
      while (j < n) {
        if (IsBlank(s[j])) {
          ++j;
        } else if (s[j] == '/' && j + 1 < n && s[j + 1] == '*') {
          size_t end = s.find("*/", j + 2);
          end = end == std::string::npos ? n : end + 2;
          blank(j, end);
          j = end;
        } else {
          break;
        }
      }
      in_include =
          WordAt(s, j, "include") || WordAt(s, j, "include_next") || WordAt(s, j, "import");
      directive.is_define = WordAt(s, j, "define");
      line_start = false;
      i = j;
      continue;
    }
    if (!IsBlank(c)) line_start = false;
    if (c == '"') {
      size_t body = i + 1;
      size_t end;  // index of the closing quote, or n
      if (IsRawString(s, i)) {
        size_t open = s.find('(', body);
        std::string closing = open == std::string::npos
                                  ? std::string()
                                  : absl::StrCat(")", s.substr(body, open - body), "\"");
        size_t close = closing.empty() ? std::string::npos : s.find(closing, open);
        end = close == std::string::npos ? n : close + closing.size() - 1;
      } else {
        end = body;
        while (end < n && s[end] != '"' && s[end] != '\n') {
          end += (s[end] == '\\' && end + 1 < n && s[end + 1] != '\n') ? 2 : 1;
        }
        end = std::min(end, n);
      }
      out->literals.push_back({i, s.substr(body, end - body)});
      if (!in_include) blank(body, end);
      i = end < n && s[end] == '"' ? end + 1 : end;
      continue;
    }
    if (c == '\'' && !IsDigitSeparator(s, i)) {
      size_t end = i + 1;
      while (end < n && s[end] != '\'' && s[end] != '\n') {
        end += (s[end] == '\\' && end + 1 < n && s[end + 1] != '\n') ? 2 : 1;
      }
      end = std::min(end, n);
      blank(i + 1, end);
      i = end < n && s[end] == '\'' ? end + 1 : end;
      continue;
    }
    ++i;
  }
  if (in_directive) {
    directive.end = n;
    out->directives.push_back(directive);
  }
}

// ---------------------------------------------------------------------------
// Matching.

std::string Lower(absl::string_view s) { return absl::AsciiStrToLower(s); }

bool IncludeRuleMatches(const IncludeRule& rule, const std::string& target) {
  const std::string t = Lower(target);
  const std::string p = rule.pattern;
  switch (rule.match) {
    case IncludeMatch::kLibrary:
      for (size_t pos = t.find(p); pos != std::string::npos; pos = t.find(p, pos + 1)) {
        if (pos == 0 || t[pos - 1] == '/') return true;
      }
      return false;
    case IncludeMatch::kHeader:
      return t == p || absl::EndsWith(t, "/" + p);
    case IncludeMatch::kFolder:
      return absl::StartsWith(t, p);
  }
  return false;
}

// Where an identifier stands: what precedes and follows it.
struct Context {
  bool member = false;     // after "." or "->"
  bool qualified = false;  // after "::"
  std::string qualifier;   // the name before "::" ("" for the global "::",
                           // ">" or ")" after a template or decltype)
  char before = 0;         // the character before it (and its qualifier)
  char after = 0;          // the character after it
  bool in_define = false;
  bool in_attribute = false;
  bool std_in_scope = false;  // the file says `using namespace std`
};

size_t SkipBlanksBack(const std::string& s, size_t i) {
  while (i > 0 && (IsBlank(s[i - 1]) || s[i - 1] == '\n')) --i;
  return i;
}

size_t SkipBlanksForward(const std::string& s, size_t i) {
  while (i < s.size() && (IsBlank(s[i]) || s[i] == '\n')) ++i;
  return i;
}

// Fills the lexical context of the identifier s[begin, end).
Context ContextOf(const std::string& s, size_t begin, size_t end) {
  Context ctx;
  size_t p = SkipBlanksBack(s, begin);
  if (p >= 1 && s[p - 1] == '.' && !(p >= 2 && s[p - 2] == '.')) {
    ctx.member = true;
  } else if (p >= 2 && s[p - 1] == '>' && s[p - 2] == '-') {
    ctx.member = true;
  } else if (p >= 2 && s[p - 1] == ':' && s[p - 2] == ':') {
    ctx.qualified = true;
    size_t q = SkipBlanksBack(s, p - 2);
    size_t qb = q;
    while (qb > 0 && IsIdentChar(s[qb - 1])) --qb;
    ctx.qualifier = s.substr(qb, q - qb);
    if (qb == q && q > 0 && (s[q - 1] == '>' || s[q - 1] == ')')) {
      // Foo<T>::name or decltype(x)::name: a class, not the global scope.
      ctx.qualifier = s.substr(q - 1, 1);
    }
    p = SkipBlanksBack(s, qb);
  }
  ctx.before = p > 0 ? s[p - 1] : 0;
  size_t a = SkipBlanksForward(s, end);
  ctx.after = a < s.size() ? s[a] : 0;
  // "(name)(...)" calls name too.
  if (ctx.before == '(' && ctx.after == ')') {
    const size_t b = SkipBlanksForward(s, a + 1);
    if (b < s.size() && s[b] == '(') ctx.after = '(';
  }
  return ctx;
}

bool UsedAsFunction(const Context& ctx) {
  if (ctx.member) return false;
  if (ctx.qualified && !ctx.qualifier.empty() && ctx.qualifier != "std") {
    return false;
  }
  if (ctx.after == '(' || ctx.before == '&' || ctx.in_define) return true;
  return ctx.before == '=' && (ctx.after == ';' || ctx.after == ',' || ctx.after == ')');
}

bool SymbolRuleMatches(SymbolMatch match, const Context& ctx) {
  switch (match) {
    case SymbolMatch::kAnywhere:
      return true;
    case SymbolMatch::kFunction:
      return UsedAsFunction(ctx);
    case SymbolMatch::kStd:
      return (ctx.qualified && ctx.qualifier == "std") ||
             (ctx.std_in_scope && !ctx.member && !ctx.qualified);
    case SymbolMatch::kAttribute:
      return ctx.in_attribute ||
             (ctx.qualified && (ctx.qualifier == "gnu" || ctx.qualifier == "__gnu__"));
  }
  return false;
}

// The index just past the parenthesis group opening at or after `i`
// (blanks skipped), or `i` when no "(" follows.
size_t ParenGroupEnd(const std::string& s, size_t i) {
  size_t p = SkipBlanksForward(s, i);
  if (p >= s.size() || s[p] != '(') return i;
  int depth = 0;
  for (; p < s.size(); ++p) {
    if (s[p] == '(') ++depth;
    if (s[p] == ')' && --depth == 0) return p + 1;
  }
  return s.size();
}

// Collects violations, one per (line, rule).
class Collector {
 public:
  Collector(const std::string& source, const CleanSource& clean)
      : clean_(clean), lines_(absl::StrSplit(source, '\n')) {}

  void Add(size_t pos, std::string rule) {
    int line = pos < clean_.line_of.size() ? clean_.line_of[pos]
                                           : (clean_.line_of.empty() ? 1 : clean_.line_of.back());
    if (!seen_.insert({line, rule}).second) return;
    PolicyViolation v;
    v.line = line;
    v.rule = std::move(rule);
    if (line >= 1 && static_cast<size_t>(line) <= lines_.size()) {
      v.text = std::string(absl::StripAsciiWhitespace(lines_[line - 1]));
    }
    found_.push_back(std::move(v));
  }

  std::vector<PolicyViolation> Take() {
    std::stable_sort(
        found_.begin(), found_.end(),
        [](const PolicyViolation& a, const PolicyViolation& b) { return a.line < b.line; });
    return std::move(found_);
  }

 private:
  const CleanSource& clean_;
  std::vector<absl::string_view> lines_;
  std::set<std::pair<int, std::string>> seen_;
  std::vector<PolicyViolation> found_;
};

void CheckIncludes(const CleanSource& clean, const Policy& task_policy, Collector* found) {
  const std::string& s = clean.text;
  for (const CleanSource::Directive& d : clean.directives) {
    size_t i = d.begin + (s[d.begin] == '#' ? 1 : 2);
    while (i < d.end && IsBlank(s[i])) ++i;
    size_t word_end = i;
    while (word_end < d.end && IsIdentChar(s[word_end])) ++word_end;
    absl::string_view word(s.data() + i, word_end - i);
    if (word != "include" && word != "include_next" && word != "import") {
      continue;
    }
    size_t t = word_end;
    while (t < d.end && IsBlank(s[t])) ++t;
    char close = t < d.end && s[t] == '<' ? '>' : (t < d.end && s[t] == '"' ? '"' : 0);
    size_t t_end = close == 0 ? std::string::npos : s.find(close, t + 1);
    if (close == 0 || t_end == std::string::npos || t_end > d.end) {
      found->Add(d.begin,
                 "include of a macro or malformed target "
                 "(only \"file\" and <file> can be checked)");
      continue;
    }
    const std::string target = s.substr(t + 1, t_end - t - 1);
    bool flagged = false;
    for (const IncludeRule& rule : kIncludeRules) {
      if (IncludeRuleMatches(rule, target)) {
        flagged = true;
        break;
      }
    }
    for (const std::string& extra : task_policy.forbidden_includes) {
      if (!extra.empty() && absl::StrContains(Lower(target), Lower(extra))) {
        flagged = true;
      }
    }
    if (flagged) found->Add(d.begin, absl::StrCat("forbidden include: ", target));
  }
}

// The identifiers of task_policy.forbidden_symbols: "ns::name" is {ns, name}.
struct TaskSymbol {
  std::string qualifier;
  std::string name;
};

std::vector<TaskSymbol> TaskSymbols(const Policy& task_policy) {
  std::vector<TaskSymbol> out;
  for (const std::string& sym : task_policy.forbidden_symbols) {
    std::string trimmed(absl::StripAsciiWhitespace(sym));
    if (trimmed.empty()) continue;
    size_t sep = trimmed.rfind("::");
    if (sep == std::string::npos) {
      out.push_back({"", trimmed});
    } else {
      std::string qual = trimmed.substr(0, sep);
      size_t prev = qual.rfind("::");
      if (prev != std::string::npos) qual = qual.substr(prev + 2);
      out.push_back({qual, trimmed.substr(sep + 2)});
    }
  }
  return out;
}

// Whether the text says `using namespace std` (blanks and newlines between
// the words).
bool UsesNamespaceStd(const std::string& s) {
  for (size_t pos = s.find("using"); pos != std::string::npos; pos = s.find("using", pos + 1)) {
    if (pos > 0 && IsIdentChar(s[pos - 1])) continue;
    size_t p = SkipBlanksForward(s, pos + 5);
    if (!WordAt(s, p, "namespace")) continue;
    p = SkipBlanksForward(s, p + 9);
    if (WordAt(s, p, "std")) return true;
  }
  return false;
}

// Token pasting (##) in a #define: the policy cannot read the names it
// assembles.
void CheckPasting(const CleanSource& clean, Collector* found) {
  for (const CleanSource::Directive& d : clean.directives) {
    if (!d.is_define) continue;
    const size_t at = clean.text.find("##", d.begin);
    if (at != std::string::npos && at < d.end) {
      found->Add(d.begin, "token pasting (##): names assembled by the preprocessor cannot be checked");
    }
  }
}

void CheckIdentifiers(const CleanSource& clean, const Policy& task_policy, Collector* found) {
  const std::string& s = clean.text;
  const bool std_in_scope = UsesNamespaceStd(s);
  const std::vector<TaskSymbol> task_symbols = TaskSymbols(task_policy);
  size_t directive = 0;      // next directive that may contain i
  size_t attribute_end = 0;  // end of the __attribute__ group we are in
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      // A pp-number (0x1fULL, 1e+5, 1'000): not an identifier.
      ++i;
      while (i < s.size() &&
             (IsIdentChar(s[i]) || s[i] == '.' || s[i] == '\'' ||
              ((s[i] == '+' || s[i] == '-') &&
               (s[i - 1] == 'e' || s[i - 1] == 'E' || s[i - 1] == 'p' || s[i - 1] == 'P')))) {
        ++i;
      }
      continue;
    }
    if (!IsIdentStart(c)) {
      ++i;
      continue;
    }
    size_t begin = i;
    while (i < s.size() && IsIdentChar(s[i])) ++i;
    const absl::string_view ident(s.data() + begin, i - begin);

    if (ident == "__attribute__" || ident == "__attribute") {
      attribute_end = std::max(attribute_end, ParenGroupEnd(s, i));
    }
    if (ident == "asm" || ident == "__asm__" || ident == "__asm") {
      size_t end = i;
      // Qualifiers between asm and its operands.
      while (true) {
        size_t q = SkipBlanksForward(s, end);
        size_t qe = q;
        while (qe < s.size() && IsIdentChar(s[qe])) ++qe;
        absl::string_view w(s.data() + q, qe - q);
        if (w == "volatile" || w == "__volatile__" || w == "goto" || w == "inline") {
          end = qe;
        } else {
          break;
        }
      }
      end = ParenGroupEnd(s, end);
      // Adjacent literals are one string to the compiler ("sys" "call").
      std::string text;
      for (const Literal& lit : clean.literals) {
        if (lit.pos >= begin && lit.pos < end) absl::StrAppend(&text, lit.text);
      }
      for (const char* pattern : kAsmPatterns) {
        if (text.find(pattern) != std::string::npos) {
          found->Add(begin, absl::StrCat("forbidden asm: ", pattern));
        }
      }
    }

    Context ctx = ContextOf(s, begin, i);
    while (directive < clean.directives.size() && clean.directives[directive].end < begin) {
      ++directive;
    }
    ctx.in_define = directive < clean.directives.size() &&
                    clean.directives[directive].begin <= begin &&
                    clean.directives[directive].is_define;
    ctx.in_attribute = begin < attribute_end;
    ctx.std_in_scope = std_in_scope;

    for (const SymbolRule& rule : kSymbolRules) {
      if (ident == rule.name && SymbolRuleMatches(rule.match, ctx)) {
        found->Add(begin, absl::StrCat("forbidden symbol: ", rule.name));
      }
    }
    for (const TaskSymbol& sym : task_symbols) {
      if (ident == sym.name &&
          (sym.qualifier.empty() || (ctx.qualified && ctx.qualifier == sym.qualifier))) {
        found->Add(begin,
                   absl::StrCat("forbidden symbol: ",
                                sym.qualifier.empty() ? "" : sym.qualifier + "::", sym.name));
      }
    }
  }
}

}  // namespace

std::vector<PolicyViolation> CheckPolicy(const std::string& source, const std::string& family,
                                         const Policy& task_policy) {
  CleanSource clean;
  Splice(source, &clean);
  Blank(&clean);
  Collector found(source, clean);
  CheckIncludes(clean, task_policy, &found);
  CheckPasting(clean, &found);
  CheckIdentifiers(clean, task_policy, &found);
  return found.Take();
}

std::string DescribeViolation(const std::string& filename, const PolicyViolation& v) {
  return absl::StrCat(filename, ":", v.line, ": ", v.rule, ": ", v.text);
}

}  // namespace kseek
