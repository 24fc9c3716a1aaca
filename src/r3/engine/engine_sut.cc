#include "r3/engine/engine_sut.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "r3/case/case_format.h"
#include "r3/case/checked_math.h"
#include "r3/engine/internal/subprocess.h"
#include "r3/engine/protocol.h"
#include "r3/sut/sut.h"

namespace r3::engine {
namespace {

constexpr std::array<AdapterInfo, 4> kAdapters = {{
    {"vllm", "--sut vllm:PATH   PATH: a vLLM checkout, its routed_experts_capturer.py, or 'installed'",
     "Python 3 with torch (Debian: python3-torch; --engine-python or R3_PYTHON picks the "
     "interpreter); --engine-launch torchrun for GPUs"},
    {"sglang",
     "--sut sglang:PATH PATH: an SGLang checkout, its routed-experts capturer file, or 'installed'",
     "Python 3 with torch, as for vllm; layouts without SP: naive dispatch (DP attention) and "
     "internal dispatch at tp 1 (DeepEP); chunked_prefill_size drawn per case"},
    {"vllm-ascend",
     "--sut vllm-ascend:PATH PATH: a vllm-ascend checkout or its routed-experts capture patch; "
     "--engine-base PATH: the vLLM capturer it patches",
     "Python 3 with torch, as for vllm; layouts by moe_comm (allgather, alltoall, mc2), drawn "
     "per case"},
    {"exec", "--sut exec:CMD    CMD: any adapter command speaking protocol 1 (docs/engines.md)",
     "whatever CMD needs; run through /bin/sh -c"},
}};


struct DtypeInfo {
  std::string_view name;
  int64_t max_id;
};

constexpr std::array<DtypeInfo, 8> kDtypes = {{
    {"uint8", 255},
    {"int8", 127},
    {"int16", 32767},
    {"uint16", 65535},
    {"int32", 2147483647},
    {"uint32", 4294967295},
    {"int64", 9223372036854775807},
    {"uint64", 9223372036854775807},  // every int64 id fits
}};

// The engine reports what it did, not which of vLLM's branches it took, so
// the branch a report shows is read off the facts: an exception, a call to
// the TP all-gather, or the batch size the spec's branches test.
sut::Branch InferBranch(const Case& c, const sut::Observation& obs, const RankReply& r) {
  if (r.error) return sut::Branch::kError;
  if (r.tp_gather) return sut::Branch::kSpTpGather;
  if (c.config.dp == 1) return sut::Branch::kNoDp;
  const auto d = static_cast<size_t>(r.dp);
  if (r.n == CheckedSum(c.step.padded)) return sut::Branch::kNaiveDp;
  if (r.n == c.step.padded[d]) return sut::Branch::kLocal;
  if (obs.local_sizes && r.n == CheckedSum(*obs.local_sizes)) return sut::Branch::kEpSpShards;
  return sut::Branch::kOther;
}

// "vllm sizing: FusedMoEExpertsMonolithic (modular_kernel.py, sha256 1a2b3c4d5e6f)".
std::string SizingLabel(const Hello& hello) {
  if (!hello.sizing) return "";
  const SizingSource& s = *hello.sizing;
  const std::string what = s.kind == "sink"            ? "RoutedExpertsSink"
                           : s.kind == "device-buffer" ? "its capture device buffer"
                                                       : "FusedMoEExpertsMonolithic";
  return hello.engine + " sizing: " + what + " (" +
         std::filesystem::path(s.source).filename().string() + ", sha256 " + s.sha256.substr(0, 12) +
         ")";
}

// `sizing` is SizingLabel(hello): empty when the engine loaded no sizing
// code. A case whose ranks report replay_rows is judged against the engine's
// buffers; one that reports none against the built-in --policy.
sut::Observation ToObservation(const Case& c, const sut::DispatchPlan& plan,
                               const sut::SutOptions& options, const CaseReply& reply,
                               size_t index, const std::string& sizing,
                               bool sizing_is_capture_buffer) {
  sut::Observation obs = sut::ObserveDispatch(c, options, plan, sut::Capturer::kEngine);
  const std::string at = "cases[" + std::to_string(index) + "]";
  const bool engine_sizing = !reply.ranks.empty() && reply.ranks[0].replay_rows.has_value();
  if (engine_sizing) {
    if (sizing.empty()) {
      throw ProtocolError(at + ".ranks[0].replay_rows: reported, but the hello named no sizing "
                               "code (\"sizing\": null)");
    }
    obs.policy = sizing;
    obs.replay_rows = std::numeric_limits<int64_t>::max();
  }
  if (reply.buffer_dtype.empty()) {
    // No buffer, so no dtype to judge; the ranks' errors say why.
    obs.snapshot_dtype = "none";
    obs.snapshot_max_id = std::numeric_limits<int64_t>::max();
  } else {
    const DtypeInfo* dtype = nullptr;
    for (const DtypeInfo& d : kDtypes) {
      if (d.name == reply.buffer_dtype) dtype = &d;
    }
    if (dtype == nullptr) {
      throw ProtocolError(at + ".buffer_dtype: unknown dtype '" + reply.buffer_dtype + "'");
    }
    obs.snapshot_dtype = std::string(dtype->name);
    obs.snapshot_max_id = dtype->max_id;
    // SGLang's device buffer is both: the buffer its sizing made is the one
    // capture writes (of the host cache's dtype, which the adapter checks).
    if (engine_sizing && sizing_is_capture_buffer) {
      obs.replay_dtype = obs.snapshot_dtype;
      obs.replay_max_id = obs.snapshot_max_id;
    }
  }
  for (size_t i = 0; i < obs.ranks.size(); ++i) {
    sut::RankObservation& r = obs.ranks[i];
    const RankReply& e = reply.ranks[i];
    if (e.n != r.n) {
      throw ProtocolError(at + ".ranks[" + std::to_string(i) + "].n: the adapter handed capture " +
                          std::to_string(e.n) + " rows, the request had " + std::to_string(r.n));
    }
    r.branch = InferBranch(c, obs, e);
    r.error = e.error.value_or("");
    r.captured = e.captured;
    r.stray_rows = CheckedAdd(e.stray, e.undecodable);
    if (engine_sizing) {
      r.replay_rows = *e.replay_rows;
      r.replay_error = e.replay_error.value_or("");
      r.kernel_slice_rows = e.kernel_slice_rows.value_or(-1);
      obs.replay_rows = std::min(obs.replay_rows, r.replay_rows);
    }
  }
  return obs;
}

class Engine : public sut::Producer {
 public:
  Engine(const EngineSpec& spec, const sut::SutOptions& options)
      : Producer(options), spec_(spec), process_(spec.argv, spec.exit_grace_ms, spec.fork_server) {
    Guard([&] {
      hello_ = ParseHello(Ask(HelloRequest(), "hello"));
    });
    std::cerr << "r3check: engine " << spec_.kind << ": " << hello_.engine << " capture from "
              << hello_.source << " (sha256 " << hello_.sha256 << ", version "
              << hello_.engine_version << ", " << hello_.interface << ", " << hello_.device
              << " x" << hello_.world_size << ", collectives " << hello_.backend
              << (hello_.device_map.empty() ? "" : ", device map " + hello_.device_map) << ")\n";
    if (!hello_.dtype_map.empty()) {
      std::cerr << "r3check: engine " << spec_.kind << ": this torch has no unsigned dtypes ("
                << hello_.dtype_map << " stand in): a buffer the engine makes as uint16 is "
                   "judged as int32, so invariant 6 can pass here where torch >= 2.3 fails\n";
    }
    if (hello_.sizing) {
      std::cerr << "r3check: engine " << spec_.kind << ": " << hello_.engine << " sizing from "
                << hello_.sizing->source << " (sha256 " << hello_.sizing->sha256 << ", "
                << hello_.sizing->kind << ", " << hello_.sizing->interface << ")\n";
    }
  }

  ~Engine() override {
    if (hello_.world_size > 1 && cases_run_ > 0) {
      // Under torchrun, say how many cases had real TP collectives (the others
      // had T > nproc and ran emulated on process 0).
      std::cerr << "r3check: engine " << spec_.kind << ": " << real_collective_cases_ << " of "
                << cases_run_ << " case(s) ran with real TP collectives over " << hello_.world_size
                << " processes, the rest emulated\n";
    }
    if (!broken_) {
      try {
        (void)process_.WriteLine(ByeRequest(), 1000);  // stopping either way
      } catch (const internal::SubprocessError&) {
        // Stopping anyway.
      }
    }
  }

  std::vector<sut::Observation> Observe(std::span<const Case> cases) override {
    const sut::SutOptions& options = this->options();
    std::vector<sut::DispatchPlan> plans;
    plans.reserve(cases.size());
    const LayoutDomain domain = Domain();
    for (const Case& c : cases) {
      CheckSize(c);
      if (const FieldError e = OutsideDomain(domain, c, hello_.engine); !e.field.empty()) {
        throw sut::ExternalSutError("case outside the engine's layouts: " + e.field + ": " + e.message);
      }
      plans.push_back(sut::PlanDispatch(c, options.mutants));
      if (!plans.back().error.empty()) throw std::runtime_error(plans.back().error);
    }
    std::vector<sut::Observation> out;
    out.reserve(cases.size());
    size_t begin = 0;
    while (begin < cases.size()) {
      size_t end = begin;
      int64_t ranks = 0;
      while (end < cases.size() && end - begin < kMaxCasesPerRequest &&
             (end == begin || ranks + cases[end].config.dp * cases[end].config.tp <=
                                  kMaxRanksPerRequest)) {
        ranks += cases[end].config.dp * cases[end].config.tp;
        ++end;
      }
      const auto batch = cases.subspan(begin, end - begin);
      const auto batch_plans = std::span<const sut::DispatchPlan>(plans).subspan(begin, end - begin);
      std::vector<CaseReply> replies;
      const std::string sizing = engine::SizingLabel(hello_);
      Guard(
          [&] {
            const int64_t id = ++next_id_;
            replies = ParseRunReply(
                Ask(RunRequest(id, batch, batch_plans), "run " + std::to_string(id)), id, batch);
            for (size_t i = 0; i < batch.size(); ++i) {
              out.push_back(
                  ToObservation(batch[i], batch_plans[i], options, replies[i], i, sizing,
                                hello_.sizing && hello_.sizing->kind == "device-buffer"));
              if (replies[i].collective == "real") ++real_collective_cases_;
              ++cases_run_;
            }
          },
          batch, &options);
      begin = end;
    }
    return out;
  }

  std::string Label() const override {
    return spec_.sut + " (sha256 " + hello_.sha256.substr(0, 12) + ")";
  }

  std::string Id() const override { return hello_.engine + "-engine"; }

  LayoutDomain Domain() const override {
    if (hello_.engine == "sglang") {
      return {.internal_dispatch = true, .internal_dispatch_tp1_only = true,
              .sequence_parallel = false, .chunked_prefill = true, .vllm_findings = false};
    }
    if (hello_.engine == "vllm-ascend") {
      // Its comm types replace vLLM's dispatch and SP (moe_comm).
      return {.internal_dispatch = false, .vllm_findings = false, .vllm_dispatch = false,
              .ascend_comm = true};
    }
    return {};
  }

  std::string SizingLabel() const override { return engine::SizingLabel(hello_); }
  std::string EngineVersion() const override { return hello_.engine_version; }
  std::string Interface() const override { return hello_.interface; }

 private:
  static void CheckSize(const Case& c) {
    const int64_t ranks = CheckedMul(c.config.dp, c.config.tp);
    if (ranks > kMaxEngineRanks) {
      throw sut::ExternalSutError("case too large for an engine SUT: " + std::to_string(ranks) +
                                  " ranks (limit " + std::to_string(kMaxEngineRanks) + ")");
    }
    const int64_t rows = CheckedMul(c.config.dp, c.config.max_num_batched_tokens);
    if (rows > kMaxEngineRowsPerRank) {
      throw sut::ExternalSutError(
          "case too large for an engine SUT: dp * max_num_batched_tokens = " +
          std::to_string(rows) + " rows (limit " + std::to_string(kMaxEngineRowsPerRank) + ")");
    }
  }

  // The request, then its answer. An adapter that exits closes its input
  // and its output: whichever pipe notices first, the error says it exited.
  std::string Ask(const std::string& request, const std::string& what) {
    const bool written = process_.WriteLine(request, spec_.timeout_ms);
    std::optional<std::string> line =
        process_.ReadLine(spec_.timeout_ms, ReplyLineCap(request.size()));
    if (!line) {
      throw internal::SubprocessError("exited before answering " + what + " (" +
                                      process_.StatusAfterExit(5000) + ")");
    }
    if (!written) {
      throw internal::SubprocessError("answered " + what + " without reading the request (" +
                                      process_.Status() + ")");
    }
    return *line;
  }

  // Any failure of the adapter ends the command with one line naming it.
  // During a run (`batch` given) the line also names the file its cases were
  // saved in, and a second line says how to replay and minimize them.
  template <typename F>
  void Guard(F&& f, std::span<const Case> batch = {}, const sut::SutOptions* options = nullptr) {
    if (broken_) throw sut::ExternalSutError("engine " + spec_.sut + ": stopped after an error");
    std::string what;
    try {
      f();
      return;
    } catch (const internal::SubprocessError& e) {
      what = e.what();
    } catch (const ProtocolError& e) {
      what = e.what();
    }
    broken_ = true;
    throw sut::ExternalSutError("engine " + spec_.sut + ": " + what +
                                (batch.empty() ? "" : SaveRun(batch, *options)));
  }

  // The flags after `r3check check` that rerun these cases the same way.
  std::string ReplayFlags(const sut::SutOptions& options) const {
    std::string flags = " --sut " + ShellWord(spec_.sut) + spec_.replay_flags;
    if (options.policy != sut::Policy::kPr50874) {
      flags += " --policy " + std::string(sut::PolicyName(options.policy));
    }
    for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
      if (options.mutants.has(m.id)) flags += " --mutant " + std::string(m.name);
    }
    return flags;
  }

  // Saves the cases of a failed run in $TMPDIR (else /tmp): one file, or a
  // folder of NNN.r3case for a run of several. Returns the text that ends
  // the error: where they are, and a second line with the replay and
  // minimize commands.
  std::string SaveRun(std::span<const Case> batch, const sut::SutOptions& options) const {
    namespace fs = std::filesystem;
    const char* tmp = std::getenv("TMPDIR");
    const fs::path dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    const std::string stem = "r3check-engine-crash-" + std::to_string(getpid());
    const std::string ext = batch.size() == 1 ? ".r3case" : "";
    std::error_code ec;
    fs::path target = dir / (stem + ext);
    for (int i = 2; fs::exists(target, ec) || ec; ++i) target = dir / (stem + "-" + std::to_string(i) + ext);
    fs::path first = target;
    const auto write = [](const fs::path& path, const std::string& text) {
      std::ofstream out(path);
      out << text;
      out.close();
      if (!out) throw std::runtime_error(path.string() + ": cannot write");
    };
    try {
      if (batch.size() == 1) {
        write(target, PrintCase(batch[0]));
      } else {
        if (!fs::create_directory(target, ec)) {
          throw std::runtime_error(target.string() + ": " + (ec ? ec.message() : "exists"));
        }
        for (size_t i = 0; i < batch.size(); ++i) {
          char name[32];
          std::snprintf(name, sizeof name, "%03zu.r3case", i + 1);
          write(target / name, PrintCase(batch[i]));
        }
        first = target / "001.r3case";
      }
    } catch (const std::exception& e) {
      return "; its case(s) could not be saved ($TMPDIR or /tmp): " + std::string(e.what());
    }
    const std::string flags = ReplayFlags(options);
    const std::string file = ShellWord(first.string());
    return (batch.size() == 1
                ? "; the case it was running is saved in " + first.string()
                : "; the " + std::to_string(batch.size()) + " cases of that run are saved in " +
                      target.string() + "/ (001.r3case is the first)") +
           "\nr3check: replay: r3check check" + flags + " " + file + "; minimize: r3check minimize" +
           flags + " " + file;
  }

  EngineSpec spec_;
  internal::Subprocess process_;
  Hello hello_;
  int64_t next_id_ = 0;
  int64_t real_collective_cases_ = 0;
  int64_t cases_run_ = 0;
  bool broken_ = false;
};

}  // namespace

// One shell word: quoted unless it is plain.
std::string ShellWord(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_-+=./:@,%") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (const char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

namespace {

std::string DefaultPython() {
  if (const char* env = std::getenv("R3_PYTHON"); env != nullptr && *env != '\0') return env;
  // Debian's python3-torch imports only from Debian's interpreter.
  std::error_code ec;
  if (std::filesystem::exists("/usr/bin/python3", ec)) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

std::string AdapterPython(const LaunchOptions& launch) {
  return launch.python.empty() ? DefaultPython() : launch.python;
}

std::span<const AdapterInfo> AdapterCatalogue() { return kAdapters; }

bool IsEngineSut(std::string_view sut) {
  return sut.starts_with("vllm:") || sut.starts_with("sglang:") ||
         sut.starts_with("vllm-ascend:") || sut.starts_with("exec:");
}

EngineSpec ResolveEngine(const std::string& sut, const LaunchOptions& launch) {
  EngineSpec spec;
  spec.sut = sut;
  spec.timeout_ms = launch.timeout_ms;
  const LaunchOptions defaults;
  if (!launch.python.empty()) spec.replay_flags += " --engine-python " + ShellWord(launch.python);
  if (launch.launch != defaults.launch) spec.replay_flags += " --engine-launch " + ShellWord(launch.launch);
  if (launch.nproc != defaults.nproc) spec.replay_flags += " --nproc " + std::to_string(launch.nproc);
  for (const std::string& arg : launch.launch_args) {
    spec.replay_flags += " " + ShellWord("--engine-launch-arg=" + arg);
  }
  if (launch.device != defaults.device) spec.replay_flags += " --engine-device " + ShellWord(launch.device);
  if (launch.timeout_ms != defaults.timeout_ms) {
    char timeout[32];
    std::snprintf(timeout, sizeof timeout, "%g", static_cast<double>(launch.timeout_ms) / 1000);
    spec.replay_flags += std::string(" --engine-timeout ") + timeout;
  }
  if (launch.launch != "none" && launch.launch != "torchrun") {
    throw std::invalid_argument("--engine-launch: '" + launch.launch + "' is not none | torchrun");
  }
  if (launch.device != "cpu" && launch.device != "cuda") {
    throw std::invalid_argument("--engine-device: '" + launch.device + "' is not cpu | cuda");
  }
  if (sut.starts_with("exec:")) {
    spec.kind = "exec";
    const std::string command = sut.substr(5);
    if (command.find_first_not_of(" \t") == std::string::npos) {
      throw std::invalid_argument("--sut exec:CMD: the command is empty");
    }
    if (launch.launch != "none") {
      throw std::invalid_argument(
          "--engine-launch: applies to vllm:PATH; with exec:CMD put the launcher in CMD");
    }
    if (!launch.sizing.empty()) {
      throw std::invalid_argument(
          "--engine-sizing: applies to vllm:PATH; with exec:CMD give the file to the adapter in CMD");
    }
    spec.argv = {"/bin/sh", "-c", command};
    return spec;
  }
  const size_t colon = sut.find(':');
  const std::string kind = colon == std::string::npos ? "" : sut.substr(0, colon);
  if (kind != "vllm" && kind != "sglang" && kind != "vllm-ascend") {
    throw std::invalid_argument("--sut: '" + sut + "' is not an engine SUT");
  }
  spec.kind = kind;
  const std::string engine = kind == "vllm" ? "vLLM" : kind == "sglang" ? "SGLang" : "vllm-ascend";
  const std::string what =
      kind == "vllm"     ? "a vLLM checkout, routed_experts_capturer.py, or 'installed'"
      : kind == "sglang" ? "an SGLang checkout, its routed_experts.py or "
                           "routed_experts_capturer.py, or 'installed'"
                         : "a vllm-ascend checkout or its patch_routed_experts_capture.py, or "
                           "'installed'";
  std::string source = sut.substr(colon + 1);
  // ~/x as a shell would expand it (the shell leaves vllm:~/x alone).
  if (const char* home = std::getenv("HOME");
      home != nullptr && *home != '\0' && (source == "~" || source.starts_with("~/"))) {
    source = home + source.substr(1);
  }
  if (source.empty()) {
    throw std::invalid_argument("--sut " + kind + ":PATH: PATH is empty (" + what + ")");
  }
  std::error_code ec;
  if (source != "installed") {
    if (!std::filesystem::exists(source, ec)) {
      throw std::invalid_argument("--sut " + kind + ":PATH: no such file or directory: " + source);
    }
    source = std::filesystem::absolute(source, ec).lexically_normal().string();
  }
  std::string sizing;
  if (!launch.sizing.empty()) {
    if (kind != "vllm") {
      throw std::invalid_argument("--engine-sizing: applies to vllm:PATH (" + engine +
                                  "'s sizing is in its capture file)");
    }
    if (!std::filesystem::exists(launch.sizing, ec)) {
      throw std::invalid_argument("--engine-sizing: no such file: " + launch.sizing);
    }
    if (!std::filesystem::is_regular_file(launch.sizing, ec)) {
      throw std::invalid_argument("--engine-sizing: not a file: " + launch.sizing +
                                  " (the .py that holds vLLM's sizing code)");
    }
    sizing = std::filesystem::absolute(launch.sizing, ec).lexically_normal().string();
    spec.replay_flags += " --engine-sizing " + ShellWord(sizing);
  }
  std::string base;
  if (kind == "vllm-ascend") {
    if (launch.base.empty()) {
      throw std::invalid_argument(
          "--sut vllm-ascend:PATH needs --engine-base PATH: the vLLM capturer its patch is "
          "applied over (a vLLM checkout, its routed_experts_capturer.py, or 'installed')");
    }
    base = launch.base;
    if (base != "installed") {
      if (!std::filesystem::exists(base, ec)) {
        throw std::invalid_argument("--engine-base: no such file or directory: " + base);
      }
      base = std::filesystem::absolute(base, ec).lexically_normal().string();
    }
    spec.replay_flags += " --engine-base " + ShellWord(base);
  } else if (!launch.base.empty()) {
    throw std::invalid_argument("--engine-base: applies to vllm-ascend:PATH (the vLLM capturer "
                                "its patch is applied over)");
  }
  const std::string script =
      (std::filesystem::path(launch.adapters_dir) / kind / "r3_adapter.py").string();
  if (!std::filesystem::exists(script, ec)) {
    throw std::invalid_argument("--sut " + kind + ": the adapter " + script +
                                " is missing (set R3_ENGINES_DIR to the engines/ folder)");
  }
  spec.argv = {AdapterPython(launch)};
  if (launch.launch == "torchrun") {
    if (launch.nproc < 1) throw std::invalid_argument("--nproc: must be at least 1");
    // The underscore spelling: torch 1.13's torchrun knows no other, 2.x takes both.
    spec.argv.insert(spec.argv.end(), {"-m", "torch.distributed.run", "--nproc_per_node",
                                       std::to_string(launch.nproc)});
    spec.argv.insert(spec.argv.end(), launch.launch_args.begin(), launch.launch_args.end());
    spec.exit_grace_ms = 15000;
  } else if (!launch.launch_args.empty()) {
    throw std::invalid_argument("--engine-launch-arg: needs --engine-launch torchrun");
  } else {
    // One local Python process: the fork server (vLLM's) can fork it.
    if (kind == "vllm") spec.fork_server = launch.fork_server;
  }
  spec.argv.insert(spec.argv.end(), {script, "--source", source, "--device", launch.device});
  if (!sizing.empty()) spec.argv.insert(spec.argv.end(), {"--sizing", sizing});
  if (!base.empty()) spec.argv.insert(spec.argv.end(), {"--base", base});
  // Under torchrun the first process of this node speaks the protocol, whatever
  // global rank a multi-node rendezvous gives it (other nodes run without it).
  if (launch.launch == "torchrun") spec.argv.push_back("--protocol-node");
  return spec;
}

std::shared_ptr<sut::Producer> StartEngine(const EngineSpec& spec,
                                           const sut::SutOptions& options) {
  try {
    return std::make_shared<Engine>(spec, options);
  } catch (const internal::SubprocessError& e) {
    throw sut::ExternalSutError("engine " + spec.sut + ": " + e.what());
  }
}

}  // namespace r3::engine
