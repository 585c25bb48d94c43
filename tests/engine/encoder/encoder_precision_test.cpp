// The CPU encoder's narrow precisions: the bf16 products (engine/src/util/bf16_gemm.hpp: the
// rounding, the kernel against a double reference of the same rounded operands, the AVX512-BF16
// kernel against its portable twin where the CPU has the instructions), the int8 encoder's two
// paths bit for bit, and the accuracy bar of bf16 and int8 against float32: min cosine >= 0.999
// and mean >= 0.9995 over 1,000 real abstracts and the XLM-RoBERTa and CLS fixtures; the demo
// ideas' top 10 (swaps of papers within 0.001 in float32 allowed); and the table `auto` reads
// (precision_bar.hpp), which must say what the measured bar says.
#include "util/bf16_gemm.hpp"
#include "encoder/bert_model.hpp"
#include "encoder/precision_bar.hpp"
#include "io/text_lines.hpp"
#include "novelty/util/cpu_path.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/encoder/text_encoder.hpp"
#include "novelty/request/query_records.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

using namespace novelty;
namespace fs = std::filesystem;

namespace {

std::uint32_t bits_of(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

struct Shape {
    std::size_t n, in, out;
};
// Odd and even widths, rows and columns that are and are not multiples of the 8 x 32 block.
const Shape kShapes[] = {{1, 1, 1}, {19, 37, 45}, {8, 64, 32}, {17, 384, 33}, {3, 2, 16}, {40, 129, 100}, {0, 5, 7}};

// y = bf16(x) bf16(W)^T + b in double, and the sum of |terms| per output (the error scale).
void reference(const Shape& s, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
               std::vector<double>& y, std::vector<double>& scale) {
    y.assign(s.n * s.out, 0.0);
    scale.assign(s.n * s.out, 0.0);
    for (std::size_t r = 0; r < s.n; ++r)
        for (std::size_t o = 0; o < s.out; ++o) {
            double sum = b.empty() ? 0.0 : b[o], mag = std::fabs(sum);
            for (std::size_t i = 0; i < s.in; ++i) {
                const double t = double(round_to_bf16(x[r * s.in + i])) * round_to_bf16(w[o * s.in + i]);
                sum += t;
                mag += std::fabs(t);
            }
            y[r * s.out + o] = sum;
            scale[r * s.out + o] = mag;
        }
}

// Float32 sums of in + 1 terms are within about (in + 1) u sum|terms| of the exact sum
// (u = 2^-24); twice that is allowed. A wrong pairing or a lost term is off by a whole term.
void expect_near_reference(const std::vector<float>& got, const std::vector<double>& want,
                           const std::vector<double>& scale, const Shape& s) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1.2e-7 * static_cast<double>(s.in + 1) * scale[i])
            << "shape " << s.n << "x" << s.in << "x" << s.out << " output " << i;
}

// Runs `gemm` (bf16_gemm_portable or bf16_gemm_avx512) on one shape with or without a bias.
std::vector<float> run_gemm(decltype(&bf16_gemm_portable) gemm, const Shape& s, const std::vector<float>& x,
                            const std::vector<float>& w, const std::vector<float>& b) {
    const Bf16Panels panels = pack_bf16_panels(w.data(), s.out, s.in);
    std::vector<std::uint32_t> xw(s.n * panels.pairs + 1);
    pack_bf16_rows(x.data(), s.n, s.in, xw.data());
    std::vector<float> y(s.n * s.out + 1, -7.0f);  // one guard value past the end
    gemm(xw.data(), s.n, panels, b.empty() ? nullptr : b.data(), y.data());
    EXPECT_EQ(y.back(), -7.0f) << "the kernel wrote past y";
    y.pop_back();
    return y;
}

// `count` abstracts (title, blank line, abstract) spread evenly over the shared ML corpus, which
// is ordered by venue and year; none when the shared data is not next to the checkout.
std::vector<std::string> shared_abstracts(std::size_t count) {
    const std::string path = std::string(NOVELTY_SHARED_DATA_DIR) + "/ml_papers_paperlists.jsonl.gz";
    std::vector<std::string> all, texts;
    if (!fs::exists(path)) return texts;
    LineReader lines(path);
    for (std::string line; lines.next(line);) {
        const auto j = nlohmann::json::parse(line);
        const std::string title = j.value("title", ""), abstract = j.contains("abstract") && j["abstract"].is_string()
                                                                        ? j["abstract"].get<std::string>()
                                                                        : "";
        if (!is_blank(title) && !is_blank(abstract)) all.push_back(embedding_text(title, abstract));
    }
    const std::size_t stride = std::max<std::size_t>(1, all.size() / count);
    for (std::size_t i = 0; i < all.size() && texts.size() < count; i += stride) texts.push_back(all[i]);
    return texts;
}

struct CosineStats {
    double min = 1.0, mean = 0.0;
};
CosineStats compare(const std::vector<float>& a, const std::vector<float>& b, std::size_t dim) {
    CosineStats s;
    const std::size_t n = a.size() / dim;
    for (std::size_t i = 0; i < n; ++i) {
        double dot = 0, na = 0, nb = 0;
        for (std::size_t c = 0; c < dim; ++c) {
            dot += double(a[i * dim + c]) * b[i * dim + c];
            na += double(a[i * dim + c]) * a[i * dim + c];
            nb += double(b[i * dim + c]) * b[i * dim + c];
        }
        const double cos = dot / std::sqrt(na * nb);
        s.min = std::min(s.min, cos);
        s.mean += cos / static_cast<double>(n);
    }
    return s;
}

std::unique_ptr<Embedder> encoder_at(const std::string& model_dir, const std::string& precision) {
    EncoderOptions options;
    options.precision = precision;
    auto encoder = load_builtin_encoder(model_dir, options);
    EXPECT_EQ(encoder->precision(), precision);
    return encoder;
}

// The cosine half of the bar for `precision`'s vectors of `texts` against float32's `want`.
CosineStats expect_cosine_bar(const std::string& model_dir, const std::string& precision,
                              const std::vector<std::string>& texts, const std::vector<float>& want) {
    auto encoder = encoder_at(model_dir, precision);
    const std::vector<float> got = encoder->embed(texts);
    EXPECT_EQ(got.size(), want.size());
    const CosineStats s = compare(got, want, encoder->dim());
    EXPECT_GE(s.min, 0.999) << model_dir << " " << precision;
    EXPECT_GE(s.mean, 0.9995) << model_dir << " " << precision;
    // The precision does change the vectors: a kernel that ignored it would pass the bar too.
    EXPECT_NE(got, want) << precision << " vectors equal float32's: the narrow products were not used";
    ::testing::Test::RecordProperty(precision + "_min_cosine", std::to_string(s.min));
    ::testing::Test::RecordProperty(precision + "_mean_cosine", std::to_string(s.mean));
    std::printf("%s: %zu texts, %s vs f32 cosine min %.6f mean %.6f\n", fs::path(model_dir).filename().c_str(),
                texts.size(), precision.c_str(), s.min, s.mean);
    return s;
}

// Embeds `texts` with `model_dir` at f32, then at bf16 and int8, and checks the cosine bar.
void expect_narrow_precisions_meet_cosine_bar(const std::string& model_dir, const std::vector<std::string>& texts) {
    const std::vector<float> want = encoder_at(model_dir, "f32")->embed(texts);
    for (const char* precision : {"bf16", "int8"}) expect_cosine_bar(model_dir, precision, texts, want);
}

// The 20 demo ideas (data/ideas.jsonl) against the 3,300 committed demo vectors
// (data/demo/vectors_minilm_f16.npy): loaded and embedded at f32 once; kept_top10(precision) says
// for how many ideas the 10 nearest papers keep float32's under the bar's swap rule.
class DemoTop10 {
public:
    explicit DemoTop10(const std::string& model_dir) : model_dir_(model_dir) {
        std::ifstream in(std::string(NOVELTY_SOURCE_DIR) + "/data/ideas.jsonl");
        for (std::string line; std::getline(in, line);) {
            const auto j = nlohmann::json::parse(line);
            ideas_.push_back(embedding_text(j.value("title", ""), j.value("text", "")));
        }
        EXPECT_EQ(ideas_.size(), 20u);
        const NpyMatrix corpus = NpyMatrix::open(std::string(NOVELTY_SOURCE_DIR) + "/data/demo/vectors_minilm_f16.npy");
        rows_ = corpus.rows();
        dim_ = corpus.cols();
        papers_.resize(rows_ * dim_);
        for (std::size_t r = 0; r < rows_; ++r) corpus.row_as_f32(r, papers_.data() + r * dim_);
        want_q_ = encoder_at(model_dir_, "f32")->embed(ideas_);
        want_ = top10s(want_q_);
    }

    /// For how many ideas `precision`'s top 10 keeps float32's: no paper replaced by one more
    /// than encoder::top10_swap_tolerance below it in float32 similarity (encoder::counted_swaps).
    std::size_t kept_top10(const std::string& precision) const {
        const auto got = top10s(encoder_at(model_dir_, precision)->embed(ideas_));
        std::size_t kept = 0;
        for (std::size_t i = 0; i < got.size(); ++i) kept += encoder::counted_swaps(want_[i], got[i]) == 0;
        return kept;
    }

private:
    // The float32 similarity of idea i (want_q_) to paper `row`, in double.
    double f32_similarity(std::size_t i, std::size_t row) const {
        double dot = 0;
        for (std::size_t c = 0; c < dim_; ++c) dot += double(want_q_[i * dim_ + c]) * papers_[row * dim_ + c];
        return dot;
    }

    // Per idea, its 10 nearest papers by the vectors `q` (double-precision products, ties by row),
    // each with its float32 similarity.
    std::vector<std::vector<encoder::RankedPaper>> top10s(const std::vector<float>& q) const {
        std::vector<std::vector<encoder::RankedPaper>> out;
        std::vector<std::pair<double, std::size_t>> sims(rows_);
        for (std::size_t i = 0; i < ideas_.size(); ++i) {
            for (std::size_t r = 0; r < rows_; ++r) {
                double dot = 0;
                for (std::size_t c = 0; c < dim_; ++c) dot += double(q[i * dim_ + c]) * papers_[r * dim_ + c];
                sims[r] = {-dot, r};
            }
            std::partial_sort(sims.begin(), sims.begin() + 10, sims.end());
            std::vector<encoder::RankedPaper> top;
            for (std::size_t k = 0; k < 10; ++k) top.push_back({sims[k].second, f32_similarity(i, sims[k].second)});
            out.push_back(std::move(top));
        }
        return out;
    }

    std::string model_dir_;
    std::vector<std::string> ideas_;
    std::size_t rows_ = 0, dim_ = 0;
    std::vector<float> papers_, want_q_;
    std::vector<std::vector<encoder::RankedPaper>> want_;
};

}  // namespace

TEST(Bf16, RoundsToNearestEven) {
    EXPECT_EQ(to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(to_bf16(-2.0f), 0xc000);
    EXPECT_EQ(to_bf16(-0.0f), 0x8000);
    EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even below: down
    EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd below: up
    EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);  // above the tie: up
    EXPECT_EQ(to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
    EXPECT_EQ(to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to infinity
    EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
    EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::bit_cast<float>(0x7f800001u)))));  // a NaN that would round to inf
    EXPECT_EQ(bits_of(round_to_bf16(3.140625f)), 0x40490000u);  // exactly representable: kept
}

// pack_bf16_rows on every CPU path (AVX-512 lanes on avx512 and amx, scalar below): the same words
// as to_bf16 value by value, for rows of 1 to 40 values (whole 16-lane groups and tails) holding
// ties, subnormals, infinities and NaNs.
TEST(Bf16, RowPackingGivesTheScalarRoundingOnEveryPath) {
    std::vector<float> x = random_floats(40 * 37, 9);
    const float specials[] = {std::bit_cast<float>(0x3f808000u), std::bit_cast<float>(0x3f818000u), 1e-40f, -1e-45f,
                              std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7f800001u),
                              std::bit_cast<float>(0xff812345u), std::numeric_limits<float>::max(), -0.0f};
    for (std::size_t i = 0; i < x.size(); i += 7) x[i] = specials[(i / 7) % std::size(specials)];
    for (const CpuPath path : {CpuPath::amx, CpuPath::avx512, CpuPath::f32}) {
        if (path > best_cpu_path(cpu_features())) continue;
        const ScopedCpuPath scoped(path);
        for (std::size_t in = 1; in <= 40; ++in) {
            const std::size_t n = 37, pairs = (in + 1) / 2;
            std::vector<std::uint32_t> got(n * pairs + 1, 0xdeadbeefu);
            pack_bf16_rows(x.data(), n, in, got.data());
            ASSERT_EQ(got.back(), 0xdeadbeefu) << "wrote past the rows";
            for (std::size_t r = 0; r < n; ++r)
                for (std::size_t p = 0; p < pairs; ++p) {
                    const std::uint32_t lo = to_bf16(x[r * in + 2 * p]);
                    const std::uint32_t hi = 2 * p + 1 < in ? to_bf16(x[r * in + 2 * p + 1]) : 0u;
                    ASSERT_EQ(got[r * pairs + p], lo | hi << 16)
                        << cpu_path_name(path) << " in " << in << " row " << r << " pair " << p;
                }
        }
    }
}

TEST(Bf16, PackingPairsColumnsAndZeroesThePadding) {
    const std::vector<float> w = {1, 2, 3, 4, 5, 6};  // 2 x 3
    const Bf16Panels p = pack_bf16_panels(w.data(), 2, 3);
    EXPECT_EQ(p.pairs, 2u);
    EXPECT_EQ(p.panels, 1u);
    ASSERT_EQ(p.words.size(), 2u * 16u);
    EXPECT_EQ(p.words[0], std::uint32_t(to_bf16(1)) | std::uint32_t(to_bf16(2)) << 16);  // row 0, pair 0
    EXPECT_EQ(p.words[1], std::uint32_t(to_bf16(4)) | std::uint32_t(to_bf16(5)) << 16);  // row 1, pair 0
    EXPECT_EQ(p.words[16], std::uint32_t(to_bf16(3)));                                   // row 0, pair 1, odd column
    for (std::size_t lane = 2; lane < 16; ++lane) EXPECT_EQ(p.words[lane], 0u) << "padding row " << lane;
}

TEST(Bf16, PortableKernelMatchesDoubleReferenceOfRoundedOperands) {
    std::uint32_t seed = 1;
    for (const Shape& s : kShapes)
        for (const bool with_bias : {true, false}) {
            const auto x = random_floats(s.n * s.in, seed++), w = random_floats(s.out * s.in, seed++);
            const auto b = with_bias ? random_floats(s.out, seed++) : std::vector<float>{};
            std::vector<double> want, scale;
            reference(s, x, w, b, want, scale);
            expect_near_reference(run_gemm(bf16_gemm_portable, s, x, w, b), want, scale, s);
        }
}

TEST(Bf16, Avx512KernelEqualsPortableKernel) {
    if (!bf16_kernel_runs()) {
        EXPECT_THROW(run_gemm(bf16_gemm_avx512, kShapes[1], random_floats(19 * 37, 1), random_floats(45 * 37, 2), {}),
                     Error);
        GTEST_SKIP() << "this CPU has no AVX512-BF16";
    }
    std::uint32_t seed = 100;
    std::size_t equal = 0, total = 0;
    for (const Shape& s : kShapes)
        for (const bool with_bias : {true, false}) {
            const auto x = random_floats(s.n * s.in, seed++), w = random_floats(s.out * s.in, seed++);
            const auto b = with_bias ? random_floats(s.out, seed++) : std::vector<float>{};
            std::vector<double> want, scale;
            reference(s, x, w, b, want, scale);
            const std::vector<float> got = run_gemm(bf16_gemm_avx512, s, x, w, b);
            expect_near_reference(got, want, scale, s);
            // The same sums in the same order as the portable kernel: equal bits but where the
            // hardware rounds differently (subnormals; a fused pair). Reported, not required.
            const std::vector<float> portable = run_gemm(bf16_gemm_portable, s, x, w, b);
            for (std::size_t i = 0; i < got.size(); ++i) equal += bits_of(got[i]) == bits_of(portable[i]);
            total += got.size();
        }
    RecordProperty("bit_equal_to_portable", std::to_string(equal) + "/" + std::to_string(total));
    std::printf("AVX512-BF16 kernel: %zu of %zu outputs bit-equal to the portable kernel\n", equal, total);
}

// The bf16 screen's products (bf16_gemm_panel_range) on each CPU path the CPU runs: AMX-BF16 tiles
// for whole tiles of 16 rows on amx (another order of the sums), vdpbf16ps, or the portable loop;
// float32 sums of the exact bf16 products, so near the exact sum. Rows in whole tiles and past
// them, pairs in whole tiles (16) and past them.
class Bf16PanelPath : public testing::TestWithParam<CpuPath> {};

TEST_P(Bf16PanelPath, ProductsAreNearTheExactSums) {
    const CpuPath best = best_cpu_path(cpu_features());
    if (GetParam() > best) GTEST_SKIP() << "this CPU's best path is " << cpu_path_name(best);
    const ScopedCpuPath path(GetParam());
    std::uint32_t seed = 300;
    for (const Shape& s : {Shape{64, 384, 96}, Shape{48, 200, 40}, Shape{33, 1536, 17}, Shape{16, 32, 64},
                           Shape{19, 37, 45}, Shape{1, 1, 1}}) {
        const auto x = random_floats(s.n * s.in, seed++), w = random_floats(s.out * s.in, seed++);
        const Bf16Panels panels = pack_bf16_panels(w.data(), s.out, s.in);
        std::vector<std::uint32_t> xw(s.n * panels.pairs);
        pack_bf16_rows(x.data(), s.n, s.in, xw.data());
        std::vector<float> y(s.n * s.out + 1, -7.0f);
        bf16_gemm_panel_range(xw.data(), s.n, panels.words.data(), panels.pairs, panels.panels, s.out, y.data());
        EXPECT_EQ(y.back(), -7.0f) << "the kernel wrote past y";
        y.pop_back();
        std::vector<double> want, scale;
        reference(s, x, w, {}, want, scale);
        expect_near_reference(y, want, scale, s);
    }
}

INSTANTIATE_TEST_SUITE_P(EveryCpuPath, Bf16PanelPath,
                         testing::Values(CpuPath::amx, CpuPath::avx512, CpuPath::avxvnni, CpuPath::avx2, CpuPath::f32),
                         [](const testing::TestParamInfo<CpuPath>& info) { return std::string(cpu_path_name(info.param)); });

// The encoder's bf16 products (bf16_gemm_best) on each CPU path that has AVX512-BF16: AMX-BF16
// tiles for whole tiles of 16 rows on amx, vdpbf16ps otherwise; bias added; near the exact sums.
TEST_P(Bf16PanelPath, EncoderProductsWithBiasAreNearTheExactSums) {
    const CpuPath best = best_cpu_path(cpu_features());
    if (GetParam() > best) GTEST_SKIP() << "this CPU's best path is " << cpu_path_name(best);
    const ScopedCpuPath path(GetParam());
    if (!bf16_kernel_runs()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
    std::uint32_t seed = 500;
    for (const Shape& s : {Shape{64, 384, 96}, Shape{40, 129, 100}, Shape{17, 384, 33}, Shape{1, 1, 1}}) {
        const auto x = random_floats(s.n * s.in, seed++), w = random_floats(s.out * s.in, seed++),
                   b = random_floats(s.out, seed++);
        const Bf16Panels panels = pack_bf16_panels(w.data(), s.out, s.in);
        std::vector<std::uint32_t> xw(s.n * panels.pairs);
        pack_bf16_rows(x.data(), s.n, s.in, xw.data());
        std::vector<float> y(s.n * s.out + 1, -7.0f);
        bf16_gemm_best(xw.data(), s.n, panels, b.data(), y.data());
        EXPECT_EQ(y.back(), -7.0f) << "the kernel wrote past y";
        y.pop_back();
        std::vector<double> want, scale;
        reference(s, x, w, b, want, scale);
        expect_near_reference(y, want, scale, s);
    }
}

TEST(EncoderPrecision, Names) {
    const std::string dir = test::fixture("encoder/tiny-xlmr");
    for (const char* name : {"f32", "bf16", "int8"}) {
        EXPECT_EQ(resolve_encoder_precision(name, dir).precision, name);
        EXPECT_EQ(resolve_encoder_precision(name, dir).reason, "as asked");
    }
    EXPECT_THROW(resolve_encoder_precision("fp16", dir), UsageError);
    EXPECT_THROW(check_encoder_precision_name("fp16"), UsageError);
    EncoderOptions bad;
    bad.precision = "double";
    EXPECT_THROW(load_builtin_encoder(dir, bad), UsageError);
}

// The int8 encoder gives the same bits through each CPU path's int8 kernel (AMX, AVX512-VNNI,
// AVX-VNNI, AVX2; skipped past this CPU's best) and through float32 sgemm: all sum the same integers
// exactly. 40 tokens, so that AMX runs whole tiles of 16 rows and the rows past them.
class Int8EncoderPath : public testing::TestWithParam<CpuPath> {};

TEST_P(Int8EncoderPath, AgreesBitForBitWithFloat32) {
    const CpuPath best = best_cpu_path(cpu_features());
    if (GetParam() > best) GTEST_SKIP() << "this CPU's best path is " << cpu_path_name(best);
    const ScopedCpuPath path(GetParam());
    const std::string dir = test::fixture("encoder/tiny-bert-cls");
    encoder::BertModel kernel = encoder::BertModel::load(dir), float32 = encoder::BertModel::load(dir);
    kernel.set_linear_precision(encoder::LinearPrecision::int8_kernel, encoder::int8_linear_layers);
    float32.set_linear_precision(encoder::LinearPrecision::int8_float32, encoder::int8_linear_layers);
    std::vector<std::int32_t> a = {2}, b = {2, 5, 3};
    for (std::int32_t t = 0; t < 35; ++t) a.push_back(1000 + 37 * t);
    a.push_back(3);
    const std::vector<const std::vector<std::int32_t>*> seqs = {&a, &b};
    std::vector<float> got, want;
    kernel.forward(seqs, got);
    float32.forward(seqs, want);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(bits_of(got[i]), bits_of(want[i])) << "value " << i;
}

INSTANTIATE_TEST_SUITE_P(EveryKernelPath, Int8EncoderPath,
                         testing::Values(CpuPath::amx, CpuPath::avx512, CpuPath::avxvnni, CpuPath::avx2),
                         [](const testing::TestParamInfo<CpuPath>& info) { return std::string(cpu_path_name(info.param)); });

TEST(EncoderPrecision, NarrowPrecisionsMeetTheCosineBarOnTheXlmRobertaAndClsFixtures) {
    std::ifstream in(test::fixture("encoder/xlmr_texts.jsonl"));
    std::vector<std::string> texts;
    for (std::string line; std::getline(in, line);) texts.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
    ASSERT_EQ(texts.size(), 30u);
    expect_narrow_precisions_meet_cosine_bar(test::fixture("encoder/tiny-xlmr"), texts);
    expect_narrow_precisions_meet_cosine_bar(test::fixture("encoder/tiny-bert-cls"), texts);
}

// One test that embeds 1,000 abstracts at each precision once (about two minutes on 2 cores), and
// the demo ideas: the cosine bar must hold for bf16 and int8, and the table auto reads
// (precision_meets_bar) must give the verdict of what this test measures.
TEST(EncoderPrecision, MiniLmBarOnAThousandRealAbstractsAndTheDemoIdeas) {
    const std::string model = std::string(NOVELTY_SOURCE_DIR) + "/models/all-MiniLM-L6-v2";
    if (!fs::exists(model + "/config.json"))
        GTEST_SKIP() << "all-MiniLM-L6-v2 is not installed at " << model << " (run scripts/setup.sh)";
    const std::vector<std::string> texts = shared_abstracts(1000);
    if (texts.empty()) GTEST_SKIP() << "no ../shared/data/ml_papers_paperlists.jsonl.gz next to the checkout";
    ASSERT_EQ(texts.size(), 1000u);
    const std::vector<float> want = encoder_at(model, "f32")->embed(texts);
    const DemoTop10 demo(model);
    for (const char* precision : {"bf16", "int8"}) {
        const CosineStats s = expect_cosine_bar(model, precision, texts, want);
        const std::size_t kept = demo.kept_top10(precision);
        RecordProperty(std::string(precision) + "_kept_top10", std::to_string(kept) + "/20");
        std::printf("%s: top 10 kept (swaps within %.3f allowed) for %zu of the 20 demo ideas\n", precision,
                    encoder::top10_swap_tolerance, kept);
        encoder::BarMeasures table;
        ASSERT_TRUE(encoder::measured_bar("all-MiniLM-L6-v2", precision, table));
        // The development set's AUROC is the bench's (bench/run_devset_precision.sh): the table's.
        const encoder::BarMeasures measured{s.min, s.mean, 20, kept, table.rnd_auroc_difference};
        EXPECT_EQ(encoder::precision_meets_bar("all-MiniLM-L6-v2", precision), encoder::meets_bar(measured))
            << precision << ": the bar table disagrees with the measured bar (cosine min " << s.min << ", mean "
            << s.mean << ", top 10 kept for " << kept << "/20)";
    }
}
