// cuckoo — create, fill, query and inspect cuckoo filter files from the command line.
//
//   cuckoo create FILTER --capacity N [--fpr E | --bits F] [--bucket-size B] [--semi-sort] [--seed
//   S] cuckoo add    FILTER [FILE...]     keys: one per line (stdin when no FILE or FILE is -)
//   cuckoo query  FILTER [FILE...]     prints the keys that may be in the set (--absent: the
//   others) cuckoo remove FILTER [FILE...] cuckoo info   FILTER
//
// Exit statuses: 0 success (query: some key selected), 1 query selected nothing, 2 error (bad
// arguments, unreadable or damaged files, bad input), 3 add stopped because the filter is full.
//
// A key is the bytes of a line without its '\n' (an empty line is the empty key), or with --u64 a
// decimal 64-bit unsigned integer (hashed as the integer, like filter.insert(std::uint64_t)).
// Commands that change the filter write it back with Filter::save (atomic) only when they succeed,
// or, for add, when the filter fills up; on any error the file is left as it was.
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cuckoo/cuckoo.hpp"

namespace {

enum ExitStatus : int { kSuccess = 0, kNothingSelected = 1, kError = 2, kFilterFull = 3 };

/// Bad input data (not a bad file or argument): reported like any other error.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- Reading keys ------------------------------------------------------------------------------

/// One input (a file, or stdin for "-"), read in large blocks and split at '\n'.
class LineReader {
 public:
  explicit LineReader(const std::string& name) : name_(name == "-" ? "(stdin)" : name) {
    if (name == "-") {
      fd_ = cuckoo::io::FileDescriptor(::dup(STDIN_FILENO));
      if (fd_.get() < 0) throw std::system_error(errno, std::generic_category(), "stdin");
    } else {
      fd_ = cuckoo::io::open_for_reading(name);
      (void)cuckoo::io::regular_file_size(fd_.get(), name);  // refuses a directory now
    }
    buffer_.resize(kBlockBytes);
  }

  /// The next line, valid until the next call; false at the end of the input.
  bool next(std::string_view& line) {
    for (;;) {
      if (const void* newline = std::memchr(buffer_.data() + begin_, '\n', end_ - begin_)) {
        const auto at =
            static_cast<std::size_t>(static_cast<const char*>(newline) - buffer_.data());
        line = std::string_view(buffer_.data() + begin_, at - begin_);
        begin_ = at + 1;
        ++line_number_;
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        line = std::string_view(buffer_.data() + begin_, end_ - begin_);  // no final newline
        begin_ = end_;
        ++line_number_;
        return true;
      }
      refill();
    }
  }

  const std::string& name() const noexcept { return name_; }
  std::uint64_t line_number() const noexcept { return line_number_; }
  std::uint64_t bytes_consumed() const noexcept { return bytes_read_ - (end_ - begin_); }

 private:
  static constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

  void refill() {
    // Keep the partial line, make room (a line longer than the buffer grows it), read more.
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buffer_.size() - end_ < kBlockBytes / 2) buffer_.resize(buffer_.size() * 2);
    const std::size_t n = cuckoo::io::read_fully(
        fd_.get(),
        std::span(reinterpret_cast<std::byte*>(buffer_.data()) + end_, buffer_.size() - end_)
            .first(std::min(kBlockBytes, buffer_.size() - end_)),
        name_);
    if (n == 0) eof_ = true;
    end_ += n;
    bytes_read_ += n;
  }

  std::string name_;
  cuckoo::io::FileDescriptor fd_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  std::uint64_t bytes_read_ = 0, line_number_ = 0;
  bool eof_ = false;
};

/// A progress bar on stderr, drawn only when stderr is a terminal.
class Progress {
 public:
  explicit Progress(const std::vector<std::string>& inputs)
      : enabled_(::isatty(STDERR_FILENO) == 1) {
    if (!enabled_) return;
    for (const auto& input : inputs) {
      std::error_code error;
      const auto size = input == "-" ? 0 : std::filesystem::file_size(input, error);
      if (input == "-" || error) return;  // unknown total: count keys only
      total_bytes_ += size;
    }
    sized_ = true;
  }
  ~Progress() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }

  void update(std::uint64_t keys, std::uint64_t bytes) {
    if (!enabled_ || (keys & 0xFFFF) != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    if (sized_ && total_bytes_ > 0) {
      const double fraction = std::min(1.0, static_cast<double>(bytes) / total_bytes_);
      const int filled = static_cast<int>(fraction * 30);
      fmt::print(stderr, "\r[{:#<{}}{:<{}}] {:3.0f}%  {} keys", "", filled, "", 30 - filled,
                 fraction * 100, keys);
    } else {
      fmt::print(stderr, "\r{} keys", keys);
    }
    std::fflush(stderr);
  }

 private:
  bool enabled_;
  bool sized_ = false;
  bool drawn_ = false;
  std::uint64_t total_bytes_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

std::uint64_t parse_u64(std::string_view text, const LineReader& reader) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw InputError(fmt::format("{}:{}: not a 64-bit unsigned integer: '{}'", reader.name(),
                                 reader.line_number(), text.substr(0, 80)));
  }
  return value;
}

/// Calls visit(key, text) for every key of every input, in order, until it returns false;
/// returns false if it was stopped. `key` is a std::string_view or, with --u64, a std::uint64_t.
template <class Visit>
bool for_each_key(const std::vector<std::string>& inputs, bool u64, Visit&& visit,
                  std::string* stopped_at = nullptr) {
  Progress progress(inputs);
  std::uint64_t keys = 0, bytes_done = 0;
  for (const std::string& input : inputs) {
    LineReader reader(input);
    std::string_view line;
    while (reader.next(line)) {
      const bool go_on = u64 ? visit(parse_u64(line, reader), line) : visit(line, line);
      if (!go_on) {
        if (stopped_at != nullptr)
          *stopped_at = fmt::format("{}:{}", reader.name(), reader.line_number());
        return false;
      }
      progress.update(++keys, bytes_done + reader.bytes_consumed());
    }
    bytes_done += reader.bytes_consumed();
  }
  return true;
}

/// stdout, written in large blocks.
class Output {
 public:
  ~Output() { flush(); }
  void line(std::string_view text) {
    buffer_.append(text);
    buffer_.push_back('\n');
    if (buffer_.size() >= (std::size_t{1} << 20)) flush();
  }
  void flush() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size()) {
      throw std::system_error(errno, std::generic_category(), "cannot write to stdout");
    }
    buffer_.clear();
  }

 private:
  std::string buffer_;
};

// ---- Subcommands -------------------------------------------------------------------------------

struct CreateOptions {
  std::string filter;
  std::size_t capacity = 0;
  std::optional<double> fpr;
  std::optional<unsigned> bits;
  unsigned bucket_size = cuckoo::defaults::kBucketSize;
  bool semi_sort = false;
  std::uint64_t seed = cuckoo::defaults::kSeed;
  unsigned max_kicks = cuckoo::defaults::kMaxKicks;
  bool force = false;
};

int create(const CreateOptions& options) {
  if (!options.force && std::filesystem::exists(options.filter)) {
    throw std::runtime_error(options.filter + " exists (use --force to replace it)");
  }
  cuckoo::Config config{.capacity = options.capacity,
                        .bucket_size = options.bucket_size,
                        .max_kicks = options.max_kicks,
                        .seed = options.seed,
                        .semi_sort = options.semi_sort};
  if (options.fpr) config.target_fpr = *options.fpr;
  if (options.bits) config.fingerprint_bits = *options.bits;
  const cuckoo::Filter filter{config};
  filter.save(options.filter);
  fmt::print("created {}: capacity {}, {}-bit fingerprints, {} buckets of {}, {} bytes\n",
             options.filter, filter.capacity(), filter.fingerprint_bits(), filter.bucket_count(),
             filter.bucket_size(), filter.memory_bytes());
  return kSuccess;
}

struct KeyOptions {
  std::string filter;
  std::vector<std::string> inputs;
  bool u64 = false;
  std::vector<std::string> inputs_or_stdin() const {
    return inputs.empty() ? std::vector<std::string>{"-"} : inputs;
  }
};

int add(const KeyOptions& options) {
  cuckoo::Filter filter = cuckoo::Filter::load(options.filter);
  std::uint64_t added = 0;
  std::string stopped_at, refused_key;
  const bool finished = filter.visit([&](auto& f) {
    return for_each_key(
        options.inputs_or_stdin(), options.u64,
        [&](const auto& key, std::string_view text) {
          if (f.insert(key)) {
            ++added;
            return true;
          }
          refused_key = text.substr(0, 80);
          return false;
        },
        &stopped_at);
  });
  filter.save(options.filter);  // also when full: every accepted key is kept
  if (!finished) {
    fmt::print(stderr,
               "cuckoo: {} is full: added {} keys, 1 did not fit ('{}' at {}); stopped there, the "
               "rest of the input was not read. The filter now holds {} items (load {:.1f}%).\n",
               options.filter, added, refused_key, stopped_at, filter.size(),
               100 * filter.load_factor());
    return kFilterFull;
  }
  fmt::print("added {} keys to {}: {} items, load {:.1f}%\n", added, options.filter, filter.size(),
             100 * filter.load_factor());
  return kSuccess;
}

struct QueryOptions : KeyOptions {
  bool absent = false;
  bool count = false;
};

int query(const QueryOptions& options) {
  const cuckoo::MappedFilter mapped = cuckoo::Filter::map(options.filter);
  std::uint64_t selected = 0;
  Output out;
  mapped->visit([&](const auto& f) {
    for_each_key(options.inputs_or_stdin(), options.u64,
                 [&](const auto& key, std::string_view text) {
                   if (f.contains(key) != options.absent) {
                     ++selected;
                     if (!options.count) out.line(text);
                   }
                   return true;
                 });
  });
  if (options.count) out.line(std::to_string(selected));
  out.flush();
  if (std::fflush(stdout) != 0) throw std::system_error(errno, std::generic_category(), "stdout");
  return selected > 0 ? kSuccess : kNothingSelected;
}

int remove(const KeyOptions& options) {
  cuckoo::Filter filter = cuckoo::Filter::load(options.filter);
  std::uint64_t removed = 0, missing = 0;
  filter.visit([&](auto& f) {
    for_each_key(options.inputs_or_stdin(), options.u64, [&](const auto& key, std::string_view) {
      f.erase(key) ? ++removed : ++missing;
      return true;
    });
  });
  filter.save(options.filter);
  fmt::print("removed {} keys from {}; {} not found; {} items left\n", removed, options.filter,
             missing, filter.size());
  return kSuccess;
}

int info(const std::string& path) {
  const cuckoo::io::FileInfo file = cuckoo::io::inspect(path);
  const cuckoo::io::FileHeader& h = file.header;
  const double slots = static_cast<double>(h.layout.bucket_count) * h.layout.bucket_size;
  const double load = static_cast<double>(h.item_count) / slots;
  const double table_bits = 8.0 * static_cast<double>(h.table_bytes);
  // At load α a negative lookup meets about 2bα occupied slots, each matching with probability
  // 1/(2^f − 1) (fingerprints are uniform on 1..2^f − 1).
  const double match = 1.0 / (std::ldexp(1.0, static_cast<int>(h.layout.fingerprint_bits)) - 1.0);
  const double expected_fpr = 1.0 - std::pow(1.0 - match, 2.0 * h.layout.bucket_size * load);
  const double full_fpr = 1.0 - std::pow(1.0 - match, 2.0 * h.layout.bucket_size);
  fmt::print("file             {} ({} bytes)\n", path, h.file_bytes());
  fmt::print("format           cuckoo filter, format version {}\n", h.version);
  fmt::print("hash             XXH3-64, seed {:#018x}\n", h.seed);
  fmt::print("fingerprint      {} bits\n", h.layout.fingerprint_bits);
  fmt::print("bucket size      {}{}\n", h.layout.bucket_size,
             h.layout.semi_sort ? " (semi-sorted)" : "");
  fmt::print("buckets          {} ({} slots)\n", h.layout.bucket_count,
             static_cast<std::uint64_t>(slots));
  fmt::print("capacity         {}\n", h.capacity);
  fmt::print("items            {}\n", h.item_count);
  fmt::print("load             {:.2f}%\n", 100 * load);
  if (h.item_count > 0) {
    fmt::print("bits per item    {:.2f} (table {} bytes)\n",
               table_bits / static_cast<double>(h.item_count), h.table_bytes);
  } else {
    fmt::print("bits per item    - (empty; table {} bytes)\n", h.table_bytes);
  }
  fmt::print("expected FPR     {:.3g} at this load ({:.3g} when full)\n", expected_fpr, full_fpr);
  fmt::print("max kicks        {}\n", h.max_kicks);
  if (file.checksum_ok()) {
    fmt::print("checksum         ok ({:#018x})\n", file.stored_checksum);
    return kSuccess;
  }
  fmt::print("checksum         MISMATCH: stored {:#018x}, computed {:#018x}\n",
             file.stored_checksum, file.computed_checksum);
  fmt::print(stderr, "cuckoo: {}: checksum mismatch: the file is damaged\n", path);
  return kError;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Cuckoo filters in files: create them, add, query and remove keys, inspect them.\n"
      "Keys are lines of text (or 64-bit integers with --u64), read from the FILEs or\n"
      "from stdin when there are none or a FILE is '-'.\n"
      "Exit status: 0 success (query: some key selected), 1 query selected nothing,\n"
      "2 error, 3 add stopped because the filter is full.",
      "cuckoo"};
  app.require_subcommand(1);

  CreateOptions create_options;
  auto* create_command = app.add_subcommand("create", "Create an empty filter file");
  create_command->add_option("FILTER", create_options.filter, "Filter file to create")->required();
  create_command->add_option("--capacity", create_options.capacity, "Items the filter must hold")
      ->required()
      ->check(CLI::PositiveNumber);
  auto* fpr = create_command->add_option("--fpr", create_options.fpr,
                                         "Target false-positive rate (default 0.001)");
  auto* bits = create_command->add_option("--bits", create_options.bits, "Fingerprint bits, 2..32");
  fpr->excludes(bits);
  create_command->add_option("--bucket-size", create_options.bucket_size, "Entries per bucket")
      ->check(CLI::IsMember({2u, 4u, 8u}))
      ->capture_default_str();
  create_command->add_flag("--semi-sort", create_options.semi_sort, "Semi-sorted buckets (b = 4)");
  create_command->add_option("--seed", create_options.seed, "Hash seed (decimal or 0x hex)")
      ->capture_default_str();
  create_command->add_option("--max-kicks", create_options.max_kicks, "Longest kick walk")
      ->capture_default_str();
  create_command->add_flag("--force", create_options.force, "Replace an existing file");

  const auto add_key_arguments = [](CLI::App* command, KeyOptions& options, const char* what) {
    command->add_option("FILTER", options.filter, what)->required();
    command->add_option("FILE", options.inputs, "Files of keys, one per line ('-': stdin)");
    command->add_flag("--u64", options.u64, "Keys are decimal 64-bit unsigned integers");
  };
  KeyOptions add_options;
  auto* add_command = app.add_subcommand(
      "add", "Add keys; when the filter fills up, keep what fit, stop and exit with status 3");
  add_key_arguments(add_command, add_options, "Filter file to add to");
  QueryOptions query_options;
  auto* query_command = app.add_subcommand(
      "query", "Print the keys that may be in the filter; exit 0 if any, 1 if none");
  add_key_arguments(query_command, query_options, "Filter file to query");
  query_command->add_flag("--absent", query_options.absent,
                          "Print the keys certainly not in the filter instead");
  query_command->add_flag("--count", query_options.count, "Print only how many keys were selected");
  KeyOptions remove_options;
  auto* remove_command = app.add_subcommand(
      "remove", "Remove keys (only remove keys that were added: a cuckoo filter cannot tell)");
  add_key_arguments(remove_command, remove_options, "Filter file to remove from");
  std::string info_path;
  auto* info_command =
      app.add_subcommand("info", "Show a filter's parameters, load, expected FPR and checksum");
  info_command->add_option("FILTER", info_path, "Filter file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kSuccess : kError;  // --help is success; anything else a usage error
  }

  try {
    if (*create_command) return create(create_options);
    if (*add_command) return add(add_options);
    if (*query_command) return query(query_options);
    if (*remove_command) return remove(remove_options);
    if (*info_command) return info(info_path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cuckoo: {}\n", e.what());
  }
  return kError;
}
