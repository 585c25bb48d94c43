// The engine's reach into an open Corpus beyond its public interface: its own connection to
// papers.sqlite, for readers that must see the very papers the corpus opened (BM25 ranking).
#pragma once

#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"

namespace novelty::corpus_detail {

/// The corpus's own connection to its papers.sqlite: the file it opened, even after its directory
/// was replaced by a rename (an import --overwrite, an add through a copy) or removed, where
/// opening DIR/papers.sqlite again would read another corpus. Its uses are serialised with the
/// corpus's other calls (one Corpus is used by one thread at a time), and statements prepared on
/// it are finalised before the corpus is closed. Found by the address of the corpus's manifest,
/// which lives as long as the open corpus and stays put when the Corpus object is moved.
SqliteDb& papers_db(const Corpus& corpus);

}  // namespace novelty::corpus_detail
