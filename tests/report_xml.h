#pragma once
// The report parsed as data for the report tests: libxml2's XML parser (the report is
// well-formed XHTML), and the elements of a tree found by name and attribute.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace layerplan::testing_report {

struct XmlDocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using XmlDoc = std::unique_ptr<xmlDoc, XmlDocFree>;

// Parses `text` strictly (no network, no entity expansion from outside); throws with
// libxml2's message when it is not well-formed.
inline XmlDoc parse_xml(const std::string& text) {
  xmlDoc* doc = xmlReadMemory(text.data(), static_cast<int>(text.size()), "report.html", "utf-8", XML_PARSE_NONET);
  if (doc == nullptr) {
    const xmlError* error = xmlGetLastError();
    throw std::runtime_error(std::string("not well-formed XML: ") + (error != nullptr ? error->message : "?"));
  }
  return XmlDoc(doc);
}

inline std::string attribute(const xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (value == nullptr) return {};
  std::string out(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return out;
}

inline std::string text_of(const xmlNode* node) {
  xmlChar* value = xmlNodeGetContent(node);
  std::string out(value != nullptr ? reinterpret_cast<const char*>(value) : "");
  xmlFree(value);
  return out;
}

inline bool named(const xmlNode* node, const char* name) {
  return node->type == XML_ELEMENT_NODE && std::string(reinterpret_cast<const char*>(node->name)) == name;
}

// Every element under `root` (itself included) called `name` whose class attribute is
// `cls` (any class when empty), in document order.
inline void collect(const xmlNode* node, const char* name, const std::string& cls, std::vector<const xmlNode*>& out) {
  if (named(node, name) && (cls.empty() || attribute(node, "class") == cls)) out.push_back(node);
  for (const xmlNode* n = node->children; n != nullptr; n = n->next) collect(n, name, cls, out);
}

inline std::vector<const xmlNode*> find_all(const xmlNode* root, const char* name, const std::string& cls = {}) {
  std::vector<const xmlNode*> out;
  if (root != nullptr) collect(root, name, cls, out);
  return out;
}

inline std::vector<const xmlNode*> find_all(const XmlDoc& doc, const char* name, const std::string& cls = {}) {
  return find_all(xmlDocGetRootElement(doc.get()), name, cls);
}

// Only the children of `parent`, not deeper.
inline std::vector<const xmlNode*> children(const xmlNode* parent, const char* name) {
  std::vector<const xmlNode*> out;
  for (const xmlNode* n = parent->children; n != nullptr; n = n->next) {
    if (named(n, name)) out.push_back(n);
  }
  return out;
}

}  // namespace layerplan::testing_report
