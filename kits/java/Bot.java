// An arena bot in Java: the protocol loop, a legal random move, and for Three Thirteen the
// hand's least deadwood. Your strategy goes in choose(), near the end of this file.
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public class Bot {
    static final String NAME = "java-kit", VERSION = "1.0";
    static Random rng = new Random(1); // seeded by the referee: a match replays exactly

    static void send(JsonObject message) {
        System.out.println(message.toString());
        System.out.flush(); // arena waits for the line: never leave it in the buffer
    }

    static int num(JsonObject o, String key, int fallback) {
        JsonElement e = o == null ? null : o.get(key);
        return e != null && e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber() ? e.getAsInt() : fallback;
    }

    static String str(JsonObject o, String key) {
        JsonElement e = o == null ? null : o.get(key);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    static JsonArray array(JsonObject o, String key) {
        JsonElement e = o == null ? null : o.get(key);
        return e != null && e.isJsonArray() ? e.getAsJsonArray() : new JsonArray();
    }

    // ---- Three Thirteen: the least deadwood of a hand -----------------------------------
    // A card of the wild rank is a wild. A combination is a set (3+ of one rank) or a run
    // (3+ of one suit in sequence); wilds fill its gaps. Spare wilds join any combination,
    // or make their own with three or more (when all_wild_combinations); else they count.
    record Card(int rank, int id, String suit) {}

    static int penalty(int rank, boolean aceHigh) { return rank == 1 && aceHigh ? 15 : Math.min(rank, 10); }

    static final class Deadwood {
        final List<Card> nat = new ArrayList<>();
        final Map<Integer, Integer> memo = new HashMap<>();
        final boolean aceHigh, allWild;
        final int wildCost;

        Deadwood(List<Card> cards, JsonObject observation) {
            JsonObject options = observation.has("options") ? observation.getAsJsonObject("options") : new JsonObject();
            int wildRank = num(observation, "wild_rank", 0);
            aceHigh = options.has("ace_high") && options.get("ace_high").getAsBoolean();
            allWild = !options.has("all_wild_combinations") || options.get("all_wild_combinations").getAsBoolean();
            int cost = num(options, "wild_penalty", 0);
            wildCost = cost != 0 ? cost : penalty(wildRank, aceHigh);
            for (Card c : cards) if (c.rank() != wildRank) nat.add(c);
        }

        int runRank(int j) { return nat.get(j).rank() == 1 && aceHigh ? 14 : nat.get(j).rank(); }

        int least(int mask, int wilds, boolean formed) {
            if (mask == 0) return wilds == 0 || formed || (allWild && wilds >= 3) ? 0 : wilds * wildCost;
            int key = (mask * 32 + wilds) * 2 + (formed ? 1 : 0);
            Integer known = memo.get(key);
            if (known != null) return known;
            int first = Integer.numberOfTrailingZeros(mask);
            Card f = nat.get(first);
            int best = penalty(f.rank(), aceHigh) + least(mask & ~(1 << first), wilds, formed);
            List<Integer> partners = new ArrayList<>();
            for (int j = 0; j < nat.size(); j++)
                if (j != first && (mask >> j & 1) == 1
                        && (nat.get(j).rank() == f.rank() || nat.get(j).suit().equals(f.suit())))
                    partners.add(j);
            for (int pick = 0; pick < (1 << partners.size()); pick++) {
                List<Integer> chosen = new ArrayList<>(List.of(first));
                for (int b = 0; b < partners.size(); b++) if ((pick >> b & 1) == 1) chosen.add(partners.get(b));
                if (chosen.size() > 5) continue; // a longer combination splits into two at no cost
                boolean sameRank = true, sameSuit = true, distinct = true;
                int lo = runRank(first), hi = lo, seen = 0, used = 0;
                for (int j : chosen) {
                    sameRank &= nat.get(j).rank() == f.rank();
                    sameSuit &= nat.get(j).suit().equals(f.suit());
                    int r = runRank(j);
                    distinct &= (seen >> r & 1) == 0;
                    seen |= 1 << r;
                    used |= 1 << j;
                    lo = Math.min(lo, r);
                    hi = Math.max(hi, r);
                }
                int need = -1;
                if (sameRank) need = Math.max(0, 3 - chosen.size());
                else if (sameSuit && distinct && hi - lo < 5) need = Math.max(3, hi - lo + 1) - chosen.size();
                if (need >= 0 && need <= wilds) best = Math.min(best, least(mask & ~used, wilds - need, true));
            }
            memo.put(key, best);
            return best;
        }
    }

    static int deadwood(List<Card> cards, JsonObject observation) {
        Deadwood d = new Deadwood(cards, observation);
        return d.least((1 << d.nat.size()) - 1, cards.size() - d.nat.size(), false);
    }

    static Card card(JsonElement e) {
        JsonObject o = e.getAsJsonObject();
        return new Card(num(o, "rank", 0), num(o, "id", -1), str(o, "suit"));
    }

    static List<Card> without(List<Card> cards, int skip) {
        List<Card> rest = new ArrayList<>(cards);
        rest.remove(skip);
        return rest;
    }

    static int threeThirteen(JsonObject observation, JsonArray legal) {
        List<Card> hand = new ArrayList<>();
        for (JsonElement e : array(observation, "hand")) hand.add(card(e));
        int stock = -1, pileDraw = -1;
        for (int i = 0; i < legal.size(); i++) {
            JsonObject action = legal.get(i).getAsJsonObject();
            String type = str(action, "type");
            if (type.equals("go_out")) return i; // a round won
            if (type.equals("draw")) {
                if (str(action, "source").equals("discard")) pileDraw = i;
                else stock = i;
            }
        }
        if (stock >= 0 || pileDraw >= 0) { // the discard only when it lowers the deadwood
            JsonArray pile = array(observation, "discard_pile");
            if (pileDraw < 0 || pile.size() == 0) return Math.max(stock, pileDraw);
            int now = deadwood(hand, observation), after = Integer.MAX_VALUE;
            List<Card> taken = new ArrayList<>(hand);
            taken.add(card(pile.get(pile.size() - 1)));
            for (int i = 0; i < hand.size(); i++) after = Math.min(after, deadwood(without(taken, i), observation));
            return after < now || stock < 0 ? pileDraw : stock;
        }
        int best = -1, bestValue = Integer.MAX_VALUE;
        for (int i = 0; i < legal.size(); i++) { // discard: the card that leaves the least deadwood
            JsonObject action = legal.get(i).getAsJsonObject();
            if (!str(action, "type").equals("discard")) continue;
            for (int j = 0; j < hand.size(); j++) {
                if (hand.get(j).id() != num(action, "card", -2)) continue;
                int value = deadwood(without(hand, j), observation) * 100 - penalty(hand.get(j).rank(), false);
                if (value < bestValue) {
                    best = i;
                    bestValue = value;
                }
            }
        }
        return best >= 0 ? best : rng.nextInt(legal.size());
    }

    // ---- YOUR STRATEGY: return an index into `legal` ------------------------------------
    // `observation` is the request's observation as JSON text: parse what you need of it
    // (JsonParser.parseString, as below).
    static int choose(String game, String observation, JsonArray legal) {
        if (game.equals("three-thirteen"))
            return threeThirteen(JsonParser.parseString(observation).getAsJsonObject(), legal);
        return rng.nextInt(legal.size()); // 3up3down and any other: random
    }

    // ---- the protocol loop --------------------------------------------------------------
    // A referee message is split into its members' JSON texts by members() below, and only
    // what is read is parsed: parsing the whole request every turn into Gson's tree cost
    // more than the rest of a turn (docs/performance.md, Starter kits).
    static Map<String, String> members(String text) {
        Map<String, String> found = new HashMap<>();
        char[] line = text.toCharArray();
        int i = skipSpace(line, 0);
        if (i >= line.length || line[i] != '{') return found;
        for (i++; ; ) {
            i = skipSpace(line, i);
            if (i >= line.length || line[i] == '}') return found;
            if (line[i] == ',') {
                i++;
                continue;
            }
            int keyEnd = skipValue(line, i), colon = skipSpace(line, keyEnd);
            if (line[i] != '"' || colon >= line.length || line[colon] != ':') return found;
            int start = skipSpace(line, colon + 1), end = skipValue(line, start);
            found.put(new String(line, i + 1, keyEnd - i - 2), new String(line, start, end - start));
            i = end;
        }
    }

    // The index of the next non-space character, and the index just after the JSON value
    // that starts at line[i] (the referee writes valid JSON).
    static int skipSpace(char[] line, int i) {
        while (i < line.length && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n')) i++;
        return i;
    }

    static int skipValue(char[] line, int i) {
        int depth = 0;
        for (; i < line.length; i++) {
            char c = line[i];
            if (c == '"') {
                for (i++; i < line.length && line[i] != '"'; i++) if (line[i] == '\\') i++;
                if (depth == 0) return i + 1;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth <= 0) return i + 1 + depth; // a scalar's end is the closing bracket's index
            } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
                return i;
            }
        }
        return i;
    }

    // A line of stdin, read as bytes and decoded once (BufferedReader.readLine decodes and
    // copies it a character at a time: a third of a turn under the JVM's first compiler).
    static byte[] input = new byte[1 << 16];
    static int start = 0, end = 0;

    static String readLine(InputStream in) throws IOException {
        for (int scan = start; ; ) {
            for (; scan < end; scan++) {
                if (input[scan] == '\n') {
                    String line = new String(input, start, scan - start, StandardCharsets.UTF_8);
                    start = scan + 1;
                    return line;
                }
            }
            if (start > 0) { // keep the unread part at the front
                System.arraycopy(input, start, input, 0, end - start);
                end -= start;
                scan -= start;
                start = 0;
            }
            if (end == input.length) input = Arrays.copyOf(input, input.length * 2);
            int got = in.read(input, end, input.length - end);
            if (got < 0) {
                if (end == start) return null;
                String line = new String(input, start, end - start, StandardCharsets.UTF_8);
                start = end;
                return line;
            }
            end += got;
        }
    }

    static JsonElement member(Map<String, String> message, String key) {
        String raw = message.get(key);
        if (raw == null) return JsonNull.INSTANCE;
        if (raw.length() >= 2 && raw.charAt(0) == '"' && raw.indexOf('\\') < 0) // a plain string
            return new JsonPrimitive(raw.substring(1, raw.length() - 1));
        return JsonParser.parseString(raw);
    }

    public static void main(String[] args) throws Exception {
        String line, game = "";
        while ((line = readLine(System.in)) != null) {
            if (line.isBlank()) continue;
            Map<String, String> message = members(line);
            JsonElement kind = member(message, "type"), seed = member(message, "seed");
            String type = kind.isJsonPrimitive() ? kind.getAsString() : "";
            if ((type.equals("hello") || type.equals("start")) && seed.isJsonPrimitive()) {
                rng = new Random(seed.getAsBigInteger().longValue());
            }
            if (type.equals("hello")) {
                JsonElement name = member(message, "game");
                game = name.isJsonPrimitive() ? name.getAsString() : "";
                JsonObject ready = new JsonObject();
                ready.addProperty("type", "ready");
                ready.addProperty("name", NAME);
                ready.addProperty("version", VERSION);
                ready.addProperty("protocol", 1);
                send(ready);
            } else if (type.equals("request")) {
                JsonElement actions = member(message, "legal_actions");
                JsonArray legal = actions.isJsonArray() ? actions.getAsJsonArray() : new JsonArray();
                int index = choose(game, message.getOrDefault("observation", "{}"), legal);
                if (index < 0 || index >= legal.size()) index = 0;
                JsonObject answer = new JsonObject();
                answer.addProperty("type", "action");
                answer.add("id", member(message, "id"));
                answer.addProperty("index", index);
                send(answer);
            } else if (type.equals("match_over")) {
                return;
            }
        }
    }
}
