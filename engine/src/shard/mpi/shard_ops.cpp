// The search operations of a sharded index: queries broadcast, each rank's top-k on its shard,
// the lists gathered and merged on rank 0 (shard_ops.hpp).
#include "shard/mpi/shard_ops.hpp"

#include "shard/mpi/mpi_comm.hpp"
#include "shard/mpi/shard_profile.hpp"
#include "search/search_rules.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

namespace novelty::shard_ops {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Broadcasts rank 0's row filters: each distinct filter's words once and each query's index into
// them (-1: none); every rank then holds the same per-query filters over the global rows.
void broadcast_filters(SearchScope& scope, std::size_t n_queries) {
    std::vector<std::int32_t> index;
    std::vector<std::uint64_t> words;
    std::uint64_t n_rows = 0;
    if (!scope.filters.empty()) {
        std::vector<const RowFilter*> distinct;
        for (std::size_t i = 0; i < n_queries; ++i) {
            const RowFilter* filter = scope.filter(i);
            if (!filter) {
                index.push_back(-1);
                continue;
            }
            auto at = std::find(distinct.begin(), distinct.end(), filter);
            if (at == distinct.end()) at = distinct.insert(distinct.end(), filter);
            index.push_back(static_cast<std::int32_t>(at - distinct.begin()));
        }
        for (const RowFilter* filter : distinct) words.insert(words.end(), filter->words.begin(), filter->words.end());
        if (!distinct.empty()) n_rows = distinct[0]->n_rows;
    }
    mpi::bcast_bytes(&n_rows, sizeof n_rows, 0);
    mpi::bcast_vector(index, 0);
    mpi::bcast_vector(words, 0);
    scope.filters.clear();
    if (index.empty()) return;
    const std::size_t stride = (n_rows + 63) / 64;
    std::vector<std::shared_ptr<const RowFilter>> rebuilt;
    for (std::size_t f = 0; stride > 0 && f < words.size() / stride; ++f)
        rebuilt.push_back(std::make_shared<const RowFilter>(
            RowFilter{n_rows, std::vector<std::uint64_t>(words.begin() + f * stride, words.begin() + (f + 1) * stride)}));
    for (std::int32_t f : index) scope.filters.push_back(f < 0 ? nullptr : rebuilt[static_cast<std::size_t>(f)]);
}

// Broadcasts rank 0's scope of n_queries queries (global rows): every rank then holds the same.
void broadcast_scope(SearchScope& scope, std::size_t n_queries) {
    mpi::bcast_vector(scope.row_begin, 0);
    mpi::bcast_vector(scope.row_limit, 0);
    mpi::bcast_vector(scope.excluded.offsets, 0);
    mpi::bcast_vector(scope.excluded.rows, 0);
    mpi::bcast_bytes(&scope.first_self_row, sizeof scope.first_self_row, 0);
    broadcast_filters(scope, n_queries);
}

// Broadcasts rank 0's queries; other ranks' vectors land in `storage`.
SearchQueries broadcast_queries(const SearchQueries* given, std::vector<float>& storage) {
    SearchQueries queries;
    if (given) queries = *given;
    std::uint64_t shape[2] = {queries.n_queries, queries.dim};
    mpi::bcast_bytes(shape, sizeof shape, 0);
    queries.n_queries = shape[0];
    queries.dim = shape[1];
    if (!given) {
        storage.resize(shape[0] * shape[1]);
        queries.vectors = storage.data();
    }
    mpi::bcast_bytes(const_cast<float*>(queries.vectors), shape[0] * shape[1] * sizeof(float), 0);
    broadcast_scope(queries.scope, queries.n_queries);
    queries.unit_norm = true;
    return queries;
}

// Runs `local` (this rank's top-k on its shard, in local rows) with the error agreement, then
// merges every rank's lists into rank 0's (mpi::reduce_lists).
template <typename LocalSearch>
TopK search_and_merge(Shard& shard, std::size_t n_queries, std::size_t k, ShardProfile& profile,
                      const LocalSearch& local) {
    TopK mine = empty_top_k(n_queries, k);
    std::exception_ptr error;
    const auto start = Clock::now();
    const double cpu_start = ShardProfile::process_cpu_seconds();
    try {
        if (shard.index) mine = local();
        to_global_rows(mine.rows, shard.map);
    } catch (...) {
        error = std::current_exception();
    }
    profile.compute_seconds += seconds_since(start);
    profile.compute_cpu_seconds += ShardProfile::process_cpu_seconds() - cpu_start;
    mpi::agree(error);
    std::vector<ListEntry> lists = to_list_entries(mine);
    const auto merge_start = Clock::now();
    mpi::reduce_lists(lists, k, shard.threads);  // merged along a tree: rank 0 merges log2(ranks) sets
    if (mpi::rank() != 0) return TopK{};
    TopK merged = from_list_entries(lists, n_queries, k);
    profile.merge_seconds += seconds_since(merge_start);
    return merged;
}

}  // namespace

void send_command(const ShardCommand& command) {
    ShardCommand copy = command;
    mpi::bcast_from_root_idle(&copy, sizeof copy);
}

ShardCommand receive_command() {
    ShardCommand command;
    mpi::bcast_from_root_idle(&command, sizeof command);  // no spinning between commands
    return command;
}

TopK search(Shard& shard, const SearchQueries* queries, std::size_t k) {
    ShardProfile profile("search");
    std::vector<float> storage;
    const SearchQueries all = broadcast_queries(queries, storage);
    profile.n_queries = all.n_queries;
    profile.k = k;
    TopK top = search_and_merge(shard, all.n_queries, k, profile,
                                [&] { return shard.index->search(local_queries(all, shard.map), k); });
    profile.finish();
    return top;
}

TopK search_candidates(Shard& shard, const SearchQueries* queries, const RowLists* candidates, std::size_t k) {
    ShardProfile profile("search_candidates");
    std::vector<float> storage;
    const SearchQueries all = broadcast_queries(queries, storage);
    RowLists lists;
    if (candidates) lists = *candidates;
    mpi::bcast_vector(lists.offsets, 0);
    mpi::bcast_vector(lists.rows, 0);
    profile.n_queries = all.n_queries;
    profile.k = k;
    TopK top = search_and_merge(shard, all.n_queries, k, profile, [&] {
        return shard.index->search_candidates(local_queries(all, shard.map), local_candidates(lists, shard.map), k);
    });
    profile.finish();
    return top;
}

}  // namespace novelty::shard_ops
