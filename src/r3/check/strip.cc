#include "r3/check/strip.h"

#include <algorithm>
#include <sstream>

namespace r3::check {
namespace {

char OwnerChar(const RowRun& run) {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  if (run.is_pad()) return '.';
  return run.dp < 36 ? kDigits[run.dp] : '*';
}

}  // namespace

std::string RenderStrip(const RowRuns& runs, int width) {
  const int64_t total = TotalRows(runs);
  std::string out = "|";
  if (total == 0) return "|(empty)|";
  const bool exact = total <= width;
  ForEachPlainRun(runs, [&](const RowRun& run) {
    int64_t chars = run.count;
    if (!exact) chars = std::max<int64_t>(1, run.count * width / total);
    out.append(static_cast<size_t>(chars), OwnerChar(run));
    out += '|';
    return true;
  });
  return out;
}

std::string RenderLegend(const RowRuns& runs, size_t max_runs) {
  std::ostringstream out;
  int64_t offset = 0;
  size_t i = 0;
  ForEachPlainRun(runs, [&](const RowRun& run) {
    if (i == max_runs) {
      out << "  ... " << PlainRunCount(runs) - static_cast<int64_t>(max_runs) << " more runs";
      return false;
    }
    // the tensor's rows [a..b), then what they hold in DescribeRuns' notation
    // (the one explain uses for captured and expected rows too)
    out << (i++ == 0 ? "" : "  ") << '[' << offset << ".." << offset + run.count << ") "
        << DescribeRuns({run});
    offset += run.count;
    return true;
  });
  return out.str();
}

}  // namespace r3::check
