#pragma once
// One call of a user stage, as the stage workers make it: its verdict, or an exception it throws,
// becomes a rejection named "<stage>:<reason>" whose detail starts with the record's location;
// a StageContractError goes on up (it fails the epoch, naming the stage).
#include <optional>
#include <string>

#include "odbatch/core/rejection.hpp"
#include "odbatch/stage/stage.hpp"

namespace odbatch::actors {

// `detail` cut to a bounded length (whole UTF-8 characters), saying so.
std::string bounded_detail(std::string detail);

// The rejection a verdict makes: "<stage>:<reason>", or "<stage>:invalid_reason" naming the
// reason given when it is not a valid reason name.
Rejection stage_rejection(const std::string& stage, SampleId id, const std::string& where,
                          const StageReject& verdict);

template <class Call>
std::optional<Rejection> call_stage(const std::string& stage, SampleId id, const std::string& where,
                                    Call&& call) {
  try {
    const StageVerdict verdict = call();
    if (!verdict) return std::nullopt;
    return stage_rejection(stage, id, where, *verdict);
  } catch (const StageContractError&) {
    throw;
  } catch (const std::exception& e) {
    return Rejection{id, stage + ":exception", where + ": " + bounded_detail(e.what())};
  } catch (...) {
    return Rejection{id, stage + ":exception", where + ": an exception of unknown type"};
  }
}

}  // namespace odbatch::actors
