#include "cli/ci_report.h"

#include <map>
#include <sstream>

#include "cli/output_file.h"
#include "r3/case/case_format.h"
#include "r3/case/case_json.h"
#include "r3/check/report.h"
#include "r3/check/xml_text.h"

namespace r3::cli {

CaseRecord MakeRecord(const std::string& source, const std::string& group, const Case& c,
                      const check::CaseResult& result, const sut::Producer& producer,
                      bool listed) {
  CaseRecord record{source, group, check::VerdictWord(result), "", nlohmann::ordered_json::object()};
  const bool failed = record.verdict == "fail";
  if (failed) record.text = check::VerdictText(source, result, producer);
  if (failed || listed) {
    record.detail = {{"case", CaseToJson(c)},
                     {"case_text", PrintCase(c)},
                     {"violations", check::ViolationsJson(result)}};
    // What a GPU producer checked: its mode, values and first mismatch.
    if (result.observation.device) record.detail["device"] = check::DeviceJson(result.observation);
  }
  return record;
}

nlohmann::ordered_json RecordJson(const CaseRecord& record) {
  nlohmann::ordered_json j = {{"source", record.source},
                              {"group", record.group},
                              {"verdict", record.verdict},
                              {"ok", record.verdict != "fail"}};
  for (const auto& [key, value] : record.detail.items()) j[key] = value;
  if (!record.text.empty()) j["report"] = record.text;
  return j;
}

void WriteJunit(const std::string& path, const std::string& name,
                const std::vector<CaseRecord>& records) {
  std::map<std::string, std::vector<const CaseRecord*>> groups;
  std::vector<std::string> order;
  int failures = 0;
  for (const CaseRecord& r : records) {
    if (groups.find(r.group) == groups.end()) order.push_back(r.group);
    groups[r.group].push_back(&r);
    failures += r.verdict == "fail" ? 1 : 0;
  }
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"" << check::XmlText(name) << "\" tests=\"" << records.size()
      << "\" failures=\"" << failures << "\">\n";
  for (const std::string& group : order) {
    const auto& members = groups[group];
    int group_failures = 0;
    for (const CaseRecord* r : members) group_failures += r->verdict == "fail" ? 1 : 0;
    out << "  <testsuite name=\"" << check::XmlText(name + "." + group) << "\" tests=\"" << members.size()
        << "\" failures=\"" << group_failures << "\">\n";
    for (const CaseRecord* r : members) {
      out << "    <testcase classname=\"" << check::XmlText(name + "." + group) << "\" name=\""
          << check::XmlText(r->source) << "\"";
      if (r->verdict != "fail") {
        out << "/>\n";
        continue;
      }
      const std::string headline = r->text.substr(0, r->text.find('\n'));
      out << ">\n      <failure message=\"" << check::XmlText(headline) << "\">"
          << check::XmlText(r->text + "--- case ---\n" + r->detail.value("case_text", std::string()))
          << "</failure>\n    </testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
  WriteOutputFile("--junit", path, out.str());
}

std::string JunitErrorXml(const std::string& message) {
  const std::string text = check::XmlText(message);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<testsuites name=\"r3check\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
         "  <testsuite name=\"r3check.error\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
         "    <testcase classname=\"r3check.error\" name=\"r3check run\">\n"
         "      <error message=\"" + text + "\">the run stopped (exit 2 or 3) before it checked "
         "everything: " + text + "</error>\n"
         "    </testcase>\n  </testsuite>\n</testsuites>\n";
}

}  // namespace r3::cli
