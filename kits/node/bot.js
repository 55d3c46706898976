// An arena bot in JavaScript (Node.js): the protocol loop, a legal random move, and for
// Three Thirteen the hand's least deadwood. Your strategy goes in choose(), at the end.
"use strict";
const readline = require("readline");

const NAME = "node-kit";
const VERSION = "1.0";

// A seeded generator (mulberry32), seeded by the referee: a match replays exactly.
let state = 1;
function seed(value) {
  state = Number(BigInt.asUintN(32, BigInt(value))) >>> 0;
}
function randomBelow(n) {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n"); // a pipe write: out at once
}

// ---- Three Thirteen: the least deadwood of a hand ---------------------------------------
// A card of the wild rank is a wild. A combination is a set (3+ of one rank) or a run (3+
// of one suit in sequence); wilds fill its gaps. Spare wilds join any combination, or make
// their own with three or more (when all_wild_combinations); else they count.
function penalty(rank, aceHigh) {
  return rank === 1 && aceHigh ? 15 : Math.min(rank, 10);
}

function deadwood(cards, observation) {
  const options = observation.options || {};
  const wildRank = observation.wild_rank;
  const aceHigh = !!options.ace_high;
  const allWild = options.all_wild_combinations !== false;
  const wildCost = options.wild_penalty || penalty(wildRank || 0, aceHigh);
  const naturals = cards.filter((c) => c.rank !== wildRank);
  const runRank = naturals.map((c) => (c.rank === 1 && aceHigh ? 14 : c.rank));
  const memo = new Map();
  function least(mask, wilds, formed) {
    if (mask === 0) return wilds === 0 || formed || (allWild && wilds >= 3) ? 0 : wilds * wildCost;
    const key = (mask * 32 + wilds) * 2 + (formed ? 1 : 0);
    if (memo.has(key)) return memo.get(key);
    const first = 31 - Math.clz32(mask & -mask);
    let best = penalty(naturals[first].rank, aceHigh) + least(mask & ~(1 << first), wilds, formed);
    const partners = [];
    naturals.forEach((c, j) => {
      if (j !== first && (mask >> j) & 1 && (c.rank === naturals[first].rank || c.suit === naturals[first].suit))
        partners.push(j);
    });
    for (let pick = 0; pick < 1 << partners.length; pick++) {
      const chosen = [first, ...partners.filter((_, b) => (pick >> b) & 1)];
      if (chosen.length > 5) continue; // a longer combination splits into two at no cost
      const ranks = chosen.map((j) => runRank[j]);
      let need;
      if (chosen.every((j) => naturals[j].rank === naturals[first].rank)) need = Math.max(0, 3 - chosen.length);
      else if (chosen.every((j) => naturals[j].suit === naturals[first].suit) && new Set(ranks).size === ranks.length &&
               Math.max(...ranks) - Math.min(...ranks) < 5)
        need = Math.max(3, Math.max(...ranks) - Math.min(...ranks) + 1) - chosen.length;
      else continue;
      if (need > wilds) continue;
      const used = chosen.reduce((m, j) => m | (1 << j), 0);
      best = Math.min(best, least(mask & ~used, wilds - need, true));
    }
    memo.set(key, best);
    return best;
  }
  return least((1 << naturals.length) - 1, cards.length - naturals.length, false);
}

function threeThirteen(observation, legal) {
  const hand = observation.hand || [];
  const goOut = legal.findIndex((a) => a.type === "go_out");
  if (goOut >= 0) return goOut; // a round won
  const stock = legal.findIndex((a) => a.type === "draw" && a.source === "stock");
  const pileDraw = legal.findIndex((a) => a.type === "draw" && a.source === "discard");
  if (stock >= 0 || pileDraw >= 0) { // the discard only when it lowers the deadwood
    const pile = observation.discard_pile || [];
    if (pileDraw < 0 || pile.length === 0) return stock >= 0 ? stock : pileDraw;
    const now = deadwood(hand, observation);
    const taken = [...hand, pile[pile.length - 1]];
    let after = Infinity;
    for (let i = 0; i < hand.length; i++) after = Math.min(after, deadwood(taken.filter((_, k) => k !== i), observation));
    return after < now || stock < 0 ? pileDraw : stock;
  }
  let best = -1;
  let bestValue = Infinity;
  legal.forEach((action, index) => { // discard: the card that leaves the least deadwood
    if (action.type !== "discard") return;
    const card = hand.find((c) => c.id === action.card);
    if (!card) return;
    const value = deadwood(hand.filter((c) => c !== card), observation) * 100 - penalty(card.rank, false);
    if (value < bestValue) [best, bestValue] = [index, value];
  });
  return best >= 0 ? best : randomBelow(legal.length);
}

// ---- YOUR STRATEGY: return an index into `legal` ----------------------------------------
function choose(game, observation, legal) {
  if (game === "three-thirteen") return threeThirteen(observation, legal);
  return randomBelow(legal.length); // 3up3down and any other: random
}

// ---- the protocol loop ------------------------------------------------------------------
let game = "";
const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.type === "hello") {
    game = message.game;
    seed(message.seed);
    send({ type: "ready", name: NAME, version: VERSION, protocol: 1 });
  } else if (message.type === "start" && message.seed !== undefined && message.seed !== null) {
    seed(message.seed);
  } else if (message.type === "request") {
    let index = choose(game, message.observation, message.legal_actions);
    if (!Number.isInteger(index) || index < 0 || index >= message.legal_actions.length) index = 0;
    send({ type: "action", id: message.id, index });
  } else if (message.type === "match_over") {
    process.exit(0);
  }
});
input.on("close", () => process.exit(0));
