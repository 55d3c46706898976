// An arena bot in C++: the protocol loop, a legal random move, and for Three Thirteen the
// hand's least deadwood. Your strategy goes in choose(), near the end of this file.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <random>
#include <simdjson.h>
#include <string>
#include <unordered_map>
#include <vector>

// JSON with simdjson's DOM: one parser, reused for every line (a message's elements are
// valid until the next line is parsed: copy out what you keep). It parses a request in a
// few microseconds; nlohmann/json (also in the image) took longer than the rest of a turn
// (docs/performance.md, Starter kits).
using simdjson::dom::element;
static const char *NAME = "cpp-kit", *VERSION = "1.0";
static std::mt19937_64 rng(1);  // seeded by the referee: a match replays exactly

static void send(const std::string &line) {
    std::cout << line << std::endl;  // endl flushes: arena waits for the line
}
static int random_below(size_t n) { return n ? int(rng() % n) : 0; }

// A member of an object (null when absent), or a fallback when absent or of another type.
static element null_element() {
    static simdjson::dom::parser parser;
    static element null = parser.parse(simdjson::padded_string(std::string_view("null")));
    return null;
}
static element member(element object, const char *key) {
    element value;
    return object[key].get(value) ? null_element() : value;
}
static int64_t num(element object, const char *key, int64_t fallback) {
    int64_t value;
    return object[key].get(value) ? fallback : value;
}
static bool flag(element object, const char *key, bool fallback) {
    bool value;
    return object[key].get(value) ? fallback : value;
}
static std::string_view text(element object, const char *key) {
    std::string_view value;
    return object[key].get(value) ? std::string_view() : value;
}
static std::vector<element> items(element object, const char *key) {
    std::vector<element> found;
    simdjson::dom::array array;
    if (!object[key].get(array))
        for (element item : array) found.push_back(item);
    return found;
}

struct Card { int rank, id; std::string suit; };

static int penalty(int rank, bool ace_high) { return rank == 1 && ace_high ? 15 : std::min(rank, 10); }

static int deadwood(const std::vector<Card> &cards, element observation) {
    element options = member(observation, "options");
    int wild_rank = int(num(observation, "wild_rank", 0));
    bool ace_high = flag(options, "ace_high", false);
    bool all_wild = flag(options, "all_wild_combinations", true);
    int wild_cost = int(num(options, "wild_penalty", 0));
    if (!wild_cost) wild_cost = penalty(wild_rank, ace_high);
    std::vector<Card> nat;
    for (const Card &c : cards) if (c.rank != wild_rank) nat.push_back(c);
    auto run_rank = [&](int j) { return nat[j].rank == 1 && ace_high ? 14 : nat[j].rank; };
    std::unordered_map<int, int> memo;
    std::function<int(int, int, bool)> least = [&](int mask, int wilds, bool formed) -> int {
        if (!mask) return wilds == 0 || formed || (all_wild && wilds >= 3) ? 0 : wilds * wild_cost;
        int key = (mask * 32 + wilds) * 2 + formed;
        auto found = memo.find(key);
        if (found != memo.end()) return found->second;
        int first = __builtin_ctz(mask);
        int best = penalty(nat[first].rank, ace_high) + least(mask & ~(1 << first), wilds, formed);
        std::vector<int> partners;
        for (int j = 0; j < int(nat.size()); j++)
            if (j != first && (mask >> j & 1) && (nat[j].rank == nat[first].rank || nat[j].suit == nat[first].suit))
                partners.push_back(j);
        for (int pick = 0; pick < (1 << partners.size()); pick++) {
            std::vector<int> chosen{first};
            for (size_t b = 0; b < partners.size(); b++) if (pick >> b & 1) chosen.push_back(partners[b]);
            if (chosen.size() > 5) continue;  // a longer combination splits into two at no cost
            bool same_rank = true, same_suit = true, distinct = true;
            int lo = run_rank(first), hi = lo, seen = 0, used = 0;
            for (int j : chosen) {
                same_rank &= nat[j].rank == nat[first].rank;
                same_suit &= nat[j].suit == nat[first].suit;
                int r = run_rank(j);
                distinct &= !(seen >> r & 1);
                seen |= 1 << r, used |= 1 << j;
                lo = std::min(lo, r), hi = std::max(hi, r);
            }
            int need = -1;
            if (same_rank) need = std::max(0, 3 - int(chosen.size()));
            else if (same_suit && distinct && hi - lo < 5) need = std::max(3, hi - lo + 1) - int(chosen.size());
            if (need >= 0 && need <= wilds) best = std::min(best, least(mask & ~used, wilds - need, true));
        }
        return memo[key] = best;
    };
    return least((1 << nat.size()) - 1, int(cards.size() - nat.size()), false);
}

static Card to_card(element c) { return {int(num(c, "rank", 0)), int(num(c, "id", -1)), std::string(text(c, "suit"))}; }

static std::vector<Card> without(std::vector<Card> cards, size_t skip) {
    cards.erase(cards.begin() + skip);
    return cards;
}

static int three_thirteen(element observation, const std::vector<element> &legal) {
    std::vector<Card> hand;
    for (element c : items(observation, "hand")) hand.push_back(to_card(c));
    int stock = -1, pile_draw = -1;
    for (size_t i = 0; i < legal.size(); i++) {
        std::string_view type = text(legal[i], "type");
        if (type == "go_out") return int(i);  // a round won
        if (type == "draw") (text(legal[i], "source") == "discard" ? pile_draw : stock) = int(i);
    }
    if (stock >= 0 || pile_draw >= 0) {  // the discard only when it lowers the deadwood
        std::vector<element> pile = items(observation, "discard_pile");
        if (pile_draw < 0 || pile.empty()) return std::max(stock, pile_draw);
        int now = deadwood(hand, observation), after = 1 << 30;
        std::vector<Card> taken = hand;
        taken.push_back(to_card(pile.back()));
        for (size_t i = 0; i < hand.size(); i++) after = std::min(after, deadwood(without(taken, i), observation));
        return after < now || stock < 0 ? pile_draw : stock;
    }
    int best = -1, best_value = 1 << 30;
    for (size_t i = 0; i < legal.size(); i++) {  // discard: the card that leaves the least deadwood
        if (text(legal[i], "type") != "discard") continue;
        for (size_t j = 0; j < hand.size(); j++) {
            if (hand[j].id != num(legal[i], "card", -2)) continue;
            int value = deadwood(without(hand, j), observation) * 100 - penalty(hand[j].rank, false);
            if (value < best_value) best = int(i), best_value = value;
        }
    }
    return best >= 0 ? best : random_below(legal.size());
}

// ---- YOUR STRATEGY: return an index into `legal` ----------------------------------------
static int choose(const std::string &game, element observation, const std::vector<element> &legal) {
    if (game == "three-thirteen") return three_thirteen(observation, legal);
    return random_below(legal.size());  // 3up3down and any other: random
}

// ---- the protocol loop ------------------------------------------------------------------
int main() {
    std::ios::sync_with_stdio(false);
    simdjson::dom::parser parser;
    std::string line, game;
    while (std::getline(std::cin, line)) {
        element message;
        if (parser.parse(line).get(message) || !message.is_object()) continue;
        std::string_view type = text(message, "type");
        uint64_t seed;
        if ((type == "hello" || type == "start") && !message["seed"].get(seed)) rng.seed(seed);
        if (type == "hello") {
            game = std::string(text(message, "game"));
            send(std::string(R"({"type":"ready","name":")") + NAME + R"(","version":")" + VERSION + R"(","protocol":1})");
        } else if (type == "request") {
            std::vector<element> legal = items(message, "legal_actions");
            int index = choose(game, member(message, "observation"), legal);
            if (index < 0 || index >= int(legal.size())) index = 0;
            send(R"({"type":"action","id":)" + simdjson::minify(member(message, "id")) + R"(,"index":)" +
                 std::to_string(index) + "}");
        } else if (type == "match_over") {
            return 0;
        }
    }
    return 0;
}
