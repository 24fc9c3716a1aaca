#include "cli/output_guard.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <vector>

#include "cli/case_input.h"
#include "cli/ci_report.h"
#include "cli/output_file.h"
#include "cli/sut_flags.h"

namespace r3::cli {
namespace {

// A file's identity: two paths (a symlink, `./x`, a hard link) name the same
// file exactly when these agree.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};

std::optional<FileId> IdOf(const std::string& path) {
  struct stat st;
  const int rc = path == "-" ? fstat(STDIN_FILENO, &st) : stat(path.c_str(), &st);
  if (rc != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

struct Output {
  std::string flag;
  std::string path;
  bool folder = false;
  std::optional<FileId> id;  // none while the path does not exist
};

struct Input {
  std::string path;
  FileId id;
  bool folder = false;
};

struct Registry {
  std::vector<Output> outputs;
  std::vector<Input> inputs;
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

bool EndsWith(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// The first line of an existing file, for saying what it is.
std::string FirstLine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::getline(in, line);
  if (line.size() > 40) line = line.substr(0, 40) + "...";
  return line;
}

// --junit and --svg write XML: an existing file they may replace is empty or
// XML. Anything else (a case file, above all) is someone's input.
void RefuseOtherKinds(const std::string& flag, const std::string& path) {
  if (EndsWith(path, ".r3case")) {
    throw UsageError(flag + ": " + path + " is a case file name; not writing " + flag.substr(2) +
                     " output to it (was FILE after " + flag + " forgotten?)");
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  while (in.get(first) && (first == ' ' || first == '\n' || first == '\r' || first == '\t')) {
  }
  if (in && first != '<') {
    throw UsageError(flag + ": " + path + " exists and is not an XML file (it starts '" +
                     FirstLine(path) + "'); not overwriting it");
  }
}

}  // namespace

void ClaimOutputFile(const std::string& flag, const std::string& path) {
  if (path.empty()) throw UsageError(flag + ": the path is empty (name a file)");
  RefuseOtherKinds(flag, path);
  const std::optional<FileId> id = IdOf(path);
  for (const Input& in : TheRegistry().inputs) {
    if (id && in.id == *id) {
      throw UsageError(flag + ": " + path + " is also an input of this run (" +
                       DisplayName(in.path) + "); not writing it");
    }
  }
  // Before the run, not after it: a run of hours must not end in "cannot write".
  ProbeOutputFile(flag, path);
  TheRegistry().outputs.push_back({flag, path, /*folder=*/false, id});
}

void ClaimOutputFolder(const std::string& flag, const std::string& path) {
  if (path.empty()) throw UsageError(flag + ": the path is empty (name a folder)");
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    throw UsageError(flag + ": " + path + " exists and is not a folder");
  }
  TheRegistry().outputs.push_back({flag, path, /*folder=*/true, IdOf(path)});
}

namespace {

void Claim(const std::string& path, bool folder) {
  const std::optional<FileId> id = IdOf(path);
  if (!id) return;  // the reader names what is wrong with it
  std::vector<Output>& outputs = TheRegistry().outputs;
  for (auto it = outputs.begin(); it != outputs.end(); ++it) {
    if (!it->id || *it->id != *id) continue;
    const Output clash = *it;
    outputs.erase(it);  // never written, not even with an error record
    if (clash.folder) {
      throw UsageError(clash.flag + ": " + clash.path + " is a folder this run reads (" +
                       DisplayName(path) + "); not writing into it");
    }
    throw UsageError(clash.flag + ": " + clash.path + " is also an input of this run (" +
                     DisplayName(path) + "); not writing it");
  }
  TheRegistry().inputs.push_back({path, *id, folder});
}

}  // namespace

void ClaimInput(const std::string& path) { Claim(path, /*folder=*/false); }

void ClaimInputFolder(const std::string& path) { Claim(path, /*folder=*/true); }

bool IsInput(const std::string& path) {
  const std::optional<FileId> id = IdOf(path);
  if (!id) return false;
  for (const Input& in : TheRegistry().inputs) {
    if (in.id == *id) return true;
  }
  return false;
}

void RecordFailureInOutputs(const std::string& message) {
  for (const Output& out : TheRegistry().outputs) {
    if (out.folder) continue;  // saved failing cases stay true whatever came after
    struct stat st;
    if (out.flag == "--junit") {
      try {
        WriteOutputFile(out.flag, out.path, JunitErrorXml(message));
      } catch (const std::exception&) {
        // The run's own error line already says what is wrong.
      }
    } else if (stat(out.path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      unlink(out.path.c_str());  // a picture of an earlier run would pass for this one
    }
  }
  TheRegistry().outputs.clear();
}

void ClaimOutputsOfUnparsedLine(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    for (const std::string flag : {"--junit", "--svg"}) {
      std::string path;
      if (args[i] == flag && i + 1 < args.size()) {
        path = args[i + 1];
      } else if (args[i].rfind(flag + "=", 0) == 0) {
        path = args[i].substr(flag.size() + 1);
      } else {
        continue;
      }
      struct stat st;
      if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // nothing stale there
      bool claimed = false;
      for (const Output& out : TheRegistry().outputs) claimed = claimed || out.path == path;
      if (claimed) continue;
      try {
        ClaimOutputFile(flag, path);  // refuses case files and files of another kind, as always
      } catch (const UsageError&) {
      }
    }
  }
}

void GuardOutputOptions(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (const char* name : {"--junit", "--svg", "--save-failures"}) {
      CLI::Option* opt = sub->get_option_no_throw(name);
      if (opt == nullptr) continue;
      const std::string flag = name;
      const bool folder = flag == "--save-failures";
      opt->check(CLI::Validator(
          [flag, folder](std::string& path) {
            if (folder) {
              ClaimOutputFolder(flag, path);
            } else {
              ClaimOutputFile(flag, path);
            }
            return std::string();
          },
          ""));
    }
  }
}

}  // namespace r3::cli
