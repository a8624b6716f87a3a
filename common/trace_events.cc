#include "common/trace_events.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace layerplan {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

void write_event(std::ostream& out, const TraceSpan& s, bool begin) {
  out << "{\"ph\":\"" << (begin ? 'B' : 'E') << "\",\"pid\":" << s.process << ",\"tid\":" << s.thread
      << ",\"ts\":" << number(begin ? s.start_us : s.start_us + s.duration_us) << ",\"name\":" << json_string(s.name)
      << ",\"cat\":" << json_string(s.category);
  if (begin && (s.bytes >= 0 || !s.layer.empty())) {
    out << ",\"args\":{";
    if (!s.layer.empty()) out << "\"layer\":" << json_string(s.layer) << (s.bytes >= 0 ? "," : "");
    if (s.bytes >= 0) out << "\"bytes\":" << s.bytes;
    out << "}";
  }
  out << "}";
}

}  // namespace

void write_trace_events(std::ostream& out, const std::vector<TraceProcess>& processes, std::vector<TraceSpan> spans) {
  // Spans on one thread never overlap; sorting by start makes each end come before the
  // next begin.
  std::stable_sort(spans.begin(), spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
    if (a.process != b.process) return a.process < b.process;
    return a.thread != b.thread ? a.thread < b.thread : a.start_us < b.start_us;
  });
  const char* separator = "";
  for (const TraceProcess& p : processes) {
    out << separator << "{\"ph\":\"M\",\"pid\":" << p.id
        << ",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":" << json_string(p.name) << "}}";
    separator = ",\n";
  }
  for (const TraceSpan& s : spans) {
    out << separator;
    write_event(out, s, true);
    out << ",\n";
    write_event(out, s, false);
    separator = ",\n";
  }
}

void write_trace(std::ostream& out, const std::vector<TraceProcess>& processes, std::vector<TraceSpan> spans) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  write_trace_events(out, processes, std::move(spans));
  out << "\n]}\n";
}

}  // namespace layerplan
