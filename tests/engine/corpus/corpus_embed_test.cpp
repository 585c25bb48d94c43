// novelty corpus embed: attaches vectors with the embedder recorded, saves finished batches, and
// resumes an interrupted run without redoing or losing any.
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/corpus_embed.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>

using namespace novelty;
using novelty::test::TempDir;

namespace {

// Deterministic 4-d vectors from the text, counting what it embeds; throws after `fail_after`
// calls when set.
class CountingEmbedder : public Embedder {
public:
    std::string name() const override { return "counting"; }
    std::size_t dim() const override { return 4; }
    std::string pooling() const override { return "mean"; }
    std::vector<float> embed(const std::vector<std::string>& texts) override {
        if (fail_after >= 0 && calls >= fail_after) throw Error("simulated failure");
        ++calls;
        std::vector<float> out;
        for (const auto& text : texts) {
            embedded.push_back(text);
            const std::size_t h = std::hash<std::string>{}(text);
            for (int d = 0; d < 4; ++d) out.push_back(static_cast<float>((h >> (8 * d)) & 0xff) + 1.0f);
        }
        return out;
    }
    int calls = 0;
    int fail_after = -1;
    std::vector<std::string> embedded;
};

std::string make_corpus(const TempDir& tmp) {
    ImportOptions options;
    options.sources.push_back({test::fixture("import/generic.jsonl"), ImportFormat::jsonl, ""});
    options.out_dir = tmp.file("c");
    import_corpus(options);
    return tmp.file("c");
}

std::vector<float> all_vectors(const std::string& dir) {
    const Corpus corpus = Corpus::open(dir);
    std::vector<float> out(corpus.size() * 4);
    for (std::size_t r = 0; r < corpus.size(); ++r) corpus.vectors().row_as_f32(r, out.data() + r * 4);
    return out;
}

}  // namespace

TEST(CorpusEmbed, EmbedsEveryPaperInRowOrderAndRecordsTheEmbedder) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    CountingEmbedder embedder;
    EmbedCorpusOptions options;
    options.batch = 3;
    EXPECT_EQ(embed_corpus(dir, embedder, options), 8u);
    EXPECT_EQ(embedder.calls, 3);  // 3 + 3 + 2
    const Corpus corpus = Corpus::open(dir);
    ASSERT_TRUE(corpus.manifest().embedder);
    EXPECT_EQ(corpus.manifest().embedder->name, "counting");
    EXPECT_EQ(corpus.manifest().embedder->pooling, "mean");
    EXPECT_EQ(corpus.manifest().dim, 4u);
    for (std::size_t r = 0; r < corpus.size(); ++r) {
        const Paper p = corpus.paper(r);
        EXPECT_EQ(embedder.embedded[r], embedding_text(p.title, p.abstract));
    }
    for (const char* leftover : {"embed.partial.f32", "embed.partial.json", "embed.partial.npy"})
        EXPECT_FALSE(std::filesystem::exists(dir + "/" + leftover)) << leftover;
}

TEST(CorpusEmbed, AnInterruptedRunResumesWithoutRedoingOrLosingPapers) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    CountingEmbedder straight;
    TempDir other;
    const std::string reference_dir = make_corpus(other);
    EmbedCorpusOptions options;
    options.batch = 3;
    embed_corpus(reference_dir, straight, options);

    CountingEmbedder failing;
    failing.fail_after = 2;  // two batches (6 papers) saved, then a failure
    EXPECT_THROW(embed_corpus(dir, failing, options), Error);
    EXPECT_FALSE(Corpus::open(dir).has_vectors());
    // Without --resume, the partial run is not silently thrown away.
    CountingEmbedder again;
    EXPECT_THROW(embed_corpus(dir, again, options), UsageError);
    EXPECT_EQ(again.calls, 0);
    options.resume = true;
    CountingEmbedder resumed;
    EXPECT_EQ(embed_corpus(dir, resumed, options), 2u);
    EXPECT_EQ(resumed.embedded.size(), 2u);  // only the last batch
    EXPECT_EQ(all_vectors(dir), all_vectors(reference_dir));
}

TEST(CorpusEmbed, ResumeRefusesAnotherEmbedder) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    CountingEmbedder failing;
    failing.fail_after = 1;
    EmbedCorpusOptions options;
    options.batch = 2;
    EXPECT_THROW(embed_corpus(dir, failing, options), Error);
    struct Other : CountingEmbedder {
        std::string name() const override { return "other"; }
    } other;
    options.resume = true;
    try {
        embed_corpus(dir, other, options);
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("used embedder 'counting', not 'other'"), std::string::npos) << e.what();
    }
}
