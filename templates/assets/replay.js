/* arena replay viewer. The game page loads replays/<key>.r1.js, which registers the data
   in window.ARENA_REPLAYS; this script loads the game's own drawing script beside it,
   assets/replay-<game>.js (engine/<game>/replay.js, which registers itself in
   window.ARENA_VIEWERS), and draws the replay with it. Data shape: arena/report_replay.py.
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
  var here = document.currentScript ? document.currentScript.src : "";
  if (!/^[a-z0-9-]+$/.test(String(data.game))) {
    note(root, "No replay viewer for this game.");
    return;
  }
  var script = document.createElement("script");
  script.src = here.slice(0, here.lastIndexOf("/") + 1) + "replay-" + data.game + ".js";
  script.onload = function () {
    var make = (window.ARENA_VIEWERS || {})[data.game];
    if (make) start(make);
    else note(root, "No replay viewer for " + data.game + ".");
  };
  script.onerror = function () { note(root, "No replay viewer for " + data.game + "."); };
  document.head.appendChild(script);

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

  /* --- drawing helpers, shared with the game's script (as `kit`) ----------------------- */
  var viewer = null; // the game's drawing functions, from its script (see start)
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function note(parent, text) { parent.appendChild(el("p", "muted", text)); }
  function cardName(id) {
    var face = cards[String(id)];
    if (!face) return "#" + id;
    return viewer.faceName(face);
  }
  function card(id, extra) {
    if (id === -1) return el("span", "pcard back", "");
    if (id === null) return el("span", "pcard gone", "");
    var face = cards[String(id)];
    if (!face) return el("span", "pcard", "?");
    var node = viewer.cardNode(face, id);
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
  function labelledPile(label, content) {
    var box = el("div", "pile");
    box.appendChild(el("div", "label", label));
    box.appendChild(content);
    return box;
  }
  function seatName(seat) { return "seat " + seat + " · " + data.seats[seat]; }
  function cardsText(list) { return (list || []).map(cardName).join(" "); }

  /* --- what happened (the words are the game's) ---------------------------------------- */
  function actionText(action) { return viewer.actionText(action) || JSON.stringify(action); }
  function eventText(event) {
    var who = "seat" in event && event.seat !== null ? seatName(event.seat) + " " : "";
    return viewer.eventText(event, who);
  }
  function describe(index) {
    if (index === 0) return "The deal. Step forward to see the first decision.";
    var step = steps[index - 1];
    var text = seatName(step[0]) + " " + actionText(step[1]) + (step[3] === "fallback" ? " (fallback player: the bot had forfeited)" : "");
    var extra = (step[2] || []).map(eventText).filter(function (t) { return t; });
    return text + (extra.length ? " — " + extra.join("; ") : "");
  }

  /* --- controls: built once the game's script has loaded ------------------------------ */
  function start(make) {
    viewer = make({
      data: data, players: players, steps: steps, el: el, card: card, cardName: cardName,
      cardsText: cardsText, cardRow: cardRow, pile: pile, zone: zone, labelledPile: labelledPile, seatName: seatName
    });
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
      viewer.draw(t, view, board, index);
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
  }
})();
