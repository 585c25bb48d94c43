// The margin by which a similarity computed on the device may differ from the exact re-scored
// similarity of the same (query, row) pair, for the CUDA backend's 16-bit similarity tiles
// (docs/cuda.md, "16-bit similarity tiles", derives each term). Pure arithmetic on the host,
// tested on the CPU (tests/engine/search/tile_margin_test.cpp).
//
// The quantities: q the float32 query (norm at most max_query_norm), r a stored row (norm at
// most max_row_norm), q~ the query rounded to the storage type for the GEMM, G the GEMM's
// float32-accumulated q~ . r, a the value the tile holds (G itself, or G rounded to float16),
// g the float32 re-scored q . r against the same stored row. The margin M bounds |a - g| and
// also covers the float32 arithmetic of "threshold - M" and the comparison with it.
#pragma once

#include <cstddef>

#include "novelty/util/element_type.hpp"

namespace novelty {

struct TileMarginInputs {
    std::size_t dim = 0;                     ///< vector dimension (terms of each dot product)
    ElementType storage = ElementType::f16;  ///< the queries are rounded to it for the GEMM
    double max_row_norm = 1.0;               ///< largest L2 norm of a stored row
    double max_query_norm = 1.0;             ///< largest L2 norm of a float32 query
    bool half_tile = true;                   ///< true: the tile holds float16 (G rounded once more)
};

/// The margin M (see the file comment), rounded up to a float32 value; +inf when a norm is
/// not finite or the similarities may exceed float16's range (then a 16-bit tile cannot be used).
float similarity_tile_margin(const TileMarginInputs& in);

/// The spacing of float16 values at magnitude |x| (2^-24 below the smallest normal, +inf at or
/// above 65504, where float16 overflows).
double half_ulp_at(double x);

}  // namespace novelty
