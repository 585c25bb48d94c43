// A self-contained SVG writer for box plots of score distributions: one panel per method, one
// row per group. No external libraries; the output is plain SVG 1.1 text.
#pragma once

#include <string>
#include <vector>

namespace novelty::cli {

/// One row of a panel: the scores of one group (NaN values are ignored).
struct BoxSeries {
    std::string name;
    std::vector<double> values;
    std::string note;  ///< printed right of the row, e.g. "AUROC 0.71"; may be empty
};

/// One panel: a title, the x axis label, and its rows (top to bottom).
struct BoxPanel {
    std::string title;
    std::string axis_label;
    std::vector<BoxSeries> series;
};

/// Renders panels in a grid (two columns when there is more than one panel) under `title` and
/// `subtitle`, with a legend of the series names taken from the first panel. Series i has the same
/// colour in every panel; the first series is drawn in grey (meant for the overall group).
/// Each row shows a box (quartiles), a median line, whiskers to the furthest values within 1.5
/// IQR of the box, and either every value as a jittered dot (up to 300 values) or only the
/// values beyond the whiskers. Each panel has its own x range.
std::string box_plot_svg(const std::string& title, const std::string& subtitle, const std::vector<BoxPanel>& panels);

}  // namespace novelty::cli
