// Tests of the SentencePiece unigram tokenizer (XLM-RoBERTa / BGE-M3): exact ids against the
// Hugging Face fast tokenizer on tricky strings (fixtures written by
// tests/fixtures/encoder/make_xlmr_fixtures.py), the precompiled charsmap, truncation, and
// refusals of what is not supported.
#include "encoder/precompiled_charsmap.hpp"
#include "novelty/encoder/unigram.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

using novelty::InputError;
using novelty::UnigramTokenizer;
using novelty::test::TempDir;
using novelty::test::write_file;

namespace {

std::string tiny_dir() { return novelty::test::fixture("encoder/tiny-xlmr"); }

struct Case {
    std::string text;
    std::vector<std::int32_t> ids;
};

std::vector<Case> cases() {
    std::ifstream in(novelty::test::fixture("encoder/xlmr_tokenizer_cases.jsonl"));
    std::vector<Case> out;
    for (std::string line; std::getline(in, line);) {
        const auto j = nlohmann::json::parse(line);
        out.push_back({j["text"].get<std::string>(), j["ids"].get<std::vector<std::int32_t>>()});
    }
    return out;
}

std::string pieces_of(const UnigramTokenizer& tok, const std::vector<std::int32_t>& ids) {
    std::string s;
    for (const auto id : ids) s += tok.token(id) + " ";
    return s;
}

/// tokenizer.json of the tiny model with `edit` applied.
std::string edited_tokenizer(TempDir& dir, const std::function<void(nlohmann::json&)>& edit) {
    std::ifstream in(tiny_dir() + "/tokenizer.json");
    nlohmann::json j = nlohmann::json::parse(in);
    edit(j);
    const std::string path = dir.path().string() + "/tokenizer.json";
    write_file(path, j.dump());
    return path;
}

}  // namespace

TEST(Unigram, IdsMatchTheReferenceTokenizerOnTrickyStrings) {
    const UnigramTokenizer tok = UnigramTokenizer::load_model_dir(tiny_dir());
    EXPECT_EQ(tok.max_length(), 8192u);
    EXPECT_EQ(tok.vocab_size(), 1202u);
    EXPECT_EQ(tok.pad_id(), 1);
    const auto all = cases();
    ASSERT_EQ(all.size(), 42u);
    std::size_t truncated = 0;
    for (const Case& c : all) {
        const auto ids = tok.encode(c.text);
        EXPECT_EQ(ids, c.ids) << "text: [" << c.text << "]\n ours: " << pieces_of(tok, ids)
                              << "\n  ref: " << pieces_of(tok, c.ids) << "\n normalized: [" << tok.normalize(c.text) << "]";
        truncated += c.ids.size() == 8192;
    }
    EXPECT_EQ(truncated, 1u);  // the long case reaches the 8,192-token limit
}

TEST(Unigram, TruncatesToMaxLengthKeepingTheTemplate) {
    const UnigramTokenizer tok = UnigramTokenizer::load(tiny_dir() + "/tokenizer.json", 5);
    const auto ids = tok.encode("machine learning studies algorithms that improve with experience");
    ASSERT_EQ(ids.size(), 5u);
    EXPECT_EQ(ids.front(), 0);
    EXPECT_EQ(ids.back(), 2);
    const auto full = UnigramTokenizer::load(tiny_dir() + "/tokenizer.json", 512)
                          .encode("machine learning studies algorithms that improve with experience");
    EXPECT_EQ(std::vector<std::int32_t>(full.begin(), full.begin() + 4), std::vector<std::int32_t>(ids.begin(), ids.begin() + 4));
    EXPECT_THROW(UnigramTokenizer::load(tiny_dir() + "/tokenizer.json", 1), novelty::UsageError);
}

TEST(Unigram, UnknownCharactersFuseIntoOneUnknownToken) {
    const UnigramTokenizer tok = UnigramTokenizer::load_model_dir(tiny_dir());
    const auto pieces = tok.tokenize("龘靐齉");  // never seen in training
    ASSERT_EQ(pieces.size(), 2u);               // "▁" then one fused <unk>
    EXPECT_EQ(pieces[1], "<unk>");
}

TEST(Unigram, PrecompiledCharsmapAppliesNfkcRules) {
    const UnigramTokenizer tok = UnigramTokenizer::load_model_dir(tiny_dir());
    EXPECT_EQ(tok.normalize("ＡＢＣ１２３"), "ABC123");
    EXPECT_EQ(tok.normalize("\xEF\xAC\x81"), "fi");  // the fi ligature
    EXPECT_EQ(tok.normalize("a  b"), "a\xE2\x96\x81" "b");  // the Replace step after it: runs become U+2581
}

TEST(Unigram, Base64AndCharsmapRejectMalformedInput) {
    using novelty::encoder::PrecompiledCharsmap;
    EXPECT_THROW(novelty::encoder::decode_base64("ab$c", "t.json"), InputError);
    EXPECT_THROW(PrecompiledCharsmap::parse("ab", "t.json"), InputError);
    EXPECT_THROW(PrecompiledCharsmap::parse(std::string("\x40\0\0\0abcd", 8), "t.json"), InputError);  // trie beyond the blob
}

TEST(Unigram, RefusesWhatItDoesNotSupportNamingTheFile) {
    TempDir dir;
    const auto expect_refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& words) {
        const std::string path = edited_tokenizer(dir, edit);
        try {
            UnigramTokenizer::load(path, 512);
            ADD_FAILURE() << "accepted: " << words;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    expect_refused([](auto& j) { j["model"]["byte_fallback"] = true; }, "byte_fallback");
    expect_refused([](auto& j) { j["model"]["type"] = "BPE"; }, "not a Unigram model");
    expect_refused([](auto& j) { j["normalizer"] = {{"type", "Lowercase"}}; }, "normalizer 'Lowercase'");
    expect_refused([](auto& j) { j["pre_tokenizer"] = {{"type", "Whitespace"}}; }, "pre_tokenizer 'Whitespace'");
    expect_refused([](auto& j) { j["post_processor"] = {{"type", "ByteLevel"}}; }, "post_processor 'ByteLevel'");
    expect_refused([](auto& j) { j["added_tokens"][0]["normalized"] = true; }, "normalized true");
    expect_refused([](auto& j) { j["model"].erase("vocab"); }, "missing or invalid value");
    write_file(dir.path().string() + "/tokenizer.json", "{not json");
    EXPECT_THROW(UnigramTokenizer::load(dir.path().string() + "/tokenizer.json", 512), InputError);
    EXPECT_FALSE(UnigramTokenizer::is_unigram(dir.path().string() + "/missing.json"));
    EXPECT_TRUE(UnigramTokenizer::is_unigram(tiny_dir() + "/tokenizer.json"));
}

TEST(Unigram, AddedTokensHonourLstrip) {
    TempDir dir;
    const std::string path = edited_tokenizer(dir, [](auto& j) {
        for (auto& t : j["added_tokens"])
            if (t["content"] == "<mask>") t["lstrip"] = true;
    });
    const UnigramTokenizer tok = UnigramTokenizer::load(path, 512);
    const auto with_space = tok.encode("hello <mask>");
    const auto without = tok.encode("hello<mask>");
    EXPECT_EQ(with_space, without);
    EXPECT_EQ(with_space[with_space.size() - 2], 1201);
}
