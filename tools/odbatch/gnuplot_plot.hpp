#pragma once
// Draws a chart with gnuplot (Debian's gnuplot-nox) for `odbatch stats --plot` and
// `odbatch simulate --plot`: the caller's script body and data go to a private temporary
// directory and gnuplot runs there as a child process, with a deadline.
#include <filesystem>
#include <string>

namespace odbatch::cli {

// The terminal the output file's extension asks for: .svg or .png. Throws InputError otherwise.
std::string gnuplot_terminal(const std::filesystem::path& output);

// Single-quoted gnuplot string of `text` (a quote inside is doubled, as gnuplot reads it).
std::string gnuplot_quoted(const std::string& text);

// Writes `data` as data.dat beside the script, sets the terminal and output for `output`, and runs
// `script` with gnuplot; the script names its data file as the variable `data`. Throws
// std::runtime_error when gnuplot is missing (naming the package), fails, or outlives its deadline.
void draw_with_gnuplot(const std::filesystem::path& output, const std::string& script,
                       const std::string& data);

}  // namespace odbatch::cli
