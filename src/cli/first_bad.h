// `sweep --first-bad`: the oldest failing commit after the newest passing
// one in a range, found by bisection (git bisect's rule), judging
// O(log n) commits instead of all. The assumption, checked first: the
// range's start passes and its end fails.
#ifndef R3_CLI_FIRST_BAD_H_
#define R3_CLI_FIRST_BAD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace r3::cli {

enum class Judged { kPass, kFail, kError };

struct Bisection {
  enum class Outcome {
    kFound,        // first_bad fails, last_good passes, nothing between
    kEndPasses,    // the end passes: no failure to look for
    kStartFails,   // the start already fails: the first bad commit is at or before it
    kUndecided,    // versions that could not be judged hide the answer
  };
  Outcome outcome = Outcome::kUndecided;
  int64_t first_bad = -1;  // kFound (also the bound for kUndecided)
  int64_t last_good = -1;  // kFound; -1 is the start
  std::vector<int64_t> judged;     // in the order judged; -1 is the start
  std::vector<int64_t> unjudged;   // kUndecided: the errors between last_good and first_bad
};

// "found" | "end-passes" | "start-fails" | "undecided"
std::string OutcomeName(Bisection::Outcome outcome);

// Commits 0..n-1 of a range, oldest first, and its start -1. `judge` is
// called at most once per index: first n-1 (the end), then -1 (the start),
// then the middle of what is left, skipping versions that could not be
// judged (as `git bisect skip`).
Bisection FindFirstBad(int64_t n, const std::function<Judged(int64_t)>& judge);

}  // namespace r3::cli

#endif  // R3_CLI_FIRST_BAD_H_
