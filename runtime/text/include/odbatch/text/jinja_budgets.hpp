#pragma once
// What one chat template may cost. Templates come from model repositories on the internet, so a
// hostile or broken one must end in a JinjaError naming the budget it exceeded: never a crash, a
// hang or the process's memory. Each bound lies far above what real chat templates need;
// docs/chat-templates.md gives the measurements behind them.
#include <cstddef>
#include <cstdint>

namespace odbatch::jinja {

// Parsing: the template's text. Its tokens and tree take tens of times its size; real chat
// templates have at most some 10 KiB.
inline constexpr std::size_t kMaxTemplateBytes = std::size_t{1} << 20;

// Parsing: statements inside statements, and the levels of an expression's tree (`1 + 1 + ...`,
// `not not ...`, `x|a|b...`, `x.a.b...` included). Evaluating and destroying the tree recurse
// once per level, so this bounds the stack they take. Real templates nest fewer than 10.
inline constexpr int kMaxNesting = 200;

// Rendering: macros calling macros (jinja2 stops at Python's recursion limit).
inline constexpr int kMaxMacroDepth = 200;

// Rendering: the renderer's own recursion, statements and expressions inside macro calls all
// counted, so that macros nested kMaxMacroDepth deep, each holding deep statements, still fit in
// a thread's stack.
inline constexpr int kMaxRenderNesting = 2000;

// Rendering: lists, dicts and namespaces inside each other, as far as printing, tojson and
// comparisons walk them (a namespace may even hold itself). Chat data nests fewer than 10 levels
// (records are held to 64 by the conversation parser).
inline constexpr int kMaxValueDepth = 200;

// Rendering: the rendered text, and every string a template computes. A list counts
// sizeof(Value) bytes per item, so it is held to the same memory (about 1.7 million items).
inline constexpr std::size_t kMaxTextBytes = std::size_t{64} << 20;

// Rendering: the bytes of all strings and lists one render creates, summed, so that many strings
// under kMaxTextBytes cannot pile up either.
inline constexpr std::uint64_t kMaxRenderBytes = std::uint64_t{512} << 20;

// Rendering: the work one render may do, in steps: a statement, an expression, an item a filter
// or an operator walks, kBytesPerStep bytes it scans or copies, and kFrameSteps for a loop
// iteration or a macro call (each makes a scope and sets a dozen variables).
inline constexpr std::uint64_t kMaxRenderSteps = 2'000'000;
inline constexpr std::size_t kBytesPerStep = 4096;
inline constexpr std::uint64_t kFrameSteps = 10;

// Rendering: range() items (jinja2's sandbox limit).
inline constexpr std::int64_t kMaxRangeItems = 100'000;

// Errors: the message of a JinjaError, cut there (with the total noted) since rejection reasons
// go into the ledger and the log once per record.
inline constexpr std::size_t kMaxErrorTextBytes = 1024;

}  // namespace odbatch::jinja
