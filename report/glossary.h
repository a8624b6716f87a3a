#pragma once
// The report's glossary: a <section id="glossary"> with a <dl> that says what the page's
// words mean (step, additive, exposed, owt, ...), each <dt> carrying data-term, so a reader
// who never read docs/cost-model.md can follow the tables and pictures.
#include <string>
#include <vector>

#include "report/xml_writer.h"

namespace layerplan::report {

// The terms explained, in the order they are listed.
std::vector<std::string> glossary_terms();

void write_glossary(XmlWriter& xml);

}  // namespace layerplan::report
