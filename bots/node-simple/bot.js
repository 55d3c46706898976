// node-simple: an arena bot in JavaScript (Node.js, standard library only), to show that
// the protocol is language-neutral. It plays both games with a simple preference and
// picks at random (seeded by the referee's `hello`, and by each game's `start` in a
// tournament) among actions it likes equally:
// - 3up3down: the lowest number value it can play, all copies at once; a Clear card only
//   when nothing else goes; the strongest three cards face up at setup; always refill.
// - three-thirteen: go out when it can; take the discard when it is wild or matches a card
//   in hand (same rank, or same suit one rank apart); discard the card with the fewest
//   partners in hand (never a wild if it can help it), the highest penalty on a tie.
// Any game or message it does not know: a random legal action, or the message is ignored.
"use strict";

const readline = require("readline");

const NAME = "node-simple";
const VERSION = "1.0";

// mulberry32: a tiny seeded generator, so a match replays exactly.
function makeRng(seed) {
  let state = Number(BigInt.asUintN(32, BigInt(seed))) >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let rng = makeRng(1);
let game = "";

function send(message) {
  // Writes to a pipe are synchronous on Linux: the line is out before the next request.
  process.stdout.write(JSON.stringify(message) + "\n");
}

// The indices whose score is the lowest; a seeded random one of them.
function bestOf(indices, score) {
  let best = [];
  let bestScore = Infinity;
  for (const index of indices) {
    const value = score(index);
    if (value < bestScore) {
      best = [index];
      bestScore = value;
    } else if (value === bestScore) {
      best.push(index);
    }
  }
  return best[Math.floor(rng() * best.length)];
}

function indicesOf(legal, type) {
  const found = [];
  legal.forEach((action, index) => {
    if (action.type === type) found.push(index);
  });
  return found;
}

// ---- 3up3down -------------------------------------------------------------------------

const SPECIAL = { clear: 11, clear1: 12, clear2: 13 };

function strength(card) {
  return card.kind === "number" ? card.value : SPECIAL[card.kind] || 11;
}

function threeUp(observation, legal) {
  const cards = new Map();
  for (const card of observation.setup_cards || []) cards.set(card.id, card);
  for (const card of observation.hand || []) cards.set(card.id, card);
  for (const up of observation.up || []) for (const card of up || []) cards.set(card.id, card);

  const chooseUp = indicesOf(legal, "choose_up");
  if (chooseUp.length) {
    const sign = observation.rules && observation.rules.choose_for_others ? 1 : -1;
    return bestOf(chooseUp, (i) => sign * legal[i].cards.reduce((sum, id) => sum + strength(cards.get(id)), 0));
  }
  const refill = indicesOf(legal, "refill");
  if (refill.length) return refill[0];
  const plays = indicesOf(legal, "play");
  if (plays.length) {
    // Numbers first, lowest value, most cards; Clear cards last (plain Clear before +1, +2).
    return bestOf(plays, (i) => {
      const first = cards.get(legal[i].cards[0]);
      if (first.kind !== "number") return 100 + strength(first);
      return first.value * 10 - legal[i].cards.length;
    });
  }
  return Math.floor(rng() * legal.length);
}

// ---- three-thirteen -------------------------------------------------------------------

function penalty(card, options) {
  if (card.rank === 1 && options.ace_high) return 15;
  return Math.min(card.rank, 10);
}

function isPartner(a, b) {
  return a.rank === b.rank || (a.suit === b.suit && Math.abs(a.rank - b.rank) <= 1);
}

function threeThirteen(observation, legal) {
  const options = observation.options || {};
  const wild = observation.wild_rank;
  const hand = observation.hand || [];
  const goOut = indicesOf(legal, "go_out");
  if (goOut.length) return goOut[0];

  const draws = indicesOf(legal, "draw");
  if (draws.length) {
    const pile = observation.discard_pile || [];
    const fromDiscard = draws.find((i) => legal[i].source === "discard");
    const fromStock = draws.find((i) => legal[i].source === "stock");
    const top = pile[pile.length - 1];
    if (fromDiscard !== undefined && top) {
      const useful = top.rank === wild || hand.some((card) => card.rank !== wild && isPartner(card, top));
      if (useful) return fromDiscard;
    }
    return fromStock !== undefined ? fromStock : draws[0];
  }

  const discards = indicesOf(legal, "discard");
  if (discards.length) {
    const byId = new Map(hand.map((card) => [card.id, card]));
    return bestOf(discards, (i) => {
      const card = byId.get(legal[i].card);
      if (card.rank === wild) return 1000;
      const partners = hand.filter((other) => other !== card && other.rank !== wild && isPartner(card, other)).length;
      return partners * 100 - penalty(card, options);
    });
  }
  return Math.floor(rng() * legal.length);
}

// ---- the protocol ---------------------------------------------------------------------

function decide(observation, legal) {
  try {
    if (game === "3up3down") return threeUp(observation, legal);
    if (game === "three-thirteen") return threeThirteen(observation, legal);
  } catch (error) {
    process.stderr.write(`node-simple: fell back to a random action: ${error}\n`);
  }
  return Math.floor(rng() * legal.length);
}

const input = readline.createInterface({ input: process.stdin, terminal: false });

input.on("line", (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      game = message.game;
      rng = makeRng(message.seed);
      send({ type: "ready", name: NAME, version: VERSION, protocol: 1 });
      break;
    case "request": {
      let index = decide(message.observation, message.legal_actions);
      if (!Number.isInteger(index) || index < 0 || index >= message.legal_actions.length) index = 0;
      send({ type: "action", id: message.id, index });
      break;
    }
    case "start":
      // In a tournament each game brings its own seed: reseeded, a process that plays
      // many games plays each one as a fresh process would.
      if (message.seed !== undefined && message.seed !== null) rng = makeRng(message.seed);
      break;
    case "match_over":
      input.close();
      process.exit(0);
      break;
    default:
      // start, events, game_over and anything newer: nothing to answer.
      break;
  }
});

input.on("close", () => process.exit(0));
