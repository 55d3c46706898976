// An arena bot in Go: the protocol loop, a legal random move, and for Three Thirteen the
// hand's least deadwood. Your strategy goes in choose(), near the end of this file.
package main

import (
	"bufio"
	"encoding/json"
	"math/rand"
	"os"
)

const name, version = "go-kit", "1.0"

type object = map[string]any

var rng = rand.New(rand.NewSource(1)) // seeded by the referee: a match replays exactly
var out = bufio.NewWriter(os.Stdout)

func send(message object) {
	line, _ := json.Marshal(message)
	out.Write(append(line, '\n'))
	out.Flush() // arena waits for the line: never leave it in the buffer
}

func num(o object, key string) int {
	if value, ok := o[key].(float64); ok {
		return int(value)
	}
	return 0
}

func str(o object, key string) string {
	value, _ := o[key].(string)
	return value
}

func list(o object, key string) []object {
	items, _ := o[key].([]any)
	result := make([]object, 0, len(items))
	for _, item := range items {
		if entry, ok := item.(object); ok {
			result = append(result, entry)
		}
	}
	return result
}

// ---- Three Thirteen: the least deadwood of a hand ---------------------------------------
// A card of the wild rank is a wild. A combination is a set (3+ of one rank) or a run (3+
// of one suit in sequence); wilds fill its gaps. Spare wilds join any combination, or make
// their own with three or more (when all_wild_combinations); else they count.
type card struct {
	rank, id int
	suit     string
}

func penalty(rank int, aceHigh bool) int {
	if rank == 1 && aceHigh {
		return 15
	}
	if rank > 10 {
		return 10
	}
	return rank
}

func deadwood(cards []card, observation object) int {
	options, _ := observation["options"].(object)
	wildRank := num(observation, "wild_rank")
	aceHigh, _ := options["ace_high"].(bool)
	allWild, set := options["all_wild_combinations"].(bool)
	allWild = allWild || !set
	wildCost := num(options, "wild_penalty")
	if wildCost == 0 {
		wildCost = penalty(wildRank, aceHigh)
	}
	var naturals []card
	for _, c := range cards {
		if c.rank != wildRank {
			naturals = append(naturals, c)
		}
	}
	runRank := func(j int) int {
		if naturals[j].rank == 1 && aceHigh {
			return 14
		}
		return naturals[j].rank
	}
	memo := map[int]int{}
	var least func(mask, wilds int, formed bool) int
	least = func(mask, wilds int, formed bool) int {
		if mask == 0 {
			if wilds == 0 || formed || (allWild && wilds >= 3) {
				return 0
			}
			return wilds * wildCost
		}
		key := (mask*32+wilds)*2 + map[bool]int{false: 0, true: 1}[formed]
		if value, ok := memo[key]; ok {
			return value
		}
		first := 0
		for mask>>first&1 == 0 {
			first++
		}
		best := penalty(naturals[first].rank, aceHigh) + least(mask&^(1<<first), wilds, formed)
		var partners []int
		for j, c := range naturals {
			if j != first && mask>>j&1 == 1 && (c.rank == naturals[first].rank || c.suit == naturals[first].suit) {
				partners = append(partners, j)
			}
		}
		for pick := 0; pick < 1<<len(partners); pick++ {
			chosen := []int{first}
			for b, j := range partners {
				if pick>>b&1 == 1 {
					chosen = append(chosen, j)
				}
			}
			if len(chosen) > 5 { // a longer combination splits into two at no cost
				continue
			}
			sameRank, sameSuit, distinct := true, true, true
			lo, hi, seen, used := runRank(first), runRank(first), 0, 0
			for _, j := range chosen {
				sameRank = sameRank && naturals[j].rank == naturals[first].rank
				sameSuit = sameSuit && naturals[j].suit == naturals[first].suit
				r := runRank(j)
				distinct = distinct && seen>>r&1 == 0
				seen |= 1 << r
				used |= 1 << j
				lo, hi = min(lo, r), max(hi, r)
			}
			need := -1
			if sameRank {
				need = max(0, 3-len(chosen))
			} else if sameSuit && distinct && hi-lo < 5 {
				need = max(3, hi-lo+1) - len(chosen)
			}
			if need >= 0 && need <= wilds {
				best = min(best, least(mask&^used, wilds-need, true))
			}
		}
		memo[key] = best
		return best
	}
	return least(1<<len(naturals)-1, len(cards)-len(naturals), false)
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func without(cards []card, skip int) []card {
	rest := make([]card, 0, len(cards))
	for i, c := range cards {
		if i != skip {
			rest = append(rest, c)
		}
	}
	return rest
}

func toCard(o object) card { return card{num(o, "rank"), num(o, "id"), str(o, "suit")} }

func threeThirteen(raw json.RawMessage, legal []object) int {
	var observation object
	json.Unmarshal(raw, &observation)
	var hand []card
	for _, c := range list(observation, "hand") {
		hand = append(hand, toCard(c))
	}
	stock, pileDraw := -1, -1
	for i, action := range legal {
		switch {
		case str(action, "type") == "go_out":
			return i // a round won
		case str(action, "type") == "draw" && str(action, "source") == "discard":
			pileDraw = i
		case str(action, "type") == "draw":
			stock = i
		}
	}
	if stock >= 0 || pileDraw >= 0 { // the discard only when it lowers the deadwood
		pile := list(observation, "discard_pile")
		if pileDraw < 0 || len(pile) == 0 {
			return max(stock, pileDraw)
		}
		now := deadwood(hand, observation)
		taken := append(append([]card{}, hand...), toCard(pile[len(pile)-1]))
		after := 1 << 30
		for i := range hand {
			after = min(after, deadwood(without(taken, i), observation))
		}
		if after < now || stock < 0 {
			return pileDraw
		}
		return stock
	}
	best, bestValue := -1, 1<<30
	for i, action := range legal { // discard: the card that leaves the least deadwood
		if str(action, "type") != "discard" {
			continue
		}
		for j, c := range hand {
			if c.id == num(action, "card") {
				value := deadwood(without(hand, j), observation)*100 - penalty(c.rank, false)
				if value < bestValue {
					best, bestValue = i, value
				}
			}
		}
	}
	if best < 0 {
		return rng.Intn(len(legal))
	}
	return best
}

// ---- YOUR STRATEGY: return an index into `legal` ----------------------------------------
// `observation` is the request's observation as JSON text: decode what you need of it
// (json.Unmarshal into an object, or into a struct of your own, which is faster).
func choose(game string, observation json.RawMessage, legal []object) int {
	if game == "three-thirteen" {
		return threeThirteen(observation, legal)
	}
	return rng.Intn(len(legal)) // 3up3down and any other: random
}

// ---- the protocol loop ------------------------------------------------------------------
// A referee message is split into its members' JSON texts by members() below, and only
// what is read is decoded: encoding/json scans every byte twice and decoding the whole
// request every turn cost more than the rest of a turn (docs/performance.md, Starter kits).
func members(line []byte) map[string]json.RawMessage {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil
	}
	found := map[string]json.RawMessage{}
	for i++; ; {
		i = skipSpace(line, i)
		if i >= len(line) || line[i] == '}' {
			return found
		}
		if line[i] == ',' {
			i++
			continue
		}
		keyEnd := skipValue(line, i)
		colon := skipSpace(line, keyEnd)
		if line[i] != '"' || colon >= len(line) || line[colon] != ':' {
			return nil
		}
		start := skipSpace(line, colon+1)
		end := skipValue(line, start)
		found[string(line[i+1:keyEnd-1])] = line[start:end]
		i = end
	}
}

// skipSpace and skipValue: the index of the next non-space byte, and the index just after
// the JSON value that starts at line[i] (the referee writes valid JSON).
func skipSpace(line []byte, i int) int {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n') {
		i++
	}
	return i
}

func skipValue(line []byte, i int) int {
	depth := 0
	for ; i < len(line); i++ {
		switch line[i] {
		case '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth <= 0 {
				return i + 1 + depth // a scalar's end is the closing bracket's index
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

func decode(raw json.RawMessage, into any) bool {
	return raw != nil && json.Unmarshal(raw, into) == nil
}

func main() {
	in := bufio.NewReader(os.Stdin)
	game := ""
	for {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			return
		}
		message := members(line)
		var kind string
		var seed float64
		decode(message["type"], &kind)
		switch kind {
		case "hello":
			decode(message["game"], &game)
			if decode(message["seed"], &seed) {
				rng.Seed(int64(uint64(seed)))
			}
			send(object{"type": "ready", "name": name, "version": version, "protocol": 1})
		case "start":
			if decode(message["seed"], &seed) {
				rng.Seed(int64(uint64(seed)))
			}
		case "request":
			var legal []object
			decode(message["legal_actions"], &legal)
			index := choose(game, message["observation"], legal)
			if index < 0 || index >= len(legal) {
				index = 0
			}
			send(object{"type": "action", "id": message["id"], "index": index})
		case "match_over":
			return
		}
	}
}
