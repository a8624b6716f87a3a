#pragma once
// Writes well-formed XML (the report is XHTML with inline SVG, so that tests parse it with
// an XML parser): elements opened and closed in order, text and attribute values escaped.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace layerplan::report {

using Attribute = std::pair<std::string_view, std::string>;

// `text` with &, <, > and " escaped.
std::string xml_escaped(std::string_view text);

// A coordinate or length with at most one decimal ("12", "12.5"): enough for pixels, and
// short, which keeps the report of a 1,000-layer model small.
std::string px(double value);

class XmlWriter {
 public:
  // <tag a="v" ...>; closed by close().
  void open(std::string_view tag, std::initializer_list<Attribute> attributes = {});
  void close();
  // <tag a="v" .../> or <tag a="v">text</tag>.
  void leaf(std::string_view tag, std::initializer_list<Attribute> attributes, std::string_view text = {});
  // An element with an SVG <title> child (the browser's tooltip).
  void titled(std::string_view tag, std::initializer_list<Attribute> attributes, std::string_view title);
  void text(std::string_view text);
  // Markup written as is (the style sheet); it must be well-formed and hold no '<' or '&'.
  void raw(std::string_view markup);

  // The document; every element opened must have been closed.
  std::string finish();

 private:
  void start_tag(std::string_view tag, std::initializer_list<Attribute> attributes);
  std::string out_;
  std::vector<std::string> open_;
};

}  // namespace layerplan::report
