#pragma once
// What one chat template may cost. Templates come from model repositories on the internet, so a
// hostile or broken one must end in a JinjaError naming the budget it exceeded: never a crash, a
// hang or the process's memory. Each bound lies far above what real chat templates need;
// docs/chat-templates.md gives the measurements behind them.
#include <cstddef>

namespace odbatch::jinja {

// Parsing: statements inside statements, and the levels of an expression's tree (`1 + 1 + ...`,
// `not not ...`, `x|a|b...`, `x.a.b...` included). Evaluating and destroying the tree recurse
// once per level, so this bounds the stack they take. Real templates nest fewer than 10.
inline constexpr int kMaxNesting = 200;

// Errors: the message of a JinjaError, cut there (with the total noted) since rejection reasons
// go into the ledger and the log once per record.
inline constexpr std::size_t kMaxErrorTextBytes = 1024;

}  // namespace odbatch::jinja
