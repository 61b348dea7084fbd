#pragma once
// UTF-8 and Unicode helpers for the tokenizer (utf8proc underneath).

#include <cstdint>
#include <string>
#include <vector>

namespace prefix_scorer::tok {

// Throws std::invalid_argument naming the byte offset of the first invalid UTF-8 sequence.
void check_utf8(const std::string& text);

// The code points of valid UTF-8 text, and back.
std::vector<int32_t> code_points(const std::string& text);
std::string to_utf8(int32_t code_point);

// Splits valid UTF-8 text into its characters (one string per code point).
std::vector<std::string> characters(const std::string& text);

std::string nfc(const std::string& text);
std::string nfkc(const std::string& text);
std::string lowercase(const std::string& text);

// Python's str.isspace for one code point; Rust's char::is_whitespace agrees on every character that matters here.
bool is_space(int32_t code_point);

// A character of Rust regex's Unicode \w (how HF tokenizers decides that an added token with single_word touches
// a word): Alphabetic (letters, letter numbers, and the circled and squared Latin letters), marks, decimal digits,
// connector punctuation and the join controls.
bool is_word_character(int32_t code_point);

// GPT-2's reversible map of the 256 byte values onto printable code points, and its inverse (-1: not a byte).
const std::vector<int32_t>& byte_to_code_point();
int byte_of_code_point(int32_t code_point);

}  // namespace prefix_scorer::tok
