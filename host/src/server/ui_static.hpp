// The web page's static files (docs/ui.md): GET /ui/ and its three files, / redirecting to
// /ui/, served from the copies compiled into the binary or, for development, from a folder.
// Every reply carries the page's security headers (a Content-Security-Policy of
// default-src 'self' with no inline script, nosniff, no referrer, no framing).
#pragma once

#include <httplib.h>

#include <functional>
#include <optional>
#include <string>

namespace novelty::host::detail {

/// The files of the page: index.html, app.js and style.css, nothing else.
class UiFiles {
public:
    /// From the binary's embedded copies (dir empty) or from `dir` (read on every request, so a
    /// reload shows an edit). Throws UsageError when `dir` is not a folder holding index.html.
    explicit UiFiles(std::string dir);
    /// The bytes and content type of `name`; nullopt for a name that is not one of the three
    /// files. Throws Error when the file of a folder cannot be read.
    struct File {
        std::string body;
        std::string content_type;
    };
    std::optional<File> find(const std::string& name) const;
    /// "embedded" or the folder.
    std::string source() const { return dir_.empty() ? "embedded" : dir_; }

private:
    std::string dir_;
};

/// The headers every page reply carries besides the server's nosniff (CSP, referrer, framing, no caching).
void set_ui_headers(httplib::Response& res);

/// Wraps a handler with the server's auth, error mapping and metrics (Server::Impl::serve).
using ServeFn = std::function<void(const std::string& endpoint, bool needs_auth, const httplib::Request&,
                                   httplib::Response&, const std::function<void()>&)>;

/// Registers GET / (302 to /ui/), /ui (301 to /ui/), /ui/ and /ui/{file}; the files need no
/// token (they hold no data: the page asks the API, sending the token the user types).
void add_ui_static_routes(httplib::Server& http, const UiFiles& files, const ServeFn& serve);

}  // namespace novelty::host::detail
