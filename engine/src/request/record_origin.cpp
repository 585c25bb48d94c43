// Records as read, before resolution: where they came from (for their messages) and the batch of
// an array's rows. Apart from resolver.cpp so that the readers (and their fuzzer) need no corpus.
#include "novelty/request/resolver.hpp"

#include "novelty/util/error.hpp"

#include <utility>

namespace novelty {

void RecordOrigin::fail(std::size_t i, std::size_t line, const std::string& problem, const std::string& field) const {
    if (!file.empty()) throw InputError(file, line, problem);
    const std::string where = key + "[" + std::to_string(i) + "]";
    throw UsageError(where + ": " + problem, field.empty() ? where : where + "." + field);
}

RecordBatch record_batch(const std::vector<std::string>& ids, const std::vector<std::optional<PartialDate>>& dates,
                         const std::vector<std::vector<std::string>>& excludes, const float* vectors, std::size_t dim,
                         bool own_papers, RecordOrigin origin) {
    const std::size_t n = ids.size();
    if ((!dates.empty() && dates.size() != n) || (!excludes.empty() && excludes.size() != n))
        throw UsageError("ids, dates and exclusions must have one entry per record", origin.key);
    RecordBatch batch;
    batch.own_papers = own_papers;
    batch.origin = std::move(origin);
    for (std::size_t i = 0; i < n; ++i) {
        QueryRecord r;
        r.id = ids[i];
        r.line = i + 1;
        if (!dates.empty()) r.date = dates[i];
        if (!excludes.empty()) r.exclude = excludes[i];
        batch.records.push_back(std::move(r));
    }
    if (vectors != nullptr) {
        batch.dim = dim;
        batch.given.assign(vectors, vectors + n * dim);
        batch.has_vector.assign(n, 1);
    }
    return batch;
}

}  // namespace novelty
