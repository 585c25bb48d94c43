// The build operation: every rank opens the corpus, checks it is rank 0's, gathers its rows
// and builds its local index.
#include "shard/mpi/mpi_comm.hpp"
#include "shard/mpi/shard_ops.hpp"

#include "novelty/search/backends.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/error.hpp"

#include <cstring>

namespace novelty::shard_ops {

namespace {

// The spec and the corpus identity, as rank 0 sends them.
struct BuildArgs {
    std::string dir, device, sha256;
    // n_rows, dim, dtype, storage, memory, threads, query_tile, corpus_tile, sj_memory, cpu storage
    std::uint64_t numbers[10] = {};
};

BuildArgs broadcast_args(const Corpus* corpus, const ShardBackendSpec* spec) {
    BuildArgs args;
    if (corpus) {
        const NpyMatrix& vectors = corpus->vectors();
        args.dir = corpus->dir();
        args.device = spec->device;
        args.sha256 = corpus->manifest().vectors_sha256;
        const std::uint64_t numbers[10] = {vectors.rows(), vectors.cols(), static_cast<std::uint64_t>(vectors.dtype()),
                                           static_cast<std::uint64_t>(spec->cuda.storage), spec->cuda.memory_budget,
                                           spec->tuning.threads, spec->tuning.query_tile, spec->tuning.corpus_tile,
                                           spec->tuning.self_join_memory, static_cast<std::uint64_t>(spec->cpu.storage)};
        std::memcpy(args.numbers, numbers, sizeof numbers);
    }
    mpi::bcast_string(args.dir, 0);
    mpi::bcast_string(args.device, 0);
    mpi::bcast_string(args.sha256, 0);
    mpi::bcast_bytes(args.numbers, sizeof args.numbers, 0);
    return args;
}

void check_same_corpus(const Corpus& corpus, const BuildArgs& args) {
    const NpyMatrix& vectors = corpus.vectors();
    const std::string who = "rank " + std::to_string(mpi::rank()) + " opened " + corpus.dir();
    if (corpus.manifest().vectors_sha256 != args.sha256)
        throw CorpusError(who + ", whose vectors (SHA-256 " + corpus.manifest().vectors_sha256 +
                          ") are not rank 0's (" + args.sha256 + "): every rank must see the same corpus");
    if (vectors.rows() != args.numbers[0] || vectors.cols() != args.numbers[1] ||
        static_cast<std::uint64_t>(vectors.dtype()) != args.numbers[2])
        throw CorpusError(who + ", whose vectors have another shape or dtype than rank 0's");
}

// Gathers this rank's rows (strided) out of the mapped vectors.
void gather_rows(const NpyMatrix& vectors, Shard& shard) {
    const std::size_t row_bytes = vectors.cols() * element_size(vectors.dtype());
    const auto* all = static_cast<const unsigned char*>(vectors.data());
    shard.rows.resize(shard.map.local_rows() * row_bytes);
    for (std::size_t j = 0; j < shard.map.local_rows(); ++j)
        std::memcpy(shard.rows.data() + j * row_bytes, all + static_cast<std::size_t>(shard.map.global_of(j)) * row_bytes,
                    row_bytes);
}

// The backend of this rank: on a GPU box, the GPU of its local rank.
std::unique_ptr<SearchBackend> local_backend(const BuildArgs& args) {
    CudaBackendOptions options;
    options.storage = static_cast<DeviceStorage>(args.numbers[3]);
    options.memory_budget = args.numbers[4];
    if (args.device != "cpu" && cuda_compiled()) {
        const auto devices = list_devices();
        if (!devices.empty()) options.device = shard_world().local_rank % static_cast<int>(devices.size());
    }
    CpuBackendOptions cpu;
    cpu.storage = static_cast<CpuStorage>(args.numbers[9]);
    auto backend = make_backend(args.device, options, cpu);
    backend->tuning.threads = args.numbers[5];
    backend->tuning.query_tile = args.numbers[6];
    backend->tuning.corpus_tile = args.numbers[7];
    backend->tuning.self_join_memory = args.numbers[8];
    return backend;
}

void build_local(const Corpus* given, const BuildArgs& args, Shard& shard) {
    if (!given) {
        shard.corpus.emplace(Corpus::open(args.dir));
        check_same_corpus(*shard.corpus, args);
    }
    const NpyMatrix& vectors = given ? given->vectors() : shard.corpus->vectors();
    gather_rows(vectors, shard);
    if (shard.map.local_rows() == 0) return;  // fewer rows than ranks: this one holds none
    shard.index = local_backend(args)->build(
        VectorView{shard.rows.data(), vectors.dtype(), shard.map.local_rows(), vectors.cols()});
    shard.label = shard.index->label();
}

}  // namespace

std::unique_ptr<Shard> build(const Corpus* corpus, const ShardBackendSpec* spec) {
    const BuildArgs args = broadcast_args(corpus, spec);
    auto shard = std::make_unique<Shard>();
    shard->map = ShardMap{args.numbers[0], static_cast<std::size_t>(mpi::size()), static_cast<std::size_t>(mpi::rank())};
    shard->threads = args.numbers[5];
    std::exception_ptr error;
    try {
        build_local(corpus, args, *shard);
    } catch (...) {
        error = std::current_exception();
    }
    mpi::agree(error);
    return shard;
}

}  // namespace novelty::shard_ops
