// Two loops that copy by-value pairs of long strings into a result vector, one with
// emplace_back and one with push_back, timed either alone in a fresh process or after the
// other loop has run in the same process (the heap then holds what the first loop left).
//
//   heap --loop=emplace|push --first=none|emplace|push --copied=PERCENT --n=N --passes=K
//        [--seed=S]
//
// Setup builds `src`: N pairs of a 27-byte string (too long for the short-string buffer, so
// its body lives on the heap) and an int. PERCENT of them, chosen at random, hold the string
// that is copied to the result; the rest hold `exclude`, which is skipped. At 0% both loops
// execute the same code: each iteration copies the pair (the by-value loop variable) and
// destroys the copy.
//
// With --first=LOOP that loop runs its K passes first, then the harness summarises them
// (a bootstrap of the median pass time, as benchmark harnesses do between benchmarks); then
// the measured loop runs K passes. Each measured pass prints {"loop_s": seconds} on its own
// line; a last line echoes the configuration and a checksum of the result.
//
// Exit status: 0 ok, 1 the two loops' results differ, 2 bad command line.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

using ppair = std::pair<std::string, int>;
using plist = std::vector<ppair>;

// Both 27 bytes long; they differ in their first byte.
const std::string kept = "copied-string-of-27-bytes-x";
const std::string exclude = "skipped-string-of-27-bytes-";

plist src;

struct Options {
    std::string loop;
    std::string first = "none";
    int copied = -1;
    long n = 0;
    int passes = 0;
    std::uint64_t seed = 3;
};

[[noreturn]] void usage_error(const char *arg, const char *why) {
    std::fprintf(stderr, "error: %s: %s\n", arg, why);
    if (std::strchr(arg, ' '))
        std::fprintf(stderr, "hint: \"%s\" contains a space: were several options passed as "
                             "one argument?\n", arg);
    std::fprintf(stderr, "usage: heap --loop=emplace|push --first=none|emplace|push "
                         "--copied=PERCENT --n=N --passes=K [--seed=S]\n");
    std::exit(2);
}

long parse_long(const char *arg, const char *text, long lo, long hi) {
    char *end;
    long v = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < lo || v > hi)
        usage_error(arg, "not a whole number in range");
    return v;
}

bool is_loop(const std::string &s) { return s == "emplace" || s == "push"; }

Options parse_options(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (std::strncmp(a, "--loop=", 7) == 0)
            o.loop = a + 7;
        else if (std::strncmp(a, "--first=", 8) == 0)
            o.first = a + 8;
        else if (std::strncmp(a, "--copied=", 9) == 0)
            o.copied = static_cast<int>(parse_long(a, a + 9, 0, 100));
        else if (std::strncmp(a, "--n=", 4) == 0)
            o.n = parse_long(a, a + 4, 1, 100000000);
        else if (std::strncmp(a, "--passes=", 9) == 0)
            o.passes = static_cast<int>(parse_long(a, a + 9, 1, 100000));
        else if (std::strncmp(a, "--seed=", 7) == 0)
            o.seed = static_cast<std::uint64_t>(parse_long(a, a + 7, 0, 1L << 62));
        else
            usage_error(a, "unknown option");
    }
    if (!is_loop(o.loop))
        usage_error("--loop", "must be emplace or push");
    if (o.first != "none" && !is_loop(o.first))
        usage_error("--first", "must be none, emplace or push");
    if (o.copied < 0 || o.n == 0 || o.passes == 0)
        usage_error("(options)", "--copied, --n and --passes are required");
    return o;
}

// splitmix64 (Steele, Lea & Flood 2014).
std::uint64_t next_random(std::uint64_t &state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

// Elements are built in place, in order: no element of src is ever moved.
void make_source(const Options &o) {
    std::uint64_t s = o.seed;
    src.reserve(static_cast<std::size_t>(o.n));
    for (long i = 0; i < o.n; i++) {
        bool copy = static_cast<int>(next_random(s) % 100) < o.copied;
        src.emplace_back(copy ? kept : exclude, static_cast<int>(next_random(s) % 1000));
    }
}

// The two loops of the write-up, by-value loop variable in both.
__attribute__((noinline)) std::size_t loop_emplace(plist &res) {
    for (auto p : src) {
        if (p.first != exclude)
            res.emplace_back(p.first, p.second * p.second);
    }
    return res.size();
}

__attribute__((noinline)) std::size_t loop_push(plist &res) {
    for (auto p : src) {
        if (p.first != exclude)
            res.push_back(ppair{p.first, p.second * p.second});
    }
    return res.size();
}

// FNV-1a 64 over every string's bytes and every int of the result.
std::uint64_t checksum(const plist &res) {
    std::uint64_t h = 0xcbf29ce484222325u;
    auto mix = [&h](unsigned char b) { h = (h ^ b) * 0x100000001b3u; };
    for (const auto &p : res) {
        for (char c : p.first)
            mix(static_cast<unsigned char>(c));
        for (int b = 0; b < 4; b++)
            mix(static_cast<unsigned char>(static_cast<std::uint32_t>(p.second) >> (8 * b)));
    }
    return h;
}

struct Passes {
    std::vector<double> seconds;
    std::uint64_t checksum = 0;
};

// K passes of one loop, each into a fresh result vector with room for every element, so that
// the vector never grows inside the timed loop; the result is freed after each pass.
Passes run_passes(const std::string &loop, int passes) {
    Passes out;
    for (int k = 0; k < passes; k++) {
        plist res;
        res.reserve(src.size());
        auto t0 = std::chrono::steady_clock::now();
        std::size_t n = loop == "emplace" ? loop_emplace(res) : loop_push(res);
        auto t1 = std::chrono::steady_clock::now();
        out.seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
        if (n != res.size())
            std::exit(1);
        out.checksum = checksum(res);
    }
    return out;
}

// What a harness does after a benchmark: a bootstrap of the median pass time, every resample
// in a vector of its own. Its allocations are part of the heap the next loop inherits.
double summarise(const std::vector<double> &seconds, std::uint64_t seed) {
    std::uint64_t s = seed ^ 0xb007u;
    std::vector<double> medians;
    for (int b = 0; b < 1000; b++) {
        std::vector<double> resample;
        for (std::size_t i = 0; i < seconds.size(); i++)
            resample.push_back(seconds[next_random(s) % seconds.size()]);
        std::sort(resample.begin(), resample.end());
        medians.push_back(resample[resample.size() / 2]);
    }
    std::sort(medians.begin(), medians.end());
    return medians[medians.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
    Options o = parse_options(argc, argv);
    make_source(o);

    std::uint64_t first_checksum = 0;
    if (o.first != "none") {
        Passes first = run_passes(o.first, o.passes);
        summarise(first.seconds, o.seed);
        first_checksum = first.checksum;
    }
    Passes measured = run_passes(o.loop, o.passes);
    summarise(measured.seconds, o.seed);

    // Both loops copy the same elements: their results must be identical.
    if (o.first != "none" && first_checksum != measured.checksum) {
        std::fprintf(stderr, "error: %s and %s produced different results; not reporting a "
                             "time\n", o.first.c_str(), o.loop.c_str());
        return 1;
    }
    for (double s : measured.seconds)
        std::printf("{\"loop_s\":%.7f}\n", s);
    std::printf("{\"config\":{\"loop\":\"%s\",\"first\":\"%s\",\"copied\":%d,\"n\":%ld,"
                "\"passes\":%d,\"seed\":%" PRIu64 "},\"checksum\":\"%016" PRIx64 "\"}\n",
                o.loop.c_str(), o.first.c_str(), o.copied, o.n, o.passes, o.seed,
                measured.checksum);
    return 0;
}
