// Structural minimization of a failing case: fewer DP ranks, smaller TP, EP
// and SP off, naive dispatch, smaller token counts and M, fewer layers,
// experts and top_k, for as long as the same invariants still fail (and no
// known finding explains them). Greedy and deterministic: candidates are
// tried in a fixed order, so the same input always gives the same case.
#ifndef R3_MINIMIZE_MINIMIZE_H_
#define R3_MINIMIZE_MINIMIZE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "r3/case/case.h"
#include "r3/check/verdict.h"
#include "r3/sut/producer.h"

namespace r3::minimize {

struct MinimizeOptions {
  // Who observes each candidate: the host SUT by default, an engine, or the
  // GPU path (a failure only the device shows shrinks on the device).
  std::shared_ptr<sut::Producer> producer = sut::MakeHostProducer();
  // Wall-clock budget. Minimization normally ends long before it; when it
  // does not, the result says so (and may then depend on machine speed).
  int64_t budget_ms = 10000;
  // Deterministic cap on candidate evaluations.
  int64_t max_evaluations = 200000;
  // Keep only this invariant failing instead of the input's exact set.
  std::optional<check::Invariant> invariant;
  // Probe each field of the minimal case (MinimizeResult::fields, the
  // header of MinimizedText). Off, the minimal case is the same and
  // `fields` is empty (sweep prints only the case: one run of the SUT per
  // probe saved).
  bool report_fields = true;
};

// What changing one field of the minimal case does.
struct FieldProbe {
  std::string value;    // the alternative value, as printed in the case
  std::string outcome;  // "same failure" | "passes" | "fails differently (...)"
  bool same = false;
};

struct FieldReport {
  std::string field;
  std::string value;  // the minimal case's value
  std::vector<FieldProbe> probes;
  bool free() const;  // every probed alternative keeps the failure
};

struct MinimizeResult {
  bool input_fails = false;  // false: nothing to minimize
  Case original;
  Case minimal;
  // The unexplained invariants of the input, and the ones the minimizer
  // kept failing (equal unless MinimizeOptions::invariant is set).
  std::vector<check::Invariant> input_failure;
  std::vector<check::Invariant> kept;
  int64_t tried = 0;     // candidate cases evaluated
  int64_t accepted = 0;  // candidates that kept the failure
  bool budget_exhausted = false;
  // Candidates and probes the producer could not run (it threw: an engine
  // that died, a CUDA error): never taken, but said, with the first error.
  int64_t unrunnable = 0;
  std::string first_unrunnable;
  std::vector<FieldReport> fields;
  // False when the budget ran out before every field was probed.
  bool fields_complete = true;
};

// Sorted, distinct invariants with a violation that no known finding
// explains; empty when the case passes (or only fails in known ways).
std::vector<check::Invariant> UnexplainedInvariants(const Case& c, sut::Producer& producer);

// Throws std::invalid_argument when `c` is not a valid case.
MinimizeResult Minimize(const Case& c, const MinimizeOptions& options);

// The minimal case in the r3case format, preceded by `#` comment lines that
// say what fails, under which SUT, and which fields can vary without changing
// the failure. The whole text parses as a case file. No dates or timings:
// the same result gives the same bytes.
std::string MinimizedText(const MinimizeResult& result, const sut::Producer& producer);

// "3 rows-exact, 4 concat-global"
std::string InvariantList(const std::vector<check::Invariant>& invariants);

// A file-name-safe default name: "<mutant or sut>-<policy>-inv3-4".
std::string DefaultRegressionName(const MinimizeResult& result, const sut::Producer& producer);

}  // namespace r3::minimize

#endif  // R3_MINIMIZE_MINIMIZE_H_
