// The self-join operation: the prefix [0, n_rows) in blocks of global rows. For each block,
// every rank sends the block's rows it holds to every other rank (an allgather: over the whole
// join each rank receives the corpus prefix once), searches the whole block against its own
// shard with each row leaving itself out, and the lists are merged into rank 0's along a tree. Every rank does the same
// share of every block, so the work stays balanced under any prefix.
#include "shard/mpi/mpi_comm.hpp"
#include "shard/mpi/shard_ops.hpp"
#include "shard/mpi/shard_profile.hpp"
#include "shard/shard_map.hpp"
#include "novelty/util/half.hpp"
#include "search/search_rules.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace novelty::shard_ops {

namespace {

using Clock = std::chrono::steady_clock;

// Rows per block: NOVELTY_SHARD_BLOCK when set (tests cross block boundaries with small ones;
// the size never changes results), else 8192.
std::size_t block_rows() {
    const char* text = std::getenv("NOVELTY_SHARD_BLOCK");
    const long value = text ? std::atol(text) : 0;
    return value > 0 ? static_cast<std::size_t>(value) : 8192;
}

// The rows [g0, g1) as float32 in global order, from every rank's part of them.
std::vector<float> gather_block(const Shard& shard, std::size_t g0, std::size_t g1, std::size_t dim, DType dtype) {
    const std::size_t n_ranks = shard.map.n_ranks, elt = element_size(dtype), row_bytes = dim * elt;
    std::vector<std::size_t> counts(n_ranks), firsts(n_ranks), offsets(n_ranks);
    std::size_t total = 0;
    for (std::size_t r = 0; r < n_ranks; ++r) {
        const ShardMap other{shard.map.n_rows, n_ranks, r};
        firsts[r] = other.local_below(g0);
        counts[r] = (other.local_below(g1) - firsts[r]) * row_bytes;
        offsets[r] = total;
        total += counts[r];
    }
    const std::size_t me = shard.map.rank;
    std::vector<char> all;
    mpi::allgather_bytes(shard.rows.data() + firsts[me] * row_bytes, counts, all);
    std::vector<float> block((g1 - g0) * dim);
    for (std::size_t g = g0; g < g1; ++g) {
        const std::size_t r = g % n_ranks;
        const char* src = all.data() + offsets[r] + (g / n_ranks - firsts[r]) * row_bytes;
        float* out = block.data() + (g - g0) * dim;
        if (dtype == DType::f32) {
            std::memcpy(out, src, row_bytes);
        } else {
            for (std::size_t c = 0; c < dim; ++c) {
                std::uint16_t bits;
                std::memcpy(&bits, src + c * elt, elt);
                out[c] = half_to_float(bits);
            }
        }
    }
    return block;
}

// The block's rows (global rows g0 .. g0 + n) as queries of this shard: the prefix as the
// limit, each row leaving itself out (local_queries maps both to the shard's rows).
SearchQueries block_queries(const Shard& shard, const std::vector<float>& block, std::size_t g0, std::size_t n,
                            std::size_t dim, std::size_t n_rows) {
    SearchQueries queries;
    queries.vectors = block.data();
    queries.n_queries = n;
    queries.dim = dim;
    queries.unit_norm = true;  // corpus rows, used exactly as stored (as the one-process join does)
    queries.scope.row_limit.assign(n, n_rows);
    queries.scope.first_self_row = static_cast<std::int64_t>(g0);
    return local_queries(queries, shard.map);
}

// One block's lists from every rank, merged on rank 0 into `top` (rows g0 .. g0 + n).
void join_block(Shard& shard, std::size_t g0, std::size_t g1, std::size_t n_rows, std::size_t k, TopK& top,
                ShardProfile& profile) {
    const std::size_t n = g1 - g0;
    std::size_t dim = 0;
    DType dtype = DType::f32;
    if (shard.index) {
        dim = shard.index->dim();
        dtype = shard.index->corpus().dtype;
    }
    std::uint64_t shape[2] = {dim, static_cast<std::uint64_t>(dtype)};
    mpi::bcast_bytes(shape, sizeof shape, 0);  // rank 0 always holds rows; others may not
    const std::vector<float> block = gather_block(shard, g0, g1, shape[0], static_cast<DType>(shape[1]));
    TopK mine = empty_top_k(n, k);
    std::exception_ptr error;
    const auto start = Clock::now();
    const double cpu_start = ShardProfile::process_cpu_seconds();
    try {
        if (shard.index) mine = shard.index->search(block_queries(shard, block, g0, n, shape[0], n_rows), k);
        to_global_rows(mine.rows, shard.map);
    } catch (...) {
        error = std::current_exception();
    }
    profile.compute_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    profile.compute_cpu_seconds += ShardProfile::process_cpu_seconds() - cpu_start;
    mpi::agree(error);
    std::vector<ListEntry> lists = to_list_entries(mine);
    const auto merge_start = Clock::now();
    mpi::reduce_lists(lists, k, shard.threads);
    if (mpi::rank() != 0) return;
    const TopK merged = from_list_entries(lists, n, k);
    std::copy(merged.rows.begin(), merged.rows.end(), top.rows.begin() + g0 * k);
    std::copy(merged.sims.begin(), merged.sims.end(), top.sims.begin() + g0 * k);
    std::copy(merged.count.begin(), merged.count.end(), top.count.begin() + g0);
    profile.merge_seconds += std::chrono::duration<double>(Clock::now() - merge_start).count();
}

}  // namespace

TopK self_join(Shard& shard, std::size_t n_rows, std::size_t k_stored, const ProgressFn& progress) {
    ShardProfile profile("self_join");
    profile.n_queries = n_rows;
    profile.k = k_stored;
    TopK top = mpi::rank() == 0 ? empty_top_k(n_rows, k_stored) : TopK{};
    const std::size_t block = block_rows();
    std::uint64_t step = block;
    mpi::bcast_bytes(&step, sizeof step, 0);  // rank 0's block size: every rank must step alike
    for (std::size_t g0 = 0; g0 < n_rows; g0 += step) {
        const std::size_t g1 = std::min(n_rows, g0 + step);
        join_block(shard, g0, g1, n_rows, k_stored, top, profile);
        if (progress && mpi::rank() == 0) progress(g1, n_rows);
    }
    profile.finish();
    return top;
}

}  // namespace novelty::shard_ops
