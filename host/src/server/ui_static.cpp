#include "server/ui_static.hpp"

#include "server/http_guard.hpp"
#include "server/ui_embedded.hpp"

#include "novelty/util/error.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace novelty::host::detail {

namespace {

constexpr const char* page_files[] = {"index.html", "app.js", "style.css"};

std::string content_type_of(const std::string& name) {
    if (name.ends_with(".html")) return "text/html; charset=utf-8";
    if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
    return "text/css; charset=utf-8";
}

bool is_page_file(const std::string& name) {
    for (const char* f : page_files)
        if (name == f) return true;
    return false;
}

std::string read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("--ui-dir: cannot read " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

UiFiles::UiFiles(std::string dir) : dir_(std::move(dir)) {
    if (dir_.empty()) return;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir_, ec)) throw UsageError("--ui-dir " + dir_ + ": not a folder", "--ui-dir");
    for (const char* f : page_files)
        if (!std::filesystem::is_regular_file(std::filesystem::path(dir_) / f, ec))
            throw UsageError("--ui-dir " + dir_ + ": has no " + f + " (the page needs index.html, app.js and style.css)",
                             "--ui-dir");
}

std::optional<UiFiles::File> UiFiles::find(const std::string& name) const {
    if (!is_page_file(name)) return std::nullopt;
    if (!dir_.empty()) return File{read_whole((std::filesystem::path(dir_) / name).string()), content_type_of(name)};
    for (std::size_t i = 0; i < n_embedded_web_files; ++i) {
        const EmbeddedWebFile& f = embedded_web_files[i];
        if (name == f.name) return File{std::string(reinterpret_cast<const char*>(f.data), f.size), content_type_of(name)};
    }
    return std::nullopt;
}

void set_ui_headers(httplib::Response& res) {
    // No inline script or style anywhere: the page's script and sheet are files of this origin,
    // and corpus text is only ever inserted as text (textContent), so a hostile title cannot run.
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; "
                   "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    // (X-Content-Type-Options: nosniff is on every reply of the server, these included.)
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Cache-Control", "no-cache");
}

void add_ui_static_routes(httplib::Server& http, const UiFiles& files, const ServeFn& serve) {
    auto redirect = [serve](int status, const std::string& endpoint) {
        return [serve, status, endpoint](const httplib::Request& req, httplib::Response& res) {
            serve(endpoint, false, req, res, [&] {
                set_ui_headers(res);
                res.status = status;
                res.set_header("Location", "/ui/");
            });
        };
    };
    note_route(http, "GET", "/", "ui");
    http.Get("/", redirect(302, "ui"));
    note_route(http, "GET", "/ui", "ui");
    http.Get("/ui", redirect(301, "ui"));
    auto file = [&files, serve](const httplib::Request& req, httplib::Response& res) {
        serve("ui", false, req, res, [&] {
            const std::string name = req.matches.size() > 1 && req.matches[1].length() > 0 ? std::string(req.matches[1])
                                                                                            : "index.html";
            set_ui_headers(res);
            const auto found = files.find(name);
            if (!found) {
                res.status = 404;
                res.set_content("{\"error\": \"no such file of the page (it has index.html, app.js and style.css)\"}",
                                "application/json");
                return;
            }
            res.set_content(found->body, found->content_type);
        });
    };
    note_route(http, "GET", R"(/ui/([A-Za-z0-9._-]*))", "ui");
    http.Get(R"(/ui/([A-Za-z0-9._-]*))", file);
}

}  // namespace novelty::host::detail
