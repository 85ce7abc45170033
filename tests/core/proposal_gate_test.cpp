// The proposal gate opens a round only once it is admitted, primed (the first round) and the
// previous round's batches are queued, never while a plan is awaited or after the epoch's end,
// whatever the order in which the stages report.
#include "odbatch/core/proposal_gate.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>

namespace odbatch {
namespace {

TEST_CASE("the first round opens once admitted and primed, in either order") {
  std::array<int, 2> order{0, 1};
  do {
    ProposalGate gate(0, false);
    for (const int event : order) {
      CHECK_FALSE(gate.ready());
      if (event == 0) gate.admitted(0);
      if (event == 1) gate.primed();
    }
    CHECK(gate.ready());
    CHECK(gate.round() == 0);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST_CASE("a round waits for its plan, then for the previous round's batches") {
  ProposalGate gate(3, true);  // a resumed epoch's first round
  gate.admitted(3);
  REQUIRE(gate.ready());
  gate.proposed();
  CHECK_FALSE(gate.ready());
  gate.admitted(4);  // the next round's admission overlaps the planning
  CHECK_FALSE(gate.ready());
  gate.planned(false);
  CHECK(gate.round() == 4);
  CHECK_FALSE(gate.ready());  // round 3's batches are not all queued yet
  gate.emitted();
  CHECK(gate.ready());
}

TEST_CASE("a round not yet admitted waits even with everything else in place") {
  ProposalGate gate(0, true);
  gate.admitted(0);
  gate.proposed();
  gate.planned(false);
  gate.emitted();
  CHECK_FALSE(gate.ready());  // round 1 still admitting
  gate.admitted(1);
  CHECK(gate.ready());
}

TEST_CASE("nothing is proposed after the plan that ends the epoch") {
  ProposalGate gate(0, true);
  gate.admitted(0);
  gate.proposed();
  gate.planned(true);
  gate.emitted();
  gate.admitted(1);
  CHECK_FALSE(gate.ready());
}

}  // namespace
}  // namespace odbatch
