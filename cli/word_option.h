#pragma once
// Options whose value is one of a few words, parsed once into an enum (or a bool) by CLI11:
// `--lr-schedule cosine` sets LrSchedule::kCosine. A word not in the list fails the parse
// (exit 2) with "--lr-schedule: 'x': expected constant or cosine".
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace layerplan {

// The option's words and what each means, in the order the help and errors list them.
template <typename T>
using OptionWords = std::vector<std::pair<std::string, T>>;

namespace option_words_detail {

template <typename T>
std::string expected_words(const OptionWords<T>& words) {
  std::string text;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) text += i + 1 == words.size() ? " or " : ", ";
    text += words[i].first;
  }
  return text;
}

template <typename T>
std::string word_of(const OptionWords<T>& words, const T& value) {
  for (const auto& [word, meaning] : words) {
    if (meaning == value) return word;
  }
  return "";
}

// CheckedTransformer also takes the value it maps to ("1" for the second enumerator)
// and says "Check x value in {constant->0,cosine->1} OR {0,1} FAILED": only the words
// are accepted here, and a failure names them.
template <typename T>
CLI::Validator one_of(const OptionWords<T>& words) {
  const CLI::CheckedTransformer transform(words, CLI::ignore_case);
  const std::string expected = expected_words(words);
  return CLI::Validator(
      [words, transform, expected](std::string& input) {
        const std::string given = input;
        bool known = false;
        for (const auto& entry : words)
          known = known || CLI::detail::to_lower(entry.first) == CLI::detail::to_lower(given);
        if (!known || !transform(input).empty()) return "'" + given + "': expected " + expected;
        return std::string();
      },
      "");
}

}  // namespace option_words_detail

// Adds `name` to `cmd`, storing the meaning of the word given in `value`; the help shows
// the word of `value`'s initial meaning as the default.
template <typename T>
CLI::Option* add_word_option(CLI::App* cmd, const std::string& name, T& value, const OptionWords<T>& words,
                             const std::string& description) {
  return cmd->add_option(name, value, description)
      ->type_name("TEXT")
      ->default_str(option_words_detail::word_of(words, value))
      ->transform(option_words_detail::one_of(words));
}

// The same for an option without a default (nullopt when not given).
template <typename T>
CLI::Option* add_word_option(CLI::App* cmd, const std::string& name, std::optional<T>& value,
                             const OptionWords<T>& words, const std::string& description) {
  return cmd->add_option(name, value, description)->type_name("TEXT")->transform(option_words_detail::one_of(words));
}

}  // namespace layerplan
