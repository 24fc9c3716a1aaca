// A version's files on disk, ready for `--sut vllm:PATH`, and the hash that
// says when two versions are the same. A revision is written out of git
// (the VersionPaths() it has) into a fresh temporary folder laid out like a
// checkout; a file or a checkout is used where it is.
#ifndef R3_CLI_VERSION_FILES_H_
#define R3_CLI_VERSION_FILES_H_

#include <memory>
#include <string>

#include "cli/temp_dir.h"
#include "cli/version_sources.h"

namespace r3::cli {

struct VersionFiles {
  std::string sut_path;  // for vllm:PATH
  // SHA-256 of the files that make up the version: of the file's bytes
  // when it is one file (so it matches sha256sum), else of the lines
  // "<sha256 of the file>  <path in the checkout>\n" of each, in
  // VersionPaths() order.
  std::string sha256;
  std::string error;  // set when the version has nothing to judge
  std::unique_ptr<TempDir> temp;  // a revision's folder, removed with this
};

// Throws SourceError for a git failure or a file that cannot be read.
VersionFiles MaterializeVersion(const Version& version);

}  // namespace r3::cli

#endif  // R3_CLI_VERSION_FILES_H_
