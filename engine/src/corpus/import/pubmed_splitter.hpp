// Finding the records of a PubMed XML file without holding the file: a small tokenizer, fed one
// line at a time, that knows the XML around the records well enough to find their boundaries
// (comments, CDATA sections, processing instructions, the DOCTYPE, quoted attribute values,
// blanks inside tags such as `</PubmedArticle >`) and hands each record's text to a caller, who
// parses it with the XML parser. Also: the encoding the XML declaration names (UTF-8, US-ASCII
// or ISO-8859-1, the latter decoded to UTF-8 on the way), bytes that are not UTF-8 and character
// references that name no XML character (a UTF-16 surrogate, U+0000, a code point beyond
// U+10FFFF), each reported as the problem of the record it falls in, with its line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace novelty::import_detail {

class PubmedSplitter {
public:
    /// One record: the name of its element (PubmedArticle, DeleteCitation or PubmedBookArticle),
    /// its text from the start tag's '<' to the end tag's '>' (in UTF-8, the file's newlines
    /// kept), the line it starts on, and its first problem ("" when none) with that problem's line.
    struct Record {
        std::string name, text, problem;
        std::size_t line = 0, problem_line = 0;
    };
    /// The longest record kept in memory (64 MiB); a longer one is an InputError.
    static constexpr std::size_t max_record_bytes = std::size_t{64} << 20;

    /// `emit` gets each record, in file order; `path` names the file in errors.
    PubmedSplitter(std::string path, std::function<void(Record&)> emit);

    /// The next line of the file (its number, 1-based) without its newline. Throws InputError
    /// for an encoding that is not read, a UTF-16 file, or a record or tag past the size cap.
    void feed(const std::string& line, std::size_t number);
    /// At the end of the file: throws InputError when a record is left open.
    void finish() const;

private:
    enum class Mode { text, markup, element, comment, cdata, pi, declaration };

    void step(std::size_t i);
    void text_char(char c);
    void markup_step(char c);
    void element_step(std::size_t i);
    void text_step(char c);
    void complete_tag(std::size_t i);
    void complete_declaration();
    void start_record(const std::string& name, std::size_t i, bool self_closing);
    void end_record(std::size_t i);
    void problem(std::size_t line, const std::string& text);
    void check_reference();
    void bad_byte(std::size_t i);

    std::string path_;
    std::function<void(Record&)> emit_;
    std::string line_;          // the line being read, with its '\n'
    std::size_t number_ = 0;    // its number
    std::size_t next_bad_ = 0;  // the next byte of line_ that is not UTF-8 (npos: none)
    bool latin1_ = false;       // the file declares ISO-8859-1
    std::string encoding_ = "none";  // as declared, for messages
    Mode mode_ = Mode::text;
    char quote_ = 0;             // inside a quoted attribute value (or a DOCTYPE literal)
    int brackets_ = 0;           // '[' depth inside a DOCTYPE
    char prev_ = 0, prev2_ = 0;  // the two characters before, for "-->", "]]>" and "?>"
    std::string tag_;            // the tag being read, from its '<'
    std::size_t tag_line_ = 0;
    std::string tag_problem_;    // a problem inside the tag (its attributes), for a record it starts
    std::size_t tag_problem_line_ = 0;
    std::string ref_;            // a character reference being read, from its '&' (its first characters)
    std::size_t ref_len_ = 0;    // its length so far; 0: none is being read
    bool ref_hex_ = false;       // &#x...;
    std::uint64_t ref_value_ = 0, ref_digits_ = 0;  // the code point so far (saturating) and its digits
    bool in_record_ = false;
    Record record_;
    std::size_t from_ = 0;                // where the record's text continues in line_
    std::vector<std::string> open_;       // the record's open elements, outermost first
};

}  // namespace novelty::import_detail
