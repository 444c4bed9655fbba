// cuckoo — create, fill, query and inspect cuckoo filter files from the command line.
//
//   cuckoo create FILTER --capacity N [--fpr E | --bits F] [--bucket-size B]
//                        [--semi-sort | --grow | --blocked] [--seed S] [--max-kicks K] [--force]
//                        [--wait SECONDS]
//   cuckoo add    FILTER [FILE...] [--u64] [--wait SECONDS]   keys: one per line (stdin when
//                                                              no FILE or FILE is -)
//   cuckoo query  FILTER [FILE...] [--u64] [--absent] [--count]   prints the keys that may be
//                                                                  in the set (--absent: others)
//   cuckoo remove FILTER [FILE...] [--u64] [--wait SECONDS]
//   cuckoo info   FILTER
//
// Exit statuses: 0 success (query: some key selected), 1 query selected nothing, 2 error (bad
// arguments, unreadable or damaged files, bad input, another writer kept the file locked past
// --wait), 3 add stopped because the filter is full.
//
// Growable filters (create --grow, Config::growable): --capacity is where the filter starts, and
// add doubles it whenever it is full instead of stopping, so a growable filter is saved as large as
// its keys need. add still stops with status 3 if an insert is refused, which for a growable filter
// happens only past a documented limit (growable/growable_filter.hpp): 31 doublings or 32-bit
// slots, no memory for the next doubling, or 2b copies of one key. Their files are format version
// 2; info shows the doublings, the starting and current capacity and the fingerprint widths.
//
// Blocked filters (create --blocked, Config::blocked): lookups read one 64-byte block (a second for
// about 5% of keys at 95% of capacity), at a false-positive rate fixed by the format, about 0.2%;
// without --fpr the target is that bound (0.0025), and a lower --fpr is refused. Format version 4.
//
// A key is the bytes of a line without its '\n' (an empty line is the empty key), or with --u64 a
// decimal 64-bit unsigned integer (hashed as the integer, like filter.insert(std::uint64_t)).
// Commands that change the filter write it back with Filter::save (atomic) only when they succeed,
// or, for add, when the filter fills up; on any error the file is left as it was.
//
// Many writers: add and remove run the whole load-change-save cycle under the file's writer lock
// (cuckoo::update_file, include/cuckoo/io/file_lock.hpp), so concurrent writers take turns and
// every change is kept; create --force takes the lock before replacing an existing file. A writer
// waits up to --wait seconds (default 60) for the lock, then exits 2 with the file unchanged. The
// lock is held while the keys are read, so a slow producer on stdin keeps other writers waiting.
// query and info never lock and never wait.
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/io/file_lock.hpp"

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

/// --wait's default, in seconds: the library's.
constexpr double kDefaultWaitSeconds =
    std::chrono::duration<double>(cuckoo::kDefaultLockWait).count();

/// --wait SECONDS as a duration, rounded up to whole milliseconds (CLI11 has checked that it is a
/// non-negative number; a wait beyond what a duration holds is forever for any practical purpose).
std::chrono::milliseconds wait_duration(double seconds) {
  if (!(seconds >= 0)) throw std::invalid_argument("--wait must be a non-negative number");
  const double ms = std::ceil(seconds * 1000);
  constexpr double kLongest = 1e15;  // 31,000 years; file_lock clamps further
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(ms, kLongest)));
}

struct CreateOptions {
  std::string filter;
  std::size_t capacity = 0;
  std::optional<double> fpr;
  std::optional<unsigned> bits;
  unsigned bucket_size = cuckoo::defaults::kBucketSize;
  bool semi_sort = false;
  bool grow = false;
  bool blocked = false;
  std::uint64_t seed = cuckoo::defaults::kSeed;
  unsigned max_kicks = cuckoo::defaults::kMaxKicks;
  bool force = false;
  double wait = kDefaultWaitSeconds;
};

int create(const CreateOptions& options) {
  const bool exists = std::filesystem::exists(options.filter);
  if (!options.force && exists) {
    throw std::runtime_error(options.filter + " exists (use --force to replace it)");
  }
  if (options.grow && options.semi_sort) {
    throw std::invalid_argument(
        "--grow and --semi-sort cannot be combined: a growable filter cannot be semi-sorted");
  }
  if (options.blocked && (options.grow || options.semi_sort)) {
    throw std::invalid_argument(std::string("--blocked and ") +
                                (options.grow ? "--grow" : "--semi-sort") + " cannot be combined");
  }
  cuckoo::Config config{.capacity = options.capacity,
                        .bucket_size = options.bucket_size,
                        .max_kicks = options.max_kicks,
                        .seed = options.seed,
                        .semi_sort = options.semi_sort,
                        .growable = options.grow,
                        .blocked = options.blocked};
  // A blocked filter's rate is its format's: without --fpr, ask for exactly what it keeps.
  if (options.blocked) config.target_fpr = cuckoo::blocked_layout::kFprBound;
  if (options.fpr) config.target_fpr = *options.fpr;
  if (options.bits) config.fingerprint_bits = *options.bits;
  const cuckoo::Filter filter{config};
  // Replacing a filter other writers may be changing: wait for their cycles to end first (a new
  // file needs no lock; one removed meanwhile is simply created).
  std::optional<cuckoo::io::WriterLock> lock;
  if (exists) {
    try {
      lock.emplace(options.filter, wait_duration(options.wait));
    } catch (const std::system_error& e) {
      if (e.code() != std::errc::no_such_file_or_directory) throw;
    }
  }
  filter.save(options.filter);
  if (filter.growable()) {
    const unsigned base_bits = filter.visit([](const auto& f) -> unsigned {
      if constexpr (requires { f.base_fingerprint_bits(); }) {
        return f.base_fingerprint_bits();
      } else {
        return f.fingerprint_bits();
      }
    });
    fmt::print(
        "created {}: growable, starting capacity {} (doubles when full), base fingerprint {} "
        "bits ({} compared now), {} buckets of {}, {} bytes\n",
        options.filter, filter.capacity(), base_bits, filter.fingerprint_bits(),
        filter.bucket_count(), filter.bucket_size(), filter.memory_bytes());
    return kSuccess;
  }
  if (filter.blocked()) {
    fmt::print(
        "created {}: blocked, capacity {}, {} blocks of {} items (one cache line each), 8-bit "
        "remainders, {} bytes\n",
        options.filter, filter.capacity(), filter.bucket_count(), filter.bucket_size(),
        filter.memory_bytes());
    return kSuccess;
  }
  fmt::print("created {}: capacity {}, {}-bit fingerprints, {} buckets of {}, {} bytes\n",
             options.filter, filter.capacity(), filter.fingerprint_bits(), filter.bucket_count(),
             filter.bucket_size(), filter.memory_bytes());
  return kSuccess;
}

struct KeyOptions {
  std::string filter;
  std::vector<std::string> inputs;
  bool u64 = false;
  double wait = kDefaultWaitSeconds;  // add and remove only
  std::vector<std::string> inputs_or_stdin() const {
    return inputs.empty() ? std::vector<std::string>{"-"} : inputs;
  }
};

/// Why a growable filter refused `key` (its insert returned false and changed nothing): which of
/// the limits of growable/growable_filter.hpp it reached.
template <class Growable, class K>
std::string growth_limit(const Growable& f, const K& key) {
  const unsigned next = f.doublings() + 1;
  if (next > cuckoo::growth::kMaxDoublings ||
      cuckoo::growth::slot_bits(f.base_fingerprint_bits(), next, f.schedule()) >
          cuckoo::growth::kMaxSlotBits) {
    return fmt::format("it has doubled {} times, the most a growable filter of base width {} can",
                       f.doublings(), f.base_fingerprint_bits());
  }
  if (f.count(key) >= 2 * std::size_t{f.bucket_size()}) {
    return fmt::format(
        "its two buckets for this key hold {} entries matching it, the most a growable filter "
        "with buckets of {} can separate (a key added that many times?)",
        f.count(key), f.bucket_size());
  }
  return "it could not double (no memory for the larger table, or its stash is full)";
}

int add(const KeyOptions& options) {
  struct Outcome {
    std::uint64_t added = 0;
    bool finished = false;
    std::string stopped_at, refused_key, limit;
    std::size_t size = 0, capacity = 0;
    double load = 0;
    bool growable = false;
    unsigned doublings_before = 0, doublings = 0;
  };
  // Under the writer lock: load, insert, save (also when full: every accepted key is kept). A bad
  // key throws out of the change, and then nothing is saved. A growable filter doubles inside
  // insert as often as its keys need; its insert fails only past a documented limit.
  const Outcome outcome = cuckoo::update_file(
      options.filter,
      [&](cuckoo::Filter& filter) {
        Outcome o;
        o.growable = filter.growable();
        o.doublings_before = filter.doublings();
        o.finished = filter.visit([&](auto& f) {
          return for_each_key(
              options.inputs_or_stdin(), options.u64,
              [&](const auto& key, std::string_view text) {
                if (f.insert(key)) {
                  ++o.added;
                  return true;
                }
                o.refused_key = text.substr(0, 80);
                if constexpr (requires { f.geometry(); }) o.limit = growth_limit(f, key);
                return false;
              },
              &o.stopped_at);
        });
        o.size = filter.size();
        o.load = filter.load_factor();
        o.capacity = filter.capacity();
        o.doublings = filter.doublings();
        return o;
      },
      wait_duration(options.wait));
  if (!outcome.finished && outcome.growable) {
    fmt::print(stderr,
               "cuckoo: {} is full and cannot grow: added {} keys, 1 did not fit ('{}' at {}): {}; "
               "stopped there, the rest of the input was not read. The filter now holds {} items "
               "({} doublings, capacity {}, load {:.1f}%).\n",
               options.filter, outcome.added, outcome.refused_key, outcome.stopped_at,
               outcome.limit, outcome.size, outcome.doublings, outcome.capacity,
               100 * outcome.load);
    return kFilterFull;
  }
  if (!outcome.finished) {
    fmt::print(stderr,
               "cuckoo: {} is full: added {} keys, 1 did not fit ('{}' at {}); stopped there, the "
               "rest of the input was not read. The filter now holds {} items (load {:.1f}%).\n",
               options.filter, outcome.added, outcome.refused_key, outcome.stopped_at, outcome.size,
               100 * outcome.load);
    return kFilterFull;
  }
  if (outcome.growable) {
    fmt::print(
        "added {} keys to {}: {} items, load {:.1f}%; {} doublings ({} in this add), "
        "capacity {}\n",
        outcome.added, options.filter, outcome.size, 100 * outcome.load, outcome.doublings,
        outcome.doublings - outcome.doublings_before, outcome.capacity);
    return kSuccess;
  }
  fmt::print("added {} keys to {}: {} items, load {:.1f}%\n", outcome.added, options.filter,
             outcome.size, 100 * outcome.load);
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
  struct Outcome {
    std::uint64_t removed = 0, missing = 0;
    std::size_t size = 0;
  };
  const Outcome outcome = cuckoo::update_file(
      options.filter,
      [&](cuckoo::Filter& filter) {
        Outcome o;
        filter.visit([&](auto& f) {
          for_each_key(options.inputs_or_stdin(), options.u64,
                       [&](const auto& key, std::string_view) {
                         f.erase(key) ? ++o.removed : ++o.missing;
                         return true;
                       });
        });
        o.size = filter.size();
        return o;
      },
      wait_duration(options.wait));
  fmt::print("removed {} keys from {}; {} not found; {} items left\n", outcome.removed,
             options.filter, outcome.missing, outcome.size);
  return kSuccess;
}

/// info's last line: the checksum; status 2 when it does not match.
int print_checksum(const std::string& path, const cuckoo::io::FileInfo& file) {
  if (file.checksum_ok()) {
    fmt::print("checksum         ok ({:#018x})\n", file.stored_checksum);
    return kSuccess;
  }
  fmt::print("checksum         MISMATCH: stored {:#018x}, computed {:#018x}\n",
             file.stored_checksum, file.computed_checksum);
  fmt::print(stderr, "cuckoo: {}: checksum mismatch: the file is damaged\n", path);
  return kError;
}

double slots_of(const cuckoo::io::FileHeader& h) {
  return static_cast<double>(h.layout.bucket_count) * h.layout.bucket_size;
}
double load_of(const cuckoo::io::FileHeader& h) {
  return static_cast<double>(h.item_count) / slots_of(h);
}

/// info's load and bits-per-item lines, the same for every file.
void print_load(const cuckoo::io::FileHeader& h) {
  fmt::print("load             {:.2f}%\n", 100 * load_of(h));
  if (h.item_count > 0) {
    fmt::print("bits per item    {:.2f} (table {} bytes)\n",
               8.0 * static_cast<double>(h.table_bytes) / static_cast<double>(h.item_count),
               h.table_bytes);
  } else {
    fmt::print("bits per item    - (empty; table {} bytes)\n", h.table_bytes);
  }
}

/// info's lines for a growable filter's file (format version 2): the header says how it has grown,
/// and the expected FPR sums the entries' own widths, so it reads the table (a sound file only).
void print_growable_info(const std::string& path, const cuckoo::io::FileInfo& file) {
  namespace growth = cuckoo::growth;
  const cuckoo::io::FileHeader& h = file.header;
  const unsigned f = h.layout.fingerprint_bits, g = h.doublings;
  const double slots = slots_of(h);
  const unsigned first_bits = growth::compared_bits(f, 0, h.schedule);
  const unsigned shortest = g >= first_bits ? 0 : first_bits - g;
  fmt::print("file             {} ({} bytes)\n", path, h.file_bytes());
  fmt::print("format           cuckoo filter, format version {}\n", h.version);
  fmt::print("growable         yes (doubles when full)\n");
  fmt::print("hash             XXH3-64, seed {:#018x}\n", h.seed);
  fmt::print("base fingerprint {} bits (f)\n", f);
  fmt::print("slot bits        {}\n", growth::slot_bits(f, g, h.schedule));
  fmt::print("compared bits    {} (entries added now)\n", growth::compared_bits(f, g, h.schedule));
  fmt::print("width schedule   {}\n",
             h.schedule == growth::Schedule::kBareFirst
                 ? "bare first (f + 2 + floor(log2(16(g + 1)/15)) bits)"
                 : "ceiling (f + 2 + ceil(log2(g + 1)) bits; saved before 2026-12-04)");
  if (shortest > 0) {
    fmt::print("shortest         {} bits (entries added before the first doubling)\n", shortest);
  } else {
    fmt::print("shortest         0 bits (entries added before the first doubling have run out)\n");
  }
  fmt::print("bucket size      {}\n", h.layout.bucket_size);
  fmt::print("buckets          {} ({} slots)\n", h.layout.bucket_count,
             static_cast<std::uint64_t>(slots));
  fmt::print("doublings        {}\n", g);
  fmt::print("start capacity   {}\n", h.capacity);
  fmt::print("capacity         {} (start x 2^{})\n", h.capacity << g, g);
  fmt::print("items            {}\n", h.item_count);
  fmt::print("stash            {} entries\n", h.stash_count);
  print_load(h);
  const double full_fpr = growth::fpr_bound(h.layout.bucket_size, f, g, h.schedule);
  if (file.checksum_ok()) {
    const cuckoo::MappedFilter mapped = cuckoo::Filter::map(path, cuckoo::ChecksumCheck::kSkip);
    const double expected_fpr = mapped->visit([](const auto& filter) -> double {
      if constexpr (requires { filter.expected_fpr(); }) {
        return filter.expected_fpr();
      } else {
        return NAN;  // not reached: the file is growable
      }
    });
    fmt::print(
        "expected FPR     {:.3g} at this load (about {:.3g} when full, before the next doubling)\n",
        expected_fpr, full_fpr);
  } else {
    fmt::print("expected FPR     - (damaged table; about {:.3g} when full, before it doubles)\n",
               full_fpr);
  }
  fmt::print("max kicks        {}\n", h.max_kicks);
}

/// info's lines for a blocked filter's file (format version 4).
void print_blocked_info(const std::string& path, const cuckoo::io::FileHeader& h) {
  const double per_block =
      static_cast<double>(h.item_count) / static_cast<double>(h.layout.bucket_count);
  fmt::print("file             {} ({} bytes)\n", path, h.file_bytes());
  fmt::print("format           cuckoo filter, format version {}\n", h.version);
  fmt::print("growable         no\n");
  fmt::print(
      "blocked          yes: 64-byte blocks, one cache line per lookup (two for keys whose "
      "block gave items away)\n");
  fmt::print("hash             XXH3-64, seed {:#018x}\n", h.seed);
  fmt::print("remainder        {} bits, in 100 lists per block\n", h.layout.fingerprint_bits);
  fmt::print("blocks           {} of {} items ({} slots)\n", h.layout.bucket_count,
             h.layout.bucket_size, static_cast<std::uint64_t>(slots_of(h)));
  fmt::print("capacity         {}\n", h.capacity);
  fmt::print("items            {}\n", h.item_count);
  print_load(h);
  // A negative lookup matches an item of its list with probability 1/256, and its list holds
  // per_block/100 items on average; reads of a second block add to it (README, blocked filter).
  fmt::print(
      "expected FPR     {:.3g} from the first block at this load (0.21% measured at capacity)\n",
      per_block / 25600.0);
  fmt::print("max kicks        {}\n", h.max_kicks);
}

int info(const std::string& path) {
  const cuckoo::io::FileInfo file = cuckoo::io::inspect(path);
  const cuckoo::io::FileHeader& h = file.header;
  if (h.growable) {
    print_growable_info(path, file);
    return print_checksum(path, file);
  }
  if (h.layout.blocked) {
    print_blocked_info(path, h);
    return print_checksum(path, file);
  }
  const double slots = slots_of(h);
  const double load = load_of(h);
  // At load α a negative lookup meets about 2bα occupied slots, each matching with probability
  // 1/(2^f − 1) (fingerprints are uniform on 1..2^f − 1).
  const double match = 1.0 / (std::ldexp(1.0, static_cast<int>(h.layout.fingerprint_bits)) - 1.0);
  const double expected_fpr = 1.0 - std::pow(1.0 - match, 2.0 * h.layout.bucket_size * load);
  const double full_fpr = 1.0 - std::pow(1.0 - match, 2.0 * h.layout.bucket_size);
  fmt::print("file             {} ({} bytes)\n", path, h.file_bytes());
  fmt::print("format           {}, format version {}\n",
             h.is_map() ? "approximate map (cuckoo filter with values)" : "cuckoo filter",
             h.version);
  fmt::print("growable         no\n");
  if (h.is_map()) {
    // The values are the map's own business (cuckoo::ApproximateMap<V>); the file says only their
    // width, which the loading program's V must match.
    fmt::print("values           {} bytes per slot ({} bytes, {:.2f} bits per item)\n",
               h.value_bytes, h.values_bytes(),
               h.item_count > 0
                   ? 8.0 * static_cast<double>(h.values_bytes()) / static_cast<double>(h.item_count)
                   : 0.0);
  }
  fmt::print("hash             XXH3-64, seed {:#018x}\n", h.seed);
  fmt::print("fingerprint      {} bits\n", h.layout.fingerprint_bits);
  fmt::print("bucket size      {}{}\n", h.layout.bucket_size,
             h.layout.semi_sort ? " (semi-sorted)" : "");
  fmt::print("buckets          {} ({} slots)\n", h.layout.bucket_count,
             static_cast<std::uint64_t>(slots));
  fmt::print("capacity         {}\n", h.capacity);
  fmt::print("items            {}\n", h.item_count);
  print_load(h);
  fmt::print("expected FPR     {:.3g} at this load ({:.3g} when full)\n", expected_fpr, full_fpr);
  fmt::print("max kicks        {}\n", h.max_kicks);
  return print_checksum(path, file);
}

/// A check for an unsigned option: digits only (or hex digits after 0x where `hex`), from `low`
/// to `high`; `what` names the value in --help. CLI11's own conversion took "-1" and values past
/// 2^64 as 2^64 - 1 without a word, and its PositiveNumber named a range up to 1.8e308.
CLI::Validator whole_number(std::uint64_t low, std::uint64_t high, const char* what,
                            bool hex = false) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const bool is_hex = hex && text.size() > 2 && text[0] == '0' && (text[1] | 0x20) == 'x';
        const char* first = text.data() + (is_hex ? 2 : 0);
        const char* last = text.data() + text.size();
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(first, last, value, is_hex ? 16 : 10);
        if (error == std::errc() && end == last && value >= low && value <= high) return {};
        return fmt::format("expected a whole number from {} to {}{}, got '{}'", low, high,
                           hex ? " (decimal, or hex after 0x)" : "", text);
      },
      "", what);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Cuckoo filters in files: create them, add, query and remove keys, inspect them.\n"
      "Keys are lines of text (or 64-bit integers with --u64), read from the FILEs or\n"
      "from stdin when there are none or a FILE is '-'.\n"
      "Writers (add, remove, create --force) take turns through a lock on the filter file\n"
      "and wait for it up to --wait seconds; query and info never wait.\n"
      "Exit status: 0 success (query: some key selected), 1 query selected nothing,\n"
      "2 error (also: another writer held the file past --wait), 3 add stopped because\n"
      "the filter is full (a growable filter, create --grow, doubles instead).",
      "cuckoo"};
  app.require_subcommand(1);

  CreateOptions create_options;
  auto* create_command = app.add_subcommand("create", "Create an empty filter file");
  create_command->add_option("FILTER", create_options.filter, "Filter file to create")->required();
  create_command
      ->add_option("--capacity", create_options.capacity,
                   "Items the filter must hold (with --grow: the capacity it starts at)")
      ->required()
      ->type_name("ITEMS")
      ->check(whole_number(1, std::numeric_limits<std::size_t>::max(), "items"));
  auto* fpr = create_command->add_option("--fpr", create_options.fpr,
                                         "Target false-positive rate (default 0.001)");
  auto* bits = create_command
                   ->add_option("--bits", create_options.bits,
                                "Fingerprint bits, 2..32 (with --grow: the base width f, 11..30; "
                                "a smaller one is raised to 11)")
                   ->check(whole_number(2, 32, "bits"));
  fpr->excludes(bits);
  create_command->add_option("--bucket-size", create_options.bucket_size, "Entries per bucket")
      ->check(CLI::IsMember({2u, 4u, 8u}))
      ->capture_default_str();
  create_command->add_flag("--semi-sort", create_options.semi_sort, "Semi-sorted buckets (b = 4)");
  create_command->add_flag("--grow", create_options.grow,
                           "A growable filter: add doubles it whenever it is full instead of "
                           "stopping, holding the target FPR (not with --semi-sort)");
  create_command->add_flag("--blocked", create_options.blocked,
                           "A blocked filter: lookups read one cache line; its FPR is fixed at "
                           "about 0.2% (--fpr at least 0.0025; not with --grow or --semi-sort)");
  create_command->add_option("--seed", create_options.seed, "Hash seed (decimal or 0x hex)")
      ->check(whole_number(0, std::numeric_limits<std::uint64_t>::max(), "seed", true))
      ->capture_default_str();
  create_command->add_option("--max-kicks", create_options.max_kicks, "Longest kick walk")
      ->check(whole_number(0, std::numeric_limits<unsigned>::max(), "kicks"))
      ->capture_default_str();
  create_command->add_flag("--force", create_options.force,
                           "Replace an existing file (after waiting for its writers' lock)");
  const auto add_wait_option = [](CLI::App* command, double& seconds) {
    const CLI::Validator non_negative_seconds(
        [](std::string& text) -> std::string {
          double value = -1;
          const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
          if (error == std::errc() && end == text.data() + text.size() && value >= 0) return {};
          return "expected a non-negative number of seconds, got '" + text + "'";
        },
        "", "seconds");
    command
        ->add_option("--wait", seconds,
                     "Seconds to wait for another writer's lock on the filter file, then fail "
                     "with status 2 (fractions allowed; 0: do not wait)")
        ->type_name("SECONDS")
        ->check(non_negative_seconds)
        ->capture_default_str();
  };
  add_wait_option(create_command, create_options.wait);

  const auto add_key_arguments = [](CLI::App* command, KeyOptions& options, const char* what) {
    command->add_option("FILTER", options.filter, what)->required();
    command->add_option("FILE", options.inputs, "Files of keys, one per line ('-': stdin)");
    command->add_flag("--u64", options.u64, "Keys are decimal 64-bit unsigned integers");
  };
  KeyOptions add_options;
  auto* add_command = app.add_subcommand(
      "add",
      "Add keys; when the filter fills up, keep what fit, stop and exit with status 3 (a growable "
      "filter doubles instead)");
  add_key_arguments(add_command, add_options, "Filter file to add to");
  add_wait_option(add_command, add_options.wait);
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
  add_wait_option(remove_command, remove_options.wait);
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
  } catch (const cuckoo::lock_timeout& e) {
    fmt::print(stderr, "cuckoo: {} (--wait SECONDS waits longer); the file is unchanged\n",
               e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "cuckoo: {}\n", e.what());
  }
  return kError;
}
