// The host side of the GPU path on a scattered capture (issue 21): under the
// gpu-layer-stride mutant a rank's captured row i holds row i*L of the tensor
// it gathered (L = num_layers), so its decoded rows are one row per run in
// the plain form. This decodes such a capture (gpu::DecodeSummary on
// synthetic read-backs with the device's lookup answers, as the batch runner
// hands them over), then judges it (check::JudgeObservation) and frees it.
//
//   build-cpu/bench/decode_bench --benchmark_out=out.json --benchmark_out_format=json
//
// Only the r3 API that predates strided runs is used, so the same file also
// measures the code before them (bench/results/decode_scattered.json).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/check/run_case.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/fill.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/plan.h"
#include "r3/model/layout.h"
#include "r3/sut/sut.h"

namespace r3::gpu {
namespace {

constexpr int64_t kLayers = 8;
constexpr int64_t kTopK = 8;

// A case of two DP ranks of `tokens` rows each, and what the device hands
// the decode when every rank's capture reads its gathered tensor at stride L.
struct Scattered {
  Case c;
  uint64_t seed = 0;
  sut::Observation host;
  Plan plan;
  std::vector<RankSummary> summaries;
  std::vector<int64_t> readback_rows;
  std::vector<std::vector<int32_t>> values;
  std::vector<std::vector<int64_t>> found;
  std::vector<CaptureRows> capture_rows;
  int64_t rows = 0;  // captured rows, all ranks
};

Scattered MakeScattered(int64_t tokens) {
  Scattered s;
  s.c = ParseCase("r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\n"
                  "max_num_batched_tokens " + std::to_string(2 * tokens) +
                      "\ntop_k " + std::to_string(kTopK) + "\nnum_experts 256\nnum_layers " +
                      std::to_string(kLayers) + "\ntokens " + std::to_string(tokens) + " " +
                      std::to_string(tokens) + "\n",
                  "decode_bench");
  s.seed = CaseSeed(s.c);
  s.host = sut::RunSut(s.c, {});
  s.plan = BuildPlan(s.c, s.host, {}, s.seed);
  const model::Layout layout = model::BuildLayout(s.c);
  for (size_t r = 0; r < s.plan.ranks.size(); ++r) {
    const RankPlan& rank = s.plan.ranks[r];
    const RowTensor& gathered = layout.seen_by(layout.ranks[r]);
    const int64_t rows = CaptureRowsOf(s.plan, r, ReadbackRows(s.plan, s.c, r));
    std::vector<int32_t>& values = s.values.emplace_back();
    std::vector<int64_t>& found = s.found.emplace_back();
    for (int64_t i = 0; i < rows; ++i) {
      const RowRuns source = gathered.Slice(i * kLayers, i * kLayers + 1);
      if (source.empty() || source[0].is_pad()) {
        values.insert(values.end(), kTopK, source.empty() ? kUnwritten : kPoison);
        found.push_back(kNoStepRow);
        continue;
      }
      const int64_t dp = source[0].dp;
      const int64_t token = source[0].first;
      for (int64_t k = 0; k < kTopK; ++k) {
        values.push_back(FillValue(s.seed, dp, token, k, s.plan.id_space));
      }
      found.push_back(dp == rank.dp && token == i ? kModelRow : PackedRow(dp, token));
    }
    s.readback_rows.push_back(ReadbackRows(s.plan, s.c, r));
    // Every row past the first is wrong; the count only feeds the verdict.
    s.summaries.push_back({.wrong_values = rows > 1 ? (rows - 1) * kTopK : 0,
                           .first_index = rows > 1 ? (kLayers + s.plan.layer) * kTopK : -1,
                           .first_got = rows > 1 ? values[kTopK] : 0});
    s.rows += rows;
  }
  for (size_t r = 0; r < s.values.size(); ++r) {
    s.capture_rows.push_back({s.values[r].data(), static_cast<int64_t>(s.found[r].size()),
                              s.found[r].data()});
  }
  return s;
}

Decoded DecodeIt(const Scattered& s) {
  return DecodeSummary(s.c, s.plan, s.host, s.seed, s.summaries, s.readback_rows, s.capture_rows);
}

void Report(benchmark::State& state, const Scattered& s, const Decoded& d) {
  int64_t runs = 0;
  int64_t bytes = 0;
  for (const RowRuns& r : d.captured) {
    runs += static_cast<int64_t>(r.size());
    bytes += static_cast<int64_t>(r.capacity() * sizeof(RowRun));
  }
  state.counters["rows"] = static_cast<double>(s.rows);
  state.counters["runs"] = static_cast<double>(runs);
  state.counters["run_bytes"] = static_cast<double>(bytes);
  state.SetItemsProcessed(state.iterations() * s.rows);  // items: captured rows
}

// DecodeSummary, then freeing the decoded runs.
void BM_DecodeScattered(benchmark::State& state) {
  const Scattered s = MakeScattered(state.range(0));
  for (auto _ : state) {
    Decoded d = DecodeIt(s);
    benchmark::DoNotOptimize(d.captured.data());
  }
  Report(state, s, DecodeIt(s));
}

// What the batch runner does with a slow case: decode, assemble the
// observation, judge it, free it all.
void BM_DecodeAndJudgeScattered(benchmark::State& state) {
  const Scattered s = MakeScattered(state.range(0));
  const std::vector<int> devices(s.plan.ranks.size(), 0);
  bool failed = true;
  for (auto _ : state) {
    check::CaseResult result =
        check::JudgeObservation(s.c, AssembleObservation(s.plan, s.host, DecodeIt(s), devices));
    failed = failed && !result.verdict.violations.empty();
    benchmark::DoNotOptimize(result.verdict.violations.data());
  }
  if (!failed) state.SkipWithError("the scattered capture passed");
  Report(state, s, DecodeIt(s));
}

BENCHMARK(BM_DecodeScattered)
    ->Arg(1 << 12)
    ->Arg(1 << 16)
    ->Arg(1 << 19)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeAndJudgeScattered)
    ->Arg(1 << 12)
    ->Arg(1 << 16)
    ->Arg(1 << 19)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace r3::gpu

BENCHMARK_MAIN();
