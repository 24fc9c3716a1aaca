#include "cli/version_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "cli/sha256.h"

namespace r3::cli {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const Version& version, const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in || in.bad()) throw SourceError(version.source + ": cannot read " + path.string());
  return bytes.str();
}

// (path in the checkout, bytes)
using Files = std::vector<std::pair<std::string, std::string>>;

std::string HashFiles(const Files& files) {
  if (files.size() == 1) return Sha256Hex(files[0].second);
  std::string listing;
  for (const auto& [path, bytes] : files) listing += Sha256Hex(bytes) + "  " + path + "\n";
  return Sha256Hex(listing);
}

}  // namespace

VersionFiles MaterializeVersion(const Version& version) {
  VersionFiles out;
  Files files;
  switch (version.kind) {
    case Version::Kind::kFile:
      out.sut_path = version.path;
      files.emplace_back(fs::path(version.path).filename().string(),
                         ReadFile(version, version.path));
      break;
    case Version::Kind::kCheckout:
      out.sut_path = version.path;
      for (const std::string& p : VersionPaths()) {
        std::error_code ec;
        if (fs::is_regular_file(fs::path(version.path) / p, ec)) {
          files.emplace_back(p, ReadFile(version, fs::path(version.path) / p));
        }
      }
      break;
    case Version::Kind::kRevision: {
      try {
        const std::vector<std::string> present = version.git->PathsAt(*version.commit, VersionPaths());
        for (const std::string& p : present) files.emplace_back(p, version.git->Read(*version.commit, p));
      } catch (const GitError& e) {
        throw SourceError(version.source + ": " + e.what());
      }
      if (std::none_of(files.begin(), files.end(), [](const auto& f) { return IsCapturePath(f.first); })) {
        out.error = std::string("no ") + kCapturePath + " (or SGLang's or vllm-ascend's capture file) at " +
                    version.commit->sha.substr(0, 10);
        out.sha256 = files.empty() ? Sha256Hex("") : HashFiles(files);
        return out;
      }
      try {
        out.temp = std::make_unique<TempDir>("r3check-sweep-");
      } catch (const std::runtime_error& e) {
        throw SourceError(version.source + ": " + e.what());
      }
      for (const auto& [p, bytes] : files) {
        const fs::path target = fs::path(out.temp->path()) / p;
        std::error_code ec;
        fs::create_directories(target.parent_path(), ec);
        std::ofstream file(target, std::ios::binary);
        file << bytes;
        if (!file.flush()) throw SourceError(version.source + ": cannot write " + target.string());
      }
      out.sut_path = out.temp->path();
      break;
    }
  }
  out.sha256 = HashFiles(files);
  return out;
}

}  // namespace r3::cli
