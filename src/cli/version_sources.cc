#include "cli/version_sources.h"

#include <algorithm>
#include <filesystem>

namespace r3::cli {
namespace {

namespace fs = std::filesystem;

// A checkout of vLLM, of SGLang (either place its capturer has lived), or
// of vllm-ascend (any of its capture files).
bool IsCheckout(const fs::path& dir) {
  std::error_code ec;
  for (const char* path : {kCapturePath, kSglangCapturePath, kSglangOldCapturePath,
                           kAscendPatchPath, kAscendSubclassPath, kAscendInitPatchPath}) {
    if (fs::is_regular_file(dir / path, ec)) return true;
  }
  return false;
}

// The versions under `dir`, in path order: a checkout is one, and is not
// looked into; every other *.py file is one.
void Walk(const std::string& source, const fs::path& dir, std::vector<Version>* out) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) throw SourceError(source + ": cannot list " + dir.string() + ": " + ec.message());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& p : entries) {
    if (fs::is_directory(p, ec)) {
      if (IsCheckout(p)) {
        out->push_back({Version::Kind::kCheckout, source, p.string(), p.string(), {}, {}});
      } else {
        Walk(source, p, out);
      }
    } else if (p.extension() == ".py" && fs::is_regular_file(p, ec)) {
      out->push_back({Version::Kind::kFile, source, p.string(), p.string(), {}, {}});
    }
  }
}

Version RevisionVersion(const std::string& source, const std::shared_ptr<const GitCheckout>& git,
                        const Commit& commit) {
  Version v;
  v.kind = Version::Kind::kRevision;
  v.source = source;
  v.label = git->dir() + "@" + commit.sha.substr(0, 10);
  v.commit = commit;
  v.git = git;
  return v;
}

ExpandedSource ExpandRevisions(const std::string& source, size_t at) {
  const std::string dir = source.substr(0, at);
  const std::string rev = source.substr(at + 1);
  ExpandedSource expanded;
  try {
    std::error_code ec;
    if (dir.empty() || !fs::exists(dir, ec)) throw GitError("no such checkout: " + dir);
    auto git = std::make_shared<const GitCheckout>(dir);
    const size_t dots = rev.find("..");
    if (dots == std::string::npos) {
      expanded.versions.push_back(RevisionVersion(source, git, git->Resolve(rev)));
      return expanded;
    }
    const std::string a = rev.substr(0, dots), b = rev.substr(dots + 2);
    if (a.empty() || b.empty() || b.starts_with(".")) {
      throw GitError("a range is A..B, both commits named, not '" + rev + "'");
    }
    const Commit from = git->Resolve(a);
    const Commit to = git->Resolve(b);
    for (const Commit& c : git->Touching(from, to, VersionPaths())) {
      expanded.versions.push_back(RevisionVersion(source, git, c));
    }
    if (expanded.versions.empty()) {
      throw GitError("no commit in " + rev + " touches " + kCapturePath + " or " + kSizingPath);
    }
    expanded.range_start = RevisionVersion(source, git, from);
  } catch (const GitError& e) {
    throw SourceError(source + ": " + e.what());
  }
  return expanded;
}

}  // namespace

const std::vector<std::string>& VersionPaths() {
  static const std::vector<std::string> paths = {
      kCapturePath, kSizingPath, kSglangCapturePath, "python/sglang/srt/state_capturer/base.py",
      kSglangOldCapturePath, "python/sglang/srt/layers/topk_capturer_base.py",
      kAscendPatchPath, kAscendSubclassPath, kAscendInitPatchPath};
  return paths;
}

bool IsCapturePath(const std::string& path) {
  return path == kCapturePath || path == kSglangCapturePath || path == kSglangOldCapturePath ||
         path == kAscendPatchPath || path == kAscendSubclassPath || path == kAscendInitPatchPath;
}

std::string KindName(Version::Kind kind) {
  switch (kind) {
    case Version::Kind::kFile:
      return "file";
    case Version::Kind::kCheckout:
      return "checkout";
    case Version::Kind::kRevision:
      return "revision";
  }
  return "?";
}

ExpandedSource ExpandSource(const std::string& source) {
  std::error_code ec;
  const fs::path path(source);
  const size_t at = source.rfind('@');
  if (source.empty()) throw SourceError("sweep: an empty SOURCE");
  if (!fs::exists(path, ec)) {
    if (at != std::string::npos) return ExpandRevisions(source, at);
    throw SourceError(source + ": no such file or folder");
  }
  ExpandedSource expanded;
  if (fs::is_directory(path, ec)) {
    if (IsCheckout(path)) {
      expanded.versions.push_back({Version::Kind::kCheckout, source, source, source, {}, {}});
    } else {
      Walk(source, path, &expanded.versions);
      if (expanded.versions.empty()) {
        throw SourceError(source + ": no *.py file and no checkout under it");
      }
    }
  } else if (fs::is_regular_file(path, ec)) {
    expanded.versions.push_back({Version::Kind::kFile, source, source, source, {}, {}});
  } else {
    throw SourceError(source + ": not a file or a folder");
  }
  return expanded;
}

}  // namespace r3::cli
