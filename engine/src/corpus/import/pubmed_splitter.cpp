#include "corpus/import/pubmed_splitter.hpp"

#include "io/text_lines.hpp"
#include "novelty/util/error.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>

namespace novelty::import_detail {

namespace {

constexpr std::size_t max_tag_bytes = std::size_t{1} << 20;
constexpr std::size_t max_pi_bytes = 4096;

bool is_record_name(const std::string& name) {
    return name == "PubmedArticle" || name == "DeleteCitation" || name == "PubmedBookArticle";
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// ISO-8859-1 bytes as UTF-8: each byte is the code point of the same number.
std::string latin1_to_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (const char ch : bytes) {
        const auto b = static_cast<unsigned char>(ch);
        if (b < 0x80) {
            out += ch;
        } else {
            out += static_cast<char>(0xC0 | (b >> 6));
            out += static_cast<char>(0x80 | (b & 0x3F));
        }
    }
    return out;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The value of `encoding="..."` in an XML declaration ("" when it names none).
std::string declared_encoding(const std::string& pi) {
    std::size_t at = pi.find("encoding");
    if (at == std::string::npos) return {};
    at += 8;
    while (at < pi.size() && is_blank(pi[at])) ++at;
    if (at >= pi.size() || pi[at] != '=') return {};
    ++at;
    while (at < pi.size() && is_blank(pi[at])) ++at;
    if (at >= pi.size() || (pi[at] != '"' && pi[at] != '\'')) return {};
    const std::size_t end = pi.find(pi[at], at + 1);
    return end == std::string::npos ? std::string() : pi.substr(at + 1, end - at - 1);
}

// Why code point `v` is no XML character ("" when it is one). XML 1.0: #x9, #xA, #xD,
// [#x20-#xD7FF], [#xE000-#xFFFD], [#x10000-#x10FFFF].
std::string not_a_character(std::uint32_t v) {
    if (v == 0x9 || v == 0xA || v == 0xD || (v >= 0x20 && v <= 0xD7FF) || (v >= 0xE000 && v <= 0xFFFD) ||
        (v >= 0x10000 && v <= 0x10FFFF))
        return {};
    if (v >= 0xD800 && v <= 0xDFFF) return "a UTF-16 surrogate, which is not a character";
    if (v > 0x10FFFF) return "a code point beyond U+10FFFF, the last one Unicode has";
    return "a control character that XML does not allow";
}

}  // namespace

PubmedSplitter::PubmedSplitter(std::string path, std::function<void(Record&)> emit)
    : path_(std::move(path)), emit_(std::move(emit)) {}

void PubmedSplitter::feed(const std::string& line, std::size_t number) {
    number_ = number;
    line_ = line;
    line_ += '\n';
    if (number == 1) {
        if (line_.rfind("\xEF\xBB\xBF", 0) == 0) line_.erase(0, 3);  // a UTF-8 byte-order mark
        if (line_.rfind("\xFF\xFE", 0) == 0 || line_.rfind("\xFE\xFF", 0) == 0)
            throw InputError(path_, 1, "is UTF-16 (it starts with a UTF-16 byte-order mark); PubMed files are UTF-8: "
                                       "convert it first, as with iconv -f UTF-16 -t UTF-8");
    }
    if (latin1_) line_ = latin1_to_utf8(line_);
    from_ = 0;
    next_bad_ = find_invalid_utf8(line_);
    for (std::size_t i = 0; i < line_.size(); ++i) {
        if (i == next_bad_) {
            bad_byte(i);
            const std::size_t rest = find_invalid_utf8(std::string_view(line_).substr(i + 1));
            next_bad_ = rest == std::string_view::npos ? rest : i + 1 + rest;
        }
        step(i);
    }
    if (!in_record_) return;
    record_.text.append(line_, from_, std::string::npos);
    if (record_.text.size() > max_record_bytes)
        throw InputError(path_, record_.line, "<" + record_.name + "> runs past " +
                                                  std::to_string(max_record_bytes >> 20) +
                                                  " MiB without its end tag (no record is that long)");
}

void PubmedSplitter::finish() const {
    if (in_record_)
        throw InputError(path_, record_.line,
                         "<" + record_.name + "> is not closed before the end of the file (is the file truncated?)");
}

void PubmedSplitter::step(std::size_t i) {
    const char c = line_[i];
    const Mode before = mode_;
    switch (mode_) {
        case Mode::text: text_char(c); break;
        case Mode::markup:
            markup_step(c);
            if (mode_ == Mode::element) element_step(i);
            else if (mode_ == Mode::text) text_char(c);  // "a < b": no markup after all
            break;
        case Mode::element: element_step(i); break;
        case Mode::comment: if (c == '>' && prev_ == '-' && prev2_ == '-') mode_ = Mode::text; break;
        case Mode::cdata: if (c == '>' && prev_ == ']' && prev2_ == ']') mode_ = Mode::text; break;
        case Mode::pi:
            if (tag_.size() < max_pi_bytes) tag_ += c;
            if (c == '>' && prev_ == '?') {
                mode_ = Mode::text;
                if (tag_.rfind("<?xml", 0) == 0 && tag_.size() > 5 && is_blank(tag_[5])) {
                    complete_declaration();
                    if (latin1_) {  // the rest of this line is ISO-8859-1 too
                        line_ = line_.substr(0, i + 1) + latin1_to_utf8(std::string_view(line_).substr(i + 1));
                        const std::size_t rest = find_invalid_utf8(std::string_view(line_).substr(i + 1));
                        next_bad_ = rest == std::string_view::npos ? rest : i + 1 + rest;
                    }
                }
            }
            break;
        case Mode::declaration:
            if (quote_) { if (c == quote_) quote_ = 0; }
            else if (c == '"' || c == '\'') quote_ = c;
            else if (c == '[') ++brackets_;
            else if (c == ']') --brackets_;
            else if (c == '>' && brackets_ <= 0) mode_ = Mode::text;
            break;
    }
    // Entering a comment, CDATA section or instruction: its end is looked for from here on.
    if (mode_ != before && (mode_ == Mode::comment || mode_ == Mode::cdata || mode_ == Mode::pi)) {
        prev_ = prev2_ = 0;
        return;
    }
    prev2_ = prev_;
    prev_ = c;
}

void PubmedSplitter::text_char(char c) {
    if (c == '<') {
        mode_ = Mode::markup;
        tag_.assign(1, '<');
        tag_line_ = number_;
        tag_problem_.clear();
        ref_len_ = 0;
    } else if (in_record_) {
        text_step(c);
    }
}

// After '<': tells a comment, a CDATA section, an instruction or a declaration from a tag.
// Leaves mode_ at element, without taking `c`, when the markup is a start or end tag.
void PubmedSplitter::markup_step(char c) {
    if (tag_.size() == 1 && c != '!' && c != '?') {
        // A tag's name (or '/') follows at once; anything else is text the parser will refuse.
        const auto u = static_cast<unsigned char>(c);
        mode_ = (std::isalpha(u) || c == '_' || c == ':' || c == '/' || u >= 0x80) ? Mode::element : Mode::text;
        return;
    }
    tag_ += c;
    if (tag_.size() == 2 && c == '?') {
        mode_ = Mode::pi;
        return;
    }
    static const std::string comment = "<!--", cdata = "<![CDATA[";
    if (tag_ == comment) { mode_ = Mode::comment; return; }
    if (tag_ == cdata) { mode_ = Mode::cdata; return; }
    if (comment.compare(0, tag_.size(), tag_) == 0 || cdata.compare(0, tag_.size(), tag_) == 0) return;
    mode_ = Mode::declaration;  // <!DOCTYPE ...> and the like
    quote_ = 0;
    brackets_ = 0;
}

void PubmedSplitter::element_step(std::size_t i) {
    const char c = line_[i];
    if (tag_.size() >= max_tag_bytes)
        throw InputError(path_, tag_line_, "a tag runs past " + std::to_string(max_tag_bytes >> 20) +
                                               " MiB without its '>' (is the file XML?)");
    tag_ += c;
    if (quote_) {
        if (c == quote_) {
            quote_ = 0;
            ref_len_ = 0;
        } else {
            text_step(c);
        }
        return;
    }
    if (c == '"' || c == '\'') {
        quote_ = c;
        ref_len_ = 0;
    } else if (c == '>') {
        complete_tag(i);
    } else if (c == '<') {
        // A tag left without its '>': the parser will refuse it; the new one is read.
        tag_.pop_back();
        mode_ = Mode::text;
        text_char(c);
    }
}

// Character references in text and attribute values: &#N; and &#xH; must name an XML character.
void PubmedSplitter::text_step(char c) {
    if (c == '&') {
        ref_.assign(1, '&');
        ref_len_ = 1;
        ref_hex_ = false;
        ref_value_ = ref_digits_ = 0;
        return;
    }
    if (ref_len_ == 0) return;
    const auto u = static_cast<unsigned char>(c);
    bool fits;
    if (ref_len_ == 1) {
        fits = c == '#';
    } else if (ref_len_ == 2 && c == 'x') {
        fits = ref_hex_ = true;
    } else if (c == ';' && ref_digits_ > 0) {
        ref_ += c;
        check_reference();
        ref_len_ = 0;
        return;
    } else if (ref_hex_ ? std::isxdigit(u) : std::isdigit(u)) {
        const std::uint64_t digit = std::isdigit(u) ? static_cast<std::uint64_t>(c - '0')
                                                    : static_cast<std::uint64_t>(std::tolower(u) - 'a' + 10);
        ref_value_ = std::min<std::uint64_t>(ref_value_ * (ref_hex_ ? 16 : 10) + digit, 0xFFFFFFFF);  // saturates
        ++ref_digits_;
        fits = true;
    } else {
        fits = false;
    }
    if (!fits) {
        ref_len_ = 0;
        return;
    }
    ++ref_len_;
    if (ref_.size() < 24) ref_ += c;
    else if (ref_.size() == 24) ref_ += "...";
}

void PubmedSplitter::check_reference() {
    const std::string why = not_a_character(static_cast<std::uint32_t>(ref_value_));
    if (why.empty()) return;
    const std::string message = "character reference '" + ref_ + "' names " + why;
    if (in_record_) {
        problem(number_, message);
    } else if (tag_problem_.empty()) {
        tag_problem_ = message;
        tag_problem_line_ = number_;
    }
}

void PubmedSplitter::bad_byte(std::size_t i) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(line_[i]));
    const std::string message = std::string("byte ") + hex + " at column " + std::to_string(i + 1) + " is not UTF-8 (" +
                                (encoding_ == "none" ? std::string("the file declares no encoding, so it is read as UTF-8")
                                                     : "the file declares encoding '" + encoding_ + "'") +
                                ")";
    if (in_record_) problem(number_, message);
    else if ((mode_ == Mode::markup || mode_ == Mode::element) && tag_problem_.empty()) {
        tag_problem_ = message;
        tag_problem_line_ = number_;
    }
}

void PubmedSplitter::complete_declaration() {
    const std::string given = declared_encoding(tag_);
    if (given.empty()) return;
    const std::string name = lower(given);
    encoding_ = given;
    if (name == "utf-8" || name == "utf8" || name == "us-ascii" || name == "ascii") {
        latin1_ = false;
    } else if (name == "iso-8859-1" || name == "iso8859-1" || name == "iso_8859-1" || name == "latin1" ||
               name == "latin-1" || name == "l1") {
        latin1_ = true;
    } else {
        throw InputError(path_, number_,
                         "declares encoding '" + given + "', which is not read: PubMed files are UTF-8 (ISO-8859-1 is "
                         "read too); convert it first, as with iconv -f " + given + " -t UTF-8");
    }
}

void PubmedSplitter::complete_tag(std::size_t i) {
    mode_ = Mode::text;
    const bool end = tag_.size() > 1 && tag_[1] == '/';
    const std::size_t begin = end ? 2 : 1;
    std::size_t stop = begin;
    while (stop < tag_.size() && !is_blank(tag_[stop]) && tag_[stop] != '/' && tag_[stop] != '>') ++stop;
    const std::string name = tag_.substr(begin, stop - begin);
    const std::size_t last = tag_.size() >= 2 ? tag_.find_last_not_of(" \t\r\n", tag_.size() - 2) : std::string::npos;
    const bool self_closing = !end && last != std::string::npos && last > 0 && tag_[last] == '/';
    if (in_record_ && !end && is_record_name(name)) {
        // Records never nest: the open one lacks its end tag. It is reported, and this one read.
        problem(tag_line_, "its end tag is missing (the <" + name + "> of line " + std::to_string(tag_line_) +
                               " starts inside it)");
        record_.text.clear();
        in_record_ = false;
        open_.clear();
        emit_(record_);
    }
    if (!in_record_) {
        if (!end && is_record_name(name)) start_record(name, i, self_closing);
        return;
    }
    if (end) {
        // Close the innermost open element of this name; an end tag that closes nothing is left to the parser.
        const auto it = std::find(open_.rbegin(), open_.rend(), name);
        if (it != open_.rend()) open_.erase(std::next(it).base(), open_.end());
        if (open_.empty()) end_record(i);
    } else if (!self_closing) {
        open_.push_back(name);
    }
}

void PubmedSplitter::start_record(const std::string& name, std::size_t i, bool self_closing) {
    in_record_ = true;
    record_ = Record{};
    record_.name = name;
    record_.line = tag_line_;
    record_.text = tag_;
    if (!tag_problem_.empty()) {
        record_.problem = tag_problem_;
        record_.problem_line = tag_problem_line_;
    }
    from_ = i + 1;
    open_.assign(1, name);
    if (self_closing) {
        open_.clear();
        in_record_ = false;
        emit_(record_);
    }
}

void PubmedSplitter::end_record(std::size_t i) {
    record_.text.append(line_, from_, i + 1 - from_);
    in_record_ = false;
    emit_(record_);
}

void PubmedSplitter::problem(std::size_t line, const std::string& text) {
    if (!record_.problem.empty()) return;
    record_.problem = text;
    record_.problem_line = line;
}

}  // namespace novelty::import_detail
