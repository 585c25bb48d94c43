// The server's engine side: the read-only corpus, the backend, the encoder and the three
// batchers (score, search, embed). Each call takes a parsed request body and returns the whole
// reply body; bad requests throw UsageError (400). Thread-safe: corpus lookups and backend calls
// are serialised by one mutex, and each batcher has one worker.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty_host/server/server.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace novelty::host {

class ServerEngine {
public:
    explicit ServerEngine(const ServerOptions& options);
    ~ServerEngine();

    /// {"ideas": [...], "p"?, "q"?, "cutoff"?} -> {"results": [score result per idea, in order]}.
    std::string score(const nlohmann::json& body);
    /// {"queries": [...], "k"?, "cutoff"?} -> {"results": [search result per query, in order]}.
    std::string search(const nlohmann::json& body);
    /// {"records": [...]} -> {"embedder", "dim", "results": [{"id", "vector"}]}.
    std::string embed(const nlohmann::json& body);

    const Corpus& corpus() const;
    BatchCounts batch_counts() const;
    /// Answers what the batchers hold, then ends their workers.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace novelty::host
