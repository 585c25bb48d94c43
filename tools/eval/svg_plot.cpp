#include "svg_plot.hpp"

#include "novelty/scoring/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>

namespace novelty::cli {

namespace {

constexpr double panel_width = 560;
constexpr double row_height = 30;
constexpr double panel_title_height = 34;
constexpr double axis_height = 46;
constexpr double panel_gap = 24;
constexpr double margin = 20;
constexpr double note_width = 110;
constexpr double char_width = 6.8;  // average width of a 12px sans-serif character
constexpr std::size_t max_dots = 300;
constexpr std::size_t max_label_chars = 28;

const char* const palette[] = {"#555555", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                               "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#393b79", "#ad494a"};

std::string colour(std::size_t i) {
    constexpr std::size_t n = sizeof palette / sizeof palette[0];
    return i < n ? palette[i] : palette[1 + (i - 1) % (n - 1)];
}

std::string escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default:
                // Control characters are not allowed in XML 1.0.
                if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;
        }
    }
    return out;
}

std::size_t utf8_length(const std::string& text) {
    std::size_t n = 0;
    for (char c : text)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

/// Shortens to `max_chars` characters (UTF-8 aware), ending with an ellipsis when cut.
std::string shorten(const std::string& text, std::size_t max_chars) {
    if (utf8_length(text) <= max_chars) return text;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
        if (chars++ == max_chars - 1) return text.substr(0, i) + "\xE2\x80\xA6";
    }
    return text;
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

struct Axis {
    double lo = 0, hi = 1, step = 0.2;
    int decimals = 1;
};

/// A range covering [lo, hi] with about five round ticks (steps of 1, 2, 2.5 or 5 times 10^k).
Axis nice_axis(double lo, double hi) {
    if (!(hi > lo)) {
        const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
        lo -= pad;
        hi += pad;
    }
    const double raw = (hi - lo) / 5;
    const double magnitude = std::pow(10, std::floor(std::log10(raw)));
    double mantissa = 10;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (raw <= m * magnitude * 1.0000001) {
            mantissa = m;
            break;
        }
    Axis axis;
    axis.step = mantissa * magnitude;
    axis.lo = std::floor(lo / axis.step + 1e-9) * axis.step;
    axis.hi = std::ceil(hi / axis.step - 1e-9) * axis.step;
    axis.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(axis.step) + 1e-9))) + (mantissa == 2.5 ? 1 : 0);
    return axis;
}

std::string tick_label(double v, int decimals) {
    if (std::abs(v) < 1e-12) v = 0;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

/// A deterministic jitter in [-1, 1] for dot k.
double jitter(std::size_t k) {
    std::uint64_t z = (k + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 29;
    return static_cast<double>(z % 2001) / 1000.0 - 1.0;
}

double panel_height(const BoxPanel& panel) {
    return panel_title_height + row_height * static_cast<double>(std::max<std::size_t>(panel.series.size(), 1)) +
           axis_height;
}

class PanelWriter {
public:
    PanelWriter(std::string& svg, const BoxPanel& panel, double x, double y, double label_width)
        : svg_(svg), panel_(panel), x_(x), y_(y), left_(x + label_width), right_(x + panel_width - note_width) {}

    void write() {
        const double height = panel_height(panel_);
        svg_ += "<g>\n<rect x=\"" + num(x_) + "\" y=\"" + num(y_) + "\" width=\"" + num(panel_width) + "\" height=\"" +
                num(height) + "\" fill=\"#fbfbfb\" stroke=\"#cccccc\"/>\n";
        svg_ += "<text x=\"" + num(x_ + 10) + "\" y=\"" + num(y_ + 22) +
                "\" font-size=\"15\" font-weight=\"bold\">" + escape(panel_.title) + "</text>\n";
        double lo = INFINITY, hi = -INFINITY;
        for (const auto& s : panel_.series)
            for (double v : s.values)
                if (!std::isnan(v)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
        top_ = y_ + panel_title_height;
        bottom_ = top_ + row_height * static_cast<double>(std::max<std::size_t>(panel_.series.size(), 1));
        if (!(lo <= hi)) {
            svg_ += "<text x=\"" + num((left_ + right_) / 2) + "\" y=\"" + num((top_ + bottom_) / 2) +
                    "\" font-size=\"13\" fill=\"#777777\" text-anchor=\"middle\">no scores</text>\n</g>\n";
            return;
        }
        axis_ = nice_axis(lo, hi);
        write_axis();
        for (std::size_t i = 0; i < panel_.series.size(); ++i) write_row(i);
        svg_ += "</g>\n";
    }

private:
    double to_x(double v) const { return left_ + (v - axis_.lo) / (axis_.hi - axis_.lo) * (right_ - left_); }

    void write_axis() {
        svg_ += "<line x1=\"" + num(left_) + "\" y1=\"" + num(bottom_) + "\" x2=\"" + num(right_) + "\" y2=\"" +
                num(bottom_) + "\" stroke=\"#333333\"/>\n";
        const int n_ticks = static_cast<int>(std::lround((axis_.hi - axis_.lo) / axis_.step));
        for (int t = 0; t <= n_ticks; ++t) {
            const double v = axis_.lo + t * axis_.step;
            const double x = to_x(v);
            svg_ += "<line x1=\"" + num(x) + "\" y1=\"" + num(top_) + "\" x2=\"" + num(x) + "\" y2=\"" + num(bottom_) +
                    "\" stroke=\"#e3e3e3\"/>\n";
            svg_ += "<line x1=\"" + num(x) + "\" y1=\"" + num(bottom_) + "\" x2=\"" + num(x) + "\" y2=\"" +
                    num(bottom_ + 5) + "\" stroke=\"#333333\"/>\n";
            svg_ += "<text x=\"" + num(x) + "\" y=\"" + num(bottom_ + 18) +
                    "\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333333\">" + tick_label(v, axis_.decimals) +
                    "</text>\n";
        }
        svg_ += "<text x=\"" + num((left_ + right_) / 2) + "\" y=\"" + num(bottom_ + 37) +
                "\" font-size=\"12\" text-anchor=\"middle\">" + escape(panel_.axis_label) + "</text>\n";
    }

    void write_row(std::size_t i) {
        const BoxSeries& s = panel_.series[i];
        const double mid = top_ + row_height * (static_cast<double>(i) + 0.5);
        const std::string fill = colour(i);
        svg_ += "<text x=\"" + num(left_ - 8) + "\" y=\"" + num(mid + 4) +
                "\" font-size=\"12\" text-anchor=\"end\">" + escape(shorten(s.name, max_label_chars)) + "</text>\n";
        if (!s.note.empty())
            svg_ += "<text x=\"" + num(right_ + 10) + "\" y=\"" + num(mid + 4) + "\" font-size=\"11\" fill=\"#333333\">" +
                    escape(s.note) + "</text>\n";
        std::vector<double> sorted;
        for (double v : s.values)
            if (!std::isnan(v)) sorted.push_back(v);
        if (sorted.empty()) {
            svg_ += "<text x=\"" + num(left_ + 6) + "\" y=\"" + num(mid + 4) +
                    "\" font-size=\"11\" fill=\"#777777\">no scores</text>\n";
            return;
        }
        std::sort(sorted.begin(), sorted.end());
        const double q1 = quantile(sorted, 0.25), median = quantile(sorted, 0.5), q3 = quantile(sorted, 0.75);
        const double fence_lo = q1 - 1.5 * (q3 - q1), fence_hi = q3 + 1.5 * (q3 - q1);
        const double whisker_lo = *std::lower_bound(sorted.begin(), sorted.end(), fence_lo);
        const double whisker_hi = *(std::upper_bound(sorted.begin(), sorted.end(), fence_hi) - 1);
        const double half = row_height * 0.3;
        // Whiskers with end caps.
        svg_ += "<path d=\"M" + num(to_x(whisker_lo)) + " " + num(mid) + "H" + num(to_x(q1)) + "M" + num(to_x(q3)) +
                " " + num(mid) + "H" + num(to_x(whisker_hi)) + "M" + num(to_x(whisker_lo)) + " " + num(mid - half / 2) +
                "V" + num(mid + half / 2) + "M" + num(to_x(whisker_hi)) + " " + num(mid - half / 2) + "V" +
                num(mid + half / 2) + "\" stroke=\"" + fill + "\" stroke-width=\"1.5\" fill=\"none\"/>\n";
        svg_ += "<rect x=\"" + num(to_x(q1)) + "\" y=\"" + num(mid - half) + "\" width=\"" +
                num(std::max(to_x(q3) - to_x(q1), 1.0)) + "\" height=\"" + num(2 * half) + "\" fill=\"" + fill +
                "\" fill-opacity=\"0.3\" stroke=\"" + fill + "\" stroke-width=\"1.5\"/>\n";
        svg_ += "<line x1=\"" + num(to_x(median)) + "\" y1=\"" + num(mid - half) + "\" x2=\"" + num(to_x(median)) +
                "\" y2=\"" + num(mid + half) + "\" stroke=\"" + fill + "\" stroke-width=\"2.5\"/>\n";
        // Dots: every value when there are few, else only those beyond the whiskers.
        const bool all_dots = sorted.size() <= max_dots;
        std::size_t k = 0;
        for (double v : s.values) {
            if (std::isnan(v)) continue;
            ++k;
            if (!all_dots && v >= whisker_lo && v <= whisker_hi) continue;
            const double y = mid + (all_dots ? jitter(k) * half * 0.8 : 0);
            svg_ += "<circle cx=\"" + num(to_x(v)) + "\" cy=\"" + num(y) + "\" r=\"2.2\" fill=\"" + fill +
                    "\" fill-opacity=\"0.55\"/>\n";
        }
    }

    std::string& svg_;
    const BoxPanel& panel_;
    double x_, y_, left_, right_;
    double top_ = 0, bottom_ = 0;
    Axis axis_;
};

}  // namespace

std::string box_plot_svg(const std::string& title, const std::string& subtitle, const std::vector<BoxPanel>& panels) {
    std::size_t longest = 4;
    for (const auto& p : panels)
        for (const auto& s : p.series) longest = std::max(longest, std::min(utf8_length(s.name), max_label_chars));
    const double label_width = std::clamp(static_cast<double>(longest) * char_width + 16, 60.0, 220.0);
    const std::size_t columns = panels.size() > 1 ? 2 : 1;
    const double width = margin * 2 + panel_width * static_cast<double>(columns) + panel_gap * static_cast<double>(columns - 1);

    // Legend entries, wrapped to the width.
    const std::vector<BoxSeries> empty;
    const auto& legend = panels.empty() ? empty : panels.front().series;
    std::string legend_svg;
    double lx = margin, ly = 78;
    for (std::size_t i = 0; i < legend.size(); ++i) {
        const std::string name = shorten(legend[i].name, max_label_chars);
        const double entry = 22 + static_cast<double>(utf8_length(name)) * char_width + 18;
        if (lx + entry > width - margin && lx > margin) {
            lx = margin;
            ly += 20;
        }
        legend_svg += "<rect x=\"" + num(lx) + "\" y=\"" + num(ly - 10) + "\" width=\"14\" height=\"12\" fill=\"" +
                      colour(i) + "\" fill-opacity=\"0.6\" stroke=\"" + colour(i) + "\"/>\n";
        legend_svg += "<text x=\"" + num(lx + 20) + "\" y=\"" + num(ly) + "\" font-size=\"12\">" + escape(name) + "</text>\n";
        lx += entry;
    }
    const double panels_top = ly + 22;

    std::vector<double> row_tops;
    double y = panels_top;
    for (std::size_t r = 0; r * columns < panels.size(); ++r) {
        row_tops.push_back(y);
        double tallest = 0;
        for (std::size_t c = 0; c < columns && r * columns + c < panels.size(); ++c)
            tallest = std::max(tallest, panel_height(panels[r * columns + c]));
        y += tallest + panel_gap;
    }
    const double height = y - panel_gap + margin;

    std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(width) + "\" height=\"" +
           num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
           "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
    svg += "<title>" + escape(title) + "</title>\n";
    svg += "<rect x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" + num(height) + "\" fill=\"#ffffff\"/>\n";
    svg += "<text x=\"" + num(margin) + "\" y=\"32\" font-size=\"18\" font-weight=\"bold\">" + escape(title) + "</text>\n";
    svg += "<text x=\"" + num(margin) + "\" y=\"54\" font-size=\"12\" fill=\"#555555\">" + escape(subtitle) + "</text>\n";
    svg += legend_svg;
    for (std::size_t i = 0; i < panels.size(); ++i) {
        const double px = margin + static_cast<double>(i % columns) * (panel_width + panel_gap);
        PanelWriter(svg, panels[i], px, row_tops[i / columns], label_width).write();
    }
    svg += "</svg>\n";
    return svg;
}

}  // namespace novelty::cli
