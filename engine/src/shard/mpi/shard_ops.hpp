// The collective operations of a sharded index. Each runs on every rank at once: rank 0 (the
// coordinator, which also holds shard 0) passes the call's arguments, the other ranks receive
// them; each rank works on its own shard; an error anywhere ends the call on every rank
// (mpi::agree); results are merged on rank 0. A ShardCommand, broadcast by rank 0, tells the
// other ranks (shard_serve) which operation comes next.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/search/search.hpp"
#include "novelty/shard/shard.hpp"
#include "shard/shard_map.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace novelty::shard_ops {

enum class Op : std::int32_t { build = 1, search, candidates, self_join, release, finish };

/// What rank 0 broadcasts before each operation.
struct ShardCommand {
    Op op = Op::finish;
    std::int32_t exit_code = 0;  ///< finish: the code every rank exits with
    std::uint64_t index_id = 0;  ///< which sharded index (rank 0 may hold several)
    std::uint64_t a = 0, b = 0, c = 0;  ///< search: k; self_join: n_rows, q, k_stored
};

/// Rank 0: broadcasts `command`. Other ranks: returns the next one.
void send_command(const ShardCommand& command);
ShardCommand receive_command();

/// One rank's shard: its rows (gathered from the memory-mapped corpus: rows rank, rank + R, ...)
/// and the local index built on them (none when the rank holds no rows).
struct Shard {
    ShardMap map;
    std::optional<Corpus> corpus;           ///< the corpus this rank opened (other ranks than 0)
    std::vector<unsigned char> rows;        ///< local_rows x dim elements of the corpus dtype
    std::unique_ptr<SearchIndex> index;
    std::size_t threads = 0;                ///< for the merge on rank 0
    std::string label;                      ///< rank 0's local index label
};

/// Collective. Rank 0 passes its open corpus and the spec; the others pass null and open the
/// corpus by the path rank 0 sends. Every rank checks its vectors against rank 0's.
std::unique_ptr<Shard> build(const Corpus* corpus, const ShardBackendSpec* spec);

/// Collective top-k: rank 0 passes its normalised queries (others null) and gets the merged
/// result; the other ranks get an empty TopK.
TopK search(Shard& shard, const SearchQueries* queries, std::size_t k);

/// Collective search_candidates, as search().
TopK search_candidates(Shard& shard, const SearchQueries* queries, const RowLists* candidates, std::size_t k);

/// Collective self-join of global rows [0, n_rows): blocks of rows are gathered on every rank
/// (each rank sends its own rows of the block), every rank searches the block against its
/// shard (each row leaving itself out), and rank 0 merges. Rank 0 gets the top-k_stored of
/// every row; the others an empty TopK.
TopK self_join(Shard& shard, std::size_t n_rows, std::size_t k_stored, const ProgressFn& progress);

}  // namespace novelty::shard_ops
