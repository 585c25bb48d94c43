// novelty._core.retrieve: dense, BM25 and hybrid (reciprocal-rank fusion) rankings under a
// per-query cutoff, as `novelty retrieve` computes them (without LLM rewriting).
#include "bindings.hpp"

#include "novelty/retrieval/retrieval.hpp"
#include "novelty/util/error.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <map>
#include <optional>

namespace novelty::python {

namespace {

Ranking truncated(Ranking r, std::size_t k) {
    if (r.rows.size() > k) {
        r.rows.resize(k);
        r.scores.resize(k);
    }
    return r;
}

struct RetrieveRequest {
    std::vector<std::string> texts;                  ///< per query (BM25)
    std::vector<std::size_t> row_limit;              ///< per query
    std::vector<std::vector<std::int64_t>> excluded; ///< per query
    std::vector<std::string> methods;                ///< dense | bm25 | hybrid
    std::size_t k = 10;
    std::size_t fusion_depth = 100;
};

/// Each query's rankings by method, cut to k (the engine's work, without the GIL).
std::vector<std::map<std::string, Ranking>> rank_all(IndexHandle& h, const QueryMatrix& q, const RetrieveRequest& r) {
    bool need_dense = false, need_bm25 = false, fusing = false;
    for (const auto& m : r.methods) {
        if (m != "dense" && m != "bm25" && m != "hybrid")
            throw UsageError("unknown method '" + m + "' (expected dense, bm25, hybrid)", "methods");
        need_dense = need_dense || m != "bm25";
        need_bm25 = need_bm25 || m != "dense";
        fusing = fusing || m == "hybrid";
    }
    if (r.methods.empty()) throw UsageError("methods needs at least one of dense, bm25, hybrid", "methods");
    if (r.k < 1 || r.k > SearchIndex::max_k) throw UsageError("k must be 1..2048", "k");
    const std::size_t depth = fusing ? std::max(r.k, std::min(r.fusion_depth, SearchIndex::max_k)) : r.k;
    const std::size_t n = r.texts.size();
    std::vector<Ranking> dense;
    if (need_dense && n > 0) {
        SearchQueries s;
        s.vectors = q.data;
        s.n_queries = q.n;
        s.dim = q.dim;
        s.row_limit = r.row_limit;
        for (const auto& rows : r.excluded) s.excluded.add(rows);
        std::lock_guard<std::mutex> lock(h.mutex);
        dense = dense_rankings(*h.index, s, depth);
    }
    std::optional<Bm25Index> bm25;
    if (need_bm25) bm25.emplace(h.corpus->dir());
    std::vector<std::map<std::string, Ranking>> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        Ranking text_ranking;
        if (need_bm25) text_ranking = bm25->rank(r.texts[i], r.row_limit[i], r.excluded[i], depth);
        for (const auto& m : r.methods) {
            if (m == "dense") out[i][m] = truncated(dense[i], r.k);
            if (m == "bm25") out[i][m] = truncated(text_ranking, r.k);
            if (m == "hybrid") {
                const std::vector<Ranking> both{dense[i], text_ranking};
                out[i][m] = reciprocal_rank_fusion(both, r.k);
            }
        }
    }
    return out;
}

/// [{"id", "row", "rank", "score", "title"}] as the CLI's --jsonl lists a ranking; `labels` holds
/// the (id, title) of each of its rows in order.
nb::list ranking_list(const Ranking& ranking, const std::vector<std::pair<std::string, std::string>>& labels) {
    nb::list list;
    for (std::size_t j = 0; j < ranking.size(); ++j) {
        nb::dict d;
        d["id"] = labels[j].first;
        d["row"] = ranking.rows[j];
        d["rank"] = j + 1;
        d["score"] = ranking.scores[j];
        d["title"] = labels[j].second;
        list.append(d);
    }
    return list;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

nb::list retrieve_py(IndexHandle& h, const AnyArray& vectors, RetrieveRequest r) {
    const QueryMatrix q = query_matrix(vectors, h.index->dim(), "vectors");
    const std::size_t n = r.texts.size();
    if (r.row_limit.size() != n || r.excluded.size() != n || (q.n != n && q.n != 0))
        throw UsageError("texts, vectors, row limits and exclusions must have one entry per query", "queries");
    std::vector<std::map<std::string, Ranking>> ranked;
    std::vector<std::map<std::string, Labels>> labels(n);
    {
        nb::gil_scoped_release release;
        ranked = rank_all(h, q, r);
        std::lock_guard<std::mutex> lock(*h.corpus_lock);
        for (std::size_t i = 0; i < n; ++i)
            for (const auto& [method, ranking] : ranked[i]) {
                Labels& list = labels[i][method];
                for (std::int64_t row : ranking.rows) list.push_back(h.corpus->id_and_title(static_cast<std::size_t>(row)));
            }
    }
    nb::list out;
    for (std::size_t i = 0; i < n; ++i) {
        nb::dict results;
        for (const auto& m : r.methods) results[m.c_str()] = ranking_list(ranked[i].at(m), labels[i].at(m));
        out.append(results);
    }
    return out;
}

}  // namespace

void bind_retrieve(nb::module_& m) {
    m.def("retrieve", [](IndexHandle& h, const AnyArray& vectors, std::vector<std::string> texts,
                         std::vector<std::size_t> row_limit, std::vector<std::vector<std::int64_t>> excluded,
                         std::vector<std::string> methods, std::size_t k, std::size_t fusion_depth) {
        RetrieveRequest r{std::move(texts), std::move(row_limit), std::move(excluded), std::move(methods), k, fusion_depth};
        return retrieve_py(h, vectors, std::move(r));
    }, nb::arg("index"), nb::arg("vectors"), nb::arg("texts"), nb::arg("row_limit"), nb::arg("excluded"),
       nb::arg("methods"), nb::arg("k"), nb::arg("fusion_depth"),
       "Rankings per query: a dict method -> [{id, row, rank, score, title}], best first.");
}

}  // namespace novelty::python
