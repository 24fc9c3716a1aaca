#include "r3/check/xml_text.h"

namespace r3::check {

std::string XmlText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        const auto byte = static_cast<unsigned char>(ch);
        out += byte < 0x20 && ch != '\n' && ch != '\t' && ch != '\r' ? '?' : ch;
    }
  }
  return out;
}

}  // namespace r3::check
