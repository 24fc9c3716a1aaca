#include "cli/case_one_line.h"

#include <sstream>

#include "r3/case/case_format.h"

namespace r3::cli {

std::string CaseOneLine(const Case& c) {
  std::istringstream lines(PrintCase(c));
  std::string line, out;
  bool header = true;
  while (std::getline(lines, line)) {
    if (header) {  // "r3case 1"
      header = false;
      continue;
    }
    if (line.empty()) continue;
    if (!out.empty()) out += "; ";
    out += line;
  }
  return out;
}

}  // namespace r3::cli
