// novelty corpus add-vectors: attach an N x D matrix to a corpus, normalised, in row order.
#include "util/file_util.hpp"
#include "util/kill_point.hpp"
#include "io/jsonl.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/vectors.hpp"
#include "corpus/corpus_lock.hpp"
#include "corpus/corpus_recovery.hpp"
#include "corpus/sqlite_db.hpp"

#include <filesystem>
#include <unordered_map>

namespace novelty {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t max_named_rows = 20;

// source_of_row[corpus row] = vector-file row.
std::vector<std::size_t> read_id_order(const std::string& ids_path, const std::string& corpus_dir, std::size_t n_rows) {
    std::unordered_map<std::string, std::size_t> row_of_id;
    {
        SqliteDb db((fs::path(corpus_dir) / "papers.sqlite").string(), SqliteDb::Mode::read_only);
        auto q = db.prepare("SELECT row, id FROM papers");
        while (q.step()) row_of_id.emplace(q.column_text(1), static_cast<std::size_t>(q.column_int(0)));
    }
    const std::size_t unset = static_cast<std::size_t>(-1);
    std::vector<std::size_t> source_of_row(row_of_id.size(), unset);
    std::vector<std::size_t> line_of_row(row_of_id.size(), 0);
    const bool jsonl = ids_path.ends_with(".jsonl") || ids_path.ends_with(".jsonl.gz");
    std::size_t n_ids = 0;
    auto take = [&](const std::string& id, std::size_t line) {
        auto it = row_of_id.find(id);
        if (it == row_of_id.end()) throw InputError(ids_path, line, "id '" + id + "' is not a paper of the corpus");
        if (source_of_row[it->second] != unset)
            throw InputError(ids_path, line,
                             "id '" + id + "' appears twice (first at line " + std::to_string(line_of_row[it->second]) + ")");
        source_of_row[it->second] = n_ids++;
        line_of_row[it->second] = line;
    };
    if (jsonl) {
        JsonlReader reader(ids_path);
        nlohmann::json record;
        while (reader.next(record)) {
            auto it = record.find("id");
            if (it == record.end() || !(it->is_string() || it->is_number_integer()))
                throw InputError(ids_path, reader.line_number(), "missing 'id' (a string)");
            take(it->is_string() ? it->get<std::string>() : it->dump(), reader.line_number());
        }
    } else {
        LineReader reader(ids_path);
        std::string line;
        while (reader.next(line)) {
            if (reader.line_number() == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
            if (line.empty()) throw InputError(ids_path, reader.line_number(), "empty line: expected one paper id per line");
            take(line, reader.line_number());
        }
    }
    if (n_ids != n_rows)
        throw InputError(ids_path, 0, "lists " + std::to_string(n_ids) + " ids but the vectors file has " +
                                          std::to_string(n_rows) + " rows");
    std::size_t missing = 0;
    std::string named;
    {
        SqliteDb db((fs::path(corpus_dir) / "papers.sqlite").string(), SqliteDb::Mode::read_only);
        auto q = db.prepare("SELECT id FROM papers WHERE row = ?");
        for (std::size_t row = 0; row < source_of_row.size(); ++row) {
            if (source_of_row[row] != unset) continue;
            if (++missing <= 5) {
                q.bind(1, static_cast<std::int64_t>(row));
                q.step();
                named += (named.empty() ? "" : ", ") + q.column_text(0);
                q.reset();
            }
        }
    }
    if (missing > 0)
        throw InputError(ids_path, 0, std::to_string(missing) + " corpus papers have no vector (e.g. " + named + ")");
    return source_of_row;
}

// source_of_row[corpus row] = the paper's place among the imported records, which is the vector
// row when the vectors were made from the import's input in its order.
std::vector<std::size_t> read_input_order(const std::string& dir, const CorpusManifest& manifest,
                                          const std::string& vectors_path, std::size_t n_rows) {
    // The parameter at fault is the ids list: the CLI names it --ids.
    const std::string pass_ids =
        "give the paper id of each vector row as an ids list (or the corpus order when row i is corpus row i)";
    if (!manifest.input_order_recorded)
        throw UsageError(dir + " does not record the input order of its import (it was imported by an older version), "
                               "so which vector row belongs to which paper cannot be told; " + pass_ids,
                         "ids");
    if (n_rows != manifest.count)
        throw InputError(vectors_path, 0,
                         "has " + std::to_string(n_rows) + " rows but the corpus has " + std::to_string(manifest.count) +
                             " papers; without an ids list, row i must be the i-th record of the import's input (" +
                             pass_ids + ")");
    std::vector<std::size_t> source_of_row(manifest.count);
    bool same_as_rows = true;
    {
        SqliteDb db((fs::path(dir) / "papers.sqlite").string(), SqliteDb::Mode::read_only);
        auto q = db.prepare("SELECT row, input_row FROM papers");
        while (q.step()) {
            const auto row = static_cast<std::size_t>(q.column_int(0));
            const auto input_row = static_cast<std::size_t>(q.column_int(1));
            if (row >= source_of_row.size() || input_row >= source_of_row.size())
                throw CorpusError(dir + ": papers.sqlite holds row " + std::to_string(row) + " with input_row " +
                                  std::to_string(input_row) + ", outside the " + std::to_string(manifest.count) + " papers");
            source_of_row[row] = input_row;
            same_as_rows = same_as_rows && row == input_row;
        }
    }
    std::string ambiguous;
    if (manifest.sources.size() > 1) ambiguous = "was imported from " + std::to_string(manifest.sources.size()) + " files";
    else if (manifest.n_skipped > 0) ambiguous = "skipped invalid records on import";
    else if (manifest.n_duplicates > 0) ambiguous = "dropped duplicate records on import";
    if (!ambiguous.empty() && !same_as_rows)
        throw UsageError(dir + " " + ambiguous + ", so the order of the vector rows is ambiguous; " + pass_ids, "ids");
    return source_of_row;
}

// source_of_row[corpus row] = vector-file row, by the ids file, the input order or row order.
std::vector<std::size_t> vector_row_of_papers(const std::string& dir, const CorpusManifest& manifest,
                                              const AddVectorsOptions& options, std::size_t n_rows) {
    if (!options.ids_path.empty()) return read_id_order(options.ids_path, dir, n_rows);
    if (options.order == VectorOrder::input) return read_input_order(dir, manifest, options.vectors_path, n_rows);
    if (n_rows != manifest.count)
        throw InputError(options.vectors_path, 0,
                         "has " + std::to_string(n_rows) + " rows but the corpus has " + std::to_string(manifest.count) +
                             " papers (give an ids list to match rows to papers by id)");
    std::vector<std::size_t> source_of_row(manifest.count);
    for (std::size_t r = 0; r < manifest.count; ++r) source_of_row[r] = r;
    return source_of_row;
}

std::string id_of_row(SqliteDb& db, std::size_t row) {
    auto q = db.prepare("SELECT id FROM papers WHERE row = ?");
    q.bind(1, static_cast<std::int64_t>(row));
    return q.step() ? q.column_text(0) : "row " + std::to_string(row);
}

}  // namespace

void add_vectors(const std::string& dir, const AddVectorsOptions& options) {
    const FolderWriterLock one_writer_at_a_time(corpus_dir_path(dir).parent_path());  // not across a corpus add
    CorpusManifest manifest = read_manifest(dir);
    remove_stale_temp_files(dir);
    const NpyMatrix input = NpyMatrix::open(options.vectors_path);
    if (input.ndim() != 2)
        throw InputError(options.vectors_path, 0, "expected a 2-D array (papers x dim), found a 1-D array");
    if (input.cols() == 0) throw InputError(options.vectors_path, 0, "vectors have dimension 0");
    const std::vector<std::size_t> source_of_row = vector_row_of_papers(dir, manifest, options, input.rows());

    const std::size_t dim = input.cols();
    const DType dtype = options.dtype.value_or(input.dtype());
    const fs::path root(dir);
    const std::string vectors_path = (root / "vectors.npy").string();
    SqliteDb db((root / "papers.sqlite").string(), SqliteDb::Mode::read_only);

    // Written under a temporary name, renamed over vectors.npy only when every row is good.
    const std::string staged = temp_sibling(vectors_path);
    struct RemoveOnFailure {
        const std::string& path;
        bool keep = false;
        ~RemoveOnFailure() {
            std::error_code ignored;
            if (!keep) fs::remove(path, ignored);
        }
    } staged_guard{staged};
    NpyWriter writer(staged, dtype, dim);
    const std::size_t batch = std::max<std::size_t>(1, (std::size_t(1) << 22) / (dim * sizeof(float)));
    std::vector<float> rows(batch * dim);
    std::vector<RowProblem> problems;
    std::size_t n_bad = 0;
    std::string named;
    for (std::size_t start = 0; start < manifest.count; start += batch) {
        const std::size_t n = std::min(batch, manifest.count - start);
        for (std::size_t i = 0; i < n; ++i) input.row_as_f32(source_of_row[start + i], rows.data() + i * dim);
        if (normalize_rows(rows.data(), n, dim, problems) > 0) {
            for (std::size_t i = 0; i < n; ++i) {
                if (problems[i] == RowProblem::none) continue;
                if (++n_bad <= max_named_rows) {
                    named += "\n  " + id_of_row(db, start + i) + " (vector row " + std::to_string(source_of_row[start + i]) +
                             "): " + (problems[i] == RowProblem::zero ? "zero vector" : "contains NaN or Inf");
                }
            }
        }
        if (n_bad == 0) writer.append_f32(rows.data(), n);
        if (options.on_progress) options.on_progress(start + n, manifest.count);
    }
    if (n_bad > 0) {
        throw InputError(options.vectors_path, 0,
                         std::to_string(n_bad) + " vectors cannot be normalised; the corpus is unchanged:" + named +
                             (n_bad > max_named_rows ? "\n  ... and " + std::to_string(n_bad - max_named_rows) + " more" : ""));
    }
    writer.finish();
    const std::string vectors_sha256 = sha256_file(staged);
    const FileFingerprint vectors_fingerprint = file_fingerprint(staged);

    manifest.dim = dim;
    manifest.dtype = element_name(dtype);
    EmbedderInfo embedder = options.embedder;
    if (embedder.name.empty()) embedder.name = "external";
    embedder.dim = dim;
    manifest.embedder = embedder;
    manifest.vectors_sha256 = vectors_sha256;
    manifest.vectors_fingerprint = vectors_fingerprint;
    // Caches were computed from the old vectors: remove them before the new ones are visible.
    // A kill between the rename and the manifest leaves vectors.npy unlike the manifest's
    // fingerprint, so the corpus is refused on open until add-vectors runs again.
    kill_point("add-vectors:before-removing-caches");
    fs::remove_all(root / "cache");
    kill_point("add-vectors:before-renaming-vectors");
    fs::rename(staged, vectors_path);
    staged_guard.keep = true;
    kill_point("add-vectors:before-manifest");
    write_manifest(dir, manifest);
}

}  // namespace novelty
