// The web page's files compiled into the binary (cmake/embed_web.cmake writes the table from
// web/index.html, app.js and style.css).
#pragma once

#include <cstddef>

namespace novelty::host::detail {

struct EmbeddedWebFile {
    const char* name;           ///< file name within web/, e.g. "app.js"
    const unsigned char* data;  ///< its bytes (size of them, then a 0 that is not part of the file)
    std::size_t size;
};

extern const EmbeddedWebFile embedded_web_files[];
extern const std::size_t n_embedded_web_files;

}  // namespace novelty::host::detail
