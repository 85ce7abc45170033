#pragma once
// What `odbatch stress` reads in a rank's stderr: the error `odbatch run` reported, and whether
// it names the cause (the failed rank, the store, the injected fault) rather than a symptom.
#include <optional>
#include <string>
#include <vector>

namespace odbatch::cli {

// The lines in which `odbatch run` said why it failed (those beginning "odbatch run: ", other than
// a saved state's notice), one per line; empty when it said nothing.
std::string run_error_lines(const std::string& stderr_text);

// Whether `text` has `phrase` not followed by another digit ("rank 1" is not in "rank 12").
bool mentions(const std::string& text, const std::string& phrase);

// Why the error in `stderr_text` does not name its cause: none when its error lines mention every
// phrase of `cause` (a rank, "store", a setting's name, a round); otherwise what is missing.
std::optional<std::string> unnamed_cause(const std::string& stderr_text,
                                         const std::vector<std::string>& cause);

}  // namespace odbatch::cli
