#include "r3/check/layout_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "r3/case/limits.h"
#include "r3/check/report.h"
#include "r3/check/xml_text.h"
#include "r3/model/sizing.h"
#include "r3/sut/replay_sizing.h"

namespace r3::check {
namespace {

constexpr double kLeft = 150;    // room for the labels
constexpr double kWidth = 800;   // the widest tensor
constexpr int kMaxRankLines = 64;

// Owners get hues spread by the golden angle, so neighbours differ at any DP.
std::string OwnerColour(int64_t dp) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "hsl(%d,65%%,%d%%)", static_cast<int>((dp * 137) % 360),
                dp % 2 == 0 ? 55 : 70);
  return buf;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// One run list as a bar: a rect per run at `scale` px per row.
void Bar(std::ostringstream& out, const RowRuns& runs, double x, double y, double height,
         double scale, bool label_owners) {
  double at = x;
  // The plain form, a rect per row of a strided run: the drawing knows no stride.
  ForEachPlainRun(runs, [&](const RowRun& run) {
    const double w = std::max(static_cast<double>(run.count) * scale, 0.5);
    const bool pad = run.is_pad();
    out << "<rect x=\"" << Num(at) << "\" y=\"" << Num(y) << "\" width=\"" << Num(w)
        << "\" height=\"" << Num(height) << "\" fill=\""
        << (pad ? std::string("url(#pad)") : OwnerColour(run.dp)) << "\"><title>"
        << (pad ? "SP padding" : "dp" + std::to_string(run.dp) + " rows [" +
                                     std::to_string(run.first) + ".." +
                                     std::to_string(run.first + run.count) + ")")
        << " (" << run.count << " rows)</title></rect>\n";
    if (label_owners && !pad && w >= 28) {
      out << "<text x=\"" << Num(at + w / 2) << "\" y=\"" << Num(y + height / 2 + 4)
          << "\" text-anchor=\"middle\" font-size=\"11\">dp" << run.dp << "</text>\n";
    }
    at += w;
    return true;
  });
}

}  // namespace

std::string LayoutSvg(const Case& c, const CaseResult& result, const sut::Producer& producer) {
  const model::Layout& layout = result.layout;
  const sut::Observation& obs = result.observation;
  // One scale for tensors and captures: a rank may expect more rows than the
  // tensor it sees holds (that is the bug being drawn), and must still fit.
  int64_t widest = 1;
  for (const RowTensor& t : layout.tensors) widest = std::max(widest, t.rows());
  for (size_t i = 0; i < layout.ranks.size(); ++i) {
    widest = std::max({widest, TotalRows(layout.ranks[i].expected),
                       TotalRows(obs.ranks[i].captured)});
  }
  const double scale = kWidth / static_cast<double>(widest);

  // Which ranks get a line: all up to 64, else only the wrong ones.
  std::vector<size_t> shown;
  int64_t wrong = 0;
  for (size_t i = 0; i < layout.ranks.size(); ++i) {
    const bool ok = obs.ranks[i].error.empty() && obs.ranks[i].captured == layout.ranks[i].expected;
    wrong += ok ? 0 : 1;
    if (layout.ranks.size() <= kMaxRankLines || (!ok && shown.size() < kMaxRankLines)) {
      shown.push_back(i);
    }
  }

  std::ostringstream body;
  double y = 66;
  const size_t tensors = std::min<size_t>(layout.tensors.size(), 8);
  for (size_t t = 0; t < tensors; ++t) {
    body << "<text x=\"10\" y=\"" << Num(y + 18) << "\" font-size=\"12\">tensor " << t << " ("
         << layout.tensors[t].rows() << " rows)</text>\n";
    Bar(body, layout.tensors[t].runs(), kLeft, y, 26, scale, /*label_owners=*/true);
    y += 40;
    for (size_t i : shown) {
      const model::RankLayout& r = layout.ranks[i];
      if (static_cast<size_t>(r.tensor) != t) continue;
      const sut::RankObservation& o = obs.ranks[i];
      const bool ok = o.error.empty() && o.captured == r.expected;
      body << "<g class=\"rank" << (ok ? "" : " wrong") << "\">\n<text x=\"10\" y=\""
           << Num(y + 11) << "\" font-size=\"11\" fill=\"" << (ok ? "black" : "red") << "\">dp"
           << r.dp << "/tp" << r.tp << (ok ? "" : "  WRONG") << "</text>\n";
      // captured on top, expected below, both at the tensor's scale
      if (o.error.empty()) {
        Bar(body, o.captured, kLeft, y, 6, scale, false);
      } else {
        body << "<text x=\"" << kLeft << "\" y=\"" << Num(y + 6)
             << "\" font-size=\"10\" fill=\"red\">" << XmlText(o.error) << "</text>\n";
      }
      Bar(body, r.expected, kLeft, y + 8, 4, scale, false);
      if (!ok) {
        const double w = std::max(
            static_cast<double>(std::max(TotalRows(o.captured), TotalRows(r.expected))) * scale, 4.0);
        body << "<rect x=\"" << Num(kLeft - 2) << "\" y=\"" << Num(y - 2) << "\" width=\""
             << Num(w + 4) << "\" height=\"16\" fill=\"none\" stroke=\"red\" "
             << "stroke-width=\"1.5\"/>\n";
      }
      body << "</g>\n";
      y += 18;
    }
    y += 10;
  }
  if (layout.tensors.size() > tensors) {
    body << "<text x=\"10\" y=\"" << Num(y + 12) << "\" font-size=\"12\">... "
         << layout.tensors.size() - tensors << " more tensors</text>\n";
    y += 20;
  }
  if (layout.ranks.size() > kMaxRankLines) {
    body << "<text x=\"10\" y=\"" << Num(y + 12) << "\" font-size=\"12\">"
         << layout.ranks.size() << " ranks: " << wrong << " wrong (drawn, at most "
         << kMaxRankLines << "), " << layout.ranks.size() - wrong << " ok (not drawn)</text>\n";
    y += 20;
  }
  const std::string verdict = VerdictText("verdict", result, producer, 0);
  body << "<text x=\"10\" y=\"" << Num(y + 14) << "\" font-size=\"13\" fill=\""
       << (result.PassesOrKnown() ? "black" : "red") << "\">"
       << XmlText(verdict.substr(0, verdict.find('\n'))) << "</text>\n";
  y += 30;

  const Config& cfg = c.config;
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(kLeft + kWidth + 20)
      << "\" height=\"" << Num(y) << "\" font-family=\"sans-serif\">\n"
      << "<defs><pattern id=\"pad\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      << "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#eee\"/>"
      << "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#888\" stroke-width=\"2\"/>"
      << "</pattern></defs>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"22\" font-size=\"15\">DP " << cfg.dp << ", TP " << cfg.tp << ", EP "
      << (cfg.ep ? "on" : "off") << ", " << DispatchName(cfg.dispatch) << " dispatch, SP "
      << (layout.sp ? "on" : "off") << ", M " << cfg.max_num_batched_tokens << "</text>\n"
      << "<text x=\"10\" y=\"38\" font-size=\"11\">" << XmlText(DescribeOptions(producer))
      << "</text>\n<text x=\"10\" y=\"52\" font-size=\"11\">per rank: captured rows (upper) "
      << "over expected rows (lower); colour = owning DP rank, hatched = SP padding</text>\n"
      << body.str() << "</svg>\n";
  return out.str();
}

std::string SizingSvg(const Case& c, const sut::MutantSet& mutants) {
  constexpr double kPlotLeft = 80, kPlotTop = 50, kPlotW = 640, kPlotH = 360;
  const int max_log_m = 20;  // M up to 2^20 (the case limit)
  std::vector<std::pair<std::string, std::vector<int64_t>>> series;
  std::vector<int64_t> bound;
  std::vector<int64_t> ms;
  for (int k = 0; k <= max_log_m; ++k) ms.push_back(int64_t{1} << k);
  Config cfg = c.config;
  for (const int64_t m : ms) {
    cfg.max_num_batched_tokens = m;
    bound.push_back(model::RequiredReplayRows(cfg));
  }
  std::vector<sut::Policy> policies;
  for (const sut::PolicyInfo& info : sut::PolicyCatalogue()) {
    policies.push_back(info.id);
    std::vector<int64_t> rows;
    for (const int64_t m : ms) {
      cfg.max_num_batched_tokens = m;
      rows.push_back(sut::ReplayBufferRows(cfg, info.id, mutants));
    }
    series.emplace_back(std::string(info.name), rows);
  }
  int64_t top = 1;
  for (const int64_t b : bound) top = std::max(top, b);
  for (const auto& s : series) {
    for (const int64_t r : s.second) top = std::max(top, r);
  }
  const double log_top = std::ceil(std::log2(static_cast<double>(top)));
  const auto px = [&](double log_m) { return kPlotLeft + log_m / max_log_m * kPlotW; };
  const auto py = [&](int64_t rows) {
    const double l = std::log2(static_cast<double>(std::max<int64_t>(rows, 1)));
    return kPlotTop + kPlotH - l / std::max(log_top, 1.0) * kPlotH;
  };
  const char* colours[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b"};
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"470\" "
      << "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"22\" font-size=\"15\">replay-buffer rows over M: DP "
      << c.config.dp << ", TP " << c.config.tp << ", EP " << (c.config.ep ? "on" : "off")
      << ", " << DispatchName(c.config.dispatch) << " dispatch, sp "
      << SpModeName(c.config.sp) << "</text>\n";
  // axes and grid (powers of 2 on both)
  for (int k = 0; k <= max_log_m; k += 4) {
    out << "<line x1=\"" << Num(px(k)) << "\" y1=\"" << kPlotTop << "\" x2=\"" << Num(px(k))
        << "\" y2=\"" << kPlotTop + kPlotH << "\" stroke=\"#ddd\"/>\n<text x=\"" << Num(px(k))
        << "\" y=\"" << kPlotTop + kPlotH + 16 << "\" font-size=\"11\" text-anchor=\"middle\">2^"
        << k << "</text>\n";
  }
  for (int k = 0; k <= static_cast<int>(log_top); k += 4) {
    const double y = py(int64_t{1} << k);
    out << "<line x1=\"" << kPlotLeft << "\" y1=\"" << Num(y) << "\" x2=\""
        << kPlotLeft + kPlotW << "\" y2=\"" << Num(y) << "\" stroke=\"#ddd\"/>\n<text x=\""
        << kPlotLeft - 6 << "\" y=\"" << Num(y + 4)
        << "\" font-size=\"11\" text-anchor=\"end\">2^" << k << "</text>\n";
  }
  out << "<text x=\"" << kPlotLeft + kPlotW / 2 << "\" y=\"" << kPlotTop + kPlotH + 34
      << "\" font-size=\"12\" text-anchor=\"middle\">M (max_num_batched_tokens)</text>\n"
      << "<text x=\"16\" y=\"" << kPlotTop + kPlotH / 2
      << "\" font-size=\"12\" transform=\"rotate(-90 16 " << kPlotTop + kPlotH / 2
      << ")\" text-anchor=\"middle\">rows</text>\n";
  const auto polyline = [&](const std::vector<int64_t>& rows, const std::string& colour,
                            const std::string& extra) {
    out << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" " << extra
        << " points=\"";
    for (size_t k = 0; k < rows.size(); ++k) out << Num(px(k)) << "," << Num(py(rows[k])) << " ";
    out << "\"/>\n";
  };
  polyline(bound, "black", "stroke-dasharray=\"6 4\"");
  double legend_y = kPlotTop + 10;
  out << "<text x=\"" << kPlotLeft + kPlotW + 12 << "\" y=\"" << Num(legend_y)
      << "\" font-size=\"12\">- - exact bound</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string colour = colours[i % 5];
    polyline(series[i].second, colour, "class=\"policy\" opacity=\"0.8\"");
    // safe for the case's own M, as `sizing` says; the curve shows the rest
    const bool safe = sut::ReplayBufferRows(c.config, policies[i], mutants) >=
                      model::RequiredReplayRows(c.config);
    legend_y += 18;
    out << "<text x=\"" << kPlotLeft + kPlotW + 12 << "\" y=\"" << Num(legend_y)
        << "\" font-size=\"12\" fill=\"" << colour << "\">" << series[i].first
        << (safe ? " (safe)" : " (UNSAFE)") << "</text>\n";
  }
  const double case_m = std::log2(static_cast<double>(c.config.max_num_batched_tokens));
  out << "<line x1=\"" << Num(px(case_m)) << "\" y1=\"" << kPlotTop << "\" x2=\""
      << Num(px(case_m)) << "\" y2=\"" << kPlotTop + kPlotH
      << "\" stroke=\"#555\" stroke-dasharray=\"2 3\"/>\n<text x=\"" << Num(px(case_m) + 4)
      << "\" y=\"" << kPlotTop + 12 << "\" font-size=\"11\">this case: M "
      << c.config.max_num_batched_tokens << "</text>\n</svg>\n";
  return out.str();
}

}  // namespace r3::check
