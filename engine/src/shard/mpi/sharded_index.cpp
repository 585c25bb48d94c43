// Rank 0's sharded index: a SearchIndex over the whole corpus whose calls are collective
// operations (shard_ops.hpp) on every rank's shard.
#include "shard/mpi/mpi_comm.hpp"
#include "shard/mpi/shard_ops.hpp"

#include "novelty/shard/shard.hpp"
#include "novelty/util/error.hpp"
#include "search/index_impl.hpp"
#include "search/search_rules.hpp"

#include <functional>

namespace novelty {

namespace {

std::uint64_t next_index_id = 1;

// Runs one collective call. An error all ranks agreed on propagates; any other exception means
// the ranks are out of step (one left a collective the others are in), so the job ends.
template <typename Fn>
auto collective(const char* what, const Fn& fn) -> decltype(fn()) {
    const std::uint64_t agreed_before = mpi::agreed_errors();
    try {
        return fn();
    } catch (const std::exception& e) {
        if (mpi::agreed_errors() != agreed_before) throw;
        mpi::abort_job(std::string(what) + ": " + e.what(), error_codes(error_kind(e)).exit_code);
    }
}

// The shards' own indexes take their tuning from the spec; the sharded index's tuning is not read.
class ShardedSearchIndex final : public detail::IndexImpl {
public:
    ShardedSearchIndex(const Corpus& corpus, const ShardBackendSpec& spec) : id_(next_index_id++) {
        collective("building the sharded index", [&] {
            shard_ops::send_command({shard_ops::Op::build, 0, id_, 0, 0, 0});
            shard_ = shard_ops::build(&corpus, &spec);
            return 0;
        });
    }
    ~ShardedSearchIndex() override { shard_ops::send_command({shard_ops::Op::release, 0, id_, 0, 0, 0}); }

    std::string name() const override { return shard_->index->name(); }
    std::string label() const override { return shard_->label; }

    TopK search(const SearchQueries& queries, std::size_t k, const SearchTuning&) override {
        return collective("search", [&] {
            shard_ops::send_command({shard_ops::Op::search, 0, id_, k, 0, 0});
            return shard_ops::search(*shard_, &queries, k);
        });
    }

    SelfJoin self_join(std::size_t n_rows, std::size_t q, std::size_t k_stored, const SearchTuning&,
                       const ProgressFn& progress) override {
        return collective("self-join", [&] {
            shard_ops::send_command({shard_ops::Op::self_join, 0, id_, n_rows, q, k_stored});
            return self_join_from(shard_ops::self_join(*shard_, n_rows, k_stored, progress), n_rows, q);
        });
    }

    TopK search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k,
                           const SearchTuning&) override {
        return collective("search_candidates", [&] {
            shard_ops::send_command({shard_ops::Op::candidates, 0, id_, k, 0, 0});
            return shard_ops::search_candidates(*shard_, &queries, &candidates, k);
        });
    }

private:
    std::uint64_t id_;
    std::unique_ptr<shard_ops::Shard> shard_;
};

}  // namespace

std::unique_ptr<SearchIndex> make_sharded_index(const Corpus& corpus, const ShardBackendSpec& spec) {
    if (shard_world().size < 2 || shard_world().rank != 0)
        throw UsageError("a sharded index is built on rank 0 of an MPI job of several ranks");
    const VectorView rows = VectorView::of(corpus.vectors());
    check_search_corpus(rows);  // before any rank builds its shard
    return std::make_unique<SearchIndex>(rows, std::make_unique<ShardedSearchIndex>(corpus, spec));
}

}  // namespace novelty
