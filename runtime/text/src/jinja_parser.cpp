// Lexer and parser for the Jinja subset of chat templates. The lexer applies jinja2's whitespace
// rules as transformers configures them (trim_blocks, lstrip_blocks, {%- -%} markers, one trailing
// newline of the source dropped); the parser follows jinja2's grammar and operator precedence.
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "jinja_ast.hpp"
#include "odbatch/core/bounded_text.hpp"
#include "odbatch/text/jinja_budgets.hpp"

namespace odbatch::jinja {

JinjaError::JinjaError(Kind kind, std::string message, int line, int column)
    : JinjaError(kind, bounded_text(message, kMaxErrorTextBytes), line, column, Bounded{}) {}

JinjaError::JinjaError(Kind kind, std::string message, int line, int column, Bounded)
    : std::runtime_error(
          (kind == Kind::raised ? "chat template raised an exception: " : "chat template error: ") +
          message + " (at line " + std::to_string(line) + ", column " + std::to_string(column) +
          ")"),
      kind_(kind),
      message_(std::move(message)),
      line_(line),
      column_(column) {}

namespace detail {
namespace {

[[noreturn]] void syntax_error(const Location& at, std::string message) {
  throw JinjaError(JinjaError::Kind::syntax, std::move(message), at.line, at.column);
}

struct Token {
  enum class Type : std::uint8_t {
    text,
    variable_begin,
    variable_end,
    block_begin,
    block_end,
    name,
    string,
    integer,
    floating,
    op,
    end_of_input
  };
  Type type;
  Location location;
  std::string text;  // text data, name, decoded string, operator, or number spelling
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

class Lexer {
 public:
  explicit Lexer(std::string_view raw) : source_(normalize(raw)) {}

  std::vector<Token> tokenize() {
    bool line_starting = true;
    while (pos_ < source_.size()) {
      const std::size_t tag = find_tag(pos_);
      std::string text = source_.substr(pos_, tag - pos_);
      const Location text_location = location_of(pos_);
      if (tag == source_.size()) {
        emit_text(std::move(text), text_location);
        break;
      }
      const char kind = source_[tag + 1];
      const char sign = tag + 2 < source_.size() ? source_[tag + 2] : '\0';
      if (sign == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      } else if (sign != '+' && kind != '{') {
        // lstrip_blocks: drop spaces and tabs between the line's start and a block or comment.
        const std::size_t line_start =
            text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if ((line_start > 0 || line_starting) && line_start < text.size() &&
            text.find_first_not_of(" \t\v\f\r", line_start) == std::string::npos)
          text.resize(line_start);
      }
      emit_text(std::move(text), text_location);
      pos_ = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      if (kind == '#') {
        const std::size_t end = source_.find("#}", pos_);
        if (end == std::string::npos) syntax_error(location_of(tag), "unterminated comment");
        pos_ = end + 2;
        finish_tag(source_[end - 1] == '-' && end - 1 >= tag + 3, source_[end - 1] == '+', true);
      } else if (kind == '%' && lex_raw(tag)) {
        // {% raw %}...{% endraw %} became text.
      } else {
        lex_tag(tag, kind);
      }
      line_starting = pos_ > 0 && source_[pos_ - 1] == '\n';
    }
    tokens_.push_back({Token::Type::end_of_input, location_of(source_.size()), {}});
    return std::move(tokens_);
  }

 private:
  // jinja2 turns \r\n and \r into \n and drops one trailing newline (keep_trailing_newline=False).
  static std::string normalize(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\r') {
        out += '\n';
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      } else {
        out += raw[i];
      }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  std::size_t find_tag(std::size_t from) const {
    for (std::size_t i = source_.find('{', from); i != std::string::npos;
         i = source_.find('{', i + 1)) {
      if (i + 1 < source_.size() &&
          (source_[i + 1] == '{' || source_[i + 1] == '%' || source_[i + 1] == '#'))
        return i;
    }
    return source_.size();
  }

  Location location_of(std::size_t offset) {
    // Advance the cached line count; offsets only grow except for error reports.
    if (offset < line_offset_) {
      line_offset_ = 0;
      line_ = 1;
      line_start_ = 0;
    }
    for (; line_offset_ < offset && line_offset_ < source_.size(); ++line_offset_) {
      if (source_[line_offset_] == '\n') {
        ++line_;
        line_start_ = line_offset_ + 1;
      }
    }
    return {line_, static_cast<int>(offset - line_start_) + 1};
  }

  void emit_text(std::string text, const Location& at) {
    if (!text.empty()) tokens_.push_back({Token::Type::text, at, std::move(text)});
  }

  // After a tag: '-' strips all following whitespace; trim_blocks drops one newline after a
  // block or comment unless the tag ends with '+'.
  void finish_tag(bool strip, bool keep, bool is_block) {
    if (strip) {
      while (pos_ < source_.size() && is_space(source_[pos_])) ++pos_;
    } else if (is_block && !keep && pos_ < source_.size() && source_[pos_] == '\n') {
      ++pos_;
    }
  }

  // The name `word` at p after optional blanks: the offset after it, or npos.
  std::size_t keyword_at(std::size_t p, std::string_view word) const {
    while (p < source_.size() && is_space(source_[p])) ++p;
    if (source_.compare(p, word.size(), word) != 0) return std::string::npos;
    p += word.size();
    if (p < source_.size() &&
        (std::isalnum(static_cast<unsigned char>(source_[p])) || source_[p] == '_'))
      return std::string::npos;
    while (p < source_.size() && is_space(source_[p])) ++p;
    return p;
  }

  // {% raw %}: everything up to {% endraw %} is text, with the tags' whitespace control. Returns
  // false (consuming nothing) when the block tag at `tag` is not `raw`.
  bool lex_raw(std::size_t tag) {
    std::size_t p = keyword_at(pos_, "raw");
    if (p == std::string::npos) return false;
    if (source_.compare(p, 3, "-%}") == 0) {
      p += 3;
      while (p < source_.size() && is_space(source_[p])) ++p;
    } else if (source_.compare(p, 2, "%}") == 0) {
      p += 2;
    } else {
      syntax_error(location_of(p), "expected '%}' after 'raw'");
    }
    for (std::size_t end = source_.find("{%", p); end != std::string::npos;
         end = source_.find("{%", end + 2)) {
      std::size_t q = end + 2;
      const char sign =
          q < source_.size() && (source_[q] == '-' || source_[q] == '+') ? source_[q] : '\0';
      if (sign != '\0') ++q;
      q = keyword_at(q, "endraw");
      if (q == std::string::npos) continue;
      const char close_sign =
          q < source_.size() && (source_[q] == '-' || source_[q] == '+') ? source_[q] : '\0';
      if (close_sign != '\0') ++q;
      if (source_.compare(q, 2, "%}") != 0)
        syntax_error(location_of(q), "expected '%}' after 'endraw'");
      std::string text = source_.substr(p, end - p);
      if (sign == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      } else if (sign != '+') {
        const std::size_t line_start =
            text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if (line_start > 0 && text.find_first_not_of(" \t\v\f\r", line_start) == std::string::npos)
          text.resize(line_start);
      }
      emit_text(std::move(text), location_of(p));
      pos_ = q + 2;
      finish_tag(close_sign == '-', close_sign == '+', true);
      return true;
    }
    syntax_error(location_of(tag), "'raw' is never closed (expected 'endraw')");
  }

  void lex_tag(std::size_t tag, char kind) {
    const bool is_block = kind == '%';
    tokens_.push_back(
        {is_block ? Token::Type::block_begin : Token::Type::variable_begin, location_of(tag), {}});
    const char closer = is_block ? '%' : '}';
    // As in jinja2, `}}` closes the tag only outside brackets: `{{ {'a': {}}}` is one dict.
    std::size_t open_brackets = 0;
    for (;;) {
      while (pos_ < source_.size() && is_space(source_[pos_])) ++pos_;
      if (pos_ >= source_.size())
        syntax_error(location_of(tag),
                     is_block ? "unterminated block tag '{%'" : "unterminated expression '{{'");
      const Location at = location_of(pos_);
      const auto ends_here = [&](std::size_t p) {
        return open_brackets == 0 && p + 1 < source_.size() && source_[p] == closer &&
               source_[p + 1] == '}';
      };
      if ((source_[pos_] == '-' || source_[pos_] == '+') && ends_here(pos_ + 1)) {
        const char sign = source_[pos_];
        pos_ += 3;
        tokens_.push_back({is_block ? Token::Type::block_end : Token::Type::variable_end, at, {}});
        finish_tag(sign == '-', sign == '+', is_block);
        return;
      }
      if (ends_here(pos_)) {
        pos_ += 2;
        tokens_.push_back({is_block ? Token::Type::block_end : Token::Type::variable_end, at, {}});
        finish_tag(false, false, is_block);
        return;
      }
      lex_expression_token(at);
      const Token& lexed = tokens_.back();
      if (lexed.type == Token::Type::op) {
        if (lexed.text == "(" || lexed.text == "[" || lexed.text == "{")
          ++open_brackets;
        else if ((lexed.text == ")" || lexed.text == "]" || lexed.text == "}") && open_brackets > 0)
          --open_brackets;
      }
    }
  }

  void lex_expression_token(const Location& at) {
    const char c = source_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = pos_;
      while (end < source_.size() &&
             (std::isalnum(static_cast<unsigned char>(source_[end])) || source_[end] == '_'))
        ++end;
      tokens_.push_back({Token::Type::name, at, source_.substr(pos_, end - pos_)});
      pos_ = end;
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      lex_number(at);
      return;
    }
    if (c == '\'' || c == '"') {
      lex_string(at, c);
      return;
    }
    static constexpr std::string_view two_char_ops[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const auto op : two_char_ops) {
      if (source_.compare(pos_, 2, op) == 0) {
        tokens_.push_back({Token::Type::op, at, std::string(op)});
        pos_ += 2;
        return;
      }
    }
    if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) != std::string_view::npos) {
      tokens_.push_back({Token::Type::op, at, std::string(1, c)});
      ++pos_;
      return;
    }
    syntax_error(at, std::string("unexpected character '") + c + "'");
  }

  void lex_number(const Location& at) {
    const auto digits = [&](std::size_t p) {
      while (p < source_.size() &&
             (std::isdigit(static_cast<unsigned char>(source_[p])) || source_[p] == '_'))
        ++p;
      return p;
    };
    std::size_t end = digits(pos_);
    bool is_float = false;
    if (end + 1 < source_.size() && source_[end] == '.' &&
        std::isdigit(static_cast<unsigned char>(source_[end + 1]))) {
      is_float = true;
      end = digits(end + 1);
    }
    if (end < source_.size() && (source_[end] == 'e' || source_[end] == 'E')) {
      std::size_t p = end + 1;
      if (p < source_.size() && (source_[p] == '+' || source_[p] == '-')) ++p;
      if (p < source_.size() && std::isdigit(static_cast<unsigned char>(source_[p]))) {
        is_float = true;
        end = digits(p);
      }
    }
    std::string spelling;
    for (std::size_t i = pos_; i < end; ++i)
      if (source_[i] != '_') spelling += source_[i];
    tokens_.push_back({is_float ? Token::Type::floating : Token::Type::integer, at, spelling});
    pos_ = end;
  }

  static void append_utf8(std::string& out, char32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xc0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xe0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    }
  }

  // Python's unicode-escape decoding, as jinja2 applies it to string literals.
  void lex_string(const Location& at, char quote) {
    std::string value;
    std::size_t p = pos_ + 1;
    for (;;) {
      if (p >= source_.size()) syntax_error(at, "unterminated string literal");
      const char c = source_[p];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++p;
        continue;
      }
      if (p + 1 >= source_.size()) syntax_error(at, "unterminated string literal");
      const char e = source_[p + 1];
      p += 2;
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'v':
          value += '\v';
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case '\n':
          break;
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (p + width > source_.size())
            syntax_error(at, "truncated \\" + std::string(1, e) + " escape");
          char32_t code = 0;
          for (std::size_t k = 0; k < width; ++k) {
            const char h = source_[p + k];
            if (!std::isxdigit(static_cast<unsigned char>(h)))
              syntax_error(at, "truncated \\" + std::string(1, e) + " escape");
            code = code * 16 + static_cast<char32_t>(std::isdigit(static_cast<unsigned char>(h))
                                                         ? h - '0'
                                                         : std::tolower(h) - 'a' + 10);
          }
          p += width;
          append_utf8(value, code);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t code = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && p < source_.size() && source_[p] >= '0' && source_[p] <= '7';
                 ++k)
              code = code * 8 + static_cast<char32_t>(source_[p++] - '0');
            append_utf8(value, code);
          } else {
            value += '\\';
            value += e;
          }
      }
    }
    tokens_.push_back({Token::Type::string, at, std::move(value)});
    pos_ = p + 1;
  }

  std::string source_;
  std::size_t pos_ = 0;
  std::vector<Token> tokens_;
  std::size_t line_offset_ = 0;
  std::size_t line_start_ = 0;
  int line_ = 1;
};

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body parse_all() {
    std::string end_keyword;
    Body body = parse_body({}, end_keyword);
    return body;
  }

 private:
  const Token& current() const { return tokens_[index_]; }
  const Token& peek(std::size_t ahead = 1) const {
    return tokens_[std::min(index_ + ahead, tokens_.size() - 1)];
  }
  Token next() { return tokens_[index_++]; }
  bool at_op(std::string_view op) const {
    return current().type == Token::Type::op && current().text == op;
  }
  bool at_name(std::string_view name) const {
    return current().type == Token::Type::name && current().text == name;
  }
  static std::string describe(const Token& token) {
    switch (token.type) {
      case Token::Type::block_end:
        return "end of block '%}'";
      case Token::Type::variable_end:
        return "end of expression '}}'";
      case Token::Type::end_of_input:
        return "end of template";
      case Token::Type::string:
        return "string literal";
      case Token::Type::text:
        return "template text";
      default:
        return "'" + token.text + "'";
    }
  }
  void expect_op(std::string_view op) {
    if (!at_op(op))
      syntax_error(current().location,
                   "expected '" + std::string(op) + "', got " + describe(current()));
    ++index_;
  }
  void expect_name(std::string_view name) {
    if (!at_name(name))
      syntax_error(current().location,
                   "expected '" + std::string(name) + "', got " + describe(current()));
    ++index_;
  }
  std::string expect_identifier() {
    if (current().type != Token::Type::name)
      syntax_error(current().location, "expected a name, got " + describe(current()));
    return next().text;
  }
  void expect_block_end() {
    if (current().type != Token::Type::block_end)
      syntax_error(current().location, "expected end of block '%}', got " + describe(current()));
    ++index_;
  }

  // Parses statements until one of end_keywords opens a block tag; leaves the parser after that
  // keyword (its arguments, if any, are the caller's to read) and names it in found.
  Body parse_body(const std::vector<std::string_view>& end_keywords, std::string& found,
                  const Location* opened_at = nullptr, std::string_view opened = {}) {
    Body body;
    for (;;) {
      const Token& token = current();
      switch (token.type) {
        case Token::Type::end_of_input:
          if (!end_keywords.empty())
            syntax_error(opened_at != nullptr ? *opened_at : token.location,
                         "'" + std::string(opened) + "' is never closed (expected '" +
                             std::string(end_keywords.back()) + "')");
          return body;
        case Token::Type::text: {
          auto stmt = make_stmt(Stmt::Type::text, token.location);
          stmt->text = token.text;
          body.push_back(std::move(stmt));
          ++index_;
          break;
        }
        case Token::Type::variable_begin: {
          auto stmt = make_stmt(Stmt::Type::output, token.location);
          ++index_;
          stmt->expr = parse_tuple();
          if (current().type != Token::Type::variable_end)
            syntax_error(current().location,
                         "expected end of expression '}}', got " + describe(current()));
          ++index_;
          body.push_back(std::move(stmt));
          break;
        }
        case Token::Type::block_begin: {
          const Token& keyword = peek();
          if (keyword.type != Token::Type::name)
            syntax_error(keyword.location, "expected a statement name, got " + describe(keyword));
          for (const auto end : end_keywords) {
            if (keyword.text == end) {
              index_ += 2;
              found = keyword.text;
              return body;
            }
          }
          index_ += 2;
          body.push_back(parse_statement(keyword));
          break;
        }
        default:
          syntax_error(token.location, "unexpected " + describe(token));
      }
    }
  }

  static StmtPtr make_stmt(Stmt::Type type, const Location& at) {
    auto stmt = std::make_unique<Stmt>();
    stmt->type = type;
    stmt->location = at;
    return stmt;
  }

  StmtPtr parse_statement(const Token& keyword) {
    const NestingGuard guard(*this);
    const std::string& name = keyword.text;
    const Location at = keyword.location;
    if (name == "if") return parse_if(at);
    if (name == "for") return parse_for(at);
    if (name == "set") return parse_set(at);
    if (name == "macro") return parse_macro(at);
    if (name == "call") return parse_call_block(at);
    if (name == "filter") return parse_filter_block(at);
    if (name == "generation") {
      auto stmt = make_stmt(Stmt::Type::generation, at);
      expect_block_end();
      std::string found;
      stmt->body = parse_body({"endgeneration"}, found, &at, "generation");
      expect_block_end();
      return stmt;
    }
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) syntax_error(at, "'" + name + "' outside of a for loop");
      auto stmt =
          make_stmt(name == "break" ? Stmt::Type::loop_break : Stmt::Type::loop_continue, at);
      expect_block_end();
      return stmt;
    }
    static constexpr std::string_view closers[] = {"elif",    "else",      "endif",
                                                   "endfor",  "endset",    "endmacro",
                                                   "endcall", "endfilter", "endgeneration"};
    for (const auto closer : closers)
      if (name == closer) syntax_error(at, "unexpected '" + name + "' without its opening block");
    syntax_error(at, "unsupported statement '" + name + "'");
  }

  StmtPtr parse_if(const Location& at) {
    auto stmt = make_stmt(Stmt::Type::if_chain, at);
    ExprPtr condition = parse_tuple();
    expect_block_end();
    for (;;) {
      std::string found;
      Body body = parse_body({"elif", "else", "endif"}, found, &at, "if");
      stmt->branches.emplace_back(std::move(condition), std::move(body));
      if (found == "elif") {
        condition = parse_tuple();
        expect_block_end();
      } else if (found == "else") {
        expect_block_end();
        std::string end;
        Body else_body = parse_body({"endif"}, end, &at, "if");
        stmt->branches.emplace_back(nullptr, std::move(else_body));
        expect_block_end();
        return stmt;
      } else {
        expect_block_end();
        return stmt;
      }
    }
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> targets{expect_identifier()};
    while (at_op(",")) {
      ++index_;
      targets.push_back(expect_identifier());
    }
    return targets;
  }

  StmtPtr parse_for(const Location& at) {
    auto stmt = make_stmt(Stmt::Type::for_loop, at);
    const bool parenthesized = at_op("(");
    if (parenthesized) ++index_;
    stmt->targets = parse_targets();
    if (parenthesized) expect_op(")");
    expect_name("in");
    stmt->expr = parse_tuple(/*with_condition=*/false);
    if (at_name("if")) {
      ++index_;
      stmt->condition = parse_expression();
    }
    if (at_name("recursive"))
      syntax_error(current().location, "recursive for loops are not supported");
    expect_block_end();
    ++loop_depth_;
    std::string found;
    stmt->body = parse_body({"else", "endfor"}, found, &at, "for");
    --loop_depth_;
    if (found == "else") {
      expect_block_end();
      std::string end;
      stmt->else_body = parse_body({"endfor"}, end, &at, "for");
    }
    expect_block_end();
    return stmt;
  }

  StmtPtr parse_set(const Location& at) {
    std::vector<std::string> targets{expect_identifier()};
    std::string attribute;
    if (at_op(".")) {
      ++index_;
      attribute = expect_identifier();
    } else {
      while (at_op(",")) {
        ++index_;
        targets.push_back(expect_identifier());
      }
    }
    if (at_op("=")) {
      ++index_;
      auto stmt = make_stmt(Stmt::Type::set, at);
      stmt->targets = std::move(targets);
      stmt->attribute = std::move(attribute);
      stmt->expr = parse_tuple();
      expect_block_end();
      return stmt;
    }
    if (!attribute.empty() || targets.size() != 1)
      syntax_error(current().location, "a block set assigns exactly one name");
    auto stmt = make_stmt(Stmt::Type::set_block, at);
    stmt->targets = std::move(targets);
    while (at_op("|")) {
      ++index_;
      stmt->filters.push_back(parse_filter(nullptr));
    }
    expect_block_end();
    std::string found;
    stmt->body = parse_body({"endset"}, found, &at, "set");
    expect_block_end();
    return stmt;
  }

  std::vector<MacroParameter> parse_parameters() {
    std::vector<MacroParameter> parameters;
    expect_op("(");
    while (!at_op(")")) {
      if (!parameters.empty()) expect_op(",");
      MacroParameter parameter{expect_identifier(), nullptr};
      if (at_op("=")) {
        ++index_;
        parameter.default_value = parse_expression();
      }
      parameters.push_back(std::move(parameter));
    }
    ++index_;
    return parameters;
  }

  StmtPtr parse_macro(const Location& at) {
    auto stmt = make_stmt(Stmt::Type::macro, at);
    stmt->targets = {expect_identifier()};
    stmt->parameters = parse_parameters();
    expect_block_end();
    const int saved_depth = loop_depth_;
    loop_depth_ = 0;
    std::string found;
    stmt->body = parse_body({"endmacro"}, found, &at, "macro");
    loop_depth_ = saved_depth;
    expect_block_end();
    return stmt;
  }

  StmtPtr parse_call_block(const Location& at) {
    auto stmt = make_stmt(Stmt::Type::call_block, at);
    if (at_op("(")) stmt->parameters = parse_parameters();
    stmt->expr = parse_expression();
    if (stmt->expr->type != Expr::Type::call)
      syntax_error(stmt->expr->location, "'call' needs a macro call");
    expect_block_end();
    std::string found;
    stmt->body = parse_body({"endcall"}, found, &at, "call");
    expect_block_end();
    return stmt;
  }

  StmtPtr parse_filter_block(const Location& at) {
    auto stmt = make_stmt(Stmt::Type::filter_block, at);
    stmt->filters.push_back(parse_filter(nullptr));
    while (at_op("|")) {
      ++index_;
      stmt->filters.push_back(parse_filter(nullptr));
    }
    expect_block_end();
    std::string found;
    stmt->body = parse_body({"endfilter"}, found, &at, "filter");
    expect_block_end();
    return stmt;
  }

  // ---- expressions, in jinja2's precedence order ----

  static ExprPtr make_expr(Expr::Type type, const Location& at) {
    auto expr = std::make_unique<Expr>();
    expr->type = type;
    expr->location = at;
    return expr;
  }

  // A finished node: its depth from its children's, refused past kMaxNesting. Chains that the
  // parser builds in a loop (`1 + 1 + ...`, `x|a|b...`, `x.a.b...`) grow the tree one level per
  // link without recursing here, so the tree is measured rather than the parser's recursion.
  static ExprPtr measured(ExprPtr expr) {
    int below = 0;
    const auto deepest = [&below](const ExprPtr& child) {
      if (child) below = std::max(below, child->depth);
    };
    for (const auto& operand : expr->operands) deepest(operand);
    for (const auto& argument : expr->arguments.positional) deepest(argument);
    for (const auto& [name, argument] : expr->arguments.keyword) deepest(argument);
    expr->depth = below + 1;
    if (expr->depth > kMaxNesting) too_deep(expr->location);
    return expr;
  }

  [[noreturn]] static void too_deep(const Location& at) {
    syntax_error(at, "nested more than " + std::to_string(kMaxNesting) + " levels deep");
  }

  bool at_expression_end() const {
    const auto t = current().type;
    return t == Token::Type::block_end || t == Token::Type::variable_end ||
           t == Token::Type::end_of_input || at_op(")") || at_op("]") || at_op("}") || at_op("=");
  }

  // A bare tuple (`a, b`) where jinja2 allows one: output, set values, for iterables.
  ExprPtr parse_tuple(bool with_condition = true) {
    const Location at = current().location;
    ExprPtr first = with_condition ? parse_expression() : parse_or();
    if (!at_op(",")) return first;
    auto tuple = make_expr(Expr::Type::tuple, at);
    tuple->operands.push_back(std::move(first));
    while (at_op(",")) {
      ++index_;
      if (at_expression_end() || at_name("if")) break;
      tuple->operands.push_back(with_condition ? parse_expression() : parse_or());
    }
    return measured(std::move(tuple));
  }

  ExprPtr parse_expression() {
    ExprPtr value = parse_or();
    while (at_name("if")) {
      const Location at = current().location;
      ++index_;
      auto conditional = make_expr(Expr::Type::conditional, at);
      conditional->operands.push_back(std::move(value));
      conditional->operands.push_back(parse_or());
      if (at_name("else")) {
        ++index_;
        const NestingGuard guard(*this);  // `a if b else c if d else ...` recurses here
        conditional->operands.push_back(parse_expression());
      } else {
        conditional->operands.push_back(nullptr);
      }
      value = measured(std::move(conditional));
    }
    return value;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, const Location& at) {
    auto expr = make_expr(Expr::Type::binary, at);
    expr->name = std::move(op);
    expr->operands.push_back(std::move(left));
    expr->operands.push_back(std::move(right));
    return measured(std::move(expr));
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (at_name("or")) {
      const Location at = next().location;
      left = binary("or", std::move(left), parse_and(), at);
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (at_name("and")) {
      const Location at = next().location;
      left = binary("and", std::move(left), parse_not(), at);
    }
    return left;
  }

  ExprPtr parse_not() {
    if (at_name("not")) {
      const NestingGuard guard(*this);
      const Location at = next().location;
      auto expr = make_expr(Expr::Type::unary, at);
      expr->name = "not";
      expr->operands.push_back(parse_not());
      return measured(std::move(expr));
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const Location at = current().location;
    ExprPtr first = parse_math1();
    ExprPtr compare;
    for (;;) {
      std::string op;
      if (current().type == Token::Type::op &&
          (current().text == "==" || current().text == "!=" || current().text == "<" ||
           current().text == ">" || current().text == "<=" || current().text == ">=")) {
        op = next().text;
      } else if (at_name("in")) {
        ++index_;
        op = "in";
      } else if (at_name("not") && peek().type == Token::Type::name && peek().text == "in") {
        index_ += 2;
        op = "not in";
      } else {
        break;
      }
      if (!compare) {
        compare = make_expr(Expr::Type::compare, at);
        compare->operands.push_back(std::move(first));
      }
      compare->ops.push_back(std::move(op));
      compare->operands.push_back(parse_math1());
    }
    return compare ? measured(std::move(compare)) : std::move(first);
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (at_op("+") || at_op("-")) {
      const Token op = next();
      left = binary(op.text, std::move(left), parse_concat(), op.location);
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (at_op("~")) {
      const Location at = next().location;
      left = binary("~", std::move(left), parse_math2(), at);
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
      const Token op = next();
      left = binary(op.text, std::move(left), parse_pow(), op.location);
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (at_op("**")) {
      const Location at = next().location;
      left = binary("**", std::move(left), parse_unary(true), at);
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    const NestingGuard guard(*this);
    ExprPtr node;
    if (at_op("-") || at_op("+")) {
      const Token op = next();
      node = make_expr(Expr::Type::unary, op.location);
      node->name = op.text;
      node->operands.push_back(parse_unary(false));
      node = measured(std::move(node));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_chain(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& token = current();
    const Location at = token.location;
    switch (token.type) {
      case Token::Type::name: {
        const std::string& name = token.text;
        auto expr = make_expr(Expr::Type::literal, at);
        if (name == "true" || name == "True") {
          expr->value = Value(true);
        } else if (name == "false" || name == "False") {
          expr->value = Value(false);
        } else if (name == "none" || name == "None") {
          expr->value = Value::none();
        } else {
          expr->type = Expr::Type::name;
          expr->name = name;
        }
        ++index_;
        return expr;
      }
      case Token::Type::string: {
        // Adjacent string literals concatenate, as in Python.
        std::string text;
        while (current().type == Token::Type::string) text += next().text;
        auto expr = make_expr(Expr::Type::literal, at);
        expr->value = Value(std::move(text));
        return expr;
      }
      case Token::Type::integer:
      case Token::Type::floating: {
        auto expr = make_expr(Expr::Type::literal, at);
        if (token.type == Token::Type::integer) {
          errno = 0;
          const long long parsed = std::strtoll(token.text.c_str(), nullptr, 10);
          if (errno == ERANGE) syntax_error(at, "integer literal beyond 64 bits: " + token.text);
          expr->value = Value(static_cast<std::int64_t>(parsed));
        } else {
          // Python parses 1e400 as inf and keeps subnormals, as strtod does.
          expr->value = Value(std::strtod(token.text.c_str(), nullptr));
        }
        ++index_;
        return expr;
      }
      case Token::Type::op:
        if (token.text == "(") {
          ++index_;
          if (at_op(")")) {
            ++index_;
            return make_expr(Expr::Type::tuple, at);
          }
          ExprPtr inner = parse_tuple();
          expect_op(")");
          return inner;
        }
        if (token.text == "[") {
          ++index_;
          auto list = make_expr(Expr::Type::list, at);
          while (!at_op("]")) {
            if (!list->operands.empty()) {
              expect_op(",");
              if (at_op("]")) break;
            }
            list->operands.push_back(parse_expression());
          }
          ++index_;
          return measured(std::move(list));
        }
        if (token.text == "{") {
          ++index_;
          auto dict = make_expr(Expr::Type::dict, at);
          while (!at_op("}")) {
            if (!dict->operands.empty()) {
              expect_op(",");
              if (at_op("}")) break;
            }
            dict->operands.push_back(parse_expression());
            expect_op(":");
            dict->operands.push_back(parse_expression());
          }
          ++index_;
          return measured(std::move(dict));
        }
        break;
      default:
        break;
    }
    syntax_error(at, "unexpected " + describe(token) + " in an expression");
  }

  ExprPtr parse_postfix(ExprPtr node) {
    for (;;) {
      const Location at = current().location;
      if (at_op(".")) {
        ++index_;
        auto attribute = make_expr(Expr::Type::attribute, at);
        if (current().type == Token::Type::integer) {
          // `x.0` is x[0] in jinja2.
          attribute->type = Expr::Type::subscript;
          attribute->operands.push_back(std::move(node));
          auto index = make_expr(Expr::Type::literal, current().location);
          index->value = Value(static_cast<std::int64_t>(std::stoll(next().text)));
          attribute->operands.push_back(std::move(index));
        } else {
          attribute->name = expect_identifier();
          attribute->operands.push_back(std::move(node));
        }
        node = measured(std::move(attribute));
      } else if (at_op("[")) {
        ++index_;
        node = parse_subscript(std::move(node), at);
      } else if (at_op("(")) {
        auto call = make_expr(Expr::Type::call, at);
        call->operands.push_back(std::move(node));
        call->arguments = parse_call_arguments();
        node = measured(std::move(call));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr object, const Location& at) {
    std::array<ExprPtr, 3> parts;
    bool is_slice = false;
    for (std::size_t part = 0; part < 3; ++part) {
      if (!at_op(":") && !at_op("]")) parts[part] = parse_expression();
      if (at_op(":") && part < 2) {
        is_slice = true;
        ++index_;
        continue;
      }
      break;
    }
    expect_op("]");
    if (!is_slice) {
      if (!parts[0]) syntax_error(at, "empty subscript");
      auto subscript = make_expr(Expr::Type::subscript, at);
      subscript->operands.push_back(std::move(object));
      subscript->operands.push_back(std::move(parts[0]));
      return measured(std::move(subscript));
    }
    auto slice = make_expr(Expr::Type::slice, at);
    slice->operands.push_back(std::move(object));
    for (auto& part : parts) slice->operands.push_back(std::move(part));
    return measured(std::move(slice));
  }

  ArgumentExprs parse_call_arguments() {
    expect_op("(");
    ArgumentExprs arguments;
    bool first = true;
    while (!at_op(")")) {
      if (!first) {
        expect_op(",");
        if (at_op(")")) break;
      }
      first = false;
      if (current().type == Token::Type::name && peek().type == Token::Type::op &&
          peek().text == "=") {
        std::string name = next().text;
        ++index_;
        arguments.keyword.emplace_back(std::move(name), parse_expression());
      } else {
        if (!arguments.keyword.empty())
          syntax_error(current().location, "positional argument after a keyword argument");
        arguments.positional.push_back(parse_expression());
      }
    }
    ++index_;
    return arguments;
  }

  ExprPtr parse_filter(ExprPtr operand) {
    const Location at = current().location;
    std::string name = expect_identifier();
    while (at_op(".")) {
      ++index_;
      name += "." + expect_identifier();
    }
    auto filter = make_expr(Expr::Type::filter, at);
    filter->filter = find_filter(name);
    if (filter->filter == nullptr) syntax_error(at, "no filter named '" + name + "'");
    filter->name = std::move(name);
    filter->operands.push_back(std::move(operand));
    if (at_op("(")) filter->arguments = parse_call_arguments();
    return measured(std::move(filter));
  }

  ExprPtr parse_filter_chain(ExprPtr node) {
    for (;;) {
      if (at_op("|")) {
        ++index_;
        node = parse_filter(std::move(node));
      } else if (at_name("is")) {
        const Location at = next().location;
        auto test = make_expr(Expr::Type::test, at);
        if (at_name("not")) {
          ++index_;
          test->negated = true;
        }
        const Location name_at = current().location;
        test->name = expect_identifier();
        test->test = find_test(test->name);
        if (test->test == nullptr) syntax_error(name_at, "no test named '" + test->name + "'");
        test->operands.push_back(std::move(node));
        if (at_op("(")) {
          test->arguments = parse_call_arguments();
        } else if ((current().type == Token::Type::name || current().type == Token::Type::string ||
                    current().type == Token::Type::integer ||
                    current().type == Token::Type::floating || at_op("[") || at_op("{")) &&
                   !at_name("else") && !at_name("or") && !at_name("and") && !at_name("if") &&
                   !at_name("in") && !at_name("not")) {
          if (at_name("is"))
            syntax_error(current().location, "you cannot chain multiple tests with is");
          test->arguments.positional.push_back(parse_postfix(parse_primary()));
        }
        node = measured(std::move(test));
      } else {
        return node;
      }
    }
  }

  // Bounds the parser's (and so the renderer's) recursion: deeper nesting than any real template
  // has is an error rather than a stack overflow.
  struct NestingGuard {
    explicit NestingGuard(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting) too_deep(parser_.current().location);
    }
    ~NestingGuard() { --parser_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;
    Parser& parser_;
  };

  std::vector<Token> tokens_;
  std::size_t index_ = 0;
  int loop_depth_ = 0;
  int nesting_ = 0;
};

}  // namespace

Body parse_template(std::string_view source) {
  if (source.size() > kMaxTemplateBytes)
    syntax_error({}, "the template has " + std::to_string(source.size()) + " bytes, more than " +
                         std::to_string(kMaxTemplateBytes >> 10) + " KiB");
  return Parser(Lexer(source).tokenize()).parse_all();
}

}  // namespace detail
}  // namespace odbatch::jinja
