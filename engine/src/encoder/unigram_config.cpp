// Reading a Hugging Face tokenizer.json with a Unigram model into UnigramTokenizer::Impl: the
// vocabulary, the normaliser steps, Metaspace, the post-processor template and the added tokens.
// Whatever is not supported is refused, naming the file and the part.
#include "encoder/unigram_impl.hpp"

#include "encoder/bert_text.hpp"
#include "io/json/json_parse.hpp"
#include "novelty/util/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>

namespace novelty {

namespace {

using nlohmann::json;
using encoder::NormalizerStep;

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
    throw InputError(path, 0, what + " (see docs/encoder.md for the supported tokenizers)");
}

std::string type_of(const json& j) { return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : ""; }

NormalizerStep read_replace(const json& j, const std::string& path) {
    NormalizerStep step;
    const json& pattern = j.at("pattern");
    step.content = j.at("content").get<std::string>();
    if (pattern.contains("String")) {
        step.kind = NormalizerStep::Kind::replace_string;
        step.pattern = pattern["String"].get<std::string>();
        if (step.pattern.empty()) refuse(path, "normalizer Replace with an empty pattern");
        return step;
    }
    const std::string regex = pattern.at("Regex").get<std::string>();
    if (std::any_of(regex.begin(), regex.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
        refuse(path, "normalizer Replace with a non-ASCII regex '" + regex + "' is not supported");
    step.kind = NormalizerStep::Kind::replace_regex;
    step.pattern = regex;
    std::string literal;  // the content is literal text: escape '$' for std::regex_replace
    for (const char c : step.content) literal += c == '$' ? std::string("$$") : std::string(1, c);
    step.content = literal;
    try {
        step.regex = std::regex(regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        refuse(path, "normalizer Replace regex '" + regex + "' is not supported: " + e.what());
    }
    return step;
}

void read_normalizer(const json& j, const std::string& path, std::vector<NormalizerStep>& steps) {
    if (j.is_null()) return;
    const std::string type = type_of(j);
    if (type == "Sequence") {
        for (const json& inner : j.at("normalizers")) read_normalizer(inner, path, steps);
        return;
    }
    NormalizerStep step;
    if (type == "Precompiled") {
        step.kind = NormalizerStep::Kind::precompiled;
        const json& blob = j.at("precompiled_charsmap");
        if (blob.is_null()) return;  // an empty charsmap normalises nothing
        step.charsmap = encoder::PrecompiledCharsmap::parse_base64(blob.get<std::string>(), path);
    } else if (type == "Replace") {
        step = read_replace(j, path);
    } else if (type == "Strip") {
        step.kind = NormalizerStep::Kind::strip;
        step.strip_left = j.value("strip_left", true);
        step.strip_right = j.value("strip_right", true);
    } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
        step.kind = type == "NFC" ? NormalizerStep::Kind::nfc : type == "NFD" ? NormalizerStep::Kind::nfd
                  : type == "NFKC" ? NormalizerStep::Kind::nfkc : NormalizerStep::Kind::nfkd;
    } else {
        refuse(path, "normalizer '" + type + "' is not supported");
    }
    steps.push_back(std::move(step));
}

void read_metaspace(const json& j, const std::string& path, UnigramTokenizer::Impl& impl) {
    impl.metaspace = true;
    if (j.contains("replacement")) impl.replacement = j["replacement"].get<std::string>();
    if (encoder::decode_utf8_lossy(impl.replacement).size() != 1)
        refuse(path, "Metaspace replacement must be one character");
    if (j.contains("prepend_scheme")) {
        const std::string scheme = j["prepend_scheme"].get<std::string>();
        if (scheme == "always") impl.prepend = encoder::Prepend::always;
        else if (scheme == "first") impl.prepend = encoder::Prepend::first;
        else if (scheme == "never") impl.prepend = encoder::Prepend::never;
        else refuse(path, "Metaspace prepend_scheme '" + scheme + "' is not supported");
    } else {
        impl.prepend = j.value("add_prefix_space", true) ? encoder::Prepend::always : encoder::Prepend::never;
    }
    impl.split = j.value("split", true);
}

void read_pre_tokenizer(const json& j, const std::string& path, UnigramTokenizer::Impl& impl) {
    if (j.is_null()) return;
    const std::string type = type_of(j);
    if (type == "Metaspace") return read_metaspace(j, path, impl);
    if (type == "Sequence" && j.at("pretokenizers").size() == 1) return read_pre_tokenizer(j["pretokenizers"][0], path, impl);
    refuse(path, "pre_tokenizer '" + type + "' is not supported (only Metaspace)");
}

std::int32_t special_id(const std::string& token, const std::string& path, const UnigramTokenizer::Impl& impl) {
    const std::int32_t id = impl.find(token);
    if (id < 0) refuse(path, "the template's token '" + token + "' is not in the vocabulary");
    return id;
}

void read_template(const json& single, const std::string& path, UnigramTokenizer::Impl& impl) {
    bool seen_sequence = false;
    for (const json& item : single) {
        if (item.contains("Sequence")) {
            if (seen_sequence || item["Sequence"].value("id", "A") != "A") refuse(path, "a template with more than $A");
            seen_sequence = true;
        } else if (item.contains("SpecialToken")) {
            const std::int32_t id = special_id(item["SpecialToken"].at("id").get<std::string>(), path, impl);
            (seen_sequence ? impl.suffix_ids : impl.prefix_ids).push_back(id);
        } else {
            refuse(path, "an unknown item in the post_processor template");
        }
    }
    if (!seen_sequence) refuse(path, "a post_processor template without $A");
}

void read_post_processor(const json& j, const std::string& path, UnigramTokenizer::Impl& impl) {
    const std::string type = type_of(j);
    if (j.is_null()) {
        if (impl.find("<s>") >= 0 && impl.find("</s>") >= 0) {
            impl.prefix_ids = {impl.find("<s>")};
            impl.suffix_ids = {impl.find("</s>")};
        }
    } else if (type == "RobertaProcessing") {
        impl.prefix_ids = {special_id(j.at("cls").at(0).get<std::string>(), path, impl)};
        impl.suffix_ids = {special_id(j.at("sep").at(0).get<std::string>(), path, impl)};
    } else if (type == "TemplateProcessing") {
        read_template(j.at("single"), path, impl);
    } else {
        refuse(path, "post_processor '" + type + "' is not supported");
    }
    if (impl.prefix_ids.size() + impl.suffix_ids.size() >= impl.max_length)
        throw UsageError("unigram: max_length " + std::to_string(impl.max_length) + " leaves no room for text");
}

void read_added_tokens(const json& tokens, const std::string& path, UnigramTokenizer::Impl& impl) {
    for (const json& entry : tokens) {
        const std::string content = entry.at("content").get<std::string>();
        if (entry.value("normalized", false)) refuse(path, "added token '" + content + "' with normalized true");
        if (entry.value("single_word", false)) refuse(path, "added token '" + content + "' with single_word true");
        std::int32_t id = entry.contains("id") ? entry["id"].get<std::int32_t>() : impl.find(content);
        if (id < 0 || static_cast<std::size_t>(id) >= impl.pieces.size())
            refuse(path, "added token '" + content + "' has no id in the vocabulary");
        if (content.empty()) continue;
        impl.added.push_back({encoder::decode_utf8_lossy(content), id, entry.value("lstrip", false), entry.value("rstrip", false)});
    }
    std::stable_sort(impl.added.begin(), impl.added.end(),
                     [](const auto& a, const auto& b) { return a.text.size() > b.text.size(); });
}

void read_model(const json& model, const std::string& path, UnigramTokenizer::Impl& impl) {
    if (type_of(model) != "Unigram") refuse(path, "model '" + type_of(model) + "' is not a Unigram model");
    if (model.value("byte_fallback", false)) refuse(path, "Unigram byte_fallback is not supported");
    const json& vocab = model.at("vocab");
    if (!vocab.is_array() || vocab.empty()) refuse(path, "the Unigram vocab is empty");
    if (vocab.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) refuse(path, "too many pieces");
    impl.min_score = std::numeric_limits<double>::infinity();
    for (const json& entry : vocab) {
        const auto id = static_cast<std::int32_t>(impl.pieces.size());
        impl.pieces.push_back(entry.at(0).get<std::string>());
        impl.scores.push_back(entry.at(1).get<double>());
        impl.ids[impl.pieces.back()] = id;
        impl.trie.insert(impl.pieces.back(), id);
        impl.min_score = std::min(impl.min_score, impl.scores.back());
    }
    if (!model.contains("unk_id") || model["unk_id"].is_null()) refuse(path, "the Unigram model has no unk_id");
    impl.unk_id = model["unk_id"].get<std::int32_t>();
    if (impl.unk_id < 0 || static_cast<std::size_t>(impl.unk_id) >= impl.pieces.size()) refuse(path, "unk_id out of range");
    impl.pad_id = impl.find("<pad>");
}

}  // namespace

void read_unigram_json(const std::string& path, UnigramTokenizer::Impl& impl) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "cannot open the tokenizer");
    json doc;
    try {
        doc = parse_json(std::string(std::istreambuf_iterator<char>(in), {}));
    } catch (const JsonError& e) {
        throw InputError(path, 0, std::string("invalid JSON: ") + e.what());
    }
    if (!doc.is_object() || !doc.contains("model")) throw InputError(path, 0, "expected an object with a \"model\"");
    try {
        read_model(doc["model"], path, impl);
        read_normalizer(doc.value("normalizer", json()), path, impl.normalizers);
        read_pre_tokenizer(doc.value("pre_tokenizer", json()), path, impl);
        read_post_processor(doc.value("post_processor", json()), path, impl);
        if (doc.contains("added_tokens")) read_added_tokens(doc["added_tokens"], path, impl);
    } catch (const json::exception& e) {
        throw InputError(path, 0, std::string("missing or invalid value: ") + e.what());
    }
}

}  // namespace novelty
