#include "corpus/corpus_recovery.hpp"

#include "corpus/add_in_place.hpp"
#include "util/notices.hpp"

#include <map>

namespace novelty {

namespace fs = std::filesystem;

fs::path corpus_dir_path(const std::string& dir) {
    // Symbolic links resolved (in the part of the path that exists): a corpus reached through a
    // link is locked and replaced where it is, not by putting a directory in place of the link.
    std::error_code ec;
    fs::path path = fs::weakly_canonical(fs::absolute(fs::path(dir)), ec);
    if (ec) path = fs::absolute(fs::path(dir)).lexically_normal();
    while (path.filename().empty() && path.has_parent_path() && path != path.root_path()) path = path.parent_path();
    return path;
}

namespace {

// Each work folder is judged by its lock (WorkFolderLock), whatever process has the PID in its
// name now: an add's DIR.adding-PID and an import's DIR.importing-PID by their own, an import's
// DIR.replaced-PID (the old corpus it moved away) by its DIR.importing-PID, which stays locked
// until the new corpus is in place; without one the old corpus is no longer needed or to be
// restored.
bool sibling_dead(const fs::path& dir, const fs::path& folder, long pid, const std::string& infix) {
    if (infix != ".replaced-") return work_folder_abandoned(folder, pid);
    const fs::path building = dir.parent_path() / (dir.filename().string() + ".importing-" + std::to_string(pid));
    std::error_code ec;
    return !fs::exists(building, ec) || work_folder_abandoned(building, pid);
}

// PID -> folder, for DIR<infix>PID siblings whose process is gone (sibling_dead).
std::map<long, fs::path> dead_siblings(const fs::path& dir, const std::string& infix) {
    std::map<long, fs::path> found;
    std::error_code ec;
    const fs::path parent = dir.parent_path();
    const std::string prefix = dir.filename().string() + infix;
    for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string digits = name.substr(prefix.size());
        if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
        const long pid = std::stol(digits);
        if (sibling_dead(dir, it->path(), pid, infix)) found.emplace(pid, it->path());
    }
    return found;
}

void remove_leftover(const fs::path& path, const char* what) {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec)
        notice("could not remove " + path.string() + " (" + what + "): " + ec.message() + "; remove it by hand");
    else
        notice("removed " + path.string() + " (" + what + ")");
}

}  // namespace

void recover_interrupted_import(const fs::path& dir) {
    auto building = dead_siblings(dir, ".importing-");
    auto replaced = dead_siblings(dir, ".replaced-");
    if (building.empty() && replaced.empty()) return;
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        for (auto it = replaced.begin(); it != replaced.end(); ++it) {
            const auto fresh = building.find(it->first);
            if (fresh != building.end() && fs::exists(fresh->second / "manifest.json", ec)) {
                fs::rename(fresh->second, dir, ec);
                if (!ec) {
                    notice("completed an interrupted 'corpus import --overwrite' (process " + std::to_string(it->first) +
                           "): " + dir.string() + " now holds the new corpus");
                    building.erase(fresh);
                    break;
                }
            }
            fs::rename(it->second, dir, ec);
            if (!ec) {
                notice("restored the corpus at " + dir.string() + " that an interrupted 'corpus import --overwrite' (process " +
                       std::to_string(it->first) + ") had moved to " + it->second.filename().string());
                replaced.erase(it);
                break;
            }
            notice("could not restore " + it->second.string() + " to " + dir.string() + ": " + ec.message());
        }
    }
    for (const auto& [pid, path] : building) remove_leftover(path, "the unfinished work of an interrupted import");
    for (const auto& [pid, path] : replaced) remove_leftover(path, "the old corpus an interrupted import had replaced");
}

bool has_interrupted_add(const fs::path& dir) { return !dead_siblings(dir, ".adding-").empty(); }

void recover_interrupted_add(const fs::path& dir) {
    for (const auto& [pid, work] : dead_siblings(dir, ".adding-")) {
        const std::string who = "an interrupted 'corpus add' (process " + std::to_string(pid) + ")";
        try {
            switch (import_detail::recover_add(work, dir)) {
                case import_detail::AddRecovery::forward:
                    notice("completed " + who + ": " + dir.string() + " now holds the corpus with the added papers");
                    break;
                case import_detail::AddRecovery::back:
                    notice("rolled back " + who + ": " + dir.string() + " holds the corpus as it was before the add");
                    break;
                case import_detail::AddRecovery::finished:
                    notice("removed the work folder of " + who + ", which had finished");
                    break;
            }
        } catch (const std::exception& e) {
            notice("could not recover " + who + " of " + dir.string() + ": " + e.what());
        }
    }
}

std::unique_ptr<CorpusLock> lock_for_reading(const fs::path& dir) {
    auto lock = std::make_unique<CorpusLock>(dir);
    lock->shared();
    if (!has_interrupted_add(dir)) return lock;
    if (!lock->exclusive_here()) {
        lock->unlock();
        lock->exclusive_waiting();
    }
    recover_interrupted_add(dir);
    lock->shared();
    return lock;
}

void recover_interrupted_add_waiting(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec) || !has_interrupted_add(dir)) return;
    CorpusLock lock(dir);
    lock.exclusive_waiting();
    recover_interrupted_add(dir);
}

}  // namespace novelty
