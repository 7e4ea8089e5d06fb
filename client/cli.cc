// Flag parsing for kseek subcommands (cli.h).
#include "client/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"

namespace kseek::cli {

bool ParseFlags(const std::vector<std::string>& args, const std::vector<std::string>& allowed,
                const std::string& usage, std::vector<std::string>* positional, bool* help) {
  *help = false;
  auto fail = [&](const std::string& what) {
    fprintf(stderr, "kseek: %s\n\n%s", what.c_str(), usage.c_str());
    return false;
  };
  auto is_allowed = [&](const std::string& n) {
    return std::find(allowed.begin(), allowed.end(), n) != allowed.end();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional->insert(positional->end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg == "--help" || arg == "-h") {
      fputs(usage.c_str(), stdout);
      *help = true;
      return false;
    }
    if (!absl::StartsWith(arg, "--") || arg.size() == 2) {
      positional->push_back(arg);
      continue;
    }
    std::string body = arg.substr(2);
    std::string name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    // --max-samples and --max_samples name the same flag.
    std::replace(name.begin(), name.end(), '-', '_');
    absl::CommandLineFlag* flag = is_allowed(name) ? absl::FindCommandLineFlag(name) : nullptr;
    bool negated = false;
    for (const char* prefix : {"no_", "no"}) {
      if (flag != nullptr || !absl::StartsWith(name, prefix)) continue;
      std::string base = name.substr(strlen(prefix));
      if (!is_allowed(base) || has_value) continue;
      flag = absl::FindCommandLineFlag(base);
      negated = flag != nullptr && flag->IsOfType<bool>();
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr) return fail("unknown flag --" + name);
    if (negated) {
      value = "false";
    } else if (!has_value) {
      if (flag->IsOfType<bool>()) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return fail("--" + name + " needs a value");
      }
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) return fail("--" + name + ": " + error);
  }
  return true;
}

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace kseek::cli
