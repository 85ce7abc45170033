// Round latency over loopback, side by side in one run: a whole round (readiness on the store,
// the Gloo exchange and the plan) with ranks that use the process collective, the same round with
// the in-process collective, a bare Gloo allgather of the same bytes, and the plan alone. Ranks are
// threads of this process, each with its own store connections and Gloo pairs as separate processes
// would have. Also the bytes each rank sends per round.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/dist/gloo_collective.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/dist/local_launcher.hpp"
#include "odbatch/dist/process_group_collective.hpp"
#include "odbatch/dist/round_coordinator.hpp"
#include "odbatch/proto_msgs/proposal_codec.hpp"
#include "odbatch/sim/length_distribution.hpp"
#include "odbatch/store/tcp_store_client.hpp"
#include "odbatch/store/tcp_store_server.hpp"

namespace odbatch::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kWindow = 1024;
constexpr std::uint32_t kTokenBudget = 16384;
constexpr LognormalLengths kLengths{600.0, 0.5};
const std::vector<std::uint32_t> kDefaultWorldSizes = {2, 4, 8};
constexpr int kWarmupRounds = 20;
constexpr auto kDeadline = std::chrono::seconds(60);

BatchingConfig batching_config() {
  BatchingConfig config;
  config.token_budget = kTokenBudget;
  config.max_seq_len = kTokenBudget;
  config.window = kWindow;
  return config;
}

// A full window of fresh samples: what an active rank proposes in the steady state.
Proposal window_proposal(std::uint32_t rank, std::uint64_t round, const BatchingConfig& config) {
  SplitMix64 rng(0xbe7c0000 + rank * 1000003 + round);
  Proposal p;
  p.round = round;
  p.state = RankState::active;
  p.entered = kWindow;
  p.samples.resize(kWindow);
  for (auto& s : p.samples) {
    s.tokens = draw_length(kLengths, rng, config.max_seq_len);
    s.labels = std::max(1u, s.tokens / 2);
  }
  return p;
}

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto rank =
      static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

Report summary(const std::vector<double>& microseconds) {
  return Report{{"median_us", rounded(percentile(microseconds, 0.5), 1)},
                {"p99_us", rounded(percentile(microseconds, 0.99), 1)}};
}

// Runs every variant's `round(rank, k)` on every rank's thread, the variants one after the other
// in each round (so that the machine's noise falls on all of them alike), for warm-up plus
// `rounds` rounds; per variant, the measured rounds' durations, every rank's. A barrier starts
// each variant's round on every rank together, so a round's time is not the previous one's
// stragglers'.
using RoundFunction = std::function<void(std::uint32_t, int)>;
std::vector<std::vector<double>> time_rounds(std::uint32_t world, int rounds,
                                             const std::vector<RoundFunction>& variants) {
  std::barrier start(static_cast<std::ptrdiff_t>(world));
  std::vector<std::vector<std::vector<double>>> per_rank(
      world, std::vector<std::vector<double>>(variants.size()));
  std::vector<std::exception_ptr> errors(world);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        for (int k = 0; k < kWarmupRounds + rounds; ++k)
          for (std::size_t v = 0; v < variants.size(); ++v) {
            start.arrive_and_wait();
            const auto before = Clock::now();
            variants[v](r, k);
            if (k >= kWarmupRounds)
              per_rank[r][v].push_back(
                  std::chrono::duration<double, std::micro>(Clock::now() - before).count());
          }
      } catch (...) {
        errors[r] = std::current_exception();
        start.arrive_and_drop();
      }
    });
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  std::vector<std::vector<double>> all(variants.size());
  for (const auto& rank : per_rank)
    for (std::size_t v = 0; v < variants.size(); ++v)
      all[v].insert(all[v].end(), rank[v].begin(), rank[v].end());
  return all;
}

// Builds every rank's T concurrently (each waits for the others while joining).
template <typename T, typename Make>
std::vector<std::unique_ptr<T>> build_all(std::uint32_t world, Make make) {
  std::vector<std::unique_ptr<T>> members(world);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < world; ++r) threads.emplace_back([&, r] { members[r] = make(r); });
  for (auto& thread : threads) thread.join();
  return members;
}

DistEnv rank_env(std::uint32_t rank, std::uint32_t world, std::uint16_t port) {
  DistEnv env;
  env.rank = rank;
  env.world_size = world;
  env.local_rank = rank;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  env.store_port = port;  // the store rank 0 hosts
  env.run_id = "bench";
  env.gloo_hostname = "127.0.0.1";
  return env;
}

Report measure(std::uint32_t world, int rounds) {
  const auto config = batching_config();
  std::vector<std::vector<Proposal>> proposals(world);
  for (std::uint32_t r = 0; r < world; ++r)
    for (int k = 0; k < kWarmupRounds + rounds; ++k)
      proposals[r].push_back(window_proposal(r, static_cast<std::uint64_t>(k), config));

  // The process collective: store on rank 0, Gloo pairs, a coordinator per rank.
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  auto groups = build_all<ProcessGroupCollective>(world, [&](std::uint32_t r) {
    return std::make_unique<ProcessGroupCollective>(rank_env(r, world, port), DistributedConfig{});
  });
  std::vector<std::unique_ptr<RoundCoordinator>> process_coordinators;
  for (auto& g : groups)
    process_coordinators.push_back(std::make_unique<RoundCoordinator>(*g, config, kDeadline));

  // The in-process collective, same proposals.
  const auto inproc_group = InprocGroup::create(world);
  std::vector<std::unique_ptr<Collective>> members;
  std::vector<std::unique_ptr<RoundCoordinator>> inproc_coordinators;
  for (std::uint32_t r = 0; r < world; ++r) {
    members.push_back(inproc_group->member(r));
    inproc_coordinators.push_back(
        std::make_unique<RoundCoordinator>(*members[r], config, kDeadline));
  }

  // A bare Gloo allgather of the same encoded proposals, on a mesh of its own.
  std::vector<std::vector<std::vector<std::byte>>> frames(world);
  std::vector<double> bytes_per_round;
  for (std::uint32_t r = 0; r < world; ++r)
    for (auto& p : proposals[r]) {
      p.fingerprint = fingerprint(config, world);
      frames[r].push_back(encode_proposal(p));
      bytes_per_round.push_back(static_cast<double>(frames[r].back().size()));
    }
  // Every rank's proposals of each round, for the plan alone.
  std::vector<std::vector<Proposal>> round_proposals(proposals[0].size());
  for (std::size_t k = 0; k < round_proposals.size(); ++k)
    for (std::uint32_t r = 0; r < world; ++r) round_proposals[k].push_back(proposals[r][k]);
  TcpStoreServerOptions server_options;
  TcpStoreServer server(server_options);
  auto gloo_stores = build_all<TcpStoreClient>(world, [&](std::uint32_t) {
    TcpStoreClientOptions client;
    client.port = server.port();
    return std::make_unique<TcpStoreClient>(client);
  });
  auto meshes = build_all<GlooCollective>(world, [&](std::uint32_t r) {
    return std::make_unique<GlooCollective>(*gloo_stores[r], r, world, GlooOptions{});
  });
  const auto timed = time_rounds(
      world, rounds,
      {[&](std::uint32_t r, int k) {
         process_coordinators[r]->run_round(proposals[r][static_cast<std::size_t>(k)]);
       },
       [&](std::uint32_t r, int k) {
         inproc_coordinators[r]->run_round(proposals[r][static_cast<std::size_t>(k)]);
       },
       [&](std::uint32_t r, int k) {
         meshes[r]->allgather(frames[r][static_cast<std::size_t>(k)], Clock::now() + kDeadline);
       },
       [&](std::uint32_t, int k) {
         plan_round(round_proposals[static_cast<std::size_t>(k)], config, 0,
                    static_cast<std::uint64_t>(k));
       }});
  const auto& process_us = timed[0];
  const auto& inproc_us = timed[1];
  const auto& bare_us = timed[2];
  const auto& plan_us = timed[3];

  // The finish barrier of the process group runs as its members go.
  std::vector<std::thread> leaving;
  for (auto& g : groups) leaving.emplace_back([&g] { g.reset(); });
  for (auto& t : leaving) t.join();

  const double process_median = percentile(process_us, 0.5);
  const double bare_median = percentile(bare_us, 0.5);
  double bytes_sum = 0;
  for (double b : bytes_per_round) bytes_sum += b;
  return Report{
      {"world_size", world},
      {"rounds", rounds},
      {"round_process_gloo", summary(process_us)},
      {"round_inproc", summary(inproc_us)},
      {"bare_gloo_allgather", summary(bare_us)},
      {"plan_alone", summary(plan_us)},
      {"process_round_without_plan_over_bare_allgather",
       rounded((process_median - percentile(plan_us, 0.5)) / bare_median, 2)},
      {"process_round_over_bare_allgather", rounded(process_median / bare_median, 2)},
      {"process_round_p99_over_bare_allgather_p99",
       rounded(percentile(process_us, 0.99) / percentile(bare_us, 0.99), 2)},
      {"bytes_per_rank_per_round",
       {{"average", rounded(bytes_sum / static_cast<double>(bytes_per_round.size()), 1)},
        {"largest_sent", *std::max_element(bytes_per_round.begin(), bytes_per_round.end())},
        {"bound_full_window_and_deferred",
         max_encoded_proposal_size(static_cast<std::size_t>(config.window) *
                                   (config.max_defer_rounds + 1))},
        // The reference's fixed int64 vector of 2 + 2 x window entries.
        {"reference_fixed_vector", 8 * (2 + 2 * std::size_t{config.window})}}}};
}

int run(int rounds, const std::vector<std::uint32_t>& world_sizes, const std::string& out_path) {
  Report report;
  report["benchmark"] = "round_latency";
  report["transport"] = "loopback TCP; ranks are threads, each with its own connections";
  report["window_samples_per_rank"] = kWindow;
  report["token_budget"] = kTokenBudget;
  report["lengths"] = {{"distribution", "lognormal"}, {"mean", kLengths.mean}, {"cv", kLengths.cv}};
  Report worlds = Report::array();
  for (const auto world : world_sizes) worlds.push_back(measure(world, rounds));
  report["world_sizes"] = std::move(worlds);
  emit_report(report, out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  std::string out_path;
  int rounds = 300;
  std::vector<std::uint32_t> world_sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--world" && i + 1 < argc) {
      world_sizes.push_back(static_cast<std::uint32_t>(std::max(2, std::stoi(argv[++i]))));
    } else {
      std::cerr << "usage: " << argv[0] << " [--rounds N] [--world W]... [--out FILE]\n";
      return 2;
    }
  }
  try {
    if (world_sizes.empty()) world_sizes = odbatch::bench::kDefaultWorldSizes;
    return odbatch::bench::run(rounds, world_sizes, out_path);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
