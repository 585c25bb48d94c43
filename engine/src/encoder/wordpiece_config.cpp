// read_wordpiece_config: the tokenizer settings of a Hugging Face / sentence-transformers model
// directory (tokenizer.json, tokenizer_config.json, sentence_bert_config.json).
#include "io/json/json_parse.hpp"
#include "novelty/util/error.hpp"
#include "novelty/encoder/wordpiece.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>

namespace novelty {

namespace {

using nlohmann::json;

/// Parses `path`, or returns nullopt when there is no such file.
std::optional<json> read_json_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "cannot open");
    try {
        json value = parse_json(std::string(std::istreambuf_iterator<char>(in), {}));
        if (!value.is_object()) throw InputError(path, 0, "expected a JSON object");
        return value;
    } catch (const JsonError& e) {
        throw InputError(path, 0, std::string("invalid JSON: ") + e.what());
    }
}

/// Reads an optional boolean `key` of `object` into `out`; null leaves `out` unchanged.
void read_bool(const json& object, const char* key, const std::string& path, bool& out) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return;
    if (!it->is_boolean()) throw InputError(path, 0, std::string("\"") + key + "\" must be true, false or null");
    out = it->get<bool>();
}

/// Reads an optional non-negative integer `key` of `object`.
std::optional<std::uint64_t> read_count(const json& object, const char* key, const std::string& path) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return std::nullopt;
    if (it->is_number_unsigned()) return it->get<std::uint64_t>();
    if (it->is_number_float() && it->get<double>() >= 0) {
        // transformers writes VERY_LARGE_INTEGER (1e30) for "no limit".
        const double value = it->get<double>();
        return value >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(value);
    }
    throw InputError(path, 0, std::string("\"") + key + "\" must be a non-negative number");
}

/// A token written either as a string or as an AddedToken object {"content": ...}.
std::optional<std::string> read_token(const json& object, const char* key, const std::string& path) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
        return (*it)["content"].get<std::string>();
    }
    throw InputError(path, 0, std::string("\"") + key + "\" must be a string or an object with \"content\"");
}

void add_special(WordPieceConfig& config, const std::string& token) {
    if (std::find(config.special_tokens.begin(), config.special_tokens.end(), token) == config.special_tokens.end()) {
        config.special_tokens.push_back(token);
    }
}

/// The added tokens of an "added_tokens" list or an "added_tokens_decoder" object that are
/// matched on the raw text (normalized false).
void read_added_tokens(const json& tokens, const std::string& path, WordPieceConfig& config) {
    const auto take = [&](const json& entry) {
        if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string()) {
            throw InputError(path, 0, "an added token without a string \"content\"");
        }
        bool normalized = false;
        read_bool(entry, "normalized", path, normalized);
        if (!normalized) add_special(config, entry["content"].get<std::string>());
    };
    if (tokens.is_array()) {
        for (const json& entry : tokens) take(entry);
    } else if (tokens.is_object()) {
        for (const auto& item : tokens.items()) take(item.value());
    } else if (!tokens.is_null()) {
        throw InputError(path, 0, "added tokens must be a list or an object");
    }
}

void apply_tokenizer_json(const json& doc, const std::string& path, WordPieceConfig& config) {
    if (const auto it = doc.find("normalizer"); it != doc.end() && it->is_object() &&
                                                it->value("type", "") == "BertNormalizer") {
        read_bool(*it, "clean_text", path, config.clean_text);
        read_bool(*it, "handle_chinese_chars", path, config.tokenize_chinese_chars);
        read_bool(*it, "lowercase", path, config.lower_case);
        config.strip_accents = config.lower_case;  // null: same as lowercase
        read_bool(*it, "strip_accents", path, config.strip_accents);
    }
    if (const auto it = doc.find("model"); it != doc.end() && it->is_object()) {
        if (auto unk = read_token(*it, "unk_token", path)) config.unk = *unk;
        if (auto prefix = read_token(*it, "continuing_subword_prefix", path)) config.continuing_prefix = *prefix;
        if (auto chars = read_count(*it, "max_input_chars_per_word", path)) config.max_chars_per_word = *chars;
    }
    if (const auto it = doc.find("added_tokens"); it != doc.end()) {
        config.special_tokens.clear();
        read_added_tokens(*it, path, config);
    }
}

void apply_tokenizer_config(const json& doc, const std::string& path, WordPieceConfig& config,
                            std::optional<std::uint64_t>& model_max_length) {
    if (doc.contains("do_lower_case") && !doc["do_lower_case"].is_null()) {
        read_bool(doc, "do_lower_case", path, config.lower_case);
        config.strip_accents = config.lower_case;
    }
    if (doc.contains("strip_accents")) {
        config.strip_accents = config.lower_case;  // null: same as do_lower_case
        read_bool(doc, "strip_accents", path, config.strip_accents);
    }
    read_bool(doc, "tokenize_chinese_chars", path, config.tokenize_chinese_chars);
    if (auto token = read_token(doc, "unk_token", path)) config.unk = *token;
    if (auto token = read_token(doc, "cls_token", path)) config.cls = *token;
    if (auto token = read_token(doc, "sep_token", path)) config.sep = *token;
    if (auto token = read_token(doc, "pad_token", path)) config.pad = *token;
    for (const char* key : {"unk_token", "cls_token", "sep_token", "pad_token", "mask_token"}) {
        if (auto token = read_token(doc, key, path)) add_special(config, *token);
    }
    if (const auto it = doc.find("added_tokens_decoder"); it != doc.end()) read_added_tokens(*it, path, config);
    model_max_length = read_count(doc, "model_max_length", path);
}

}  // namespace

WordPieceConfig read_wordpiece_config(const std::string& model_dir) {
    WordPieceConfig config;
    const std::string tokenizer_json = model_dir + "/tokenizer.json";
    const std::string tokenizer_config = model_dir + "/tokenizer_config.json";
    const std::string sbert_config = model_dir + "/sentence_bert_config.json";

    if (auto doc = read_json_file(tokenizer_json)) apply_tokenizer_json(*doc, tokenizer_json, config);
    std::optional<std::uint64_t> model_max_length;
    if (auto doc = read_json_file(tokenizer_config)) {
        apply_tokenizer_config(*doc, tokenizer_config, config, model_max_length);
    }
    std::optional<std::uint64_t> max_seq_length;
    if (auto doc = read_json_file(sbert_config)) {
        max_seq_length = read_count(*doc, "max_seq_length", sbert_config);
        read_bool(*doc, "do_lower_case", sbert_config, config.lower_case_input);
    }

    if (max_seq_length) {
        config.max_length = static_cast<std::size_t>(*max_seq_length);
    } else if (model_max_length && *model_max_length <= 1'000'000) {
        config.max_length = static_cast<std::size_t>(*model_max_length);
    } else {
        config.max_length = 512;
    }
    if (config.max_length < 2) {
        throw InputError(max_seq_length ? sbert_config : tokenizer_config, 0,
                         "the maximum sequence length must be at least 2");
    }
    return config;
}

}  // namespace novelty
