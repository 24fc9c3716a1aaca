#include "cli/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/output_guard.h"
#include "cli/sut_flags.h"

namespace r3::cli {
namespace {

[[noreturn]] void CannotWrite(const std::string& flag, const std::string& path, int error) {
  throw UsageError(flag + ": cannot write " + path + " (" +
                   (error != 0 ? std::strerror(error) : "write failed") + ")");
}

// Opens a new file beside `target` (same folder, so rename is atomic):
// "DIR/.NAME.r3check-PID-N". Returns the fd (or -1, errno set).
int OpenTempBeside(const std::string& target, std::string* temp) {
  const std::filesystem::path p(target);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  for (int n = 0; n < 100; ++n) {
    *temp = (dir / ("." + p.filename().string() + ".r3check-" + std::to_string(getpid()) + "-" +
                    std::to_string(n)))
                .string();
    const int fd = open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// What stat says of `path`: 0 and `st` filled, or the errno; a dangling
// symlink is ENOENT, as open would say.
int StatOf(const std::string& path, struct stat* st) {
  return stat(path.c_str(), st) == 0 ? 0 : errno;
}

}  // namespace

void ProbeOutputFile(const std::string& flag, const std::string& path) {
  struct stat st;
  const int error = StatOf(path, &st);
  struct stat link;
  if (error == ENOENT && lstat(path.c_str(), &link) == 0) CannotWrite(flag, path, ENOENT);
  if (error != 0 && error != ENOENT) CannotWrite(flag, path, error);
  if (error == 0 && S_ISDIR(st.st_mode)) {
    throw UsageError(flag + ": " + path + " is a folder, not a file");
  }
  if (error == 0 && !S_ISREG(st.st_mode)) return;  // a device or a pipe: written in place
  if (error == 0) {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);  // no O_TRUNC: only a probe
    if (fd < 0) CannotWrite(flag, path, errno);
    close(fd);
  }
  std::string temp;
  const int fd = OpenTempBeside(path, &temp);
  if (fd < 0) CannotWrite(flag, path, errno);
  close(fd);
  unlink(temp.c_str());
}

void WriteOutputFile(const std::string& flag, const std::string& path, const std::string& text) {
  // The last line of defence: whatever claimed it, an input stays as it is.
  if (IsInput(path)) throw UsageError(flag + ": " + path + " is also an input of this run; not writing it");
  struct stat st;
  const bool exists = StatOf(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw UsageError(flag + ": " + path + " is a folder, not a file");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or a pipe (/dev/stdout, /dev/full): there is nothing to rename.
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) CannotWrite(flag, path, errno);
    const bool ok = WriteAll(fd, text);
    const int error = errno;
    if (close(fd) != 0 || !ok) CannotWrite(flag, path, ok ? errno : error);
    return;
  }
  // A symlink keeps pointing where it did: the file it names is replaced.
  std::string target = path;
  std::error_code ec;
  if (exists) {
    const std::filesystem::path real = std::filesystem::canonical(path, ec);
    if (!ec) target = real.string();
  }
  // Written beside the target and renamed when complete: a full disk or a
  // killed run leaves the old file or none, never a truncated one.
  std::string temp;
  const int fd = OpenTempBeside(target, &temp);
  if (fd < 0) CannotWrite(flag, path, errno);
  if (exists) fchmod(fd, st.st_mode & 07777);
  bool ok = WriteAll(fd, text);
  int error = ok ? 0 : errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (ok && rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    unlink(temp.c_str());
    CannotWrite(flag, path, error);
  }
}

}  // namespace r3::cli
