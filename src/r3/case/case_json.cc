#include "r3/case/case_json.h"

#include "r3/case/case_fields.h"

namespace r3 {

nlohmann::ordered_json CaseToJson(const Case& c) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const CaseField& field : CaseFields()) {
    if (field.optional && field.get(c, 0) == field.lo) continue;
    switch (field.kind) {
      case FieldKind::kInt:
        out[std::string(field.name)] = field.get(c, 0);
        break;
      case FieldKind::kChoice:
        // An off/on choice is a JSON bool; the others their spelling.
        if (field.choices.size() == 2 && field.choices[1] == "on") {
          out[std::string(field.name)] = field.get(c, 0) != 0;
        } else {
          out[std::string(field.name)] = FieldText(field, c);
        }
        break;
      case FieldKind::kPerRank:
        out[std::string(field.name)] = FieldValues(field, c);  // padded too: JSON is explicit
        break;
    }
  }
  return out;
}

}  // namespace r3
