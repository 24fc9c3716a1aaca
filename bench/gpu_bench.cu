// GPU benchmark of the capture path (run on the H200 machines, never a
// test): checked cases per second (emulated ranks on one GPU, one rank per
// GPU with NCCL on two), the capture copy against cudaMemcpyAsync of the
// same bytes, and vLLM's ragged all-gather (grouped ncclBroadcasts) against
// a plain ncclAllGather of the same total bytes.
//   gpu_bench [OUT.json]   (default bench/results/gpu.json)
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "r3/case/usable_cores.h"
#include "r3/gpu/gpu.h"
#include "r3/check/run_case.h"
#include "r3/gpu/kernels.h"
#include "r3/model/layout.h"
#include "r3/sample/case_sampler.h"
#include "r3/sut/mutants.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::ordered_json;

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void Check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "gpu_bench: %s: %s\n", what, ncclGetErrorString(r));
    std::exit(1);
  }
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Cases per second over `cases`, in batches of `batch`, after one warm-up
// batch.
ordered_json CasesPerSecond(r3::gpu::Runner& runner, const std::vector<r3::Case>& cases,
                            const std::string& what, size_t batch = 64) {
  r3::check::RunCases({cases.data(), std::min(batch, cases.size())}, runner);
  int64_t failed = 0;
  int64_t values = 0;
  std::string mode;
  const auto t0 = Clock::now();
  for (size_t i = 0; i < cases.size(); i += batch) {
    const size_t n = std::min(batch, cases.size() - i);
    std::vector<r3::check::CaseResult> results = r3::check::RunCases({cases.data() + i, n}, runner);
    for (const r3::check::CaseResult& r : results) {
      const r3::sut::DeviceCheck& device = r.observation.device.value();
      failed += r.PassesOrKnown() ? 0 : 1;
      values += device.values_checked;
      if (mode.empty() || device.mode.rfind("nccl", 0) == 0) mode = device.mode;
    }
    r3::check::ReleaseResults(results);
  }
  const double s = Seconds(t0, Clock::now());
  std::printf("%-44s %8zu cases %8.3f s %10.1f cases/s (%s, batches of %zu)\n", what.c_str(),
              cases.size(), s, cases.size() / s, mode.c_str(), batch);
  return {{"what", what}, {"mode", mode}, {"cases", cases.size()}, {"batch", batch},
          {"seconds", s}, {"cases_per_second", cases.size() / s}, {"values_checked", values},
          {"failed", failed}};
}

// A verdict's row in the table: pass, pass-known, or the failed invariants.
std::string VerdictKey(bool passes, bool known, const r3::check::Verdict& v) {
  if (passes) return known ? "pass-known" : "pass";
  std::vector<int> inv;
  for (const r3::check::Violation& x : v.violations) inv.push_back(static_cast<int>(x.invariant));
  std::sort(inv.begin(), inv.end());
  inv.erase(std::unique(inv.begin(), inv.end()), inv.end());
  std::string key = "fail";
  for (size_t i = 0; i < inv.size(); ++i) key += (i ? "," : " ") + std::to_string(inv[i]);
  return key;
}

// The verify sampler's cases on the host SUT (one core) and on one GPU
// (judged there), with the same SUT options: both rates from this run and
// both verdict tables, which must agree case by case.
ordered_json HostAgainstGpu(const std::vector<r3::Case>& cases, const r3::sut::MutantSet& mutants,
                            const std::string& name, size_t batch) {
  const auto h0 = Clock::now();
  std::vector<std::string> host_keys;
  for (const r3::Case& c : cases) {
    r3::sut::SutOptions options;
    options.mutants = mutants;
    const r3::check::CaseResult r = r3::check::RunCase(c, options);
    host_keys.push_back(VerdictKey(r.PassesOrKnown(), r.verdict.ok() ? false : r.PassesOrKnown(),
                                   r.verdict));
  }
  const double host_s = Seconds(h0, Clock::now());
  r3::gpu::GpuOptions o;
  o.mode = r3::gpu::RankMode::kEmulated;
  o.sut.mutants = mutants;
  r3::gpu::Runner runner(o);
  r3::check::RunCases({cases.data(), std::min(batch, cases.size())}, runner);  // warm-up
  std::vector<std::string> gpu_keys;
  const auto g0 = Clock::now();
  for (size_t i = 0; i < cases.size(); i += batch) {
    const size_t n = std::min(batch, cases.size() - i);
    std::vector<r3::check::CaseResult> results = r3::check::RunCases({cases.data() + i, n}, runner);
    for (const r3::check::CaseResult& r : results) {
      gpu_keys.push_back(VerdictKey(r.PassesOrKnown(), r.verdict.ok() ? false : r.PassesOrKnown(),
                                    r.verdict));
    }
    r3::check::ReleaseResults(results);
  }
  const double gpu_s = Seconds(g0, Clock::now());
  std::map<std::string, int64_t> host_table, gpu_table;
  int64_t differ = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    ++host_table[host_keys[i]];
    ++gpu_table[gpu_keys[i]];
    differ += host_keys[i] != gpu_keys[i] ? 1 : 0;
  }
  std::printf("%-26s %6zu cases: host %9.1f cases/s, gpu %9.1f cases/s, %lld verdicts differ\n",
              name.c_str(), cases.size(), cases.size() / host_s, cases.size() / gpu_s,
              static_cast<long long>(differ));
  return {{"mutant", name},
          {"cases", cases.size()},
          {"batch", batch},
          {"host_cases_per_second", cases.size() / host_s},
          {"gpu_cases_per_second", cases.size() / gpu_s},
          {"verdicts_differ", differ},
          {"host_verdicts", host_table},
          {"gpu_verdicts", gpu_table}};
}

// Keeps the layouts the judge split builds from being optimised away.
size_t benchmark_sink = 0;

ordered_json TimingsJson(const r3::gpu::RunnerTimings& t) {
  return {{"total_s", t.total_s},       {"prepare_s", t.prepare_s},
          {"prepare_wall_s", t.prepare_wall_s}, {"tables_s", t.tables_s},  {"step_s", t.step_s},
          {"observe_s", t.observe_s},   {"readback_s", t.readback_s},
          {"decode_s", t.decode_s},     {"summaries_wall_s", t.summaries_wall_s},
          {"pack_plan_s", t.pack_plan_s}, {"decode_wall_s", t.decode_wall_s},
          {"finish_wall_s", t.finish_wall_s}, {"cases", t.cases},
          {"slow_cases", t.slow_cases}};
}

// Issue 21's targets on one GPU, host and GPU in the same run on the same
// cases: the GPU's all-pass rate against the host's single-core rate, and
// its rate under mutants that break cases against its all-pass rate. Each
// row carries where the runner's time went.
ordered_json ThroughputTargets(const std::vector<r3::Case>& cases, size_t batch) {
  const auto h0 = Clock::now();
  int64_t host_failed = 0;
  for (const r3::Case& c : cases) host_failed += r3::check::RunCase(c, {}).PassesOrKnown() ? 0 : 1;
  const double host_rate = cases.size() / Seconds(h0, Clock::now());
  std::printf("%-44s %8zu cases %10.1f cases/s (host, one core)\n", "targets: host SUT",
              cases.size(), host_rate);
  ordered_json rows = ordered_json::array();
  double all_pass_rate = 0;
  for (const char* mutant : {"", "no-sp-trim", "gpu-tail-rows", "gpu-layer-stride"}) {
    r3::gpu::GpuOptions o;
    o.mode = r3::gpu::RankMode::kEmulated;
    if (*mutant != '\0') o.sut.mutants = r3::sut::MutantSet(r3::sut::MutantNamed(mutant));
    r3::gpu::Runner runner(o);
    r3::check::RunCases({cases.data(), std::min(batch, cases.size())}, runner);  // warm-up
    const r3::gpu::RunnerTimings before = runner.timings();
    int64_t failed = 0;
    double release_s = 0;
    const auto t0 = Clock::now();
    for (size_t i = 0; i < cases.size(); i += batch) {
      const size_t n = std::min(batch, cases.size() - i);
      std::vector<r3::check::CaseResult> results = r3::check::RunCases({cases.data() + i, n}, runner);
      for (const r3::check::CaseResult& r : results) failed += r.PassesOrKnown() ? 0 : 1;
      const auto r0 = Clock::now();
      r3::check::ReleaseResults(results);  // as verify does
      release_s += Seconds(r0, Clock::now());
    }
    const double wall_s = Seconds(t0, Clock::now());
    const double rate = cases.size() / wall_s;
    r3::gpu::RunnerTimings t = runner.timings();
    t.total_s -= before.total_s;
    t.prepare_s -= before.prepare_s;
    t.prepare_wall_s -= before.prepare_wall_s;
    t.tables_s -= before.tables_s;
    t.step_s -= before.step_s;
    t.observe_s -= before.observe_s;
    t.readback_s -= before.readback_s;
    t.decode_s -= before.decode_s;
    t.summaries_wall_s -= before.summaries_wall_s;
    t.pack_plan_s -= before.pack_plan_s;
    t.decode_wall_s -= before.decode_wall_s;
    t.finish_wall_s -= before.finish_wall_s;
    t.cases -= before.cases;
    t.slow_cases -= before.slow_cases;
    if (*mutant == '\0') all_pass_rate = rate;
    std::printf("%-44s %8zu cases %10.1f cases/s, %lld failing, %lld read back\n",
                (std::string("targets: gpu, mutant ") + (*mutant ? mutant : "none")).c_str(),
                cases.size(), rate, static_cast<long long>(failed),
                static_cast<long long>(t.slow_cases));
    // The judge of one batch on one thread, split: the model's layout, the
    // judge (layout included), and freeing the results.
    ordered_json judge_split;
    {
      const size_t n = std::min(batch, cases.size());
      std::vector<r3::sut::Observation> obs = runner.Observe({cases.data(), n});
      std::vector<r3::check::CaseResult> results(n);
      const auto l0 = Clock::now();
      for (size_t i = 0; i < n; ++i) benchmark_sink += r3::model::BuildLayout(cases[i]).ranks.size();
      const double layout_s = Seconds(l0, Clock::now());
      const auto j0 = Clock::now();
      int64_t judged_failing = 0;
      for (size_t i = 0; i < n; ++i) {
        results[i] = r3::check::JudgeObservation(cases[i], std::move(obs[i]));
        judged_failing += results[i].verdict.ok() ? 0 : 1;
      }
      const double judge_s = Seconds(j0, Clock::now());
      const auto f0 = Clock::now();
      results.clear();
      results.shrink_to_fit();
      const double free_s = Seconds(f0, Clock::now());
      judge_split = {{"cases", n}, {"failing", judged_failing},
                     {"layout_us_per_case", layout_s / n * 1e6},
                     {"judge_us_per_case", judge_s / n * 1e6},
                     {"free_us_per_case", free_s / n * 1e6}};
    }
    rows.push_back({{"mutant", *mutant ? mutant : "none"},
                    {"judge_one_thread", judge_split},
                    {"gpu_cases_per_second", rate},
                    {"failing_cases", failed},
                    {"share_of_all_pass_rate", all_pass_rate > 0 ? rate / all_pass_rate : 1.0},
                    {"wall_s", wall_s},
                    // The judge of the observations (RunCases, on the pool)
                    // and freeing the results (ReleaseResults, of which).
                    {"outside_runner_s", wall_s - t.total_s},
                    {"release_s", release_s},
                    {"timings", TimingsJson(t)}});
  }
  // How the all-pass rate scales with the host threads (the GPU's part is
  // small: the host SUT, plans, tables and the judge run on the pool).
  ordered_json by_threads = ordered_json::array();
  for (const int threads : {1, 4, 8, 16}) {
    r3::gpu::GpuOptions o;
    o.mode = r3::gpu::RankMode::kEmulated;
    o.host_threads = threads;
    r3::gpu::Runner runner(o);
    r3::check::RunCases({cases.data(), std::min(batch, cases.size())}, runner);  // warm-up
    const auto t0 = Clock::now();
    for (size_t i = 0; i < cases.size(); i += batch) {
      std::vector<r3::check::CaseResult> results =
          r3::check::RunCases({cases.data() + i, std::min(batch, cases.size() - i)}, runner);
      r3::check::ReleaseResults(results);
    }
    const double rate = cases.size() / Seconds(t0, Clock::now());
    std::printf("%-44s %8zu cases %10.1f cases/s\n",
                ("targets: gpu all-pass, runner threads " + std::to_string(threads)).c_str(),
                cases.size(), rate);
    by_threads.push_back({{"runner_threads", threads}, {"gpu_cases_per_second", rate}});
  }
  return {{"cases", cases.size()},
          {"batch", batch},
          {"all_pass_by_runner_threads", by_threads},
          {"host_single_core_cases_per_second", host_rate},
          {"host_failing_cases", host_failed},
          {"gpu_all_pass_cases_per_second", all_pass_rate},
          {"all_pass_at_least_host_single_core", all_pass_rate >= host_rate},
          {"gpu", rows}};
}

template <typename F>
double TimeMs(F&& body, int iterations, cudaStream_t stream) {
  cudaEvent_t a, b;
  Check(cudaEventCreate(&a), "event");
  Check(cudaEventCreate(&b), "event");
  body();  // warm-up
  Check(cudaEventRecord(a, stream), "record");
  for (int i = 0; i < iterations; ++i) body();
  Check(cudaEventRecord(b, stream), "record");
  Check(cudaEventSynchronize(b), "sync");
  float ms = 0;
  Check(cudaEventElapsedTime(&ms, a, b), "elapsed");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / iterations;
}

ordered_json CaptureBandwidth() {
  ordered_json rows = ordered_json::array();
  cudaStream_t s;
  Check(cudaSetDevice(0), "device");
  Check(cudaStreamCreate(&s), "stream");
  const int64_t top_k = 8;
  for (const int64_t mib : {64, 256, 1024}) {
    const int64_t out_bytes = mib << 20;
    const int64_t elems = out_bytes / 4;
    const int64_t rows_n = elems / top_k;
    int16_t* src16;
    int32_t* src32;
    int32_t* dst;
    Check(cudaMalloc(&src16, elems * 2), "malloc");
    Check(cudaMalloc(&src32, elems * 4), "malloc");
    Check(cudaMalloc(&dst, elems * 4), "malloc");
    Check(cudaMemset(src16, 1, elems * 2), "memset");
    Check(cudaMemset(src32, 1, elems * 4), "memset");
    const int iters = 20;
    const double ms16 = TimeMs(
        [&] { r3::gpu::LaunchCapture({src16, dst, rows_n, top_k, 1, 0, /*src_bytes=*/2}, s); }, iters, s);
    const double ms32 = TimeMs(
        [&] { r3::gpu::LaunchCapture({src32, dst, rows_n, top_k, 1, 0, /*src_bytes=*/4}, s); }, iters, s);
    const double msc = TimeMs(
        [&] { Check(cudaMemcpyAsync(dst, src32, out_bytes, cudaMemcpyDeviceToDevice, s), "cp"); },
        iters, s);
    auto gbs = [](double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; };
    ordered_json row = {
        {"capturer_mib", mib},
        {"capture_int16_ms", ms16},
        {"capture_int16_gbs_rw", gbs(elems * 6.0, ms16)},
        {"capture_int32_ms", ms32},
        {"capture_int32_gbs_rw", gbs(elems * 8.0, ms32)},
        {"memcpy_ms", msc},
        {"memcpy_gbs_rw", gbs(elems * 8.0, msc)},
    };
    std::printf("capture copy %5lld MiB: int16 src %.3f ms (%.0f GB/s r+w), int32 src %.3f ms "
                "(%.0f GB/s), cudaMemcpyAsync %.3f ms (%.0f GB/s)\n",
                static_cast<long long>(mib), ms16, row["capture_int16_gbs_rw"].get<double>(),
                ms32, row["capture_int32_gbs_rw"].get<double>(), msc,
                row["memcpy_gbs_rw"].get<double>());
    rows.push_back(row);
    cudaFree(src16);
    cudaFree(src32);
    cudaFree(dst);
  }
  cudaStreamDestroy(s);
  return rows;
}

// Two GPUs: vLLM's all_gatherv (one ncclBroadcast per root, grouped) with
// ragged 60/40 sizes against ncclAllGather with equal halves, same total.
ordered_json RaggedAllGather() {
  ordered_json rows = ordered_json::array();
  int devs[2] = {0, 1};
  ncclComm_t comms[2];
  Check(ncclCommInitAll(comms, 2, devs), "ncclCommInitAll");
  cudaStream_t streams[2];
  for (int d = 0; d < 2; ++d) {
    Check(cudaSetDevice(d), "device");
    Check(cudaStreamCreate(&streams[d]), "stream");
  }
  for (const int64_t mib : {64, 256, 1024}) {
    const size_t total = static_cast<size_t>(mib) << 20;
    const size_t first = (total * 6 / 10) & ~size_t{255};
    const size_t sizes[2] = {first, total - first};
    const size_t offsets[2] = {0, first};
    char* in[2];
    char* out[2];
    for (int d = 0; d < 2; ++d) {
      Check(cudaSetDevice(d), "device");
      Check(cudaMalloc(&in[d], total), "malloc");
      Check(cudaMalloc(&out[d], total), "malloc");
      Check(cudaMemset(in[d], d + 1, total), "memset");
    }
    auto ragged = [&] {
      Check(ncclGroupStart(), "group");
      for (int root = 0; root < 2; ++root) {
        for (int d = 0; d < 2; ++d) {
          Check(ncclBroadcast(in[d], out[d] + offsets[root], sizes[root], ncclInt8, root,
                              comms[d], streams[d]),
                "broadcast");
        }
      }
      Check(ncclGroupEnd(), "group");
    };
    auto equal = [&] {
      Check(ncclGroupStart(), "group");
      for (int d = 0; d < 2; ++d) {
        Check(ncclAllGather(in[d], out[d], total / 2, ncclInt8, comms[d], streams[d]), "ag");
      }
      Check(ncclGroupEnd(), "group");
    };
    auto time = [&](auto&& body) {
      body();
      for (int d = 0; d < 2; ++d) {
        Check(cudaSetDevice(d), "device");
        Check(cudaStreamSynchronize(streams[d]), "sync");
      }
      const int iters = 20;
      const auto t0 = Clock::now();
      for (int i = 0; i < iters; ++i) body();
      for (int d = 0; d < 2; ++d) {
        Check(cudaSetDevice(d), "device");
        Check(cudaStreamSynchronize(streams[d]), "sync");
      }
      return Seconds(t0, Clock::now()) * 1e3 / iters;
    };
    const double ms_ragged = time(ragged);
    const double ms_equal = time(equal);
    auto gbs = [&](double ms) { return total / (ms * 1e-3) / 1e9; };
    std::printf("all-gather %5lld MiB total on 2 GPUs: ragged broadcasts %.3f ms (%.0f GB/s), "
                "ncclAllGather %.3f ms (%.0f GB/s)\n",
                static_cast<long long>(mib), ms_ragged, gbs(ms_ragged), ms_equal,
                gbs(ms_equal));
    rows.push_back({{"total_mib", mib}, {"ragged_split", "60/40"},
                    {"ragged_broadcasts_ms", ms_ragged}, {"ragged_algbw_gbs", gbs(ms_ragged)},
                    {"allgather_ms", ms_equal}, {"allgather_algbw_gbs", gbs(ms_equal)}});
    for (int d = 0; d < 2; ++d) {
      cudaSetDevice(d);
      cudaFree(in[d]);
      cudaFree(out[d]);
    }
  }
  for (int d = 0; d < 2; ++d) ncclCommDestroy(comms[d]);
  return rows;
}

}  // namespace

// gpu_bench [OUT.json] [--capture-copy-only]: every section, or only the
// capture copy's bandwidth (a quick A/B of the copy kernels).
int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  std::string out_path = "bench/results/gpu.json";
  bool capture_copy_only = false;
  bool targets_only = false;
  size_t target_cases = 65536;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--capture-copy-only") {
      capture_copy_only = true;
    } else if (arg == "--targets-only") {
      targets_only = true;
    } else if (arg.rfind("--target-cases=", 0) == 0) {
      target_cases = std::stoul(arg.substr(15));
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "gpu_bench: unknown flag %s\n", arg.c_str());
      return 2;
    } else {
      out_path = arg;
    }
  }
  const r3::gpu::Availability gpus = r3::gpu::ProbeGpus();
  if (!gpus.ok()) {
    std::printf("gpu_bench: no GPU (%s)\n", gpus.detail.c_str());
    return 77;
  }
  int driver = 0;
  int nccl = 0;
  cudaDriverGetVersion(&driver);
  ncclGetVersion(&nccl);
  ordered_json j;
  j["machine"] = {{"gpus", gpus.devices}, {"names", gpus.detail}, {"cuda_driver", driver},
                  {"nccl", nccl},
                  {"hardware_concurrency", std::thread::hardware_concurrency()},
                  {"pool_threads", r3::UsableCores()}};
  std::printf("gpu_bench on %d GPU(s): %s\n", gpus.devices, gpus.detail.c_str());
  // First, on a GPU no runner has used yet: after the host-against-GPU
  // sections (a dozen runners' arenas allocated and freed) even
  // cudaMemcpyAsync of 64 MiB measured 11 % lower on the same binary.
  j["capture_copy"] = CaptureBandwidth();
  if (capture_copy_only) {
    std::ofstream(out_path) << j.dump(2) << "\n";
    std::printf("wrote %s\n", out_path.c_str());
    return 0;
  }

  // The sampler `r3check verify` uses, and DP2/TP1 cases (one rank per GPU).
  r3::sample::CaseSampler sampler(/*seed=*/1);
  std::vector<r3::Case> mixed, dp2;
  while (mixed.size() < 2048) mixed.push_back(sampler.Next());
  r3::sample::CaseSampler sampler2(/*seed=*/2);
  while (dp2.size() < 2048) {
    r3::Case c = sampler2.Next();
    if (c.config.dp != 2) continue;
    c.config.tp = 1;
    dp2.push_back(c);
  }
  // Seed 1's first 65536 cases: the sampler's own rate and verdicts.
  std::vector<r3::Case> many = mixed;
  while (many.size() < 65536) many.push_back(sampler.Next());
  const size_t big_batch = 4096;
  j["targets"] = ThroughputTargets(
      std::vector<r3::Case>(many.begin(),
                            many.begin() + static_cast<long>(std::min(target_cases, many.size()))),
      big_batch);
  if (targets_only) {
    std::ofstream(out_path) << j.dump(2) << "\n";
    std::printf("wrote %s\n", out_path.c_str());
    return 0;
  }
  ordered_json rate = ordered_json::array();
  {
    r3::gpu::GpuOptions o;
    o.mode = r3::gpu::RankMode::kEmulated;
    r3::gpu::Runner emulated(o);
    rate.push_back(CasesPerSecond(emulated, mixed, "verify sampler, emulated, 1 GPU"));
    rate.push_back(CasesPerSecond(emulated, many, "verify sampler, emulated, 1 GPU", big_batch));
    rate.push_back(CasesPerSecond(emulated, dp2, "DP2/TP1, emulated, 1 GPU"));
  }
  if (gpus.devices >= 2) {
    r3::gpu::GpuOptions o;
    o.mode = r3::gpu::RankMode::kAuto;
    r3::gpu::Runner nccl_runner(o);
    rate.push_back(CasesPerSecond(nccl_runner, dp2, "DP2/TP1, one rank per GPU, NCCL, 2 GPUs"));
    rate.push_back(CasesPerSecond(nccl_runner, mixed, "verify sampler, ranks spread, NCCL, 2 GPUs"));
  }
  j["checked_cases"] = rate;
  // Host and GPU on the same cases: no mutant, then every mutant the host
  // SUT honours (the GPU must show what the host shows).
  ordered_json verdicts = ordered_json::array();
  verdicts.push_back(HostAgainstGpu(many, {}, "none", big_batch));
  std::vector<r3::Case> few(many.begin(), many.begin() + 8192);
  for (const r3::sut::MutantInfo& info : r3::sut::MutantCatalogue()) {
    if (info.gpu_only || info.equivalent) continue;
    verdicts.push_back(HostAgainstGpu(few, r3::sut::MutantSet(info.id), std::string(info.name),
                                      big_batch));
  }
  j["host_against_gpu"] = verdicts;
  if (gpus.devices >= 2) j["ragged_all_gather"] = RaggedAllGather();
  std::ofstream(out_path) << j.dump(2) << "\n";
  std::printf("wrote %s\n", out_path.c_str());
  return 0;
}
