// read_record_file: a query file as the CLI takes it (.npy rows, or JSON Lines with an optional
// parallel --vectors matrix).
#include "novelty/request/resolver.hpp"

#include "novelty/corpus/vectors.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/util/error.hpp"
#include "util/message_text.hpp"

namespace novelty {

namespace {

void check_vector(const float* v, std::size_t dim, const std::string& file, const std::string& what) {
    if (const RowProblem problem = row_problem(v, dim); problem != RowProblem::none)
        throw InputError(file, 0, what + " " + row_problem_text(problem));
}

void check_dim(const NpyMatrix& m, std::size_t dim, const std::string& dim_owner, const std::string& path) {
    if (dim != 0 && m.cols() != dim)
        throw InputError(path, 0, "vectors have dimension " + std::to_string(m.cols()) + " but " + dim_owner + " has " +
                                      std::to_string(dim));
}

/// Reads every row of `m` into batch.given, checking each; `what(i)` names row i in messages.
template <class What>
void read_rows(const NpyMatrix& m, const std::string& path, RecordBatch& batch, What what) {
    const std::size_t dim = batch.dim = m.cols();
    batch.given.resize(m.rows() * dim);
    batch.has_vector.assign(m.rows(), 1);
    for (std::size_t i = 0; i < m.rows(); ++i) {
        m.row_as_f32(i, batch.given.data() + i * dim);
        check_vector(batch.given.data() + i * dim, dim, path, what(i));
    }
}

}  // namespace

RecordBatch read_record_file(const std::string& path, const std::string& vectors_path, std::size_t dim,
                             const std::string& dim_owner) {
    RecordBatch batch;
    batch.origin.file = path;
    if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
        if (!vectors_path.empty()) throw UsageError("--vectors goes with a .jsonl query file, not a .npy one");
        const NpyMatrix m = NpyMatrix::open(path);
        check_dim(m, dim, dim_owner, path);
        if (m.rows() == 0) throw InputError(path, 0, "holds no vectors");
        batch.own_papers = false;
        read_rows(m, path, batch, [](std::size_t i) { return "row " + std::to_string(i); });
        for (std::size_t i = 0; i < m.rows(); ++i) {
            QueryRecord r;
            r.id = std::to_string(i);
            r.line = i + 1;
            batch.records.push_back(std::move(r));
        }
        return batch;
    }
    batch.records = read_query_records(path);
    if (vectors_path.empty()) return batch;
    const NpyMatrix given = NpyMatrix::open(vectors_path);
    if (given.rows() != batch.size())
        throw InputError(vectors_path, 0, "has " + std::to_string(given.rows()) + " rows but " + path + " has " +
                                              std::to_string(batch.size()) + " records");
    check_dim(given, dim, dim_owner, vectors_path);
    read_rows(given, vectors_path, batch, [&](std::size_t i) {
        return "row " + std::to_string(i) + " (query " + quote_value(batch.records[i].id) + ")";
    });
    return batch;
}

}  // namespace novelty
