#include <doctest/doctest.h>

#include <algorithm>

#include "odbatch/core/ledger.hpp"
#include "odbatch/core/lockstep.hpp"

using namespace odbatch;

namespace {

LockstepScenario small_scenario() {
  LockstepScenario s;
  s.config.token_budget = 100;
  s.config.max_seq_len = 400;
  s.config.window = 4;
  SampleId id = 0;
  const std::vector<std::vector<std::uint32_t>> lengths{
      {50, 30, 20, 80, 10, 10, 60}, {40, 40, 90}, {}, {25, 25, 25, 25, 0, 150}};
  for (const auto& shard : lengths) {
    auto& out = s.shards.emplace_back();
    for (auto t : shard) out.push_back({id++, t, t / 2, 0});
  }
  return s;
}

bool has_finding(const AuditReport& report, AuditFinding::Kind kind) {
  return std::any_of(report.findings.begin(), report.findings.end(),
                     [&](const AuditFinding& f) { return f.kind == kind; });
}

struct AuditedRun {
  LockstepScenario scenario = small_scenario();
  LockstepResult result = run_lockstep(scenario);
  AuditReport audit() const {
    return audit_epoch(result.expected_ids, result.ledgers, scenario.config);
  }
};

EmittedStep& first_real_step(std::vector<RankLedger>& ledgers, std::size_t rank) {
  auto& steps = ledgers[rank].steps;
  return *std::find_if(steps.begin(), steps.end(), [](const EmittedStep& s) { return !s.idle(); });
}

}  // namespace

TEST_CASE("an honest run passes the audit") {
  AuditedRun run;
  REQUIRE(run.result.finished);
  const auto report = run.audit();
  INFO(report.summary());
  CHECK(report.ok());
  CHECK(report.expected == 16);
  CHECK(report.rejected == 1);  // the zero-length sample
  CHECK(report.emitted == 15);
}

TEST_CASE("the audit catches a rank given one step fewer") {
  AuditedRun run;
  run.result.ledgers[1].steps.pop_back();
  const auto report = run.audit();
  CHECK_FALSE(report.ok());
  CHECK(has_finding(report, AuditFinding::Kind::step_count_mismatch));
}

TEST_CASE("the audit catches a dropped sample") {
  AuditedRun run;
  auto& step = first_real_step(run.result.ledgers, 0);
  step.samples.pop_back();
  const auto report = run.audit();
  CHECK(has_finding(report, AuditFinding::Kind::missing));
  CHECK(has_finding(report, AuditFinding::Kind::totals_mismatch));
}

TEST_CASE("the audit catches a duplicated, an unknown and a doubly accounted sample") {
  AuditedRun run;
  auto& step = first_real_step(run.result.ledgers, 0);
  SUBCASE("duplicate") {
    step.samples.push_back(step.samples.front());
    CHECK(has_finding(run.audit(), AuditFinding::Kind::duplicated));
  }
  SUBCASE("unknown") {
    step.samples.front().id = 999;
    const auto report = run.audit();
    CHECK(has_finding(report, AuditFinding::Kind::unknown));
    CHECK(has_finding(report, AuditFinding::Kind::missing));
  }
  SUBCASE("emitted and rejected") {
    run.result.ledgers[0].rejected.push_back({step.samples.front().id, "no_labels", ""});
    CHECK(has_finding(run.audit(), AuditFinding::Kind::duplicated));
  }
}

TEST_CASE("the audit catches budget violations, but not flagged singletons") {
  AuditedRun run;
  auto& step = first_real_step(run.result.ledgers, 0);
  step.samples.front().tokens = 101;
  auto report = run.audit();
  if (step.samples.size() == 1) {
    CHECK(has_finding(report, AuditFinding::Kind::over_budget));
    step.over_budget = true;
    report = run.audit();
    CHECK_FALSE(has_finding(report, AuditFinding::Kind::over_budget));
  } else {
    CHECK(has_finding(report, AuditFinding::Kind::over_budget));
  }
}

TEST_CASE("the audit catches disagreeing totals and loss scales") {
  AuditedRun run;
  SUBCASE("totals") {
    run.result.ledgers[2].steps[0].totals.labels += 1;
    CHECK(has_finding(run.audit(), AuditFinding::Kind::totals_mismatch));
  }
  SUBCASE("loss scale") {
    first_real_step(run.result.ledgers, 0).loss_scale *= 1.5;
    CHECK(has_finding(run.audit(), AuditFinding::Kind::loss_scale_mismatch));
  }
}

TEST_CASE("an epoch cut at a departure: the ids not reached are counted, duplicates still found") {
  AuditedRun run;
  REQUIRE(run.result.finished);
  std::size_t steps = run.result.ledgers[0].steps.size();
  REQUIRE(steps > 1);
  for (auto& ledger : run.result.ledgers) ledger.steps.resize(steps - 1);
  const auto whole = audit_epoch(run.result.expected_ids, run.result.ledgers, run.scenario.config);
  CHECK(has_finding(whole, AuditFinding::Kind::missing));
  const auto cut = audit_epoch(run.result.expected_ids, run.result.ledgers, run.scenario.config,
                               AuditScope::until_departure);
  INFO(cut.summary());
  CHECK(cut.ok());
  CHECK(cut.not_reached > 0);
  CHECK(cut.emitted + cut.rejected + cut.not_reached == cut.expected);
  CHECK(cut.summary().find("not reached (the ranks departed)") != std::string::npos);
  auto& step = first_real_step(run.result.ledgers, 0);
  step.samples.push_back(step.samples.front());
  CHECK(has_finding(audit_epoch(run.result.expected_ids, run.result.ledgers, run.scenario.config,
                                AuditScope::until_departure),
                    AuditFinding::Kind::duplicated));
}
