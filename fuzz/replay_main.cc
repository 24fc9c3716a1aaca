// A standalone driver for a libFuzzer target, for builds without libFuzzer
// (GCC in ordinary CI): feeds every file named on the command line, or
// found directly inside a named folder, to LLVMFuzzerTestOneInput.
//
//   replay [--require-valid | --list-invalid] [--sut=NAME] [--mutant=NAME[,NAME]]
//          [--policy=NAME] PATH...
//
// Exit 0 when every input ran (a target that finds a bug aborts; the SIGABRT
// handler names the file and exits 1). --require-valid also fails when the
// target rejects an input (returns -1): seed and regression corpora must
// hold valid cases only. --list-invalid prints the rejected files' paths,
// one a line, and nothing else: libFuzzer's merge keeps rejected inputs
// that add parser coverage, and the overnight driver drops them with it.
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

char g_current[4096] = "";

void OnAbort(int /*signal*/) {
  // Only async-signal-safe calls here.
  const char head[] = "replay: target aborted on ";
  (void)!write(2, head, sizeof(head) - 1);
  (void)!write(2, g_current, std::strlen(g_current));
  (void)!write(2, "\n", 1);
  _exit(1);
}

std::vector<std::string> Inputs(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::string> inside;
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') {
          inside.push_back(entry.path().string());
        }
      }
      std::sort(inside.begin(), inside.end());
      files.insert(files.end(), inside.begin(), inside.end());
    } else {
      files.push_back(path);
    }
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGABRT, OnAbort);
  LLVMFuzzerInitialize(&argc, &argv);
  bool require_valid = false;
  bool list_invalid = false;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--require-valid") {
      require_valid = true;
    } else if (arg == "--list-invalid") {
      list_invalid = true;
    } else if (arg.rfind("--", 0) == 0) {
      continue;  // --sut= and friends: read by LLVMFuzzerInitialize
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "usage: %s [--require-valid] [--sut=|--mutant=|--policy=] PATH...\n",
                 argv[0]);
    return 2;
  }
  const std::vector<std::string> files = Inputs(paths);
  int rejected = 0;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 2;
    }
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::snprintf(g_current, sizeof(g_current), "%s", file.c_str());
    if (LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) != 0) {
      ++rejected;
      if (require_valid) std::fprintf(stderr, "replay: %s: rejected as invalid\n", file.c_str());
      if (list_invalid) std::printf("%s\n", file.c_str());
    }
  }
  if (list_invalid) return 0;
  std::printf("replayed %zu inputs, %d rejected as invalid\n", files.size(), rejected);
  return require_valid && rejected > 0 ? 1 : 0;
}
