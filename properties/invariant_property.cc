#include "properties/invariant_property.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include <rapidcheck.h>

#include "properties/case_classes.h"
#include "properties/case_gen.h"
#include "r3/case/case_format.h"
#include "r3/check/report.h"

namespace r3::props {
namespace {

std::string RankText(const check::Violation& v) {
  if (v.dp < 0 && v.tp < 0) return "all ranks";
  std::string out;
  if (v.dp >= 0) out += "dp" + std::to_string(v.dp);
  if (v.tp >= 0) out += (out.empty() ? "" : "/") + std::string("tp") + std::to_string(v.tp);
  return out;
}

[[noreturn]] void BadSetting(const std::string& variable, const std::string& problem) {
  std::fprintf(stderr, "r3 properties: %s: %s\n", variable.c_str(), problem.c_str());
  std::exit(2);
}

sut::SutOptions SutFromEnvironment() {
  sut::SutOptions options;
  if (const char* v = std::getenv("R3_SUT"); v != nullptr && *v != '\0') {
    const std::string name = v;
    if (name.rfind("vllm:", 0) == 0 || name.rfind("exec:", 0) == 0) {
      BadSetting("R3_SUT", "an engine SUT runs through `r3check verify --sut " + name +
                               "`; the property suite checks the built-in SUTs");
    }
    const auto version = sut::FindSut(name);
    if (!version) BadSetting("R3_SUT", "unknown SUT '" + name + "' (see `r3check mutants`)");
    options.version = *version;
  }
  if (const char* v = std::getenv("R3_POLICY"); v != nullptr && *v != '\0') {
    const auto policy = sut::FindPolicy(v);
    if (!policy) BadSetting("R3_POLICY", "unknown policy '" + std::string(v) + "' (see `r3check mutants`)");
    options.policy = *policy;
  }
  if (const char* v = std::getenv("R3_MUTANT"); v != nullptr) {
    if (const auto bad = sut::SetMutantsByName(options, v)) {
      BadSetting("R3_MUTANT", "unknown mutant '" + *bad + "' (see `r3check mutants`)");
    }
  }
  return options;
}

}  // namespace

sut::Producer& PropertyProducer() {
  static const std::shared_ptr<sut::Producer> producer =
      sut::MakeHostProducer(SutFromEnvironment());
  return *producer;
}

const check::Violation* FirstUnexplained(const check::CaseResult& result,
                                         std::optional<check::Invariant> inv) {
  for (size_t i = 0; i < result.verdict.violations.size(); ++i) {
    const check::Violation& v = result.verdict.violations[i];
    if (inv && v.invariant != *inv) continue;
    if (result.explained[i] == nullptr) return &v;
  }
  return nullptr;
}

std::string FailureReport(const Case& c, const check::CaseResult& result,
                          const check::Violation& v, const sut::Producer& producer) {
  std::string out = "invariant " + std::to_string(static_cast<int>(v.invariant)) + " (" +
                    std::string(check::InvariantName(v.invariant)) + ") violated on " +
                    RankText(v) + " [" + check::DescribeOptions(producer) + "]\n  " + v.message +
                    "\n";
  if (v.has_rows) {
    out += "  captured: " + DescribeRuns(v.captured) + "\n  expected: " +
           DescribeRuns(v.expected) + "\n";
  }
  out += check::VerdictText("<generated>", result, producer);
  out += "\n--- case (save as corpus/regressions/NAME.r3case) ---\n" + PrintCase(c) + "---\n";
  return out;
}

void CheckCase(const Case& c, std::optional<check::Invariant> inv, sut::Producer& producer) {
  const check::CaseResult result = std::move(check::RunCases({&c, 1}, producer).at(0));
  if (const check::Violation* v = FirstUnexplained(result, inv)) {
    RC_FAIL(FailureReport(c, result, *v, producer));
  }
}

void InvariantHolds(check::Invariant inv, sut::Producer& producer) {
  const Case c = *GenCase();
  CheckCase(c, inv, producer);
}

void AllInvariantsHold(sut::Producer& producer) {
  const Case c = *GenCase();
  ClassifyForRapidCheck(c);
  CheckCase(c, std::nullopt, producer);
}

}  // namespace r3::props
