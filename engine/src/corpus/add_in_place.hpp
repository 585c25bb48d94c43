// `corpus add` in place: papers.sqlite is updated inside one SQLite transaction instead of being
// copied (2 GB at a million papers), under the corpus's exclusive lock (corpus_lock.hpp).
//
// Steps, each a kill point (docs/formats.md, "corpus add in place"):
//  1. DIR.adding-PID is created beside DIR: the staging database, then the new vectors.npy and
//     the updated caches, all built while the papers transaction is open (the add reads its own
//     uncommitted rows); the new generation token is written into papers.sqlite in the same
//     transaction.
//  2. The pending manifest (DIR.adding-PID/manifest.json, without the papers checksums) and the
//     intent record (DIR.adding-PID/add.json: the generation, the cache files, whether vectors
//     come) are written and synced.
//  3. The transaction commits: papers.sqlite now holds the new generation. This is the commit
//     point of the whole add.
//  4. The new files are moved into DIR (vectors.npy, each cache; stale caches removed), and
//     manifest.json is written last, with papers.sqlite's checksums; DIR.adding-PID is removed.
// Recovery (recover_interrupted_add, on the next open, add or import) rolls a dead add FORWARD
// (step 4 again) when papers.sqlite holds the generation of its intent record, and BACK
// (DIR.adding-PID removed; SQLite's own journal undoes an uncommitted transaction) when not.
#pragma once

#include "corpus/import/import_build.hpp"
#include "corpus/sqlite_db.hpp"

#include <filesystem>
#include <functional>
#include <string>

namespace novelty::import_detail {

/// The generation token papers.sqlite records (table corpus_generation), "" when it has none.
std::string read_generation(SqliteDb& db);
/// Records `token` as papers.sqlite's generation (inside the caller's transaction).
void write_generation(SqliteDb& db, const std::string& token);
/// A fresh random generation token (32 hex digits).
std::string new_generation();

/// The add of `options` to the corpus at `dir` (absolute), in place; the caller holds the
/// corpus's exclusive lock. `finish` writes the vectors and caches into the work directory as
/// for an add by copy. Throws NeedsRebuild (nothing changed) when the add cannot be incremental.
void add_in_place(const ImportOptions& options, const std::filesystem::path& dir,
                  const std::function<void(BuiltCorpus&)>& finish);

/// Step 4 for the work directory `work` of an add to `dir` whose transaction has committed.
void finish_in_place(const std::filesystem::path& work, const std::filesystem::path& dir);

/// What recover_add did.
enum class AddRecovery {
    forward,   ///< step 4 done again: `dir` holds the corpus with the added papers
    back,      ///< the work removed: `dir` holds the corpus as it was before the add
    finished,  ///< the add had finished but for removing its work directory, now removed
};

/// Rolls the dead add whose work directory is `work` forward or back (see above); the caller
/// holds the exclusive lock.
AddRecovery recover_add(const std::filesystem::path& work, const std::filesystem::path& dir);

}  // namespace novelty::import_detail
