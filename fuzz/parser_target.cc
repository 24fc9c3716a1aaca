// libFuzzer target for the case parser: any bytes either parse or raise
// CaseFormatError (no other exception, crash, UB or leak), and the canonical
// print is a fixed point: print(parse(print(parse(x)))) == print(parse(x)).
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/replay_hooks.h"
#include "r3/case/case_format.h"

extern "C" {
volatile std::sig_atomic_t r3_fuzz_finding = 0;
int r3_fuzz_rejected = 0;
}

namespace {

// Every abort of this target is a finding (replay_hooks.h).
[[noreturn]] void Finding() {
  r3_fuzz_finding = 1;
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  r3::Case parsed;
  r3_fuzz_rejected = 0;
  try {
    parsed = r3::ParseCase(text, "<fuzz>");
  } catch (const r3::CaseFormatError& e) {
    // Rejected, but kept (return 0): rejected inputs are most of the
    // parser's coverage. The replay's --expect reads this.
    r3_fuzz_rejected = 1;
    // The error is one line: "SOURCE:LINE: field: message".
    const std::string_view what = e.what();
    if (what.rfind("<fuzz>:", 0) != 0 || what.find('\n') != std::string_view::npos) {
      std::fprintf(stderr, "r3 fuzz: malformed parse error: %s\n", e.what());
      Finding();
    }
    return 0;
  }
  const std::string once = r3::PrintCase(parsed);
  r3::Case reparsed;
  try {
    reparsed = r3::ParseCase(once, "<printed>");
  } catch (const r3::CaseFormatError& e) {
    std::fprintf(stderr, "r3 fuzz: printed case does not parse: %s\n%s", e.what(), once.c_str());
    Finding();
  }
  const std::string twice = r3::PrintCase(reparsed);
  if (!(reparsed == parsed) || twice != once) {
    std::fprintf(stderr, "r3 fuzz: print is not canonical\n--- once ---\n%s--- twice ---\n%s",
                 once.c_str(), twice.c_str());
    Finding();
  }
  return 0;
}
