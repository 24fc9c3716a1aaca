// A fresh temporary folder, removed with everything in it when it goes.
#ifndef R3_CLI_TEMP_DIR_H_
#define R3_CLI_TEMP_DIR_H_

#include <string>

namespace r3::cli {

class TempDir {
 public:
  // Under $TMPDIR, else /tmp; `prefix` starts its name. Throws
  // std::runtime_error when it cannot be made.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace r3::cli

#endif  // R3_CLI_TEMP_DIR_H_
