// An arena bot in Rust: the protocol loop, a legal random move, and for Three Thirteen the
// hand's least deadwood. Your strategy goes in choose(), near the end of this file.
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{self, BufRead, Write};

const NAME: &str = "rust-kit";
const VERSION: &str = "1.0";

/// A seeded generator (splitmix64), seeded by the referee: a match replays exactly.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        if n == 0 { 0 } else { ((z ^ (z >> 31)) % n as u64) as usize }
    }
}

fn send(out: &mut impl Write, message: Value) {
    writeln!(out, "{}", message).unwrap();
    out.flush().unwrap(); // arena waits for the line: never leave it in the buffer
}

fn num(v: &Value, key: &str) -> i64 { v.get(key).and_then(Value::as_i64).unwrap_or(0) }
fn text<'a>(v: &'a Value, key: &str) -> &'a str { v.get(key).and_then(Value::as_str).unwrap_or("") }

// ---- Three Thirteen: the least deadwood of a hand ---------------------------------------
// A card of the wild rank is a wild. A combination is a set (3+ of one rank) or a run (3+
// of one suit in sequence); wilds fill its gaps. Spare wilds join any combination, or make
// their own with three or more (when all_wild_combinations); else they count.
#[derive(Clone)]
struct Card { rank: i64, id: i64, suit: String }

fn penalty(rank: i64, ace_high: bool) -> i64 { if rank == 1 && ace_high { 15 } else { rank.min(10) } }

struct Deadwood { nat: Vec<Card>, ace_high: bool, all_wild: bool, wild_cost: i64, memo: HashMap<(u32, usize, bool), i64> }

impl Deadwood {
    fn run_rank(&self, j: usize) -> i64 { if self.nat[j].rank == 1 && self.ace_high { 14 } else { self.nat[j].rank } }

    fn least(&mut self, mask: u32, wilds: usize, formed: bool) -> i64 {
        if mask == 0 {
            return if wilds == 0 || formed || (self.all_wild && wilds >= 3) { 0 } else { wilds as i64 * self.wild_cost };
        }
        if let Some(&known) = self.memo.get(&(mask, wilds, formed)) { return known; }
        let first = mask.trailing_zeros() as usize;
        let f = self.nat[first].clone();
        let mut best = penalty(f.rank, self.ace_high) + self.least(mask & !(1 << first), wilds, formed);
        let partners: Vec<usize> = (0..self.nat.len())
            .filter(|&j| j != first && mask >> j & 1 == 1 && (self.nat[j].rank == f.rank || self.nat[j].suit == f.suit))
            .collect();
        for pick in 0u32..(1 << partners.len()) {
            let mut chosen = vec![first];
            chosen.extend(partners.iter().enumerate().filter(|(b, _)| pick >> b & 1 == 1).map(|(_, &j)| j));
            if chosen.len() > 5 { continue; } // a longer combination splits into two at no cost
            let ranks: Vec<i64> = chosen.iter().map(|&j| self.run_rank(j)).collect();
            let (lo, hi) = (*ranks.iter().min().unwrap(), *ranks.iter().max().unwrap());
            let mut distinct = ranks.clone();
            distinct.sort();
            distinct.dedup();
            let need = if chosen.iter().all(|&j| self.nat[j].rank == f.rank) {
                3usize.saturating_sub(chosen.len())
            } else if chosen.iter().all(|&j| self.nat[j].suit == f.suit) && distinct.len() == ranks.len() && hi - lo < 5 {
                ((hi - lo + 1).max(3) as usize) - chosen.len()
            } else {
                continue;
            };
            if need <= wilds {
                let used = chosen.iter().fold(0u32, |m, &j| m | 1 << j);
                best = best.min(self.least(mask & !used, wilds - need, true));
            }
        }
        self.memo.insert((mask, wilds, formed), best);
        best
    }
}

fn deadwood(cards: &[Card], observation: &Value) -> i64 {
    let options = observation.get("options").unwrap_or(&Value::Null);
    let wild_rank = num(observation, "wild_rank");
    let ace_high = options.get("ace_high").and_then(Value::as_bool).unwrap_or(false);
    let cost = num(options, "wild_penalty");
    let nat: Vec<Card> = cards.iter().filter(|c| c.rank != wild_rank).cloned().collect();
    let wilds = cards.len() - nat.len();
    let mut d = Deadwood {
        all_wild: options.get("all_wild_combinations").and_then(Value::as_bool).unwrap_or(true),
        wild_cost: if cost != 0 { cost } else { penalty(wild_rank, ace_high) },
        ace_high, memo: HashMap::new(), nat,
    };
    let all = (1u32 << d.nat.len()) - 1;
    d.least(all, wilds, false)
}

fn card(v: &Value) -> Card { Card { rank: num(v, "rank"), id: num(v, "id"), suit: text(v, "suit").to_string() } }

fn without(cards: &[Card], skip: usize) -> Vec<Card> {
    cards.iter().enumerate().filter(|&(i, _)| i != skip).map(|(_, c)| c.clone()).collect()
}

fn three_thirteen(observation: &Value, legal: &[Value], rng: &mut Rng) -> usize {
    let hand: Vec<Card> = observation.get("hand").and_then(Value::as_array).map(|h| h.iter().map(card).collect()).unwrap_or_default();
    if let Some(i) = legal.iter().position(|a| text(a, "type") == "go_out") { return i; } // a round won
    let stock = legal.iter().position(|a| text(a, "type") == "draw" && text(a, "source") != "discard");
    let pile_draw = legal.iter().position(|a| text(a, "type") == "draw" && text(a, "source") == "discard");
    if stock.is_some() || pile_draw.is_some() { // the discard only when it lowers the deadwood
        let top = observation.get("discard_pile").and_then(Value::as_array).and_then(|pile| pile.last());
        let (p, top) = match (pile_draw, top) {
            (Some(p), Some(top)) => (p, top),
            _ => return stock.or(pile_draw).unwrap(),
        };
        let now = deadwood(&hand, observation);
        let mut taken = hand.clone();
        taken.push(card(top));
        let after = (0..hand.len()).map(|i| deadwood(&without(&taken, i), observation)).min().unwrap_or(i64::MAX);
        return if after < now || stock.is_none() { p } else { stock.unwrap() };
    }
    let mut best: Option<(i64, usize)> = None;
    for (i, action) in legal.iter().enumerate() { // discard: the card that leaves the least deadwood
        if text(action, "type") != "discard" { continue; }
        if let Some(j) = hand.iter().position(|c| c.id == num(action, "card")) {
            let value = deadwood(&without(&hand, j), observation) * 100 - penalty(hand[j].rank, false);
            if best.map_or(true, |(b, _)| value < b) { best = Some((value, i)); }
        }
    }
    best.map(|(_, i)| i).unwrap_or_else(|| rng.below(legal.len()))
}

// ---- YOUR STRATEGY: return an index into `legal` ----------------------------------------
// `observation` is the request's observation as JSON text: decode what you need of it
// (serde_json::from_str into a Value, as three_thirteen does).
fn choose(game: &str, observation: &RawValue, legal: &[Value], rng: &mut Rng) -> usize {
    if game == "three-thirteen" {
        let observation: Value = serde_json::from_str(observation.get()).unwrap_or(Value::Null);
        return three_thirteen(&observation, legal, rng);
    }
    rng.below(legal.len()) // 3up3down and any other: random
}

// ---- the protocol loop ------------------------------------------------------------------
// A referee message: its members kept as JSON text, each decoded when read (decoding the
// whole request into Values every turn cost more than the rest of a turn: see
// docs/performance.md, Starter kits).
type Message<'a> = HashMap<String, &'a RawValue>;

fn member(message: &Message, key: &str) -> Value {
    message.get(key).and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or(Value::Null)
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut rng = Rng(1);
    let mut game = String::new();
    let null = RawValue::from_string("null".to_string()).unwrap();
    for line in stdin.lock().lines() {
        let line = match line { Ok(line) => line, Err(_) => return };
        let message: Message = match serde_json::from_str(&line) { Ok(message) => message, Err(_) => continue };
        let kind = member(&message, "type");
        let kind = kind.as_str().unwrap_or("");
        if kind == "hello" || kind == "start" {
            let seed = member(&message, "seed");
            if let Some(seed) = seed.as_u64().or(seed.as_i64().map(|v| v as u64)) {
                rng = Rng(seed);
            }
        }
        match kind {
            "hello" => {
                game = member(&message, "game").as_str().unwrap_or("").to_string();
                send(&mut out, json!({"type": "ready", "name": NAME, "version": VERSION, "protocol": 1}));
            }
            "request" => {
                let legal = match member(&message, "legal_actions") { Value::Array(legal) => legal, _ => Vec::new() };
                let observation = message.get("observation").copied().unwrap_or(&*null);
                let mut index = choose(&game, observation, &legal, &mut rng);
                if index >= legal.len() { index = 0; }
                send(&mut out, json!({"type": "action", "id": member(&message, "id"), "index": index}));
            }
            "match_over" => return,
            _ => {}
        }
    }
}
