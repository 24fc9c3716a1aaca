// Text for XML documents (the SVG pictures, the JUnit report).
#ifndef R3_CHECK_XML_TEXT_H_
#define R3_CHECK_XML_TEXT_H_

#include <string>
#include <string_view>

namespace r3::check {

// Escapes & < > " ' for element text and attribute values; control bytes
// that XML 1.0 forbids (from a hostile file name or engine message) become
// '?', so the document always parses.
std::string XmlText(std::string_view text);

}  // namespace r3::check

#endif  // R3_CHECK_XML_TEXT_H_
