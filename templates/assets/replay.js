/* arena replay viewer. The game page loads replays/<key>.r1.js, which registers the data
   in window.ARENA_REPLAYS; this script draws it. Data shape: arena/report_replay.py.
   Everything from the data is put in the page with textContent, never as markup. */
(function () {
  "use strict";
  var root = document.getElementById("replay");
  if (!root) return;
  var key = root.getAttribute("data-key");
  var data = (window.ARENA_REPLAYS || {})[key];
  if (!data) return; // the page keeps its "not rendered" message
  root.textContent = "";
  if (data.error) {
    note(root, "This game cannot be replayed: " + data.error);
    return;
  }

  var players = data.players, steps = data.steps, frames = data.frames, cards = data.cards;
  var last = frames.length - 1;
  var CHECK = 64; // keep a full copy of every 64th frame so a jump is fast
  var checkpoints = {};

  /* --- frames: the same patch and mask rules as report_replay.py ----------------------- */
  function patch(old, change) {
    var out = {}, zone;
    for (zone in old) out[zone] = old[zone];
    for (zone in change) {
      var value = change[zone];
      if (value && typeof value === "object" && !Array.isArray(value) && "k" in value && "t" in value && Object.keys(value).length === 2) {
        out[zone] = old[zone].slice(0, value.k).concat(value.t);
      } else if (value && typeof value === "object" && !Array.isArray(value) && "x" in value && Object.keys(value).length === 1) {
        delete out[zone];
      } else {
        out[zone] = value;
      }
    }
    return out;
  }
  function stateAt(index) {
    var base = Math.floor(index / CHECK) * CHECK, state, i, s;
    if (checkpoints[base]) {
      state = checkpoints[base];
    } else {
      var from = 0;
      for (var b = base - CHECK; b >= 0; b -= CHECK) { if (checkpoints[b]) { from = b; break; } }
      state = checkpoints[from] || null;
      if (!state) {
        state = { full: {}, seats: [] };
        for (s = 0; s < players; s++) state.seats.push({});
        state = apply(state, frames[0]);
        checkpoints[0] = state;
      }
      for (i = from + 1; i <= base; i++) {
        state = apply(state, frames[i]);
        if (i % CHECK === 0) checkpoints[i] = state;
      }
    }
    for (i = base + 1; i <= index; i++) state = apply(state, frames[i]);
    return state;
  }
  function apply(state, frame) {
    var next = { full: patch(state.full, frame[0]), seats: [] };
    for (var s = 0; s < players; s++) next.seats.push(patch(state.seats[s], frame[s + 1]));
    return next;
  }
  function mask(full, seat) {
    var out = {}, zone;
    for (zone in full) {
      var value = full[zone];
      if (/^h\d+$/.test(zone) && Number(zone.slice(1)) !== seat && Array.isArray(value)) value = value.length;
      out[zone] = value;
    }
    if ("down" in full) out.down = full.down.map(function (slots) { return slots.map(function (c) { return c === null ? null : -1; }); });
    if ("setup" in full) out.setup = full.setup === null ? null : full.setup[seat];
    return out;
  }
  function tableAt(index, seat) {
    var state = stateAt(index);
    if (seat === null) return state.full;
    var out = mask(state.full, seat), exceptions = state.seats[seat];
    for (var zone in exceptions) out[zone] = exceptions[zone];
    return out;
  }

  /* --- drawing helpers ---------------------------------------------------------------- */
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function note(parent, text) { parent.appendChild(el("p", "muted", text)); }
  var SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  var RANKS = { 1: "A", 11: "J", 12: "Q", 13: "K", 14: "A" };
  var KINDS = { clear: ["C", "Clear"], clear1: ["C+1", "Clear +1"], clear2: ["C+2", "Clear +2"] };
  var wild = null; // Three Thirteen: the wild rank of the frame being drawn

  function cardName(id) {
    var face = cards[String(id)];
    if (!face) return "#" + id;
    if (data.game === "three-thirteen") return (RANKS[face[0]] || face[0]) + SUITS[face[1]];
    if (face[0] === "number") return face[1] + " " + face[2];
    return KINDS[face[0]][1] + " " + face[2];
  }
  function card(id, extra) {
    if (id === -1) return el("span", "pcard back", "");
    if (id === null) return el("span", "pcard gone", "");
    var face = cards[String(id)], node;
    if (!face) return el("span", "pcard", "?");
    if (data.game === "three-thirteen") {
      var red = face[1] === "H" || face[1] === "D";
      node = el("span", "pcard " + (red ? "red" : "black") + (face[0] === wild ? " wild" : ""), RANKS[face[0]] || face[0]);
      node.appendChild(el("small", null, SUITS[face[1]]));
      node.title = cardName(id) + (face[0] === wild ? " (wild)" : "");
    } else if (face[0] === "number") {
      node = el("span", "pcard c-" + face[2], face[1]);
      node.appendChild(el("small", null, face[2]));
      node.title = cardName(id);
    } else {
      node = el("span", "pcard " + face[0] + " c-" + face[2], KINDS[face[0]][0]);
      node.appendChild(el("small", null, "clear"));
      node.title = cardName(id);
    }
    if (extra) node.className += " " + extra;
    node.setAttribute("data-card", String(id));
    return node;
  }
  function cardRow(list, limit, extraFor) {
    var row = el("div", "cardrow");
    if (typeof list === "number") {
      for (var i = 0; i < Math.min(list, 14); i++) row.appendChild(card(-1));
      row.appendChild(el("span", "count", list + (list === 1 ? " card" : " cards")));
      return row;
    }
    if (!list || !list.length) { row.appendChild(el("span", "count", "—")); return row; }
    var shown = limit && list.length > limit ? list.slice(list.length - limit) : list;
    if (shown.length < list.length) row.appendChild(el("span", "count", "+" + (list.length - shown.length) + " … "));
    shown.forEach(function (id) { row.appendChild(card(id, extraFor ? extraFor(id) : null)); });
    return row;
  }
  function pile(count) {
    var row = el("div", "cardrow");
    row.appendChild(card(count ? -1 : null));
    row.appendChild(el("span", "count", count + (count === 1 ? " card" : " cards")));
    return row;
  }
  function zone(parent, name, content) {
    var box = el("div", "zone");
    box.setAttribute("data-zone", name);
    box.appendChild(el("div", "zname", name));
    box.appendChild(content);
    parent.appendChild(box);
    return box;
  }
  function seatName(seat) { return "seat " + seat + " · " + data.seats[seat]; }

  /* --- what happened ------------------------------------------------------------------ */
  function cardsText(list) { return (list || []).map(cardName).join(" "); }
  function actionText(action) {
    switch (action.type) {
      case "choose_up": return "chooses 3UP " + cardsText(action.cards);
      case "play": return "plays " + cardsText(action.cards);
      case "play_down": return "turns over 3DOWN position " + action.position;
      case "pickup": return "picks up the pile";
      case "draw": return action.source ? "draws from the " + (action.source === "stock" ? "stock" : "discard pile") : "draws instead of playing";
      case "refill": return "refills before the extra action";
      case "no_refill": return "does not refill";
      case "swap": return "swaps 3UP " + cardName(action.up) + " for " + cardName(action.hand);
      case "keep": return "keeps its 3UP";
      case "discard": return "discards " + cardName(action.card);
      case "go_out": return "goes out, discarding " + cardName(action.card);
      default: return JSON.stringify(action);
    }
  }
  function eventText(event) {
    var who = "seat" in event && event.seat !== null ? seatName(event.seat) + " " : "";
    switch (event.type) {
      case "clear": return "pile cleared by " + who + "(" + String(event.reason).replace(/_/g, " ") + ")";
      case "pickup": return who + "takes the pile (" + (event.cards || []).length + " cards)";
      case "down_failed": return who + "fails with 3DOWN position " + event.position;
      case "finish": return who + "finishes in place " + event.place;
      case "reveal_up": return "every 3UP is revealed";
      case "reverse": return who + "reverses the direction";
      case "swap_stacks": return "stacks are swapped";
      case "game_over": return "game over: places " + (event.places || []).join(", ");
      case "round_start": return "round " + event.round + " starts, " + (RANKS[event.wild_rank] || event.wild_rank) + "s are wild";
      case "reshuffle": return "the discard pile is reshuffled into the stock (" + event.stock_size + " cards)";
      case "round_end": return "round " + event.round + " ends (" + String(event.reason).replace(/_/g, " ") + "): penalties " + (event.penalties || []).join(", ");
      case "go_out": return null; // the action itself says it; the melds are on the table
      case "refill": case "draw": case "draw_instead": return who + "draws " + event.count;
      default: return null;
    }
  }
  function describe(index) {
    if (index === 0) return "The deal. Step forward to see the first decision.";
    var step = steps[index - 1];
    var text = seatName(step[0]) + " " + actionText(step[1]) + (step[3] === "fallback" ? " (fallback player: the bot had forfeited)" : "");
    var extra = (step[2] || []).map(eventText).filter(function (t) { return t; });
    return text + (extra.length ? " — " + extra.join("; ") : "");
  }

  /* --- the table ---------------------------------------------------------------------- */
  function labelledPile(label, content) {
    var box = el("div", "pile");
    box.appendChild(el("div", "label", label));
    box.appendChild(content);
    return box;
  }

  function drawThreeUp(t, seat, box) {
    var centre = el("div", "centre");
    centre.appendChild(labelledPile("draw pile", pile(t.draw)));
    centre.appendChild(labelledPile("discard pile (" + (t.discard || []).length + ")", cardRow(t.discard, 8)));
    centre.appendChild(labelledPile("removed (" + (t.removed || []).length + ")", cardRow(t.removed, 5)));
    centre.appendChild(labelledPile("turn " + t.turn + " · " + t.phase, el("div", "count", (t.dir === -1 ? "direction reversed" : "seat order") + (t.left > 1 ? " · " + t.left + " actions left" : ""))));
    box.appendChild(centre);
    var grid = el("div", "seats");
    for (var s = 0; s < players; s++) {
      var sb = el("div", "seatbox" + (t.cur === s ? " turn" : ""));
      sb.setAttribute("data-seat", String(s));
      var who = el("div", "who");
      who.appendChild(el("span", null, seatName(s) + (seat === s ? " (this view)" : "")));
      var done = (t.finished || []).indexOf(s);
      if (t.end) who.appendChild(el("span", "place p" + t.end.places[s], t.end.places[s]));
      else if (done >= 0) who.appendChild(el("span", "tag", "finished " + (done + 1)));
      sb.appendChild(who);
      if (t.phase === "setup") {
        var offer = seat === null ? (t.setup || [])[s] : (s === seat ? t.setup : null);
        if (offer && offer.length) zone(sb, "dealt six, choosing", cardRow(offer));
        if (s === seat && t.own_up) zone(sb, "own 3UP choice", cardRow(t.own_up));
      }
      zone(sb, "hand", cardRow(t["h" + s]));
      var up = t.up ? t.up[s] : null;
      zone(sb, "3UP", up === null ? el("div", "count", t.chosen && t.chosen[s] ? "chosen, hidden until all have chosen" : "not chosen yet") : cardRow(up));
      zone(sb, "3DOWN", cardRow(t.down[s]));
      grid.appendChild(sb);
    }
    box.appendChild(grid);
  }

  function drawThirteen(t, seat, box, index) {
    wild = t.wild;
    var centre = el("div", "centre");
    var info = el("div", "pile");
    info.appendChild(el("div", "label", "round " + t.round + " of 11"));
    info.appendChild(el("div", "count", (RANKS[t.wild] || t.wild) + "s are wild · dealer seat " + t.dealer + " · turn " + t.turn));
    if (t.final_left) info.appendChild(el("div", "count", t.final_left + (t.final_left === 1 ? " final turn left" : " final turns left")));
    centre.appendChild(info);
    centre.appendChild(labelledPile("stock", pile(t.stock)));
    centre.appendChild(labelledPile("discard pile (" + (t.discard || []).length + ")", cardRow(t.discard, 6)));
    box.appendChild(centre);
    var grid = el("div", "seats");
    for (var s = 0; s < players; s++) {
      var sb = el("div", "seatbox" + (t.cur === s ? " turn" : ""));
      sb.setAttribute("data-seat", String(s));
      var who = el("div", "who");
      who.appendChild(el("span", null, seatName(s) + (seat === s ? " (this view)" : "")));
      who.appendChild(el("span", "count", "total " + t.totals[s]));
      sb.appendChild(who);
      zone(sb, "hand", cardRow(t["h" + s], 0, function (id) { return id === t.taken ? "taken" : null; }));
      if (t.went_out === s && t.laid && t.laid.length) {
        var laid = el("div");
        t.laid.forEach(function (meld) {
          var m = el("span", "meld");
          meld.cards.forEach(function (id) { m.appendChild(card(id)); });
          m.title = meld.kind;
          laid.appendChild(m);
        });
        zone(sb, "went out, laid down", laid);
      }
      grid.appendChild(sb);
    }
    box.appendChild(grid);
    // The previous round's hands as the referee scored them: combinations and deadwood.
    if (t.last) {
      var scored = el("div", "seats");
      t.last.hands.forEach(function (hand, p) {
        var hb = el("div", "seatbox");
        hb.appendChild(el("div", "who", seatName(p) + ": +" + hand.penalty));
        var melds = el("div");
        hand.melds.forEach(function (meld) {
          var m = el("span", "meld");
          m.title = meld.kind;
          meld.cards.forEach(function (id) { m.appendChild(card(id)); });
          melds.appendChild(m);
        });
        if (!hand.melds.length) melds.appendChild(el("span", "count", "no combination"));
        zone(hb, "combinations", melds);
        zone(hb, "deadwood", cardRow(hand.deadwood));
        scored.appendChild(hb);
      });
      wild = t.last.wild;  // the cards were wild by that round's rank
      zone(box, "round " + t.last.round + " as scored (" + String(t.last.reason).replace(/_/g, " ") + ")", scored);
      wild = t.wild;
    }
    // Scores per round, from the round_end events up to this step.
    var rows = [];
    for (var i = 0; i < index; i++) {
      (steps[i][2] || []).forEach(function (event) { if (event.type === "round_end") rows.push(event); });
    }
    if (rows.length) {
      var table = el("table", "scoretable");
      var head = el("tr");
      head.appendChild(el("th", null, "round"));
      for (s = 0; s < players; s++) head.appendChild(el("th", null, data.seats[s]));
      table.appendChild(head);
      rows.forEach(function (event) {
        var tr = el("tr");
        tr.appendChild(el("td", null, event.round + " (" + (RANKS[event.wild_rank] || event.wild_rank) + " wild)"));
        for (var p = 0; p < players; p++) tr.appendChild(el("td", null, "+" + event.penalties[p] + " = " + event.totals[p]));
        table.appendChild(tr);
      });
      zone(box, "scores per round", table);
    }
  }

  /* --- controls ----------------------------------------------------------------------- */
  var index = 0, view = null;
  var controls = el("div", "controls");
  function button(label, title, action) {
    var b = el("button", null, label);
    b.type = "button";
    b.title = title;
    b.setAttribute("aria-label", title);
    b.addEventListener("click", action);
    controls.appendChild(b);
    return b;
  }
  button("«", "first step", function () { go(0); });
  var back = button("◀", "step back (left arrow)", function () { go(index - 1); });
  back.id = "replay-back";
  var forward = button("▶", "step forward (right arrow)", function () { go(index + 1); });
  forward.id = "replay-forward";
  button("»", "last step", function () { go(last); });
  var slider = el("input");
  slider.type = "range"; slider.min = "0"; slider.max = String(last); slider.value = "0";
  slider.id = "replay-slider";
  slider.setAttribute("aria-label", "step");
  slider.addEventListener("input", function () { go(Number(slider.value)); });
  controls.appendChild(slider);
  var jump = el("input");
  jump.type = "number"; jump.min = "0"; jump.max = String(last); jump.value = "0"; jump.id = "replay-jump";
  jump.style.width = "5.5em";
  jump.setAttribute("aria-label", "jump to step");
  jump.addEventListener("change", function () { go(Number(jump.value)); });
  controls.appendChild(jump);
  var counter = el("span", "stepno");
  controls.appendChild(counter);
  var chooser = el("select");
  chooser.id = "replay-view";
  chooser.setAttribute("aria-label", "whose view");
  chooser.appendChild(new Option("Full view (everything)", "full"));
  for (var s = 0; s < players; s++) chooser.appendChild(new Option("As " + seatName(s) + " saw it", String(s)));
  chooser.addEventListener("change", function () { view = chooser.value === "full" ? null : Number(chooser.value); draw(); });
  controls.appendChild(chooser);
  root.appendChild(controls);
  var what = el("div", "what");
  what.id = "replay-what";
  what.setAttribute("aria-live", "polite");
  root.appendChild(what);
  var board = el("div", "felt");
  board.id = "replay-table";
  root.appendChild(board);
  var list = el("div", "steps");
  var ol = el("ol");
  ol.start = 0;
  var items = [];
  for (var i = 0; i <= last; i++) {
    var li = el("li", null, i === 0 ? "deal" : seatName(steps[i - 1][0]) + ": " + actionText(steps[i - 1][1]));
    li.setAttribute("data-step", String(i));
    li.addEventListener("click", function (event) { go(Number(event.currentTarget.getAttribute("data-step"))); });
    items.push(li);
    ol.appendChild(li);
  }
  list.appendChild(ol);
  root.appendChild(list);

  function go(target) {
    if (isNaN(target)) return;
    var previous = index;
    index = Math.max(0, Math.min(last, Math.round(target)));
    if (items[previous]) items[previous].className = "";
    draw();
  }
  function draw() {
    var t = tableAt(index, view);
    board.textContent = "";
    board.setAttribute("data-step", String(index));
    if (data.game === "three-thirteen") drawThirteen(t, view, board, index);
    else drawThreeUp(t, view, board);
    what.textContent = describe(index);
    counter.textContent = "step " + index + " of " + last;
    slider.value = String(index);
    jump.value = String(index);
    var item = items[index];
    item.className = "now";
    if (item.scrollIntoView && list.scrollHeight > list.clientHeight) {
      list.scrollTop = item.offsetTop - list.clientHeight / 2;
    }
  }
  document.addEventListener("keydown", function (event) {
    var tag = (event.target && event.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    if (event.key === "ArrowRight") { event.preventDefault(); go(index + 1); }
    else if (event.key === "ArrowLeft") { event.preventDefault(); go(index - 1); }
    else if (event.key === "Home") { go(0); }
    else if (event.key === "End") { go(last); }
  });
  draw();
})();
