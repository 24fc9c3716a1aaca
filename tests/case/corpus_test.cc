// What counts as a case file of a corpus folder is decided in one place.
#include "r3/case/corpus.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace r3 {
namespace {

namespace fs = std::filesystem;

class CorpusTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("r3-corpus-test-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Touch(const std::string& name) { std::ofstream(dir_ / name) << "r3case 1\n"; }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(CorpusTest, ListsTheR3caseFilesSortedAndNothingElse) {
  Touch("b.r3case");
  Touch("a.r3case");
  Touch("c.txt");
  Touch("r3case");
  Touch(".r3case.swp");
  fs::create_directories(dir_ / "d.r3case");  // a folder is no case file
  fs::create_directories(dir_ / "sub");
  std::ofstream(dir_ / "sub" / "e.r3case") << "r3case 1\n";  // not directly in the folder
  EXPECT_EQ(ListCaseFiles(dir_.string()),
            (std::vector<std::string>{Path("a.r3case"), Path("b.r3case")}));
}

TEST_F(CorpusTest, FilesComeSortedByPathWhateverTheFolderOrder) {
  std::vector<std::string> want;
  for (const char* name : {"z", "m", "a", "q", "b", "y", "c", "x", "d", "w", "e", "v"}) {
    Touch(std::string(name) + ".r3case");
    want.push_back(Path(std::string(name) + ".r3case"));
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(ListCaseFiles(dir_.string()), want);
}

// Lists `dir` with every file descriptor taken (EMFILE), so that the folder
// is there but cannot be opened; exits 0 on the expected CorpusError.
[[noreturn]] void ListWithNoDescriptorLeft(const std::string& dir) {
  const rlimit limit{64, 64};
  setrlimit(RLIMIT_NOFILE, &limit);
  while (dup(0) >= 0) {
  }
  try {
    ListCaseFiles(dir);
    std::_Exit(1);
  } catch (const CorpusError& e) {
    std::_Exit(std::string(e.what()).rfind("corpus: cannot list " + dir + ": ", 0) == 0 ? 0 : 2);
  }
}

// In a child process, so that the test's own descriptors stay free.
TEST_F(CorpusTest, AFolderThatCannotBeListedIsAnErrorNamingIt) {
  Touch("a.r3case");
  EXPECT_EXIT(ListWithNoDescriptorLeft(dir_.string()), testing::ExitedWithCode(0), "");
}

TEST_F(CorpusTest, AFolderThatIsNotThereHoldsNoCases) {
  EXPECT_TRUE(ListCaseFiles(Path("missing")).empty());
  Touch("file.r3case");
  EXPECT_TRUE(ListCaseFiles(Path("file.r3case")).empty());  // a file is no folder
  EXPECT_TRUE(ListCaseFiles(dir_.string()).size() == 1);
}

TEST_F(CorpusTest, AnEntryThatCannotBeLookedAtIsAnErrorNamingIt) {
  fs::create_symlink(dir_ / "loop.r3case", dir_ / "loop.r3case");  // ELOOP on stat
  try {
    ListCaseFiles(dir_.string());
    ADD_FAILURE() << "listed a symlink loop";
  } catch (const CorpusError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("corpus: cannot read " + Path("loop.r3case") + ": ", 0), 0u)
        << e.what();
  }
}

TEST_F(CorpusTest, ALinkToACaseFileCounts) {
  Touch("real.txt");
  fs::create_symlink(dir_ / "real.txt", dir_ / "link.r3case");
  EXPECT_EQ(ListCaseFiles(dir_.string()), (std::vector<std::string>{Path("link.r3case")}));
}

}  // namespace
}  // namespace r3
