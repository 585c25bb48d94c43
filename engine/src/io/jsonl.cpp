#include "io/jsonl.hpp"

#include "io/json/json_parse.hpp"
#include "novelty/util/error.hpp"

#include <cstdio>

namespace novelty {

bool JsonlReader::next(nlohmann::json& record) {
    while (lines_.next(line_)) {
        std::string_view text = line_;
        if (lines_.line_number() == 1 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
        if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        if (const std::size_t bad = find_invalid_utf8(text); bad != std::string_view::npos) {
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[bad]));
            throw InputError(path(), line_number(),
                             std::string("invalid UTF-8: byte ") + byte + " at column " + std::to_string(bad + 1) +
                                 " (the file must be UTF-8 encoded)");
        }
        try {
            record = parse_json(text);
        } catch (const JsonError& e) {
            throw InputError(path(), line_number(), std::string("malformed JSON: ") + e.what());
        }
        if (!record.is_object())
            throw InputError(path(), line_number(), "expected a JSON object, found " + json_type_words(record));
        return true;
    }
    return false;
}

}  // namespace novelty
