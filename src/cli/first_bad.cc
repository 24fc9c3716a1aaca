#include "cli/first_bad.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace r3::cli {

std::string OutcomeName(Bisection::Outcome outcome) {
  switch (outcome) {
    case Bisection::Outcome::kFound:
      return "found";
    case Bisection::Outcome::kEndPasses:
      return "end-passes";
    case Bisection::Outcome::kStartFails:
      return "start-fails";
    case Bisection::Outcome::kUndecided:
      return "undecided";
  }
  return "?";
}

Bisection FindFirstBad(int64_t n, const std::function<Judged(int64_t)>& judge) {
  Bisection b;
  const auto run = [&](int64_t i) {
    b.judged.push_back(i);
    return judge(i);
  };
  const Judged end = run(n - 1);
  if (end == Judged::kPass) {
    b.outcome = Bisection::Outcome::kEndPasses;
    return b;
  }
  if (end == Judged::kError) {
    b.unjudged = {n - 1};
    return b;
  }
  const Judged start = run(-1);
  if (start == Judged::kFail) {
    b.outcome = Bisection::Outcome::kStartFails;
    return b;
  }
  if (start == Judged::kError) {
    b.unjudged = {-1};
    return b;
  }
  // Invariant: lo passes (or is the start), hi fails.
  int64_t lo = -1, hi = n - 1;
  std::set<int64_t> errors;
  while (true) {
    std::vector<int64_t> open;
    for (int64_t i = lo + 1; i < hi; ++i) {
      if (errors.count(i) == 0) open.push_back(i);
    }
    if (open.empty()) break;
    // The one nearest the middle of (lo, hi): with no errors, the middle.
    const int64_t middle = lo + (hi - lo) / 2;
    const int64_t mid = *std::min_element(open.begin(), open.end(), [&](int64_t x, int64_t y) {
      return std::llabs(x - middle) < std::llabs(y - middle);
    });
    switch (run(mid)) {
      case Judged::kPass:
        lo = mid;
        break;
      case Judged::kFail:
        hi = mid;
        break;
      case Judged::kError:
        errors.insert(mid);
        break;
    }
  }
  b.first_bad = hi;
  b.last_good = lo;
  for (int64_t e : errors) {
    if (e > lo && e < hi) b.unjudged.push_back(e);
  }
  b.outcome = b.unjudged.empty() ? Bisection::Outcome::kFound : Bisection::Outcome::kUndecided;
  return b;
}

}  // namespace r3::cli
