#include "report/xml_writer.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace layerplan::report {

std::string xml_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        out += (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') ? ' ' : c;
    }
  }
  return out;
}

std::string px(double value) {
  const double rounded = std::round(value * 10) / 10;
  char text[32];
  if (rounded == std::floor(rounded)) {
    std::snprintf(text, sizeof text, "%.0f", rounded);
  } else {
    std::snprintf(text, sizeof text, "%.1f", rounded);
  }
  return text;
}

void XmlWriter::start_tag(std::string_view tag, std::initializer_list<Attribute> attributes) {
  out_ += '<';
  out_ += tag;
  for (const auto& [name, value] : attributes) {
    out_ += ' ';
    out_ += name;
    out_ += "=\"";
    out_ += xml_escaped(value);
    out_ += '"';
  }
}

void XmlWriter::open(std::string_view tag, std::initializer_list<Attribute> attributes) {
  start_tag(tag, attributes);
  out_ += '>';
  open_.emplace_back(tag);
}

void XmlWriter::close() {
  if (open_.empty()) throw std::logic_error("XmlWriter::close: no element open");
  out_ += "</" + open_.back() + ">";
  open_.pop_back();
}

void XmlWriter::leaf(std::string_view tag, std::initializer_list<Attribute> attributes, std::string_view text) {
  start_tag(tag, attributes);
  if (text.empty()) {
    out_ += "/>";
    return;
  }
  out_ += '>';
  out_ += xml_escaped(text);
  out_ += "</";
  out_ += tag;
  out_ += '>';
}

void XmlWriter::titled(std::string_view tag, std::initializer_list<Attribute> attributes, std::string_view title) {
  start_tag(tag, attributes);
  out_ += "><title>";
  out_ += xml_escaped(title);
  out_ += "</title></";
  out_ += tag;
  out_ += '>';
}

void XmlWriter::text(std::string_view text) { out_ += xml_escaped(text); }

void XmlWriter::raw(std::string_view markup) { out_ += markup; }

std::string XmlWriter::finish() {
  if (!open_.empty()) throw std::logic_error("XmlWriter::finish: <" + open_.back() + "> not closed");
  return std::move(out_);
}

}  // namespace layerplan::report
