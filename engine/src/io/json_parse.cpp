#include "io/json/json_parse.hpp"

#include "novelty/util/error.hpp"
#include "util/message_text.hpp"

namespace novelty {

std::size_t json_depth_exceeded_at(std::string_view text, std::size_t max_depth) {
    std::size_t depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;  // the escaped character cannot end the string
            else if (c == '"') in_string = false;
            continue;
        }
        switch (c) {
            case '"': in_string = true; break;
            case '[':
            case '{':
                if (++depth > max_depth) return i;
                break;
            case ']':
            case '}':
                if (depth > 0) --depth;
                break;
            default: break;
        }
    }
    return std::string_view::npos;
}

namespace {

// The library's message without its "[json.exception.parse_error.101] parse error " prefix,
// made short and printable.
std::string library_problem(const nlohmann::json::exception& e) {
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0)
        if (const std::size_t close = what.find("] "); close != std::string::npos) what.erase(0, close + 2);
    if (what.rfind("parse error ", 0) == 0) what.erase(0, 12);
    if (what.rfind("number overflow parsing ", 0) == 0)
        what = "number out of range (larger than a double holds): " + what.substr(24);
    return clip_for_message(what, 300);
}

template <class Json>
Json parse_as(std::string_view text) {
    if (const std::size_t at = json_depth_exceeded_at(text); at != std::string_view::npos)
        throw JsonError("nested deeper than " + std::to_string(max_json_depth) + " levels (at byte " +
                        std::to_string(at + 1) + ")");
    try {
        return Json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e999
        throw JsonError(library_problem(e));
    }
}

}  // namespace

nlohmann::json parse_json(std::string_view text) { return parse_as<nlohmann::json>(text); }

nlohmann::ordered_json parse_ordered_json(std::string_view text) { return parse_as<nlohmann::ordered_json>(text); }

std::string dump_json(const nlohmann::json& value) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string dump_json(const nlohmann::ordered_json& value) {
    return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string json_type_words(const nlohmann::json& value) {
    switch (value.type()) {
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::object: return "an object";
        case nlohmann::json::value_t::array: return "an array";
        case nlohmann::json::value_t::string: return "a string";
        case nlohmann::json::value_t::boolean: return "a boolean";
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned:
        case nlohmann::json::value_t::number_float: return "a number";
        default: return "an unsupported value";
    }
}

}  // namespace novelty
