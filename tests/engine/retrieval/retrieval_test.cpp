// Retrieval: BM25 equals its formula on a tiny corpus, reciprocal-rank fusion is exact on a worked
// example, rewrites are fused, and no method ever returns a paper published after the cutoff,
// even a near-duplicate of the query.
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "novelty/request/retrieval_run.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

using namespace novelty;
using novelty::test::TempDir;

namespace {

std::string import_jsonl(const TempDir& tmp, const std::string& records) {
    test::write_file(tmp.file("in.jsonl"), records);
    ImportOptions options;
    options.sources.push_back({tmp.file("in.jsonl"), ImportFormat::jsonl, ""});
    options.out_dir = tmp.file("c");
    import_corpus(options);
    return tmp.file("c");
}

bool contains(const Ranking& r, std::int64_t row) { return std::find(r.rows.begin(), r.rows.end(), row) != r.rows.end(); }

}  // namespace

TEST(Fts5Query, KeepsDistinctContentTermsQuoted) {
    EXPECT_EQ(fts5_query("The Graph-Neural networks, GRAPH of a x \"quoted\" 3D"),
              "\"graph\" OR \"neural\" OR \"networks\" OR \"quoted\" OR \"3d\"");
    EXPECT_EQ(fts5_query("of the a , ."), "");
    EXPECT_EQ(fts5_query(""), "");
    // FTS5 operators in the text are plain words here, never syntax.
    EXPECT_EQ(fts5_query("NEAR(vision OR robots)* -x"), "\"near\" OR \"vision\" OR \"robots\"");
}

TEST(Bm25, ScoresEqualTheBm25FormulaOnATinyCorpus) {
    TempDir tmp;
    // Lengths in tokens (title + abstract): 3, 5, 3, 4, 2, 3 = 20; average 20/6.
    const std::string dir = import_jsonl(tmp,
        "{\"id\": \"r0\", \"title\": \"alpha beta\", \"abstract\": \"gamma\", \"date\": \"2020-01-01\"}\n"
        "{\"id\": \"r1\", \"title\": \"alpha alpha\", \"abstract\": \"delta epsilon zeta\", \"date\": \"2020-01-02\"}\n"
        "{\"id\": \"r2\", \"title\": \"beta\", \"abstract\": \"gamma delta\", \"date\": \"2020-01-03\"}\n"
        "{\"id\": \"r3\", \"title\": \"omega\", \"abstract\": \"omega omega omega\", \"date\": \"2020-01-04\"}\n"
        "{\"id\": \"r4\", \"title\": \"kappa\", \"abstract\": \"lambda\", \"date\": \"2020-01-05\"}\n"
        "{\"id\": \"r5\", \"title\": \"mu nu\", \"abstract\": \"xi\", \"date\": \"2020-01-06\"}\n");
    Bm25Index index(dir);
    const double n_docs = 6, avgdl = 20.0 / 6, k1 = 1.2, b = 0.75;
    const auto term = [&](double tf, double len, double n_with) {
        const double idf = std::log((n_docs - n_with + 0.5) / (n_with + 0.5));
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgdl));
    };
    const Ranking alpha = index.rank("alpha", 6, {}, 10);
    ASSERT_EQ(alpha.size(), 2u);  // only the two papers with the term
    // r1 has the term twice in 5 tokens, r0 once in 3: r1 first.
    EXPECT_EQ(alpha.rows, (std::vector<std::int64_t>{1, 0}));
    EXPECT_NEAR(alpha.scores[0], term(2, 5, 2), 1e-9);
    EXPECT_NEAR(alpha.scores[1], term(1, 3, 2), 1e-9);
    // Two terms add up; the paper with both ranks first.
    const Ranking two = index.rank("alpha gamma", 6, {}, 10);
    ASSERT_EQ(two.size(), 3u);
    EXPECT_EQ(two.rows[0], 0);
    EXPECT_NEAR(two.scores[0], term(1, 3, 2) + term(1, 3, 2), 1e-9);
    // Depth, prefix and exclusions.
    EXPECT_EQ(index.rank("alpha", 6, {}, 1).rows, (std::vector<std::int64_t>{1}));
    EXPECT_EQ(index.rank("alpha", 1, {}, 10).rows, (std::vector<std::int64_t>{0}));
    const std::vector<std::int64_t> skip = {1};
    EXPECT_EQ(index.rank("alpha", 6, skip, 1).rows, (std::vector<std::int64_t>{0}));
    EXPECT_EQ(index.rank("alpha", 0, {}, 10).size(), 0u);
    EXPECT_EQ(index.rank("unknownterm", 6, {}, 10).size(), 0u);
    EXPECT_EQ(index.rank("the of", 6, {}, 10).size(), 0u);
    EXPECT_THROW(index.rank("alpha", 6, {}, 0), UsageError);
}

TEST(Bm25, ACorpusWithoutItsFullTextIndexIsACorpusError) {
    TempDir tmp;
    EXPECT_THROW(Bm25Index(tmp.file("nothing")), CorpusError);
}

TEST(ReciprocalRankFusion, WorkedExample) {
    // A = [1, 2, 3], B = [3, 1, 4], k = 60:
    //   row 1: 1/61 + 1/62, row 3: 1/63 + 1/61, row 2: 1/62, row 4: 1/63.
    const std::vector<Ranking> rankings = {{{1, 2, 3}, {0.9, 0.8, 0.7}}, {{3, 1, 4}, {5, 4, 3}}};
    const Ranking fused = reciprocal_rank_fusion(rankings, 10);
    EXPECT_EQ(fused.rows, (std::vector<std::int64_t>{1, 3, 2, 4}));
    EXPECT_DOUBLE_EQ(fused.scores[0], 1.0 / 61 + 1.0 / 62);
    EXPECT_DOUBLE_EQ(fused.scores[1], 1.0 / 63 + 1.0 / 61);
    EXPECT_DOUBLE_EQ(fused.scores[2], 1.0 / 62);
    EXPECT_DOUBLE_EQ(fused.scores[3], 1.0 / 63);
    EXPECT_EQ(reciprocal_rank_fusion(rankings, 2).rows, (std::vector<std::int64_t>{1, 3}));
    // Another constant: k = 1 makes rank 1 worth 1/2.
    EXPECT_DOUBLE_EQ(reciprocal_rank_fusion(rankings, 1, 1.0).scores[0], 1.0 / 2 + 1.0 / 3);
    // Ties go to the lower row; a repeat within one ranking counts once, at its first rank.
    const std::vector<Ranking> tied = {{{9, 9}, {1, 1}}, {{5}, {1}}};
    const Ranking t = reciprocal_rank_fusion(tied, 10);
    EXPECT_EQ(t.rows, (std::vector<std::int64_t>{5, 9}));
    EXPECT_DOUBLE_EQ(t.scores[1], 1.0 / 61);
    EXPECT_EQ(reciprocal_rank_fusion(std::vector<Ranking>{}, 10).size(), 0u);
    EXPECT_THROW(reciprocal_rank_fusion(rankings, 0), UsageError);
    EXPECT_THROW(reciprocal_rank_fusion(rankings, 5, 0.0), UsageError);
}

namespace {

class FakeRewriter : public QueryRewriter {
public:
    explicit FakeRewriter(std::vector<std::string> texts) : texts_(std::move(texts)) {}
    std::string name() const override { return "fake"; }
    std::vector<std::string> rewrite(const std::string& query, std::size_t n) override {
        asked.push_back(query);
        std::vector<std::string> out = texts_;
        if (!overfill && out.size() > n) out.resize(n);
        return out;
    }
    std::vector<std::string> asked;
    bool overfill = false;

private:
    std::vector<std::string> texts_;
};

}  // namespace

TEST(QueryRewriting, RewritesAreCleanedAndEachIsRankedThenFused) {
    FakeRewriter rewriter({"  second  ", "question", "", "third", "fourth"});
    EXPECT_EQ(rewritten_texts(rewriter, "question", 4, true),
              (std::vector<std::string>{"question", "second", "third"}));  // trimmed, repeats and empties dropped
    EXPECT_EQ(rewriter.asked, (std::vector<std::string>{"question"}));
    EXPECT_EQ(rewritten_texts(rewriter, "question", 2, false), (std::vector<std::string>{"second", "question"}));
    EXPECT_EQ(rewritten_texts(rewriter, "question", 0, true), (std::vector<std::string>{"question"}));
    rewriter.overfill = true;
    EXPECT_THROW(rewritten_texts(rewriter, "question", 2, true), Error);

    // Each text's rankings (two per text, like a hybrid) all enter one fusion.
    const auto rank_text = [](const std::string& text) {
        if (text == "question") return std::vector<Ranking>{{{1, 2}, {1, 0}}, {{2}, {1}}};
        return std::vector<Ranking>{{{3, 2}, {1, 0}}};
    };
    const Ranking fused = fuse_texts({"question", "second"}, rank_text, 10);
    // row 2: 1/62 + 1/61 + 1/62; row 1: 1/61; row 3: 1/61.
    EXPECT_EQ(fused.rows, (std::vector<std::int64_t>{2, 1, 3}));
    EXPECT_DOUBLE_EQ(fused.scores[0], 2.0 / 62 + 1.0 / 61);
}

TEST(CutoffRetrieval, APostCutoffNearDuplicateIsNeverReturned) {
    TempDir tmp;
    const std::string answer_text = "Contrastive pretraining of graph neural networks for molecular property prediction";
    const std::string dir = import_jsonl(tmp,
        "{\"id\": \"old-gnn\", \"title\": \"Graph neural networks\", \"abstract\": \"Message passing on graphs.\", \"date\": \"2018\"}\n"
        "{\"id\": \"old-cnn\", \"title\": \"Convolutional networks for images\", \"abstract\": \"Image classification.\", \"date\": \"2019\"}\n"
        "{\"id\": \"old-rl\", \"title\": \"Reinforcement learning for grasping\", \"abstract\": \"Robots pick objects.\", \"date\": \"2019-05\"}\n"
        "{\"id\": \"answer\", \"title\": \"Contrastive pretraining of graph neural networks\", \"abstract\": \"Molecular graphs.\", \"date\": \"2020-03-01\"}\n"
        "{\"id\": \"future-dup\", \"title\": \"" + answer_text + "\", \"abstract\": \"" + answer_text + ".\", \"date\": \"2021-02-01\"}\n"
        "{\"id\": \"future-other\", \"title\": \"Diffusion models\", \"abstract\": \"Denoising.\", \"date\": \"2022\"}\n");
    const Corpus corpus = Corpus::open(dir);
    const auto row_of = [&](const std::string& id) { return static_cast<std::int64_t>(*corpus.find_row(id)); };
    const std::int64_t answer = row_of("answer"), dup = row_of("future-dup");
    const std::size_t limit = corpus.rows_through(*parse_date("2020-12-31"));
    ASSERT_EQ(limit, 4u);

    // Dense: 3-d vectors; the query is exactly the near-duplicate's vector, the answer is close.
    const std::size_t dim = 3;
    std::vector<float> vectors(corpus.size() * dim, 0.0f);
    const auto set = [&](const std::string& id, float x, float y, float z) {
        const float norm = std::sqrt(x * x + y * y + z * z);
        float* v = vectors.data() + row_of(id) * dim;
        v[0] = x / norm, v[1] = y / norm, v[2] = z / norm;
    };
    set("old-gnn", 0.5f, 1, 0);
    set("old-cnn", 0, 1, 0);
    set("old-rl", 0, 0, 1);
    set("answer", 1, 0.2f, 0);
    set("future-dup", 1, 0.01f, 0);
    set("future-other", 0.7f, 0.7f, 0.1f);
    const std::vector<float> query = {vectors.begin() + dup * dim, vectors.begin() + (dup + 1) * dim};
    auto backend = make_cpu_backend();
    SearchQueries q;
    q.vectors = query.data();
    q.n_queries = 1;
    q.dim = dim;
    q.scope.row_limit = {limit};
    const Ranking dense = dense_rankings(*backend->build(VectorView::of(vectors, dim)), q, 10)[0];
    EXPECT_EQ(dense.size(), 4u);
    EXPECT_EQ(dense.rows[0], answer);
    for (std::int64_t row : dense.rows) EXPECT_LT(row, static_cast<std::int64_t>(limit));

    Bm25Index index(dir);
    const Ranking bm25 = index.rank(answer_text, limit, {}, 10);
    ASSERT_GE(bm25.size(), 1u);
    EXPECT_EQ(bm25.rows[0], answer);
    for (std::int64_t row : bm25.rows) EXPECT_LT(row, static_cast<std::int64_t>(limit));

    const std::vector<Ranking> both = {dense, bm25};
    const Ranking hybrid = reciprocal_rank_fusion(both, 10);
    EXPECT_EQ(hybrid.rows[0], answer);
    EXPECT_FALSE(contains(hybrid, dup));
    for (std::int64_t row : hybrid.rows) EXPECT_LT(row, static_cast<std::int64_t>(limit));

    // Control: without the cutoff, every method puts the near-duplicate first, so the checks
    // above could fail.
    q.scope.row_limit = {corpus.size()};
    EXPECT_EQ(dense_rankings(*backend->build(VectorView::of(vectors, dim)), q, 10)[0].rows[0], dup);
    EXPECT_EQ(index.rank(answer_text, corpus.size(), {}, 10).rows[0], dup);
}

// BM25 ranks the papers the corpus opened, not whatever DIR holds now (issue 48): the ranker
// opened DIR/papers.sqlite by path, so after an import --overwrite (or an add through a copy)
// replaced the directory under an open corpus (a server's) its rows were another corpus's.
TEST(Bm25, ARankerReadsTheCorpusItsCorpusOpenedAfterTheDirectoryWasReplaced) {
    TempDir tmp;
    const std::string dir = import_jsonl(tmp,
        "{\"id\": \"r0\", \"title\": \"alpha beta\", \"abstract\": \"gamma\", \"date\": \"2020-01-01\"}\n"
        "{\"id\": \"r1\", \"title\": \"alpha alpha\", \"abstract\": \"delta\", \"date\": \"2020-01-02\"}\n"
        "{\"id\": \"r2\", \"title\": \"beta\", \"abstract\": \"gamma delta\", \"date\": \"2020-01-03\"}\n");
    const Corpus corpus = Corpus::open(dir);
    // The replacement has "alpha" only in its last row.
    test::write_file(tmp.file("new.jsonl"),
        "{\"id\": \"n0\", \"title\": \"omega\", \"abstract\": \"kappa\", \"date\": \"2019-01-01\"}\n"
        "{\"id\": \"n1\", \"title\": \"omega mu\", \"abstract\": \"nu\", \"date\": \"2019-01-02\"}\n"
        "{\"id\": \"n2\", \"title\": \"zeta\", \"abstract\": \"alpha\", \"date\": \"2019-01-03\"}\n"
        "{\"id\": \"n3\", \"title\": \"xi\", \"abstract\": \"pi\", \"date\": \"2019-01-04\"}\n");
    ImportOptions options;
    options.sources.push_back({tmp.file("new.jsonl"), ImportFormat::jsonl, ""});
    options.out_dir = dir;
    options.overwrite = true;
    import_corpus(options);
    ASSERT_EQ(Corpus::open(dir).size(), 4u) << "DIR holds the new corpus";

    RetrievalSettings settings;
    settings.methods = {"bm25"};
    settings.k = 10;
    std::size_t guarded = 0;
    RetrievalRanker ranker(corpus, settings, {}, nullptr, nullptr, [&](const std::function<void()>& use) {
        ++guarded;
        use();
    });
    const std::vector<std::string> ids{"q"}, texts{"alpha"};
    SearchQueries scopes;
    scopes.n_queries = 1;
    const auto ranked = ranker.rank(RetrievalBatch{ids, texts, scopes}, {});
    ASSERT_EQ(ranked.size(), 1u);
    EXPECT_EQ(ranked[0].at("bm25").rows, (std::vector<std::int64_t>{1, 0})) << "the open corpus's rows r1, r0";
    // Opening the ranker's statements and the ranking both use the corpus's connection: both
    // under the caller's corpus lock (another thread may be reading a paper through it).
    EXPECT_EQ(guarded, 2u) << "the BM25 ranker opened and ranked under the caller's corpus lock";
    EXPECT_EQ(Bm25Index(corpus).rank("alpha", 3, {}, 10).rows, (std::vector<std::int64_t>{1, 0}));
    EXPECT_EQ(Bm25Index(corpus).rank("alpha", SIZE_MAX, {}, 10).rows, (std::vector<std::int64_t>{1, 0})) << "no cutoff";
    EXPECT_EQ(Bm25Index(dir).rank("alpha", 4, {}, 10).rows, (std::vector<std::int64_t>{2})) << "by path: the new one";
}
