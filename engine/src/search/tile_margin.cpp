// See tile_margin.hpp; docs/cuda.md derives each term.
#include "search/tile_margin.hpp"

#include <cmath>
#include <limits>

namespace novelty {

namespace {

/// Unit roundoff of rounding a float32 query to the storage type (round to nearest).
double query_unit_roundoff(ElementType storage) {
    switch (storage) {
        case ElementType::f16: return std::ldexp(1.0, -11);
        case ElementType::bf16: return std::ldexp(1.0, -8);
        case ElementType::f32: return 0.0;
    }
    return 1.0;
}

/// The largest absolute error of rounding a value below the smallest normal of the storage type
/// (float16: half its subnormal spacing 2^-24; bfloat16 shares float32's range, whose
/// subnormals lie below 2^-126: their error is taken as 2^-126, far below every other term).
double query_subnormal_error(ElementType storage) {
    switch (storage) {
        case ElementType::f16: return std::ldexp(1.0, -25);
        case ElementType::bf16: return std::ldexp(1.0, -126);
        case ElementType::f32: return 0.0;
    }
    return 1.0;
}

}  // namespace

double half_ulp_at(double x) {
    x = std::fabs(x);
    if (!(x < 65504.0)) return std::numeric_limits<double>::infinity();
    if (x < std::ldexp(1.0, -14)) return std::ldexp(1.0, -24);
    int exponent = 0;
    std::frexp(x, &exponent);  // x = m * 2^exponent, m in [0.5, 1): x lies in [2^(e-1), 2^e)
    return std::ldexp(1.0, exponent - 1 - 10);
}

float similarity_tile_margin(const TileMarginInputs& in) {
    const double inf = std::numeric_limits<double>::infinity();
    const double R = in.max_row_norm, Q = in.max_query_norm;
    if (!std::isfinite(R) || !std::isfinite(Q) || R < 0 || Q < 0) return std::numeric_limits<float>::infinity();
    const double n = static_cast<double>(in.dim);
    const double u_q = query_unit_roundoff(in.storage);
    const double s_q = query_subnormal_error(in.storage);
    // 1. Rounding the query: |(q~ - q) . r| <= ||q~ - q|| ||r||, and each component's error is
    //    at most u_q |q_i| (normal range) or s_q (below it).
    const double query_error = (u_q * Q + std::sqrt(n) * s_q) * R;
    const double Q_rounded = Q * (1 + u_q) + std::sqrt(n) * s_q;
    // 2. The GEMM's float32 accumulation of n products: at most n * 2^-22 * sum |q~_i r_i| (twice
    //    the round-to-nearest bound n * 2^-24 / (1 - n * 2^-24) for truncating accumulation,
    //    with room to spare), and sum |q~_i r_i| <= ||q~|| ||r||.
    const double gemm_error = n * std::ldexp(1.0, -22) * Q_rounded * R;
    // 3. The re-scoring's own float32 sum (round to nearest; doubled for room).
    const double rescore_error = n * std::ldexp(1.0, -23) * Q * R;
    // 4. Rounding G to float16: at most one float16 spacing at |G| (faithful rounding is all
    //    that is assumed of the GEMM's output conversion), |G| <= bound.
    const double bound = Q_rounded * R + gemm_error;
    const double output_error = in.half_tile ? half_ulp_at(bound) : 0.0;
    if (output_error == inf) return std::numeric_limits<float>::infinity();
    double margin = query_error + gemm_error + rescore_error + output_error;
    // 5. "threshold - M" and the comparison are float32 operations on values below bound + M.
    margin += std::ldexp(1.0, -21) * (bound + margin + 1);
    const float rounded = static_cast<float>(margin);
    return static_cast<double>(rounded) >= margin ? rounded : std::nextafter(rounded, std::numeric_limits<float>::infinity());
}

}  // namespace novelty
