// The seeds of the case domain: a corpus folder's case files. The CLI's
// `verify`, the regression runner, the coverage and mutant tests all list
// corpus/{regressions,seeds,findings} with this, so what counts as a case
// file (a regular `*.r3case` file directly in the folder) is decided once.
#ifndef R3_CASE_CORPUS_H_
#define R3_CASE_CORPUS_H_

#include <stdexcept>
#include <string>
#include <vector>

namespace r3 {

// "corpus: cannot list DIR: why" or "corpus: cannot read PATH: why".
class CorpusError : public std::runtime_error {
 public:
  explicit CorpusError(const std::string& what) : std::runtime_error(what) {}
};

// The `*.r3case` regular files directly under `dir`, sorted by path; none
// when `dir` is not a folder (a corpus may lack one). An entry that cannot
// be looked at (a symlink loop, no permission), or a folder that cannot be
// listed, is a CorpusError naming it.
std::vector<std::string> ListCaseFiles(const std::string& dir);

}  // namespace r3

#endif  // R3_CASE_CORPUS_H_
