/* An arena bot in C: the protocol loop, a legal random move, and for Three Thirteen the
 * hand's least deadwood. Your strategy goes in choose(), at the end of this file. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "c-kit"
#define VERSION "1.0"

/* ---- a seeded random generator (splitmix64), so a match replays exactly -------------- */
static uint64_t rng_state = 1;
static uint64_t next_random(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static void seed_from(const cJSON *seed) { /* the referee's seed (hello, each start) */
    if (cJSON_IsNumber(seed)) memcpy(&rng_state, &seed->valuedouble, sizeof rng_state);
}
static int random_below(int n) { return n > 0 ? (int)(next_random() % (uint64_t)n) : 0; }

static void send(cJSON *message) {
    char *text = cJSON_PrintUnformatted(message);
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout); /* arena waits for the line: never leave it in the buffer */
    free(text);
    cJSON_Delete(message);
}

static int get_int(const cJSON *object, const char *key, int fallback) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    return cJSON_IsNumber(item) ? item->valueint : fallback;
}
static const char *get_str(const cJSON *object, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    return cJSON_IsString(item) ? item->valuestring : "";
}

/* ---- Three Thirteen: the least deadwood of a hand -------------------------------------
 * A card of the wild rank is a wild. A combination is a set (3+ of one rank) or a run
 * (3+ of one suit in sequence); wilds fill its gaps. Spare wilds join any combination,
 * or make their own with three or more (when all_wild_combinations); else they count. */
#define MAX_CARDS 16
typedef struct { int rank, suit, id; } Card;
typedef struct {
    Card natural[MAX_CARDS];
    int naturals, wilds, wild_cost, ace_high, all_wild;
    short *memo; /* (mask, wilds left, formed) -> least deadwood, -1 unknown */
} Hand;

static int penalty(int rank, int ace_high) { return rank == 1 && ace_high ? 15 : rank > 10 ? 10 : rank; }
static int run_rank(const Hand *h, int i) { return h->natural[i].rank == 1 && h->ace_high ? 14 : h->natural[i].rank; }

static int least(Hand *h, int mask, int wilds, int formed);

/* Try every combination that holds natural `first` (and others of `mask`). */
static int best_with(Hand *h, int mask, int wilds, int first, int best) {
    int partners[MAX_CARDS], count = 0;
    for (int j = 0; j < h->naturals; j++)
        if (j != first && (mask >> j & 1) &&
            (h->natural[j].rank == h->natural[first].rank || h->natural[j].suit == h->natural[first].suit))
            partners[count++] = j;
    if (count > 12) count = 12;
    for (int pick = 0; pick < (1 << count); pick++) {
        int used = 1 << first, size = 1, same_rank = 1, same_suit = 1, lo = run_rank(h, first), hi = lo;
        int ranks_seen = 1 << lo, distinct = 1;
        for (int b = 0; b < count; b++) {
            if (!(pick >> b & 1)) continue;
            const Card *c = &h->natural[partners[b]];
            used |= 1 << partners[b];
            size++;
            if (c->rank != h->natural[first].rank) same_rank = 0;
            if (c->suit != h->natural[first].suit) same_suit = 0;
            int r = run_rank(h, partners[b]);
            if (ranks_seen >> r & 1) distinct = 0;
            ranks_seen |= 1 << r;
            if (r < lo) lo = r;
            if (r > hi) hi = r;
        }
        if (size > 5) continue; /* a longer combination splits into two at no cost */
        int need;
        if (same_rank) need = size >= 3 ? 0 : 3 - size;
        else if (same_suit && distinct && hi - lo < 5) need = (hi - lo + 1 > 3 ? hi - lo + 1 : 3) - size;
        else continue;
        if (need > wilds) continue;
        int value = least(h, mask & ~used, wilds - need, 1);
        if (value < best) best = value;
    }
    return best;
}

static int least(Hand *h, int mask, int wilds, int formed) {
    if (mask == 0) {
        if (wilds == 0 || formed || (h->all_wild && wilds >= 3)) return 0;
        return wilds * h->wild_cost;
    }
    int key = (mask * (MAX_CARDS + 1) + wilds) * 2 + formed;
    if (h->memo[key] >= 0) return h->memo[key];
    int first = __builtin_ctz(mask);
    int best = penalty(h->natural[first].rank, h->ace_high) + least(h, mask & ~(1 << first), wilds, formed);
    best = best_with(h, mask, wilds, first, best);
    h->memo[key] = (short)best;
    return best;
}

/* The least deadwood of `cards` (n of them), leaving out card `skip` (-1: none). */
static int deadwood(const Card *cards, int n, int skip, const cJSON *observation) {
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(observation, "options");
    int wild_rank = get_int(observation, "wild_rank", 0);
    Hand h = {0};
    h.ace_high = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(options, "ace_high"));
    const cJSON *all_wild = cJSON_GetObjectItemCaseSensitive(options, "all_wild_combinations");
    h.all_wild = all_wild == NULL || cJSON_IsTrue(all_wild);
    int wild_penalty = get_int(options, "wild_penalty", 0);
    h.wild_cost = wild_penalty ? wild_penalty : penalty(wild_rank, h.ace_high);
    for (int i = 0; i < n; i++) {
        if (i == skip) continue;
        if (cards[i].rank == wild_rank) h.wilds++;
        else if (h.naturals < MAX_CARDS - 1) h.natural[h.naturals++] = cards[i];
    }
    size_t size = (size_t)(1 << h.naturals) * (MAX_CARDS + 1) * 2;
    h.memo = malloc(size * sizeof(short));
    memset(h.memo, 0xff, size * sizeof(short));
    int value = least(&h, (1 << h.naturals) - 1, h.wilds, 0);
    free(h.memo);
    return value;
}

static int read_cards(const cJSON *list, Card *cards) {
    int n = 0;
    const cJSON *card;
    cJSON_ArrayForEach(card, list) {
        if (n == MAX_CARDS) break;
        cards[n].rank = get_int(card, "rank", 0);
        cards[n].suit = get_str(card, "suit")[0];
        cards[n].id = get_int(card, "id", -1);
        n++;
    }
    return n;
}

static int three_thirteen(const cJSON *observation, const cJSON *legal) {
    Card hand[MAX_CARDS + 1];
    int n = read_cards(cJSON_GetObjectItemCaseSensitive(observation, "hand"), hand);
    int count = cJSON_GetArraySize(legal), stock = -1, pile = -1, best = -1, best_value = 1 << 30;
    for (int i = 0; i < count; i++) {
        const cJSON *action = cJSON_GetArrayItem(legal, i);
        const char *type = get_str(action, "type");
        if (strcmp(type, "go_out") == 0) return i; /* a round won */
        if (strcmp(type, "draw") == 0) {
            if (strcmp(get_str(action, "source"), "discard") == 0) pile = i;
            else stock = i;
        }
    }
    if (stock >= 0 || pile >= 0) { /* draw: the discard only when it lowers the deadwood */
        const cJSON *discards = cJSON_GetObjectItemCaseSensitive(observation, "discard_pile");
        int size = cJSON_GetArraySize(discards);
        if (pile < 0 || size == 0 || n >= MAX_CARDS) return stock >= 0 ? stock : pile;
        const cJSON *last = cJSON_GetArrayItem(discards, size - 1);
        hand[n].rank = get_int(last, "rank", 0);
        hand[n].suit = get_str(last, "suit")[0];
        int now = deadwood(hand, n, -1, observation), after = 1 << 30;
        for (int skip = 0; skip < n; skip++) {
            int value = deadwood(hand, n + 1, skip, observation);
            if (value < after) after = value;
        }
        return after < now || stock < 0 ? pile : stock;
    }
    for (int i = 0; i < count; i++) { /* discard: the card that leaves the least deadwood */
        const cJSON *action = cJSON_GetArrayItem(legal, i);
        if (strcmp(get_str(action, "type"), "discard") != 0) continue;
        int id = get_int(action, "card", -1);
        for (int j = 0; j < n; j++) {
            if (hand[j].id != id) continue;
            /* ties: throw the highest penalty */
            int value = deadwood(hand, n, j, observation) * 100 - penalty(hand[j].rank, 0);
            if (value < best_value) best_value = value, best = i;
        }
    }
    return best >= 0 ? best : random_below(count);
}

/* ---- YOUR STRATEGY: return an index into `legal` -------------------------------------
 * `observation` is the request's observation as JSON text (`length` bytes): parse it when
 * your strategy needs it (cJSON_ParseWithLength, as below; cJSON_Delete it after). */
static int choose(const char *game, const char *observation, size_t length, const cJSON *legal) {
    if (strcmp(game, "three-thirteen") == 0) {
        cJSON *parsed = cJSON_ParseWithLength(observation, length);
        int index = three_thirteen(parsed, legal);
        cJSON_Delete(parsed);
        return index;
    }
    return random_below(cJSON_GetArraySize(legal)); /* 3up3down and any other: random */
}

/* ---- the protocol loop ---------------------------------------------------------------
 * A referee message is split into its members' JSON texts by members() below, and only
 * what is read is parsed: cJSON parsing the whole request, a node and a key allocated per
 * value, cost more than the rest of a turn (docs/performance.md, Starter kits). */
#define MAX_MEMBERS 16
typedef struct { const char *key, *value; size_t key_length, length; } Member;

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* Just after the JSON value that starts at p (the referee writes valid JSON). */
static const char *skip_value(const char *p) {
    int depth = 0;
    for (; *p; p++) {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1]) p++;
            if (depth == 0) return *p ? p + 1 : p;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth <= 0) return p + 1 + depth; /* a scalar's end is the closing bracket */
        } else if (depth == 0 && (*p == ',' || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) {
            return p;
        }
    }
    return p;
}

static int members(const char *line, Member *found) {
    int count = 0;
    const char *p = skip_space(line);
    if (*p != '{') return 0;
    for (p++; count < MAX_MEMBERS;) {
        p = skip_space(p);
        if (*p == '\0' || *p == '}') break;
        if (*p == ',') {
            p++;
            continue;
        }
        const char *key_end = skip_value(p), *colon = skip_space(key_end);
        if (*p != '"' || *colon != ':') break;
        const char *value = skip_space(colon + 1), *end = skip_value(value);
        found[count++] = (Member){p + 1, value, (size_t)(key_end - p - 2), (size_t)(end - value)};
        p = end;
    }
    return count;
}

static const Member *find(const Member *found, int count, const char *key) {
    for (int i = 0; i < count; i++)
        if (found[i].key_length == strlen(key) && memcmp(found[i].key, key, found[i].key_length) == 0) return &found[i];
    return NULL;
}

/* A member parsed with cJSON (NULL when absent): cJSON_Delete it when done. */
static cJSON *member(const Member *found, int count, const char *key) {
    const Member *m = find(found, count, key);
    return m ? cJSON_ParseWithLength(m->value, m->length) : NULL;
}

int main(void) {
    char *line = NULL;
    size_t capacity = 0;
    char game[64] = "";
    while (getline(&line, &capacity, stdin) > 0) {
        Member found[MAX_MEMBERS];
        int count = members(line, found);
        cJSON *kind = member(found, count, "type"), *seed = member(found, count, "seed");
        const char *type = cJSON_IsString(kind) ? kind->valuestring : "";
        if (strcmp(type, "hello") == 0 || strcmp(type, "start") == 0) seed_from(seed);
        if (strcmp(type, "hello") == 0) {
            cJSON *name = member(found, count, "game");
            snprintf(game, sizeof game, "%s", cJSON_IsString(name) ? name->valuestring : "");
            cJSON_Delete(name);
            cJSON *ready = cJSON_CreateObject();
            cJSON_AddStringToObject(ready, "type", "ready");
            cJSON_AddStringToObject(ready, "name", NAME);
            cJSON_AddStringToObject(ready, "version", VERSION);
            cJSON_AddNumberToObject(ready, "protocol", 1);
            send(ready);
        } else if (strcmp(type, "request") == 0) {
            cJSON *legal = member(found, count, "legal_actions"), *id = member(found, count, "id");
            const Member *observation = find(found, count, "observation");
            int index = choose(game, observation ? observation->value : "null", observation ? observation->length : 4,
                               legal);
            if (index < 0 || index >= cJSON_GetArraySize(legal)) index = 0;
            cJSON *answer = cJSON_CreateObject();
            cJSON_AddStringToObject(answer, "type", "action");
            cJSON_AddItemToObject(answer, "id", id ? id : cJSON_CreateNull());
            cJSON_AddNumberToObject(answer, "index", index);
            send(answer);
            cJSON_Delete(legal);
        } else if (strcmp(type, "match_over") == 0) {
            cJSON_Delete(kind);
            cJSON_Delete(seed);
            break;
        }
        cJSON_Delete(kind);
        cJSON_Delete(seed);
    }
    free(line);
    return 0;
}
